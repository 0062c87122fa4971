import { Duration, Either, Option, ParseResult, Record, Schema } from "effect"
import { DurationString } from "./Duration.js"
import { defaultLimits } from "./Limits.js"

/*
 * The config is described once, here. Users read these annotations when a value is rejected:
 * - `description` (+ `examples`): what a key expects; the reader adds `, got <value>` (src/services/Config.ts);
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

const EnvName = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z_][A-Za-z0-9_]*$/, {
    message: (issue) => `expected an environment variable name, got ${JSON.stringify(issue.actual)}`
  })
)

/** The same rule as a table key, where the key itself is the subject of the sentence. */
const EnvKey = EnvName.annotations({
  message: (issue) =>
    `${JSON.stringify(issue.actual)} is not an environment variable name (letters, digits and _, not starting with a digit)`
})

const RestartPolicy = Schema.Literal("on-failure", "never").annotations({
  message: (issue) => `restart is "on-failure" or "never", got ${JSON.stringify(issue.actual)}`
})

const PositiveDuration = DurationString.pipe(
  Schema.filter((duration) => Duration.greaterThan(duration, Duration.zero) || "must be longer than 0")
)

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

const Env = Schema.Record({ key: EnvKey, value: Schema.String }).annotations({
  description: "a table of strings",
  examples: [{ KEY: "value" }]
})

/** A whole number in [min, max], named in its messages. */
function wholeBetween(key: string, min: number, max: number) {
  return Schema.Number.pipe(
    Schema.int({ message: () => `${key} must be a whole number` }),
    Schema.between(min, max, { message: () => `${key} must be between ${min} and ${max}` })
  )
}

/** An http(s) URL (a remote source's address). */
const RemoteUrl = Schema.String.pipe(
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

const Headers = Schema.Record({ key: HeaderName, value: Schema.String }).annotations({
  description: "a table of header strings",
  examples: [{ Authorization: "Bearer ${API_TOKEN}" }]
})

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
    prefix: Schema.optional(Prefix)
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
const checkTarget = (source: SourceConfig) => {
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
const checkSupervision = (source: SourceConfig) =>
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
const checkPrefixes = (sources: Readonly<Record<string, { readonly prefix?: string | undefined }>>) => {
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

/** One `[tools."<instance>.<tool>"]` table (ADR-006 selector; the tool part is the name the child uses). */
export class ToolConfig extends Schema.Class<ToolConfig>("ToolConfig")({
  usage_hint: Schema.optional(
    Schema.String.pipe(
      Schema.pattern(/\S/, { message: () => "usage_hint must not be empty; leave the key out instead" })
    )
  ),
  always_load: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  enabled: Schema.optionalWith(Schema.Boolean, { default: () => true })
}) {}

/** `<instance>.<tool>`; the tool part is the child's own name, dots and slashes included. */
const ToolSelector = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9]+(-[a-z0-9]+)*\..+$/, {
    message: (issue) =>
      `tool selectors are "<instance>.<tool>", like tools."github.create_issue"; got ${JSON.stringify(issue.actual)}`
  })
)

const ToolTables = Schema.Record({ key: ToolSelector, value: ToolConfig }).annotations({
  description: `a table of tool settings, like [tools."github.create_issue"]`
})

/** Hosts reject tool names over 64 characters; hosts that add their own `mcp__<alias>__` prefix need less. */
export const NameBudget = Schema.Number.pipe(
  Schema.int({ message: () => "name_budget must be a whole number of characters" }),
  Schema.between(24, 128, { message: () => "name_budget must be between 24 and 128 characters" })
)

/**
 * `[observability]`: where spans go. `otlp_endpoint` is an OTLP/HTTP base URL (`/v1/traces` is appended), like
 * OTEL_EXPORTER_OTLP_ENDPOINT, which wins over it.
 */
export class ObservabilityConfig extends Schema.Class<ObservabilityConfig>("ObservabilityConfig")({
  otlp_endpoint: Schema.optional(
    Schema.String.pipe(
      Schema.pattern(/^https?:\/\/[^\s]+$/, {
        message: (issue) =>
          `otlp_endpoint must be an http(s) URL like "http://localhost:4318", got ${JSON.stringify(issue.actual)}`
      })
    )
  )
}) {}

/**
 * `[limits]`: what one peer may send on either edge (docs/decisions/010). `max_depth` stays far below the ~4,000 levels
 * at which V8's JSON.stringify overflows the stack; a message past a limit fails its own request, never clawtool.
 */
export class LimitsConfig extends Schema.Class<LimitsConfig>("LimitsConfig")({
  /** Deepest nesting of objects and arrays in one JSON-RPC message, host's or child's. */
  max_depth: Schema.optionalWith(wholeBetween("max_depth", 8, 1000), { default: () => defaultLimits.maxDepth }),
  /** Longest line (one message) from the host or a child; a longer one is consumed and answered with an error. */
  max_line_bytes: Schema.optionalWith(wholeBetween("max_line_bytes", 1024, 1024 * 1024 * 1024), {
    default: () => defaultLimits.maxLineBytes
  }),
  /** Host requests not yet answered; at the limit stdin is not read until one is answered (backpressure). */
  max_in_flight: Schema.optionalWith(wholeBetween("max_in_flight", 1, 1_000_000), {
    default: () => defaultLimits.maxInFlight
  })
}) {}

/** clawtool's own tools that `[core_tools]` switches (ToolSearch and SourceHealth, the registry's own, always stay). */
export const coreToolNames = ["Bash", "Read", "Edit", "Write", "Glob", "Grep", "WebFetch", "WebSearch"] as const
export type CoreToolName = (typeof coreToolNames)[number]
export const isCoreToolName = (name: string): name is CoreToolName =>
  (coreToolNames as ReadonlyArray<string>).includes(name)

const Enabled = Schema.optionalWith(Schema.Boolean.annotations({ description: "true or false" }), {
  default: () => true
})

/** One `[core_tools.<Name>]` table. */
export class CoreToolConfig extends Schema.Class<CoreToolConfig>("CoreToolConfig")({ enabled: Enabled }) {}

/** `[core_tools.WebFetch]`: the SSRF bypass is operator config, never a tool argument. */
export class WebFetchConfig extends Schema.Class<WebFetchConfig>("WebFetchConfig")({
  enabled: Enabled,
  /** Private, loopback and link-local addresses allowed, over plain http and on any port (local dev servers). */
  allow_private: Schema.optionalWith(Schema.Boolean.annotations({ description: "true or false" }), {
    default: () => false
  })
}) {}

const coreTool = Schema.optionalWith(CoreToolConfig, { default: () => new CoreToolConfig({}) })

/**
 * `[core_tools]`: clawtool's own Bash, Read, Edit, Write, Glob, Grep, WebFetch, WebSearch (issue 14). A table named
 * after no core tool is an unknown key, reported with the known names.
 */
export class CoreToolsConfig extends Schema.Class<CoreToolsConfig>("CoreToolsConfig")({
  enabled: Enabled,
  /** The most characters one core tool result carries, text and structured content counted together. */
  max_output: Schema.optionalWith(wholeBetween("max_output", 1000, 1_000_000), { default: () => 30_000 }),
  Bash: coreTool,
  Read: coreTool,
  Edit: coreTool,
  Write: coreTool,
  Glob: coreTool,
  Grep: coreTool,
  WebFetch: Schema.optionalWith(WebFetchConfig, { default: () => new WebFetchConfig({}) }),
  WebSearch: coreTool
}) {}

const Roots = Schema.Array(
  Schema.String.pipe(Schema.pattern(/\S/, { message: () => "a root must not be empty" }))
).annotations({ description: "a list of directories", examples: [["~/code/project"]] })

const CatalogMode = Schema.Literal("full", "search").annotations({
  message: (issue) => `catalog is "full" or "search", got ${JSON.stringify(issue.actual)}`
})

/** One reverse-request capability clawtool may declare to children in daemon mode (`[http] child_capabilities`). */
export const ChildCapability = Schema.Literal("sampling", "elicitation", "roots").annotations({
  message: (issue) =>
    `child_capabilities entries are "sampling", "elicitation" or "roots", got ${JSON.stringify(issue.actual)}`
})

/**
 * `[http]`: `clawtool serve --listen` (the shared daemon, docs/decisions/020). `token` may hold `${VAR}` references,
 * resolved like a source's (secrets.toml [scopes.global], then the environment).
 */
export class HttpConfig extends Schema.Class<HttpConfig>("HttpConfig")({
  /** HOST:PORT to serve MCP streamable HTTP on; `serve --listen` overrides it. Unset: serve speaks stdio. */
  listen: Schema.optional(Schema.String.annotations({ description: `an address like "127.0.0.1:8765"` })),
  /** The bearer token every /mcp request must carry; required when listening on a non-loopback address. */
  token: Schema.optional(
    Schema.String.annotations({ description: `a token or a reference like "\${CLAWTOOL_HTTP_TOKEN}"` })
  ),
  /** Extra Host header values ("host" or "host:port") accepted on /mcp besides the listen address. */
  allowed_hosts: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  /** Extra Origin values ("scheme://host[:port]") accepted on /mcp besides the listen address's own. */
  allowed_origins: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  /** A session with no request for this long is closed (hosts rarely send DELETE). */
  session_idle: Schema.optionalWith(DurationString, { default: () => Duration.minutes(30) }),
  /** No sessions: each POST stands alone (replicas behind a load balancer). */
  stateless: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  /** What children are told the client supports in daemon mode (sessions come and go; children stay). */
  child_capabilities: Schema.optionalWith(Schema.Array(ChildCapability), {
    default: () => ["sampling", "elicitation", "roots"] as const
  }),
  /** Largest request body on /mcp, in bytes (413 above it). */
  max_body: Schema.optionalWith(wholeBetween("max_body", 1024, 1024 * 1024 * 1024), { default: () => 4 * 1024 * 1024 })
}) {}

export class ClawtoolConfig extends Schema.Class<ClawtoolConfig>("ClawtoolConfig")({
  sources: Schema.optionalWith(
    Schema.Record({
      key: InstanceName,
      value: SourceConfig.pipe(Schema.filter(checkTarget), Schema.filter(checkSupervision))
    })
      .annotations({ description: "a table of sources, like [sources.my-server]" })
      .pipe(Schema.filter(checkPrefixes)),
    { default: () => ({}) }
  ),
  tools: Schema.optionalWith(ToolTables, { default: () => ({}) }),
  name_budget: Schema.optionalWith(NameBudget, { default: () => 64 }),
  /** How long a list request waits for sources still starting ("0s": never); hosts give up after 30–60 s. */
  list_wait: Schema.optionalWith(DurationString, { default: () => Duration.seconds(5) }),
  observability: Schema.optionalWith(ObservabilityConfig, { default: () => new ObservabilityConfig({}) }),
  limits: Schema.optionalWith(LimitsConfig, { default: () => new LimitsConfig({}) }),
  /** Directories the file tools may touch when the host declares no MCP roots; relative ones from the config's folder. */
  roots: Schema.optionalWith(Roots, { default: () => [] }),
  /** `search`: tools/list serves the alwaysLoad tools and CallTool; the rest are found through ToolSearch (ADR 025). */
  catalog: Schema.optionalWith(CatalogMode, { exact: true, default: () => "full" as const }),
  core_tools: Schema.optionalWith(CoreToolsConfig, { default: () => new CoreToolsConfig({}) }),
  http: Schema.optionalWith(HttpConfig, { default: () => new HttpConfig({}) })
}) {
  static readonly empty = new ClawtoolConfig({ sources: {} })
}

// =============================================================================
// The mcpServers (Claude Desktop, Cursor) / servers (VS Code) JSON, imported as a ClawtoolConfig
// =============================================================================

/** Keys of an entry that only steer the host's approval UI; they mean nothing to clawtool, so they are dropped. */
const hostOnlyKeys: ReadonlyArray<string> = ["autoApprove", "alwaysAllow"]

/** The `type` values of remote entries, and the transport each means (VS Code writes "http", others "sse"). */
const remoteTypes: Readonly<Record<string, RemoteTransport>> = {
  http: "streamable-http",
  "streamable-http": "streamable-http",
  streamableHttp: "streamable-http",
  sse: "sse"
}

/** What one host entry is to clawtool: a local server, a remote one, or one it cannot use (and why). */
type EntryKind =
  | { readonly _tag: "Stdio" }
  | { readonly _tag: "Remote"; readonly transport: RemoteTransport }
  | { readonly _tag: "Unusable"; readonly why: string }

/** Judged on the entry's raw keys, so an unusable entry is skipped before its keys are checked. */
const entryKind = (entry: { readonly [key: string]: unknown }): EntryKind => {
  const { type, command, url } = entry
  if (type !== undefined && type !== "stdio" && (typeof type !== "string" || !(type in remoteTypes))) {
    return { _tag: "Unusable", why: `type ${JSON.stringify(type)} is not stdio, http or sse` }
  }
  const remote = typeof type === "string" ? remoteTypes[type] : undefined
  if (type === "stdio" || (type === undefined && url === undefined)) {
    return command === undefined
      ? { _tag: "Unusable", why: url === undefined ? "has neither a command nor a url" : `type "stdio" has no command` }
      : { _tag: "Stdio" }
  }
  if (url === undefined) return { _tag: "Unusable", why: `type ${JSON.stringify(type)} has no url` }
  if (command !== undefined) return { _tag: "Unusable", why: "has both a command and a url" }
  return { _tag: "Remote", transport: remote ?? "auto" }
}

/** Any object; its kind picks the keys it is checked against. */
const HostEntryObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  description: `an object with a "command" or a "url"`
})

/** One local server entry in the host's own key names. */
const StdioEntryFields = Schema.Struct({
  type: Schema.optional(Schema.Literal("stdio")),
  command: Schema.propertySignature(
    Schema.String.pipe(Schema.nonEmptyString({ description: "a non-empty string" }))
  ).annotations({ missingMessage: () => "this entry has no command" }),
  args: Schema.optional(Schema.Array(Schema.String).annotations({ description: "a list of strings" })),
  env: Schema.optional(Env),
  cwd: SourceConfig.fields.cwd,
  disabled: Schema.optional(Schema.Boolean.annotations({ description: "true or false" }))
})

/** One remote server entry (Cursor, Claude, VS Code: `url`, optional `type` and `headers`). */
const RemoteEntryFields = Schema.Struct({
  type: Schema.optional(Schema.String),
  url: RemoteUrl,
  headers: Schema.optional(Headers),
  disabled: Schema.optional(Schema.Boolean.annotations({ description: "true or false" }))
})

/** A host entry as a source's fields, or a note that it was skipped. */
type HostSource =
  | { readonly _tag: "Source"; readonly fields: Readonly<Record<string, unknown>> }
  | { readonly _tag: "Skipped"; readonly why: string }

const HostSourceValue = Schema.declare(
  (input: unknown): input is HostSource => typeof input === "object" && input !== null && "_tag" in input
)

const HostEntry = Schema.transformOrFail(HostEntryObject, HostSourceValue, {
  strict: true,
  decode: (raw, options) => {
    const entry = Record.filter(raw, (_, key) => !hostOnlyKeys.includes(key))
    const kind = entryKind(entry)
    switch (kind._tag) {
      case "Unusable":
        return ParseResult.succeed<HostSource>({ _tag: "Skipped", why: kind.why })
      case "Stdio":
        return ParseResult.map(ParseResult.decodeUnknown(StdioEntryFields)(entry, options), (local): HostSource => ({
          _tag: "Source",
          fields: {
            command: [local.command, ...(local.args ?? [])],
            ...(local.env === undefined ? {} : { env: local.env }),
            ...(local.cwd === undefined ? {} : { cwd: local.cwd }),
            enabled: local.disabled !== true
          }
        }))
      case "Remote":
        return ParseResult.map(ParseResult.decodeUnknown(RemoteEntryFields)(entry, options), (remote): HostSource => ({
          _tag: "Source",
          fields: {
            url: remote.url,
            transport: kind.transport,
            ...(remote.headers === undefined ? {} : { headers: remote.headers }),
            enabled: remote.disabled !== true
          }
        }))
    }
  },
  encode: (entry, _, ast) =>
    ParseResult.fail(new ParseResult.Forbidden(ast, entry, "clawtool does not write host entries"))
})

const HostServers = Schema.Record({ key: InstanceName, value: HostEntry }).annotations({
  description: `an object of servers, like { "my-server": { "command": "npx" } }`
})

/** The host owns the file: its other top-level keys (globalShortcut, inputs, …) are left alone. */
const HostDocument = Schema.Struct(
  { mcpServers: Schema.optional(HostServers), servers: Schema.optional(HostServers) },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
).annotations({ description: `a JSON object with "mcpServers" or "servers"` })

/** An entry of a host's JSON file that clawtool cannot use: left out of the sources, named in a warning and in Health. */
export class SkippedEntry extends Schema.Class<SkippedEntry>("SkippedEntry")({
  /** The entry's key. */
  name: Schema.String,
  /** Why clawtool cannot use it, like `type "ws" is not stdio, http or sse`. */
  reason: Schema.String
}) {}

/** A config as decoded from its file, with the host entries left out of it (a TOML config skips none: it rejects). */
export const DecodedConfig = Schema.Struct({ config: ClawtoolConfig, skipped: Schema.Array(SkippedEntry) })
export type DecodedConfig = typeof DecodedConfig.Type

/**
 * A host's JSON file as a ClawtoolConfig: each entry becomes a source, `command` + `args` its command (or `url`,
 * `type` and `headers` a remote source's keys) and `disabled` its `enabled`. An entry clawtool cannot use is left out
 * and listed in `skipped` (by name) with why, never a reason to reject the others. One way only: clawtool writes its
 * own config as TOML.
 */
export const McpServersJson = Schema.transformOrFail(HostDocument, DecodedConfig, {
  strict: true,
  decode: (document, _, ast) => {
    const { mcpServers, servers } = document
    if (mcpServers !== undefined && servers !== undefined) {
      return ParseResult.fail(new ParseResult.Type(ast, document, `has both "mcpServers" and "servers"; keep one`))
    }
    const entries = mcpServers ?? servers
    if (entries === undefined) {
      return ParseResult.fail(
        new ParseResult.Type(
          ast,
          document,
          `expected a JSON object with "mcpServers" (Claude Desktop, Cursor) or "servers" (VS Code)`
        )
      )
    }
    return ParseResult.succeed({
      config: {
        sources: Record.filterMap(entries, (entry) =>
          entry._tag === "Source" ? Option.some(entry.fields) : Option.none()
        )
      },
      skipped: Object.entries(entries)
        .flatMap(([name, entry]) => (entry._tag === "Skipped" ? [{ name, reason: entry.why }] : []))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    })
  },
  encode: (decoded, _, ast) =>
    ParseResult.fail(
      new ParseResult.Forbidden(ast, decoded, "clawtool writes its config as TOML, not as mcpServers JSON")
    )
})
