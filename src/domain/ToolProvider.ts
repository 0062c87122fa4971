import { Context, type Effect, Option } from "effect"
import type { Progress } from "./Connection.js"
import type { CallError } from "./Errors.js"
import type { HealthRow } from "./Health.js"
import type { CallToolResult, JsonObject, Tool } from "./Mcp.js"

/**
 * The one contract between the Registry and the tools it serves beside the sources' (clawtool's core tools today):
 * what a provider lists, which of its tools this setup switches off, and how a call reaches one. The Registry names,
 * gates and routes them; the provider owns their state (the read-before-edit ledger, background runs, roots). The
 * provider's tools read the catalog they are part of through a CatalogView, never the Registry itself.
 */

/** What the catalog and the search index read of one provided tool besides its definition. */
export interface ToolTraits {
  /** The tool's own name (its definition's name; PascalCase for core tools). */
  readonly name: string
  /** Search words beyond its name and description. */
  readonly keywords: ReadonlyArray<string>
  /** HOW to use it, surfaced as `_meta.clawtool.usage_hint` when not blank. */
  readonly usageHint: string
  /** Listed with `_meta["anthropic/alwaysLoad"]` (the hot set). */
  readonly alwaysLoad: boolean
}

/** One provided tool: its definition as tools/list sends it before wire naming, and its traits. */
export interface ProvidedTool {
  readonly tool: Tool
  readonly spec: ToolTraits
}

/** A provider's tools, in its order, and by name. */
export interface ToolListing {
  readonly tools: ReadonlyArray<ProvidedTool>
  readonly byName: ReadonlyMap<string, ProvidedTool>
}

/** The catalog as a provider's tools see it: read only, a snapshot per read. */
export interface CatalogSnapshot {
  /** Exactly what tools/list lists (every mode's routing sees these). */
  readonly tools: ReadonlyArray<Tool>
  readonly hash: string
  readonly collisions: ReadonlyArray<Collision>
}

/** Two or more tools claimed one wire name: the one kept and the ones not served. */
export interface Collision {
  readonly wire: string
  /** `<instance>.<tool>` for source tools, the bare name for core tools. */
  readonly kept: string
  readonly dropped: ReadonlyArray<string>
}

/** One ToolSearch result: a listed tool and its score. */
export interface SearchHit {
  readonly name: string
  readonly description: string | undefined
  readonly inputSchema: JsonObject
  readonly score: number
  /** How RunCode's code calls it (`tools.fs.readTextFile(input: …): Promise<…>`), when code mode is on. */
  readonly signature?: string | undefined
}

/** RunCode's `tools` object (ADR 035): per namespace (a source instance) its functions' wire names; core tools at the top. */
export type CodeNames = Readonly<Record<string, string | Readonly<Record<string, string>>>>

/** What a provided tool may read of the catalog and the sources behind it (ToolSearch, SourceHealth). */
export interface CatalogView {
  readonly catalog: Effect.Effect<CatalogSnapshot>
  readonly health: Effect.Effect<ReadonlyArray<HealthRow>>
  /** BM25 over the live catalog; the index is rebuilt when the catalog hash changes. */
  readonly search: (
    query: string,
    limit: number
  ) => Effect.Effect<{ readonly hash: string; readonly hits: ReadonlyArray<SearchHit> }>
  /** The names code calls the listed tools by (`clawtool tools export-typescript`'s), for RunCode. */
  readonly codeNames: Effect.Effect<CodeNames>
}

/**
 * How a provided tool calls another tool of the catalog exactly as its host would (RunCode, ADR 035): the Gateway's
 * call path for the calling session (profiles, `[trust]` confirm and pins, redaction, the audit log marked as made
 * by the tool, tracing spans under the tool's own, limits). The Gateway provides it around each tools/call; none
 * outside a host's request.
 */
export interface HostCallRoute {
  /** One call; an `isError` result is a result, not a failure. Interrupting it cancels it. */
  readonly call: (wire: string, args: JsonObject | undefined) => Effect.Effect<CallToolResult, CallError>
  /**
   * The same call on the line relay (ADR 009), without an Effect, when a host's call of it would take the relay:
   * `done` gets its result (a failure as an `isError` result) and is never called synchronously. Returns the cancel,
   * or undefined when the call must take `call` (which also explains a refusal).
   */
  readonly relay: (
    wire: string,
    args: JsonObject | undefined,
    done: (result: CallToolResult) => void
  ) => (() => void) | undefined
  /** A progress notification for the running call to its host (nothing when the host asked for none). */
  readonly progress: (progress: Progress) => void
}

export class CallRoute extends Context.Reference<CallRoute>()("clawtool/CallRoute", {
  defaultValue: (): Option.Option<HostCallRoute> => Option.none()
}) {}

export interface ToolProvider {
  readonly listing: ToolListing
  /** Tools of the listing this setup does not serve, each with the rule that decided (shown by `tools list`). */
  readonly disabled: ReadonlyMap<string, string>
  /**
   * Calls one of its tools (a name of the listing) for the calling host; `view` is the catalog it may read. Interrupting
   * it is the host's cancellation.
   */
  readonly call: (
    name: string,
    args: JsonObject | undefined,
    view: CatalogView
  ) => Effect.Effect<CallToolResult, CallError>
  /** The host's roots changed: the provider reads them again on next use. */
  readonly rootsChanged: Effect.Effect<void>
}

/** The provider the Registry serves: CoreTools (`CoreTools.Provider`, wired in src/layers/). */
export class CurrentToolProvider extends Context.Tag("clawtool/ToolProvider")<CurrentToolProvider, ToolProvider>() {}

/** Names of the tools marked alwaysLoad (the hot set). */
export const alwaysLoadSet = (listing: ToolListing): ReadonlySet<string> =>
  new Set(listing.tools.filter((provided) => provided.spec.alwaysLoad).map((provided) => provided.spec.name))

/** `{ name: hint }` for tools with a non-empty hint. */
export const usageHints = (listing: ToolListing): ReadonlyMap<string, string> =>
  new Map(
    listing.tools
      .filter((provided) => provided.spec.usageHint.trim() !== "")
      .map((provided) => [provided.spec.name, provided.spec.usageHint] as const)
  )
