import { Duration, Schema } from "effect"
import { DurationString } from "./Duration.js"
import { defaultLimits } from "./Limits.js"

/** ADR-006: kebab-case, 2–32 characters, so `<instance>__<tool>` splits unambiguously at the first `__`. */
export const InstanceName = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9]+(-[a-z0-9]+)*$/, {
    message: (issue) => `instance names are kebab-case (a-z, 0-9, single dashes), got ${JSON.stringify(issue.actual)}`
  }),
  Schema.minLength(2, { message: () => "instance names have at least 2 characters" }),
  Schema.maxLength(32, { message: () => "instance names have at most 32 characters" })
)

const EnvName = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z_][A-Za-z0-9_]*$/, {
    message: (issue) => `expected an environment variable name, got ${JSON.stringify(issue.actual)}`
  })
)

const restartPolicies = ["on-failure", "never"] as const
const restartMessage = (actual: unknown) => `restart is "on-failure" or "never", got ${JSON.stringify(actual)}`
// A refined string, not a Literal union: the formatter reports a union member by member, not with one message.
const RestartPolicy = Schema.String.annotations({ message: (issue) => restartMessage(issue.actual) }).pipe(
  Schema.filter(
    (value): value is (typeof restartPolicies)[number] => (restartPolicies as ReadonlyArray<string>).includes(value),
    { message: (issue) => restartMessage(issue.actual) }
  )
)

const PositiveDuration = Schema.compose(
  // Own message for a non-string (`= 5`): the generic one would only say "expected a string".
  Schema.String.annotations({
    message: (issue) => `expected a duration like "500ms", "60s", "2m" or "1h", got ${JSON.stringify(issue.actual)}`
  }),
  DurationString
).pipe(Schema.filter((duration) => Duration.greaterThan(duration, Duration.zero) || "must be longer than 0"))

const MaxRestarts = Schema.Number.pipe(
  Schema.int({ message: () => "max_restarts must be a whole number" }),
  Schema.nonNegative({ message: () => "max_restarts must not be negative" })
)

/** One `[sources.<instance>]` table. Keys are the TOML names; unknown keys are errors. */
export class SourceConfig extends Schema.Class<SourceConfig>("SourceConfig")({
  /** Accepted for configs written by the Go clawtool (`type = "mcp"`); stdio is the only transport. */
  type: Schema.optional(Schema.Literal("mcp", "stdio")),
  command: Schema.NonEmptyArray(Schema.String),
  env: Schema.optionalWith(Schema.Record({ key: EnvName, value: Schema.String }), { default: () => ({}) }),
  cwd: Schema.optional(Schema.String),
  enabled: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  startup_timeout: Schema.optionalWith(DurationString, { default: () => Duration.seconds(60) }),
  env_passthrough: Schema.optionalWith(Schema.Array(EnvName), { default: () => [] }),
  // Supervision (ADR-004): restart with exponential backoff, reset by a stable run, crash-loop past max_restarts.
  restart: Schema.optionalWith(RestartPolicy, { exact: true, default: () => "on-failure" as const }),
  restart_backoff: Schema.optionalWith(PositiveDuration, { default: () => Duration.millis(250) }),
  restart_backoff_max: Schema.optionalWith(PositiveDuration, { default: () => Duration.seconds(5) }),
  restart_window: Schema.optionalWith(PositiveDuration, { default: () => Duration.seconds(60) }),
  max_restarts: Schema.optionalWith(MaxRestarts, { default: () => 10 }),
  crash_loop_retry: Schema.optionalWith(PositiveDuration, { default: () => Duration.seconds(60) }),
  /** Per tools/call, reset by progress; none by default. */
  call_timeout: Schema.optional(PositiveDuration)
}) {}

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

const toolSelector = /^[a-z0-9]+(-[a-z0-9]+)*\..+$/

/** Checked on the whole table so the message names the bad key (a record key refinement would only say "unexpected"). */
const ToolTables = Schema.Record({ key: Schema.String, value: ToolConfig }).pipe(
  Schema.filter((tables) => {
    const bad = Object.keys(tables).find((key) => !toolSelector.test(key))
    return bad === undefined
      ? true
      : {
          path: [bad],
          message: `tool selectors are "<instance>.<tool>", like tools."github.create_issue"; got ${JSON.stringify(bad)}`
        }
  })
)

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
const wholeBetween = (key: string, min: number, max: number) =>
  Schema.Number.pipe(
    Schema.int({ message: () => `${key} must be a whole number` }),
    Schema.between(min, max, { message: () => `${key} must be between ${min} and ${max}` })
  )
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

export class ClawtoolConfig extends Schema.Class<ClawtoolConfig>("ClawtoolConfig")({
  sources: Schema.optionalWith(
    Schema.Record({ key: InstanceName, value: SourceConfig.pipe(Schema.filter(checkSupervision)) }),
    { default: () => ({}) }
  ),
  tools: Schema.optionalWith(ToolTables, { default: () => ({}) }),
  name_budget: Schema.optionalWith(NameBudget, { default: () => 64 }),
  observability: Schema.optionalWith(ObservabilityConfig, { default: () => new ObservabilityConfig({}) }),
  limits: Schema.optionalWith(LimitsConfig, { default: () => new LimitsConfig({}) })
}) {
  static readonly empty = new ClawtoolConfig({ sources: {} })
}
