import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { Protocol } from "@modelcontextprotocol/sdk/shared/protocol.js"
import { ProgressNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { isNotification } from "./Envelope.js"

/** The SDK's transport contract, for the services that wrap one (Redaction guards what a host transport sends). */
export type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"

/**
 * Every SDK internal clawtool touches, and nothing else (ADR 002): each adapter checks at construction that the
 * members it uses still exist with the expected type, so an SDK upgrade that renames one fails at start-up with
 * "SDK internals changed (…)" instead of drifting silently (ids from 0 again, progress lost, handlers re-validated).
 */

type Kind = "function" | "number" | "map"

/** The members each adapter relies on, with their kind: the contract an SDK upgrade is checked against. */
export const serverMembers: Readonly<Record<string, Kind>> = {
  /** The SDK's version negotiation, reused by clawtool's own initialize handler (tasks only since 2025-11-25). */
  _oninitialize: "function",
  /** The next outgoing request id: set to 1, because SDK hosts ignore a cancel of id 0 (ADR 005). */
  _requestMessageId: "number",
  /** Request id → the handler's AbortController: a host's cancel of id 0 is honoured here (Protocol._oncancel skips 0). */
  _requestHandlerAbortControllers: "map"
}
export const clientMembers: Readonly<Record<string, Kind>> = {
  /** Progress dispatch: called at once, so progress that shares a read with its result is not lost (ADR 009). */
  _onprogress: "function"
}
/** The base class's setRequestHandler, which skips Server's result re-validation (ADR 002). */
export const protocolMembers: Readonly<Record<string, Kind>> = { setRequestHandler: "function" }

const describe = (value: unknown) =>
  value === undefined ? "missing" : value instanceof Map ? "a Map" : `a ${value === null ? "null" : typeof value}`

const matches = (value: unknown, kind: Kind) => (kind === "map" ? value instanceof Map : typeof value === kind)

export class SdkInternalsChanged extends Error {
  override readonly name = "SdkInternalsChanged"
}

/** Throws SdkInternalsChanged naming every member that is missing or of another type. */
export const assertMembers = (owner: string, target: object, members: Readonly<Record<string, Kind>>): void => {
  const wrong = Object.entries(members).flatMap(([member, kind]) => {
    const value = (target as Record<string, unknown>)[member]
    return matches(value, kind) ? [] : [`${owner}.${member} is ${describe(value)}, expected a ${kind}`]
  })
  if (wrong.length > 0) throw new SdkInternalsChanged(`SDK internals changed (${wrong.join("; ")}), see ADR 002`)
}

/** The JSON-RPC request handlers receive (the SDK's RequestHandlerExtra, the part clawtool reads). */
export interface HandlerExtra {
  readonly signal: AbortSignal
  readonly requestId: string | number
  readonly sendNotification: (notification: { method: string; params?: Record<string, unknown> }) => Promise<void>
}

export type RawHandler = (request: { method: string; params?: unknown }, extra: HandlerExtra) => Promise<unknown>

export interface ServerInternals {
  /** Registers on the base Protocol: the handler's result is sent as returned, not re-parsed by Server. */
  readonly setRawRequestHandler: (schema: unknown, handler: RawHandler) => void
  /** The SDK's own initialize (version negotiation, client capabilities recorded). */
  readonly initialize: (request: unknown) => Promise<{ protocolVersion: string; capabilities: Record<string, unknown> }>
  /** The id of the next request clawtool sends to the host. */
  readonly startRequestIdsAt: (id: number) => void
  /** Aborts the running handler of the host's request `id` (0 included); false when none runs. */
  readonly abortHandler: (id: string | number, reason: unknown) => boolean
}

export const serverInternals = (server: Server): ServerInternals => {
  assertMembers("Server", server, serverMembers)
  assertMembers("Protocol.prototype", Protocol.prototype, protocolMembers)
  const internal = server as unknown as {
    _oninitialize: ServerInternals["initialize"]
    _requestMessageId: number
    _requestHandlerAbortControllers: Map<string | number, AbortController>
  }
  const setRequestHandler = Protocol.prototype.setRequestHandler as (
    this: Server,
    schema: unknown,
    handler: RawHandler
  ) => void
  return {
    setRawRequestHandler: (schema, handler) => setRequestHandler.call(server, schema, handler),
    initialize: (request) => internal._oninitialize(request),
    startRequestIdsAt: (id) => {
      internal._requestMessageId = id
    },
    abortHandler: (id, reason) => {
      const controller = internal._requestHandlerAbortControllers.get(id)
      controller?.abort(reason)
      return controller !== undefined
    }
  }
}

export interface ClientInternals {
  /**
   * Dispatches a child's `notifications/progress` at once, as the SDK would a tick later: by then a result in the same
   * read has removed the request's progress handler and the progress is lost. A progress for a finished request is
   * still dropped (no handler). False when the message is not a well-formed progress notification (the SDK gets it,
   * and answers one with an id: a request, whatever its name).
   */
  readonly progressNow: (message: Record<string, unknown>) => boolean
}

export const clientInternals = (client: Client): ClientInternals => {
  assertMembers("Client", client, clientMembers)
  const internal = client as unknown as { _onprogress: (notification: unknown) => void }
  return {
    progressNow: (message) => {
      if (!isNotification(message, "notifications/progress")) return false
      // The same parse the SDK's notification handler does (unknown params fields are stripped the same way).
      const parsed = ProgressNotificationSchema.safeParse(message)
      if (!parsed.success) return false
      internal._onprogress(parsed.data)
      return true
    }
  }
}
