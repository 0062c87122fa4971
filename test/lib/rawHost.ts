// A raw host for `clawtool serve`: writes lines to its stdin, and reads every stdout line as JSON-RPC (a line that is
// not is recorded as a violation), so tests can say what was answered, how often, and to which id.
import { Effect } from "effect"
import type { ChildProcessWithoutNullStreams } from "node:child_process"
import * as path from "node:path"
import { root } from "./sources.js"

export type Message = Record<string, any>

/** Every stdout line of `serve` must be one of these. */
export const isJsonRpc = (value: unknown): value is Message =>
  typeof value === "object" &&
  value !== null &&
  !Array.isArray(value) &&
  (value as Message).jsonrpc === "2.0" &&
  (typeof (value as Message).method === "string" || "result" in value || "error" in value)

export const rawHost = (child: ChildProcessWithoutNullStreams) => {
  const messages: Array<Message> = []
  /** Answers by id (JSON of the id, so 1 and "1" differ). */
  const answers = new Map<string, Array<Message>>()
  const violations: Array<string> = []
  const waiters = new Set<() => void>()
  let pending = ""
  child.stdout.setEncoding("utf8")
  child.stdout.on("data", (chunk: string) => {
    pending += chunk
    let newline
    while ((newline = pending.indexOf("\n")) !== -1) {
      const line = pending.slice(0, newline)
      pending = pending.slice(newline + 1)
      let parsed: unknown
      try {
        parsed = JSON.parse(line)
      } catch {
        parsed = undefined
      }
      if (!isJsonRpc(parsed)) {
        violations.push(line.slice(0, 300))
        continue
      }
      messages.push(parsed)
      if (parsed.method === undefined) {
        const key = JSON.stringify(parsed.id)
        const list = answers.get(key)
        if (list === undefined) answers.set(key, [parsed])
        else list.push(parsed)
      }
    }
    for (const waiter of waiters) waiter()
  })
  child.stdout.on("end", () => {
    for (const waiter of waiters) waiter()
  })
  /** Answers (results or errors, not requests) with this id, in order. */
  const answersTo = (id: unknown): ReadonlyArray<Message> => answers.get(JSON.stringify(id)) ?? []
  /** Resolves with the first answer to `id` once it is there. */
  const answer = (id: string | number, seconds = 20) =>
    Effect.async<Message, Error>((resume) => {
      const check = () => {
        const found = answersTo(id)[0]
        if (found !== undefined) {
          waiters.delete(check)
          resume(Effect.succeed(found))
        } else if (child.stdout.readableEnded) {
          waiters.delete(check)
          resume(Effect.fail(new Error(`serve closed stdout before answering ${JSON.stringify(id)}`)))
        }
      }
      waiters.add(check)
      check()
      return Effect.sync(() => waiters.delete(check))
    }).pipe(Effect.timeoutFail({ duration: `${seconds} seconds`, onTimeout: () => new Error(`no answer to ${id}`) }))
  const send = (message: Message | string) =>
    child.stdin.write(typeof message === "string" ? message : JSON.stringify(message) + "\n")
  /** initialize, initialized, then a tools/list that waits until every source settled: ready for calls. */
  const handshake = Effect.gen(function* () {
    send({
      jsonrpc: "2.0",
      id: "init",
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw-host", version: "1.0.0" } }
    })
    yield* answer("init")
    send({ jsonrpc: "2.0", method: "notifications/initialized" })
    send({ jsonrpc: "2.0", id: "list", method: "tools/list" })
    return (yield* answer("list")).result.tools as ReadonlyArray<{ name: string }>
  })
  return { messages, violations, answersTo, answer, send, handshake }
}

/** A tools/call line; with `sdk`, it asks for progress, which takes it off the relay onto the SDK path (ADR 009). */
export const callLine = (id: string | number, name: string, args: unknown, sdk = false) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args, ...(sdk ? { _meta: { progressToken: `p-${id}` } } : {}) }
})

export const hostile = path.join(root, "test/fixtures/hostile-server.mjs")
export const hostileCommand = () => JSON.stringify([process.execPath, hostile])

export const hostileSource = (instance = "hostile") => `
[sources.${instance}]
command = ${hostileCommand()}
`

/** `{"deep":[[[…]]]}` nested `depth` arrays, as JSON text (JSON.stringify would overflow building it). */
export const deepArguments = (depth: number) => `{"deep":${"[".repeat(depth)}${"]".repeat(depth)}}`

/** The text of a tools/call result's first content item. */
export const textOf = (message: Message): string => message.result?.content?.[0]?.text
