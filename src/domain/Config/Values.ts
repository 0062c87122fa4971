import { Duration, Either, Option, ParseResult, Schema } from "effect"
import { DurationString } from "../Duration.js"

/*
 * The config is described once, in src/domain/Config/ (this file: the value schemas its tables share). Users read
 * these annotations when a value is rejected:
 * - `description` (+ `examples`): what a key expects; the reader adds `, got <value>` (src/services/Config/Wording.ts);
 * - `message`: the whole text, for rules a description cannot say (names, cross-key rules);
 * - `missingMessage`: what to do when a required key or item is absent.
 * Unannotated keys get the structural wording ("expected a string, got 3"), and unknown keys list the known ones
 * from the struct itself, so a new key is one field with its annotation.
 */

/** `GitHub_Work` → `github-work`: the kebab form suggested for a bad instance name. */
export const kebabCase = (name: string): string =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")

/** `; use "github-work"` when the kebab form of a rejected name is itself a valid name. */
const kebabSuggestion = (name: unknown): string => {
  if (typeof name !== "string") return ""
  const kebab = kebabCase(name)
  return kebab !== name && Schema.is(InstanceName)(kebab) ? `; use "${kebab}"` : ""
}

/** ADR-006: kebab-case, 2–32 characters, so `<instance>__<tool>` splits unambiguously at the first `__`. */
export const InstanceName = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9]+(-[a-z0-9]+)*$/, {
    message: (issue) =>
      `instance names are kebab-case (a-z, 0-9, single dashes), got ${JSON.stringify(issue.actual)}${kebabSuggestion(issue.actual)}`
  }),
  Schema.minLength(2, { message: () => "instance names have at least 2 characters" }),
  Schema.maxLength(32, { message: () => "instance names have at most 32 characters" })
)

/** A source's wire-name prefix (issue 12): kebab-case like an instance name, or "" for the source's own names. */
export const Prefix = Schema.String.pipe(
  Schema.pattern(/^([a-z0-9]+(-[a-z0-9]+)*)?$/, {
    message: (issue) =>
      `prefix is kebab-case (a-z, 0-9, single dashes) or "" for the tools' own names, got ${JSON.stringify(issue.actual)}${kebabSuggestion(issue.actual)}`
  }),
  Schema.maxLength(32, { message: () => "prefix has at most 32 characters" })
)

/** Why `name` is not an instance name, in the schema's own words (for the CLI's edits); none when it is one. */
export const instanceNameProblem = (name: string): Option.Option<string> =>
  Either.match(Schema.decodeUnknownEither(InstanceName)(name), {
    onRight: () => Option.none(),
    onLeft: (error) =>
      Option.some(ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.message ?? "not a valid instance name")
  })

export const EnvName = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z_][A-Za-z0-9_]*$/, {
    message: (issue) => `expected an environment variable name, got ${JSON.stringify(issue.actual)}`
  })
)

/** The same rule as a table key, where the key itself is the subject of the sentence. */
const EnvKey = EnvName.annotations({
  message: (issue) =>
    `${JSON.stringify(issue.actual)} is not an environment variable name (letters, digits and _, not starting with a digit)`
})

export const PositiveDuration = DurationString.pipe(
  Schema.filter((duration) => Duration.greaterThan(duration, Duration.zero) || "must be longer than 0")
)

export const Env = Schema.Record({ key: EnvKey, value: Schema.String }).annotations({
  description: "a table of strings",
  examples: [{ KEY: "value" }]
})

/** A whole number in [min, max], named in its messages. */
export function wholeBetween(key: string, min: number, max: number) {
  return Schema.Number.pipe(
    Schema.int({ message: () => `${key} must be a whole number` }),
    Schema.between(min, max, { message: () => `${key} must be between ${min} and ${max}` })
  )
}

/** An http(s) URL (a remote source's address). */
export const RemoteUrl = Schema.String.pipe(
  Schema.filter((url) => /^https?:\/\/\S+$/.test(url) && URL.canParse(url), {
    message: (issue) =>
      `url must be an http(s) URL like "https://mcp.example.com/mcp", got ${JSON.stringify(issue.actual)}`
  })
)

/** How a remote source is reached: `auto` tries streamable HTTP, then the legacy HTTP+SSE transport (ADR 018). */
export const RemoteTransport = Schema.Literal("auto", "streamable-http", "sse").annotations({
  message: (issue) => `transport is "auto", "streamable-http" or "sse", got ${JSON.stringify(issue.actual)}`
})
export type RemoteTransport = typeof RemoteTransport.Type

/** RFC 9110 field names (tokens). */
const HeaderName = Schema.String.pipe(
  Schema.pattern(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, {
    message: (issue) => `${JSON.stringify(issue.actual)} is not an HTTP header name`
  })
)

export const Headers = Schema.Record({ key: HeaderName, value: Schema.String }).annotations({
  description: "a table of header strings",
  examples: [{ Authorization: "Bearer ${API_TOKEN}" }]
})
