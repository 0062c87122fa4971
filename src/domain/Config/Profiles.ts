import { Schema } from "effect"
import { coreToolNames } from "./CoreTools.js"
import { InstanceName } from "./Values.js"

/*
 * `[profiles.<name>]`, source `tags` and `[http.tokens.<name>]` (issue 26, docs/decisions/031): who sees what. A
 * profile is a view over the one running set, served at `/mcp/<name>` or by `serve --profile <name>`; a token reaches
 * the profiles it lists.
 */

const kebab = /^[a-z0-9]+(-[a-z0-9]+)*$/

/** What `/mcp` serves (every tool); a token lists it to reach `/mcp`. Not a profile's name. */
export const defaultView = "default"

/** A profile's name: kebab-case, and not `default` (the name of `/mcp`'s view in a token's list). */
export const ProfileName = Schema.String.pipe(
  Schema.filter((name) => kebab.test(name) && name !== defaultView, {
    message: (issue) =>
      issue.actual === defaultView
        ? `"default" is the name of /mcp's view (every tool); name the profile otherwise`
        : `profile names are kebab-case (a-z, 0-9, single dashes), got ${JSON.stringify(issue.actual)}`
  })
)

/** A source's tag: kebab-case, like an instance name. */
export const Tag = Schema.String.pipe(
  Schema.pattern(kebab, {
    message: (issue) => `tags are kebab-case (a-z, 0-9, single dashes), got ${JSON.stringify(issue.actual)}`
  })
)

export const Tags = Schema.Array(Tag).annotations({ description: "a list of tags", examples: [["code", "local"]] })

/**
 * One `tools` entry of a profile: `"*"`, `"<instance>.<tool>"` where the tool part may hold `*` wildcards
 * (`"github.delete_*"`, `"fs.*"`), or either after `!` to exclude what it matches.
 */
export const ProfileSelector = Schema.String.pipe(
  Schema.pattern(/^!?(\*|[a-z0-9]+(-[a-z0-9]+)*\..+)$/, {
    message: (issue) =>
      `profile tools entries are "*" or "<instance>.<tool>" (the tool part may hold * wildcards), each may start with ! to exclude, got ${JSON.stringify(issue.actual)}`
  })
)

const CatalogMode = Schema.Literal("full", "search").annotations({
  message: (issue) => `catalog is "full" or "search", got ${JSON.stringify(issue.actual)}`
})

const CoreToolName = Schema.Literal(...coreToolNames).annotations({
  message: (issue) => `core_tools entries are ${coreToolNames.join(", ")}, got ${JSON.stringify(issue.actual)}`
})

/** One `[profiles.<name>]` table. */
export class ProfileConfig extends Schema.Class<ProfileConfig>("ProfileConfig")({
  /** Sources by instance name; with `tags`, the union. Neither: every source. */
  sources: Schema.optional(
    Schema.Array(InstanceName).annotations({ description: "a list of source names", examples: [["fs", "github"]] })
  ),
  /** Sources carrying any of these tags. */
  tags: Schema.optional(Tags),
  /** Which of those sources' tools, as selectors; `!` excludes. Only exclusions: everything but those. */
  tools: Schema.optionalWith(
    Schema.Array(ProfileSelector).annotations({
      description: "a list of selectors",
      examples: [["*", "!github.delete_*"]]
    }),
    { default: () => ["*"] }
  ),
  /** Which core tools (ToolSearch and SourceHealth always stay); default: every enabled one. */
  core_tools: Schema.optional(
    Schema.Array(CoreToolName).annotations({ description: "a list of core tools", examples: [["Read", "Grep"]] })
  ),
  /** Overrides the top-level `catalog` for this profile. */
  catalog: Schema.optional(CatalogMode),
  /** Only tools annotated `readOnlyHint: true`. */
  read_only: Schema.optionalWith(Schema.Boolean.annotations({ description: "true or false" }), {
    default: () => false
  })
}) {}

export const Profiles = Schema.Record({ key: ProfileName, value: ProfileConfig }).annotations({
  description: "a table of profiles, like [profiles.code]"
})

/** One `[http.tokens.<name>]` table: a bearer token and the views it reaches. */
export class HttpToken extends Schema.Class<HttpToken>("HttpToken")({
  /** A token or a `${VAR}` reference, resolved like `[http] token`. */
  token: Schema.String.annotations({ description: `a token or a reference like "\${CI_TOKEN}"` }),
  /** Profile names, and "default" for `/mcp`. */
  profiles: Schema.Array(Schema.String).annotations({
    description: `a list of profile names ("default" for /mcp)`,
    examples: [["code", "ro"]]
  })
}) {}

/** `[http.tokens]`: by a name that appears in logs and the audit log (never the token). */
export const HttpTokens = Schema.Record({
  key: Schema.String.pipe(
    Schema.pattern(kebab, {
      message: (issue) => `token names are kebab-case (a-z, 0-9, single dashes), got ${JSON.stringify(issue.actual)}`
    })
  ),
  value: HttpToken
}).annotations({ description: "a table of tokens, like [http.tokens.ci]" })
