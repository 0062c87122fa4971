import { Duration, Schema } from "effect"
import { DurationString } from "./Duration.js"

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

/** One `[sources.<instance>]` table. Keys are the TOML names; unknown keys are errors. */
export class SourceConfig extends Schema.Class<SourceConfig>("SourceConfig")({
  /** Accepted for configs written by the Go clawtool (`type = "mcp"`); stdio is the only transport. */
  type: Schema.optional(Schema.Literal("mcp", "stdio")),
  command: Schema.NonEmptyArray(Schema.String),
  env: Schema.optionalWith(Schema.Record({ key: EnvName, value: Schema.String }), { default: () => ({}) }),
  cwd: Schema.optional(Schema.String),
  enabled: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  startup_timeout: Schema.optionalWith(DurationString, { default: () => Duration.seconds(60) }),
  env_passthrough: Schema.optionalWith(Schema.Array(EnvName), { default: () => [] })
}) {}

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

export class ClawtoolConfig extends Schema.Class<ClawtoolConfig>("ClawtoolConfig")({
  sources: Schema.optionalWith(Schema.Record({ key: InstanceName, value: SourceConfig }), { default: () => ({}) }),
  tools: Schema.optionalWith(ToolTables, { default: () => ({}) }),
  name_budget: Schema.optionalWith(NameBudget, { default: () => 64 }),
  observability: Schema.optionalWith(ObservabilityConfig, { default: () => new ObservabilityConfig({}) })
}) {
  static readonly empty = new ClawtoolConfig({ sources: {} })
}
