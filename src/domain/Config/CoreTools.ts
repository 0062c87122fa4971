import { Duration, Schema } from "effect"
import { PositiveDuration, wholeBetween } from "./Values.js"

/** clawtool's own tools that `[core_tools]` switches (ToolSearch and SourceHealth, the registry's own, always stay). */
export const coreToolNames = [
  "Bash",
  "Read",
  "Edit",
  "Write",
  "Glob",
  "Grep",
  "WebFetch",
  "WebSearch",
  "RunCode"
] as const
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

/** `[core_tools.RunCode]` (ADR 035): code mode's sandbox limits. */
export class RunCodeConfig extends Schema.Class<RunCodeConfig>("RunCodeConfig")({
  enabled: Enabled,
  /** The guest's whole heap in MB: the wasm memory's maximum, which a memory bomb cannot pass. */
  memory: Schema.optionalWith(wholeBetween("memory", 8, 1024), { default: () => 64 }),
  /** The longest one run may take (`timeout_ms` may ask for less, never more). */
  timeout: Schema.optionalWith(PositiveDuration, { default: () => Duration.seconds(30) }),
  /** The most tool calls one run may make. */
  max_calls: Schema.optionalWith(wholeBetween("max_calls", 1, 100_000), { default: () => 200 })
}) {}

const coreTool = Schema.optionalWith(CoreToolConfig, { default: () => new CoreToolConfig({}) })

/**
 * `[core_tools]`: clawtool's own Bash, Read, Edit, Write, Glob, Grep, WebFetch, WebSearch (issue 14), RunCode (ADR 035). A table named
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
  WebSearch: coreTool,
  RunCode: Schema.optionalWith(RunCodeConfig, { default: () => new RunCodeConfig({}) })
}) {}
