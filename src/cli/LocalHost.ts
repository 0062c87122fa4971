/**
 * An MCP host inside the CLI process (`clawtool call`): a transport the Gateway serves one session on, exactly as it
 * serves a host over stdio, and the host's side of JSON-RPC over it. Messages are handed over as objects, a turn of
 * the event loop later (as a pipe would), so neither side re-enters the other.
 */
import { Deferred, Effect } from "effect"
import type { JsonObject } from "../domain/Mcp.js"
import type { Transport } from "../services/Gateway/Sdk.js"

/** A JSON-RPC error the session answered with. */
export interface RpcFailure {
  readonly code: number
  readonly message: string
}

/**
 * What the host answers a request the session sends it (elicitation from `[trust] confirm`, ping); rejecting with an
 * RpcFailure answers that error.
 */
export type HostAnswer = (method: string, params: JsonObject | undefined) => Promise<JsonObject>

interface Message {
  readonly id?: string | number
  readonly method?: string
  readonly params?: JsonObject
  readonly result?: JsonObject
  readonly error?: RpcFailure
}

export const makeLocalHost = (answer: HostAnswer) => {
  const pending = new Map<string | number, Deferred.Deferred<JsonObject, RpcFailure>>()
  let nextId = 1

  const fromSession = (message: Message) => {
    if (message.method === undefined) {
      const waiting = message.id === undefined ? undefined : pending.get(message.id)
      if (waiting === undefined) return
      pending.delete(message.id!)
      Deferred.unsafeDone(
        waiting,
        message.error === undefined ? Effect.succeed(message.result ?? {}) : Effect.fail(message.error)
      )
      return
    }
    if (message.id === undefined) return // a notification (progress, logs, list_changed): nothing to show
    const id = message.id
    answer(message.method, message.params).then(
      (result) => toSession({ jsonrpc: "2.0", id, result }),
      (cause: RpcFailure | Error) =>
        toSession({
          jsonrpc: "2.0",
          id,
          error: cause instanceof Error ? { code: -32603, message: cause.message } : cause
        })
    )
  }

  const transport: Transport = {
    start: async () => {},
    send: async (message) => void setImmediate(() => fromSession(message as Message)),
    close: async () => transport.onclose?.()
  }
  const toSession = (message: JsonObject) =>
    void setImmediate(() => transport.onmessage?.(message as Parameters<NonNullable<Transport["onmessage"]>>[0]))

  /** Sends a request and waits for its answer: the result, or the JSON-RPC error. */
  const request = (method: string, params: JsonObject) =>
    Effect.gen(function* () {
      const id = nextId++
      const answered = yield* Deferred.make<JsonObject, RpcFailure>()
      pending.set(id, answered)
      toSession({ jsonrpc: "2.0", id, method, params })
      return yield* Deferred.await(answered)
    })

  const notify = (method: string, params: JsonObject = {}) =>
    Effect.sync(() => toSession({ jsonrpc: "2.0", method, params }))

  return { transport, request, notify } as const
}
