import { Duration, Option, Schema } from "effect"
import { DurationString } from "../Duration.js"
import { Tags } from "./Profiles.js"
import { Env, EnvName, Headers, PositiveDuration, Prefix, RemoteTransport, RemoteUrl, wholeBetween } from "./Values.js"

const RestartPolicy = Schema.Literal("on-failure", "never").annotations({
  message: (issue) => `restart is "on-failure" or "never", got ${JSON.stringify(issue.actual)}`
})

const MaxRestarts = Schema.Number.pipe(
  Schema.int({ message: () => "max_restarts must be a whole number" }),
  Schema.nonNegative({ message: () => "max_restarts must not be negative" })
)

const Command = Schema.Tuple(
  [
    Schema.element(Schema.String).annotations({
      missingMessage: () =>
        `must not be empty: give the program and its arguments, like ["npx", "-y", "some-mcp-server"]`
    })
  ],
  Schema.String
).annotations({ description: "a non-empty list of strings", examples: [["npx", "-y", "some-mcp-server"]] })

/** Where a client ID metadata document is published: its URL is the client_id (the spec requires https and a path). */
const MetadataUrl = Schema.String.pipe(
  Schema.filter(
    (url) => {
      if (!URL.canParse(url)) return false
      const parsed = new URL(url)
      return parsed.protocol === "https:" && parsed.pathname !== "/"
    },
    {
      message: (issue) =>
        `client_metadata_url must be an https URL with a path, where your client metadata document is published, like "https://example.com/clawtool-client.json", got ${JSON.stringify(issue.actual)}`
    }
  )
)

/** `oauth = { … }`: settings of the OAuth 2.1 client of one remote source (the flow itself: `clawtool auth login`). */
export class OAuthConfig extends Schema.Class<OAuthConfig>("OAuthConfig")({
  /** A pre-registered client; without it the client is registered dynamically (or by metadata document). */
  client_id: Schema.optional(Schema.String),
  /**
   * A client ID metadata document you publish (docs/decisions/019): used as the client_id where the authorization
   * server supports such documents; elsewhere clawtool registers dynamically.
   */
  client_metadata_url: Schema.optional(MetadataUrl),
  /** Usually a `${VAR}` resolved from secrets like env. */
  client_secret: Schema.optional(Schema.String),
  scopes: Schema.optional(
    Schema.Array(Schema.String).annotations({ description: "a list of strings", examples: [["read"]] })
  ),
  /** The loopback port of the login's redirect; an ephemeral one when absent. */
  redirect_port: Schema.optional(wholeBetween("redirect_port", 1, 65535))
}) {
  static readonly defaults = new OAuthConfig({})
}

/** One `[sources.<instance>]` table. Keys are the TOML names; unknown keys are errors. */
export class SourceConfig extends Schema.Class<SourceConfig>("SourceConfig")(
  {
    /** Accepted for configs written by the Go clawtool (`type = "mcp"`); a remote source has a `url` instead. */
    type: Schema.optional(Schema.Literal("mcp", "stdio")),
    /** A local server: the program and its arguments. Exactly one of `command` and `url`. */
    command: Schema.optional(Command),
    /** A remote server's address (streamable HTTP or legacy SSE). */
    url: Schema.optional(RemoteUrl),
    transport: Schema.optionalWith(RemoteTransport, { exact: true, default: () => "auto" as const }),
    /** Sent with every request to a remote source; values may hold `${VAR}`, resolved like env. */
    headers: Schema.optionalWith(Headers, { default: () => ({}) }),
    oauth: Schema.optional(
      Schema.Union(OAuthConfig, Schema.Boolean).annotations({
        description: 'true, false or a table like { scopes = ["read"] }'
      })
    ),
    env: Schema.optionalWith(Env, { default: () => ({}) }),
    cwd: Schema.optional(Schema.String.annotations({ description: "a string (a directory)" })),
    enabled: Schema.optionalWith(Schema.Boolean.annotations({ description: "true or false" }), { default: () => true }),
    startup_timeout: Schema.optionalWith(DurationString, { default: () => Duration.seconds(60) }),
    env_passthrough: Schema.optionalWith(
      Schema.Array(EnvName).annotations({ description: "a list of environment variable names", examples: [["HOME"]] }),
      { default: () => [] }
    ),
    // Supervision (ADR-004): restart with exponential backoff, reset by a stable run, crash-loop past max_restarts.
    restart: Schema.optionalWith(RestartPolicy, { exact: true, default: () => "on-failure" as const }),
    restart_backoff: Schema.optionalWith(PositiveDuration, { default: () => Duration.millis(250) }),
    restart_backoff_max: Schema.optionalWith(PositiveDuration, { default: () => Duration.seconds(5) }),
    restart_window: Schema.optionalWith(PositiveDuration, { default: () => Duration.seconds(60) }),
    max_restarts: Schema.optionalWith(MaxRestarts, { default: () => 10 }),
    crash_loop_retry: Schema.optionalWith(PositiveDuration, { default: () => Duration.seconds(60) }),
    /** Per tools/call, reset by progress; none by default. */
    call_timeout: Schema.optional(PositiveDuration),
    /** `lazy`: with a cached catalog, spawned only by the first request routed to it (issue 10). */
    start: Schema.optionalWith(
      Schema.Literal("eager", "lazy").annotations({
        message: (issue) => `start is "eager" or "lazy", got ${JSON.stringify(issue.actual)}`
      }),
      { exact: true, default: () => "eager" as const }
    ),
    /** A lazy source's child with no request in flight for this long is stopped; none by default. */
    idle_timeout: Schema.optional(PositiveDuration),
    /** Wire names `<prefix>__<tool>` (default the instance name); "" serves the tools, prompts and task ids as named. */
    prefix: Schema.optional(Prefix),
    /**
     * The MCP era the source speaks (issue 27): `auto` probes `server/discover` once (in place for a local command, a
     * POST for a url) and keeps the verdict with the persisted catalog; `legacy` opens with `initialize`; `modern`
     * speaks 2026-07-28 per-request envelopes only.
     */
    protocol: Schema.optionalWith(
      Schema.Literal("auto", "legacy", "modern").annotations({
        message: (issue) => `protocol is "auto", "legacy" or "modern", got ${JSON.stringify(issue.actual)}`
      }),
      { exact: true, default: () => "auto" as const }
    ),
    /** Only the tools annotated `readOnlyHint: true` are listed and callable (issue 25). */
    read_only: Schema.optionalWith(Schema.Boolean.annotations({ description: "true or false" }), {
      default: () => false
    }),
    /** Names profiles select sources by (`[profiles.x] tags`, issue 26). */
    tags: Schema.optionalWith(Tags, { default: () => [] })
  },
  { description: "a table with a command or a url" }
) {}

/** A remote source: one with a `url`. */
export const isRemote = (source: SourceConfig): source is SourceConfig & { readonly url: string } =>
  source.url !== undefined

/** What a source runs: a local command or a remote server. */
export type SourceTarget =
  | { readonly _tag: "Stdio"; readonly command: readonly [string, ...Array<string>] }
  | {
      readonly _tag: "Remote"
      readonly url: string
      readonly transport: RemoteTransport
      readonly headers: Readonly<Record<string, string>>
      /** None: no OAuth (`oauth` absent or false). */
      readonly oauth: Option.Option<OAuthConfig>
    }

/** The discriminated view of a validated source (exactly one of command and url, checked by the config schema). */
export const targetOf = (source: SourceConfig): SourceTarget =>
  isRemote(source)
    ? {
        _tag: "Remote",
        url: source.url,
        transport: source.transport,
        headers: source.headers,
        oauth: oauthOf(source)
      }
    : { _tag: "Stdio", command: source.command ?? [""] }

/** `oauth = true` is the defaults; false or absent is none. */
export const oauthOf = (source: SourceConfig): Option.Option<OAuthConfig> =>
  source.oauth === undefined || source.oauth === false
    ? Option.none()
    : Option.some(source.oauth === true ? OAuthConfig.defaults : source.oauth)

/** Keys that only a local source (command) takes, and the remote keys only a url takes. */
const localOnlyKeys = ["env", "cwd", "env_passthrough"] as const

/** Exactly one of command and url; a remote source takes no local-process keys, a local one no remote keys. */
export const checkTarget = (source: SourceConfig) => {
  if (source.command === undefined && source.url === undefined) {
    return {
      path: ["command"],
      message: `a source needs a command (a local server, like ["npx", "-y", "some-mcp-server"]) or a url (a remote server)`
    }
  }
  if (source.command !== undefined && source.url !== undefined) {
    return { path: ["url"], message: "a source has a command or a url, not both" }
  }
  if (source.url !== undefined) {
    const local = localOnlyKeys.find((key) =>
      key === "cwd" ? source.cwd !== undefined : Object.keys(source[key]).length > 0
    )
    if (local !== undefined) {
      return { path: [local], message: `${local} is for local servers (command); a remote source (url) cannot use it` }
    }
    const oauth = source.oauth
    if (typeof oauth === "object" && oauth.client_id !== undefined && oauth.client_metadata_url !== undefined) {
      return {
        path: ["oauth", "client_metadata_url"],
        message: "oauth takes a client_id (registered by hand) or a client_metadata_url, not both"
      }
    }
    return true
  }
  const remote = (["headers", "oauth"] as const).find((key) =>
    key === "oauth" ? source.oauth !== undefined : Object.keys(source.headers).length > 0
  )
  return remote === undefined
    ? true
    : { path: [remote], message: `${remote} is for remote sources (url); a local source (command) cannot use it` }
}

/** Rules across supervision keys, reported at the key to change. */
export const checkSupervision = (source: SourceConfig) =>
  source.restart === "on-failure" && source.max_restarts === 0
    ? {
        path: ["max_restarts"],
        message: `max_restarts = 0 would never restart; use restart = "never" to turn restarts off`
      }
    : Duration.lessThan(source.restart_backoff_max, source.restart_backoff)
      ? { path: ["restart_backoff_max"], message: "restart_backoff_max must not be shorter than restart_backoff" }
      : true

/** The prefix a source's names get on the wire: its `prefix`, else its instance name. */
export const prefixOf = (instance: string, source: { readonly prefix?: string | undefined }): string =>
  source.prefix ?? instance

/** Two sources under one non-empty prefix could not be told apart on the wire; "" may be shared (names then collide). */
export const checkPrefixes = (sources: Readonly<Record<string, { readonly prefix?: string | undefined }>>) => {
  const owner = new Map<string, string>()
  for (const instance of Object.keys(sources).sort()) {
    const prefix = prefixOf(instance, sources[instance]!)
    const taken = owner.get(prefix)
    if (prefix !== "" && taken !== undefined) {
      const [path, other] = sources[instance]!.prefix === undefined ? [taken, instance] : [instance, taken]
      return {
        path: [path, "prefix"],
        message: `prefix ${JSON.stringify(prefix)} is already the prefix of source ${JSON.stringify(other)}; prefixes are unique among sources`
      }
    }
    owner.set(prefix, instance)
  }
  return true
}
