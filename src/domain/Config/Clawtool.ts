import { Duration, Schema } from "effect"
import { DurationString } from "../Duration.js"
import { defaultLimits } from "../Limits.js"
import { CoreToolsConfig } from "./CoreTools.js"
import { HttpTokens, Profiles } from "./Profiles.js"
import { checkPrefixes, checkSupervision, checkTarget, SourceConfig } from "./Source.js"
import { AuditConfig, TrustConfig } from "./Trust.js"
import { InstanceName, wholeBetween } from "./Values.js"

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
  /** `GET /metrics` (Prometheus text, issue 29); false: no route and no counting on the call path. */
  metrics: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  /** `GET /metrics` without the token (a scraper inside the cluster); the token protects it otherwise. */
  metrics_public: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  /** The dashboard at `/ui` and its API under `/api` (issue 29); both need the token as /mcp does. */
  ui: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  /** Largest request body on /mcp, in bytes (413 above it). */
  max_body: Schema.optionalWith(wholeBetween("max_body", 1024, 1024 * 1024 * 1024), { default: () => 4 * 1024 * 1024 }),
  /** Named tokens, each reaching only its profiles ("default": /mcp); `token` above reaches every one. */
  tokens: Schema.optionalWith(HttpTokens, { default: () => ({}) }),
  /**
   * The key that signs a 2026-07-28 host's `requestState` (ADR 032); replicas that share it accept each other's. May
   * hold `${VAR}` references, resolved like `token`. Unset: a random key per process.
   */
  state_key: Schema.optional(Schema.String.annotations({ description: `a reference like "\${CLAWTOOL_STATE_KEY}"` })),
  /** How long a child's call waits for a modern host to retry with the answers to its input_required. */
  input_required_ttl: Schema.optionalWith(DurationString, { default: () => Duration.minutes(10) })
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
  http: Schema.optionalWith(HttpConfig, { default: () => new HttpConfig({}) }),
  trust: Schema.optionalWith(TrustConfig, { default: () => new TrustConfig({}) }),
  audit: Schema.optionalWith(AuditConfig, { default: () => new AuditConfig({}) }),
  /** Views over the running set, served at /mcp/<name> and by `serve --profile` (issue 26). */
  profiles: Schema.optionalWith(Profiles, { default: () => ({}) })
}) {
  static readonly empty = new ClawtoolConfig({ sources: {} })
}
