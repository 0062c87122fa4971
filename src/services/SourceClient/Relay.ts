import { Either } from "effect"
import * as CallPlan from "../../domain/CallPlan.js"
import type { RelayDone } from "../../domain/Connection.js"
import { completeResult, envelopeFor, type InputRequired, inputRequiredOf } from "../../domain/Era.js"
import { CallError } from "../../domain/Errors.js"
import type { CallToolRequest, CallToolResult, JsonObject } from "../../domain/Mcp.js"
import { isNotification } from "../../transport/Envelope.js"
import { mcpErrorText } from "../../transport/SdkShape.js"

/**
 * tools/call below the SDK (ADR 009): the request is written to the child as one line and the answer taken from
 * the child's stdout before the SDK's Protocol sees it. Same outcomes as SourceClient's SDK path (the child's error
 * as a `Child` CallError with its code, `Timeout` after call_timeout without answer or progress, a retryable
 * `Transport` error when the child exits), for a fraction of the cost: no promise chain, no per-call
 * AbortController or schema parse, no Effect fiber.
 */

export interface Relay {
  /**
   * Sends the call; the returned function cancels it (the child is told, `done` is never called). A modern child's
   * envelope names `hostCapabilities` when given (Connection.relayCall).
   */
  readonly call: (request: CallToolRequest, done: RelayDone, hostCapabilities?: JsonObject) => () => void
  /** Offered each message from the child first: true when it was a relayed call's answer or progress. */
  readonly receive: (message: Record<string, unknown>) => boolean
  /** The child is gone: every call in flight, and every later one, fails with this retryable detail. */
  readonly close: (detail: string) => void
}

/** The call_timeout timers: Node's by default; a test injects a clock it advances itself. */
export interface Timers<H = unknown> {
  readonly set: (expire: (id: string) => void, ms: number, id: string) => H
  readonly clear: (handle: H) => void
  /** Restarts the full period (progress keeps a call alive). */
  readonly refresh: (handle: H) => void
}

const nodeTimers: Timers<ReturnType<typeof setTimeout>> = {
  set: (expire, ms, id) => setTimeout(expire, ms, id),
  clear: (handle) => clearTimeout(handle),
  refresh: (handle) => void handle.refresh()
}

interface Pending {
  readonly tool: string
  readonly request: CallToolRequest
  readonly done: RelayDone
  readonly timer: unknown
  readonly hostCapabilities: JsonObject | undefined
}

/**
 * A modern child's first answer asked for input (MRTR, ADR 033): the caller asks the host and finishes the call; the
 * returned function cancels that. `done` is called as for any relayed call.
 */
export type ContinueCall = (
  request: CallToolRequest,
  needed: InputRequired,
  done: RelayDone,
  hostCapabilities: JsonObject | undefined
) => () => void

/** No answer or progress within call_timeout: the same error on the relay and on the SDK path. */
export const timeoutError = (tool: string, timeoutMs: number) =>
  new CallError({
    tool,
    reason: "Timeout",
    detail: `${tool} timed out: no answer or progress within call_timeout (${timeoutMs}ms); the call was cancelled at the source`
  })

/** The child's own JSON-RPC error to a call, on the relay and on the SDK path alike. */
export const childError = (
  tool: string,
  cause: { readonly message: string; readonly code: number; readonly data?: unknown }
) =>
  new CallError({
    tool,
    reason: "Child",
    detail: cause.message,
    code: cause.code,
    ...(cause.data === undefined ? {} : { data: cause.data })
  })

/** The source could not answer (it exited, or its pipe broke): retrying later may succeed. */
export const transportError = (tool: string, detail: string) =>
  new CallError({ tool, reason: "Transport", detail, retryable: true })

/** Params JSON cannot write (too deep for the stack): the call ends here, the child never sees it. */
export const unserialisableArguments = (tool: string, cause: unknown) =>
  new CallError({
    tool,
    reason: "InvalidArguments",
    detail: `${tool}: the call cannot be serialised for the source (${cause instanceof Error ? cause.message : String(cause)})`
  })

// String ids: the SDK client numbers its own requests, so the two never meet on the same pipe.
const prefix = "clawtool-"

export const make = (options: {
  readonly instance: string
  /** Writes one or more newline-terminated messages to the child. */
  readonly send: (lines: string) => void
  readonly callTimeoutMs?: number | undefined
  readonly timers?: Timers | undefined
  /** A modern child's `_meta` envelope, put into every call (its era has no session to remember the client by). */
  readonly envelope?: JsonObject | undefined
  /** A modern child's `input_required` answers go here; without it they reach the caller as a malformed answer. */
  readonly continueCall?: ContinueCall | undefined
}): Relay => {
  const { instance, send, callTimeoutMs, envelope, continueCall } = options
  const timers = (options.timers ?? nodeTimers) as Timers
  const keepAlive = CallPlan.childProgress(false, callTimeoutMs) === "keepAlive"
  const pending = new Map<string, Pending>()
  /** Calls a modern child asked input for, until they end: their cancels. */
  const continuing = new Map<string, () => void>()
  let next = 0
  let closed: string | undefined

  const cancelAtChild = (id: string, reason: string) =>
    send(
      `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${JSON.stringify(id)},"reason":${JSON.stringify(reason)}}}\n`
    )

  const expire = (id: string) => {
    const entry = pending.get(id)
    if (entry === undefined) return
    pending.delete(id)
    cancelAtChild(id, `call_timeout (${callTimeoutMs}ms)`)
    entry.done(Either.left(timeoutError(entry.tool, callTimeoutMs!)))
  }

  const call = (request: CallToolRequest, done: RelayDone, hostCapabilities?: JsonObject) => {
    const tool = `${instance}.${request.name}`
    if (closed !== undefined) {
      const detail = closed
      queueMicrotask(() => done(Either.left(transportError(tool, detail))))
      return () => {}
    }
    const id = `${prefix}${++next}`
    // With a call_timeout the child is asked for progress, which keeps a long call alive (as on the SDK path).
    const params =
      envelope !== undefined
        ? {
            ...request,
            _meta: {
              ...envelopeFor(envelope, hostCapabilities),
              ...request._meta,
              ...(keepAlive ? { progressToken: id } : {})
            }
          }
        : keepAlive
          ? { ...request, _meta: { ...request._meta, progressToken: id } }
          : request
    let line: string
    try {
      line = `{"jsonrpc":"2.0","id":"${id}","method":"tools/call","params":${JSON.stringify(params)}}\n`
    } catch (cause) {
      // Total: a value JSON cannot write ends this call with a CallError, never an exception past the caller.
      queueMicrotask(() => done(Either.left(unserialisableArguments(tool, cause))))
      return () => {}
    }
    const timer = callTimeoutMs === undefined ? undefined : timers.set(expire, callTimeoutMs, id)
    pending.set(id, { tool, request, done, timer, hostCapabilities })
    send(line)
    return () => {
      if (!pending.delete(id)) return continuing.get(id)?.()
      if (timer !== undefined) timers.clear(timer)
      cancelAtChild(id, "cancelled by the host")
    }
  }

  const answer = (id: string, entry: Pending, message: Record<string, unknown>) => {
    if (entry.timer !== undefined) timers.clear(entry.timer)
    const result = message.result
    if (typeof result === "object" && result !== null && !Array.isArray(result)) {
      if (envelope === undefined) return entry.done(Either.right(result as CallToolResult))
      const needed = continueCall === undefined ? undefined : inputRequiredOf(result as JsonObject)
      if (needed === undefined) return entry.done(Either.right(completeResult(result as CallToolResult)))
      const cancel = continueCall!(
        entry.request,
        needed,
        (outcome) => {
          if (continuing.delete(id)) entry.done(outcome)
        },
        entry.hostCapabilities
      )
      continuing.set(id, () => {
        continuing.delete(id)
        cancel()
      })
      return
    }
    const error = message.error as JsonObject | undefined
    if (typeof error === "object" && error !== null && typeof error.code === "number") {
      // The detail the SDK path gives (McpError's message), so both paths read the same.
      const detail = mcpErrorText(error.code, typeof error.message === "string" ? error.message : "")
      return entry.done(Either.left(childError(entry.tool, { message: detail, code: error.code, data: error.data })))
    }
    entry.done(Either.left(transportError(entry.tool, "the source answered tools/call with a malformed response")))
  }

  const receive = (message: Record<string, unknown>) => {
    const id = message.id
    if (message.method === undefined) {
      if (typeof id !== "string" || !id.startsWith(prefix)) return false
      const entry = pending.get(id)
      // A late answer to a cancelled or timed-out call is dropped here; the SDK would not know its id.
      if (entry === undefined) return true
      pending.delete(id)
      answer(id, entry, message)
      return true
    }
    if (keepAlive && isNotification(message, "notifications/progress")) {
      const token = (message.params as JsonObject | undefined)?.progressToken
      if (typeof token !== "string" || !token.startsWith(prefix)) return false
      // A progress after the call ended (answered, cancelled, timed out) is dropped here: it is never for the host.
      const timer = pending.get(token)?.timer
      if (timer !== undefined) timers.refresh(timer)
      return true
    }
    return false
  }

  const close = (detail: string) => {
    if (closed !== undefined) return
    closed = detail
    const entries = Array.from(pending.values())
    pending.clear()
    for (const entry of entries) {
      if (entry.timer !== undefined) timers.clear(entry.timer)
      entry.done(Either.left(transportError(entry.tool, detail)))
    }
  }

  return { call, receive, close }
}
