// The Gateway's relay side (ADR 009) over a real host transport: the one cancel map (id 0 included) and a reply that
// never throws (a result too deep to serialise is answered as an isError result, on the relay and the SDK path).
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { PassThrough } from "node:stream"
import type { CallError } from "../src/domain/Errors.js"
import type { CallToolResult, JsonObject } from "../src/domain/Mcp.js"
import * as CallPath from "../src/services/Gateway/CallPath.js"
import { callErrorResult, serialise, unserialisable } from "../src/services/Gateway/Replies.js"
import type { Registry } from "../src/services/Registry.js"
import { Cancels } from "../src/transport/Cancels.js"
import { StdioServerTransport } from "../src/transport/StdioServerTransport.js"

type Done = (outcome: Either.Either<CallToolResult, CallError>) => void

const tooDeep = () => {
  let value: Array<unknown> = []
  for (let i = 0; i < 200_000; i++) value = [value]
  return value
}

/** A host transport whose output is collected line by line, and a registry whose relayed calls the test ends. */
const harness = () => {
  const stdout = new PassThrough()
  const lines: Array<Record<string, any>> = []
  let buffer = ""
  stdout.on("data", (chunk: Buffer) => {
    buffer += chunk.toString("utf8")
    const parts = buffer.split("\n")
    buffer = parts.pop()!
    for (const part of parts) lines.push(JSON.parse(part))
  })
  const transport = new StdioServerTransport(new PassThrough(), stdout)
  const calls = new Map<string, { done: Done; cancelled: boolean }>()
  const registry = {
    relayCall: (wire: string, _request: { arguments?: JsonObject }, done: Done) => {
      const entry = { done, cancelled: false }
      calls.set(wire, entry)
      return () => {
        entry.cancelled = true
      }
    }
  } as unknown as Registry
  const aborted: Array<unknown> = []
  const cancels = new Cancels((id) => (aborted.push(id), true))
  const intercept = CallPath.intercept({ transport, registry, cancels, untraced: true })
  const flushed = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
  return { intercept, calls, lines, aborted, flushed }
}

const call = (id: unknown, name: string) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name } })
const cancel = (requestId: unknown) => ({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId } })

describe("Gateway call path", () => {
  it.live("a relayed result too deep to serialise is answered as an isError result, never thrown", () =>
    Effect.gen(function* () {
      const { intercept, calls, lines, flushed } = harness()
      assert.isTrue(intercept(call(1, "a__deep")))
      calls.get("a__deep")!.done(Either.right({ content: [], structuredContent: { deep: tooDeep() } } as never))
      yield* flushed
      assert.strictEqual(lines.length, 1)
      assert.strictEqual(lines[0]!.id, 1)
      assert.isTrue(lines[0]!.result.isError)
      assert.deepStrictEqual(lines[0]!.result._meta, { clawtool: { error: { reason: "Transport", retryable: false } } })
      assert.match(lines[0]!.result.content[0].text, /^a__deep: the source's result cannot be serialised for the host/)
    })
  )

  it.live("the host's cancel: a relayed call (id 0 too) is cancelled and never answered; other ids go to the SDK", () =>
    Effect.gen(function* () {
      const { intercept, calls, lines, aborted, flushed } = harness()
      assert.isTrue(intercept(call(0, "a__zero")))
      // The id is in flight: a second call under it is left to the SDK path.
      assert.isFalse(intercept(call(0, "a__again")))
      assert.isTrue(intercept(cancel(0)))
      assert.isTrue(calls.get("a__zero")!.cancelled)
      calls.get("a__zero")!.done(Either.right({ content: [] }))
      assert.isTrue(intercept(cancel(9)))
      assert.deepStrictEqual(aborted, [9])
      yield* flushed
      assert.deepStrictEqual(lines, [])
      // Its id is free again.
      assert.isTrue(intercept(call(0, "a__zero")))
    })
  )

  it("the SDK path's serialised answer: the same isError result for a value JSON cannot write", () => {
    const fallback = (cause: unknown) => callErrorResult(unserialisable("t", cause))
    const ok = serialise({ content: [] }, fallback)
    assert.strictEqual(ok.json, '{"content":[]}')
    const bad = serialise({ deep: tooDeep() }, fallback)
    const answer = JSON.parse(bad.json)
    assert.isTrue(answer.isError)
    assert.strictEqual(answer._meta.clawtool.error.reason, "Transport")
  })
})
