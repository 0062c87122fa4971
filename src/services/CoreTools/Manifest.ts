import { Effect, Either, JSONSchema, type Option, ParseResult, Schema } from "effect"
import type { CoreToolsConfig } from "../../domain/Config.js"
import { CallError, ManifestError } from "../../domain/Errors.js"
import type { CallToolResult, JsonObject, Tool } from "../../domain/Mcp.js"
import type { CatalogView, ToolListing } from "../../domain/ToolProvider.js"
import type { ShellRuns } from "./BashRuns.js"
import type { Ledger } from "./Ledger.js"

export { alwaysLoadSet, usageHints } from "../../domain/ToolProvider.js"

/**
 * The typed manifest of clawtool's own tools (the seed's `registry.Manifest`): one source of truth for each core
 * tool's name, description, search keywords, hint, hot-set flag, schemas and handler.
 */

export const categories = ["shell", "file", "web", "dispatch", "authoring", "setup", "discovery", "checkpoint"] as const
export type Category = (typeof categories)[number]
export const isCategory = (value: string): value is Category => (categories as ReadonlyArray<string>).includes(value)

/**
 * What a core tool's handler can read: the live catalog (core and source tools) and every instance's health, read
 * only (CatalogView), and what the file, shell and web tools share. Interrupting a handler is the host's
 * cancellation: handlers release what they hold (child processes, sockets, locks) in finalizers.
 */
export interface CoreContext extends CatalogView {
  /**
   * The directories file tools may touch, as real paths, in priority order: the host's MCP roots when it declared the
   * `roots` capability (re-read after roots/list_changed), else the config's `roots`, else the directory clawtool
   * started in. Never empty. Relative tool paths resolve against the first.
   */
  readonly roots: Effect.Effect<ReadonlyArray<string>>
  /** `[core_tools] max_output`: the most characters of one result, text and structured content together. */
  readonly maxOutput: number
  /** `[core_tools]` as configured (per-tool tables: `settings.WebFetch.allow_private`, …). */
  readonly settings: CoreToolsConfig
  /** Read-before-edit records and per-file write locks, shared by Read, Edit and Write for the calling host session. */
  readonly ledger: Ledger
  /** A secret from secrets.toml `[scopes.global]` or the environment (e.g. BRAVE_API_KEY); never echo it. */
  readonly secret: (name: string) => Option.Option<string>
  /**
   * The Bash tools' process-group tracker and the calling host's background runs (a daemon session's are killed when
   * it ends, every one when clawtool stops; a stateless request has none); absent in some tests.
   */
  readonly shell?: ShellRuns | undefined
}

/** An extra content block of a core result (MCP ImageContent / TextContent). */
export type ContentBlock =
  | { readonly type: "image"; readonly data: string; readonly mimeType: string }
  | { readonly type: "text"; readonly text: string }

/** What decides whether a core tool is served at all (its spec's `unavailable`): settings and secrets. */
export interface CoreSetup {
  readonly settings: CoreToolsConfig
  readonly secret: (name: string) => Option.Option<string>
}

/** A handler's answer: the text agents read, and the structured value (encoded with the output schema). */
export interface CoreResult<O> {
  readonly text: string
  readonly structured: O
  /** Blocks after the text (an image Read returns); counted against the budget by the handler. */
  readonly content?: ReadonlyArray<ContentBlock>
}

export interface ToolAnnotations {
  readonly title?: string
  readonly readOnlyHint?: boolean
  readonly destructiveHint?: boolean
  readonly idempotentHint?: boolean
  readonly openWorldHint?: boolean
}

export interface ToolSpec<I, O> {
  /** PascalCase, unique; never contains `__`, so no source tool can take it. */
  readonly name: string
  readonly description: string
  readonly keywords: ReadonlyArray<string>
  readonly category: Category
  /** HOW to use it (description says WHAT); at least 20 characters, surfaced as `_meta.clawtool.usage_hint`. */
  readonly usageHint: string
  readonly alwaysLoad: boolean
  readonly annotations?: ToolAnnotations
  readonly input: Schema.Schema<I, any>
  readonly output: Schema.Schema<O, any>
  readonly handler: (input: I, context: CoreContext) => Effect.Effect<CoreResult<O>, CallError>
  /**
   * Why the tool is not served in this setup (e.g. "BRAVE_API_KEY is not configured"), shown as its rule in `tools
   * list`; undefined when it is. Absent: always served (unless `[core_tools]` switches it off).
   */
  readonly unavailable?: (setup: CoreSetup) => string | undefined
}

/** A spec with its types erased, so specs of different tools share one array. */
export interface AnyToolSpec extends ToolSpec<any, any> {}

/** Keeps the input/output types of one spec checked against its handler. */
export const defineTool = <I, O>(spec: ToolSpec<I, O>): AnyToolSpec => spec

/** A spec with its wire definition, ready to list and call. */
export interface CoreTool {
  readonly spec: AnyToolSpec
  readonly tool: Tool
  readonly call: (args: JsonObject | undefined, context: CoreContext) => Effect.Effect<CallToolResult, CallError>
}

/** The core tools' listing (domain/ToolProvider.ts), with each tool's handler. */
export interface Manifest extends ToolListing {
  /** In insertion order. */
  readonly tools: ReadonlyArray<CoreTool>
  readonly byName: ReadonlyMap<string, CoreTool>
}

const pascalCase = /^[A-Z][A-Za-z0-9]*$/
/** Core names must fit the smallest name budget; see NameBudget in domain/Config.ts. */
export const maxCoreNameLength = 24

/**
 * Builds the manifest, checking every spec: an empty name, a name that is not PascalCase, a duplicate name or an
 * unknown category is a ManifestError (the Go original panics).
 */
export const make = (specs: ReadonlyArray<AnyToolSpec>): Either.Either<Manifest, ManifestError> => {
  const byName = new Map<string, CoreTool>()
  const tools: Array<CoreTool> = []
  for (const spec of specs) {
    if (spec.name.trim() === "") {
      return Either.left(
        new ManifestError({ reason: "EmptyName", tool: spec.name, detail: "a tool has an empty name" })
      )
    }
    if (!pascalCase.test(spec.name) || spec.name.length > maxCoreNameLength) {
      return Either.left(
        new ManifestError({
          reason: "InvalidName",
          tool: spec.name,
          detail: `"${spec.name}" is not a PascalCase name of at most ${maxCoreNameLength} characters`
        })
      )
    }
    if (byName.has(spec.name)) {
      return Either.left(
        new ManifestError({ reason: "DuplicateName", tool: spec.name, detail: `duplicate tool name "${spec.name}"` })
      )
    }
    if (!isCategory(spec.category)) {
      return Either.left(
        new ManifestError({
          reason: "InvalidCategory",
          tool: spec.name,
          detail: `invalid category "${String(spec.category)}" for tool "${spec.name}" (one of ${categories.join(", ")})`
        })
      )
    }
    const core = toCoreTool(spec)
    byName.set(spec.name, core)
    tools.push(core)
  }
  return Either.right({ tools, byName })
}

// =============================================================================
// Internal
// =============================================================================

const toCoreTool = (spec: AnyToolSpec): CoreTool => {
  const decode = Schema.decodeUnknown(spec.input, { onExcessProperty: "error", errors: "all" })
  const encode = Schema.encode(spec.output)
  const tool: Tool = {
    name: spec.name,
    description: spec.description,
    inputSchema: objectSchema(spec.input),
    outputSchema: objectSchema(spec.output),
    ...(spec.annotations === undefined ? {} : { annotations: spec.annotations })
  }
  // No span of its own: CoreTools.call's names the tool.
  const call = (args: JsonObject | undefined, context: CoreContext) =>
    decode(args ?? {}).pipe(
      Effect.mapError(
        (error) =>
          new CallError({
            tool: spec.name,
            reason: "InvalidArguments",
            detail: `invalid arguments for ${spec.name}: ${ParseResult.TreeFormatter.formatErrorSync(error)}`
          })
      ),
      Effect.flatMap((input) => spec.handler(input, context)),
      Effect.flatMap((result) =>
        Effect.map(
          // An output that does not match its own schema is a bug in clawtool, not in the caller.
          Effect.orDie(encode(result.structured)),
          (structured): CallToolResult => ({
            content: [{ type: "text", text: result.text }, ...(result.content ?? [])],
            structuredContent: structured as JsonObject
          })
        )
      )
    )
  return { spec, tool, call }
}

const schemaMaps = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"])

/**
 * JSON Schema for the wire, without effect's `$schema`, `$id` and generated `title`s (noise the host pays tokens
 * for). Property maps are walked by value, so a property NAMED "title" stays.
 */
const clean = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(clean)
  if (typeof node !== "object" || node === null) return node
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(node)) {
    if (key === "$schema" || key === "$id" || key === "title") continue
    out[key] =
      schemaMaps.has(key) && typeof value === "object" && value !== null && !Array.isArray(value)
        ? Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, clean(inner)]))
        : clean(value)
  }
  return out
}

/** MCP wants `type: "object"` at the root; effect renders an empty Struct as `object | array`. */
const objectSchema = (schema: Schema.Schema<any, any>): JsonObject => {
  const json = clean(JSONSchema.make(schema)) as JsonObject
  return json.type === "object" ? json : { type: "object", properties: {}, additionalProperties: false }
}
