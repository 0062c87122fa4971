import type { Effect, Either, Stream } from "effect"
import type { EraVerdict, InputPass } from "./Era.js"
import type { CallError, SourceError } from "./Errors.js"
import type { CallToolRequest, CallToolResult, JsonObject, Tool } from "./Mcp.js"
import type { InstanceSurface, RpcError } from "./Surface.js"

/**
 * A live source connection as the rest of clawtool sees it (Sources, Registry, Gateway): plain types, no SDK.
 * SourceClient makes them (a child over stdio or a remote source); only it and its parts touch the SDK.
 */

export interface ExitInfo {
  readonly code: number | null
  readonly signal: string | null
  readonly at: Date
  /** A remote source has no process: why its connection ended (reported instead of an exit code). */
  readonly lost?: SourceError | undefined
}

export interface Progress {
  readonly progress: number
  readonly total?: number | undefined
  readonly message?: string | undefined
}

export interface CallOptions {
  /** Set only when the host asked for progress; the SDK then sends its own token to the child. */
  readonly onProgress?: ((progress: Progress) => void) | undefined
  /** A 2026-07-28 host's log level for this call (its envelope's): a modern child gets it in its own envelope. */
  readonly logLevel?: string | undefined
  /** A modern host's call: a modern child's input_required comes back to it instead of being asked (ADR 033). */
  readonly input?: InputPass | undefined
  /**
   * The client capabilities of the host this request is for (its sampling, elicitation and roots: HostBridge's
   * childCapabilities): a modern child gets them in this request's envelope, in place of what clawtool declared to it,
   * and what it asks of the host is checked against them. None: what clawtool declared (a legacy child always).
   */
  readonly hostCapabilities?: JsonObject | undefined
}

/** The catalogs of one child, each the last good listing; `error` says why the last (re-)listing failed. */
export interface LiveSurface extends InstanceSurface {
  readonly error: SourceError | undefined
}

/** The members SourceClient/Surface adds to a Connection. */
export interface SurfaceMembers {
  /** What clawtool declared to this child (a subset of the host's capabilities). */
  readonly clientCapabilities: JsonObject
  /** Sends the child the host's log level and resource subscriptions again (a remote session renewed in place). */
  readonly restoreHostState: Effect.Effect<void>
  readonly surface: Effect.Effect<LiveSurface>
  /** The current surface, then every swap (one per re-listing). */
  readonly surfaceChanges: Stream.Stream<LiveSurface>
  /** Any request, relayed as sent; the result comes back unvalidated. Interrupting it cancels it at the child. */
  readonly request: (
    method: string,
    params: JsonObject | undefined,
    options?: CallOptions
  ) => Effect.Effect<JsonObject, RpcError>
  readonly notify: (method: string, params?: JsonObject) => Effect.Effect<void>
}

/** How a relayed call ends; called exactly once, never synchronously from `call`, and not after a cancel. */
export type RelayDone = (outcome: Either.Either<CallToolResult, CallError>) => void

/** A live, initialized child. Valid while the scope that created it is open. */
export interface Connection extends SurfaceMembers {
  readonly instance: string
  readonly pid: number
  readonly protocolVersion: string
  /** The era this child is spoken to in (ADR 033): what a probe found, the cached verdict, or the config's setting. */
  readonly era: EraVerdict
  readonly serverInfo: { readonly name: string; readonly version: string }
  readonly capabilities: JsonObject
  readonly tools: ReadonlyArray<Tool>
  readonly listTools: Effect.Effect<ReadonlyArray<Tool>, SourceError>
  readonly callTool: (request: CallToolRequest, options?: CallOptions) => Effect.Effect<CallToolResult, CallError>
  /**
   * The same call without the SDK or an Effect per call (ADR 009): for plain calls (no progress asked, no task).
   * Returns the cancel; `done` gets the outcome, never synchronously. `hostCapabilities` as in CallOptions.
   */
  readonly relayCall: (request: CallToolRequest, done: RelayDone, hostCapabilities?: JsonObject) => () => void
  /** Completes when the process exits (crash, EOF, kill); never fails. */
  readonly exited: Effect.Effect<ExitInfo>
}
