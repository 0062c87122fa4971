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

export class ClawtoolConfig extends Schema.Class<ClawtoolConfig>("ClawtoolConfig")({
  sources: Schema.optionalWith(Schema.Record({ key: InstanceName, value: SourceConfig }), { default: () => ({}) })
}) {
  static readonly empty = new ClawtoolConfig({ sources: {} })
}
