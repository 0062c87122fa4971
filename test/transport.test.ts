// The pieces under the call relay (ADR 009) that a real child cannot drive into every corner: write coalescing and
// the relay's handling of late, foreign and malformed messages.
import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import { PassThrough, Writable } from "node:stream"
import type { CallError } from "../src/domain/Errors.js"
import type { CallToolResult } from "../src/domain/Mcp.js"
import * as Relay from "../src/services/SourceClient/Relay.js"
import { LineWriter } from "../src/transport/LineWriter.js"
import { StdioServerTransport } from "../src/transport/StdioServerTransport.js"

/** The CallError of a failed outcome. */
const failure = (outcome: Either.Either<CallToolResult, CallError> | undefined) =>
  outcome !== undefined && Either.isLeft(outcome) ? outcome.left : assert.fail("expected a failed outcome")

const settle = () => new Promise((resolve) => setImmediate(resolve))

/** A writable that records each write it is given. */
const recorder = () => {
  const writes: Array<string> = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      writes.push(chunk.toString())
      callback()
    }
  })
  return { writes, stream }
}

describe("LineWriter", () => {
  it("lines written in one turn of the event loop leave in one write, in order", async () => {
    const { writes, stream } = recorder()
    const writer = new LineWriter(stream)
    for (let i = 0; i < 32; i++) void writer.write(`${i}\n`)
    await settle()
    void writer.write("next\n")
    await settle()
    assert.deepStrictEqual(writes, [Array.from({ length: 32 }, (_, i) => `${i}\n`).join(""), "next\n"])
  })
})

describe("StdioServerTransport.intercept", () => {
  it("sees JSON-RPC objects first; what it declines reaches onmessage; reply frames one answer", async () => {
    const stdin = new PassThrough()
    const { writes, stream } = recorder()
    const transport = new StdioServerTransport(stdin, stream)
    const seen: Array<unknown> = []
    transport.intercept = (message) => {
      if (message.method !== "tools/call") return false
      transport.reply(message.id as number, { content: [] })
      return true
    }
    transport.onmessage = (message) => seen.push(message)
    await transport.start()
    stdin.write('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}\n')
    stdin.write('{"jsonrpc":"2.0","id":2,"method":"ping"}\n')
    stdin.write('{"id":3,"method":"tools/call"}\n') // not JSON-RPC 2.0: never intercepted, rejected as such
    await settle()
    assert.deepStrictEqual(seen, [{ jsonrpc: "2.0", id: 2, method: "ping" }])
    const lines = writes
      .join("")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line))
    assert.deepStrictEqual(lines[0], { jsonrpc: "2.0", id: 1, result: { content: [] } })
    assert.deepInclude(lines[1], {
      id: 3,
      error: { code: -32600, message: "Invalid Request: not a JSON-RPC 2.0 message" }
    })
    await transport.close()
  })
})

describe("Relay", () => {
  const setup = (callTimeoutMs?: number) => {
    const sent: Array<Record<string, any>> = []
    const relay = Relay.make({
      instance: "srv",
      send: (lines) => {
        for (const line of lines.trim().split("\n")) sent.push(JSON.parse(line))
      },
      callTimeoutMs
    })
    const outcomes: Array<Either.Either<CallToolResult, CallError>> = []
    return {
      relay,
      sent,
      outcomes,
      done: (outcome: Either.Either<CallToolResult, CallError>) => outcomes.push(outcome)
    }
  }

  it("its own string ids only: the SDK's numeric ids and unknown ids pass through; a late answer is dropped", async () => {
    const { relay, sent, outcomes, done } = setup()
    const cancel = relay.call({ name: "echo", arguments: { text: "a" } }, done)
    const id = sent[0]!.id as string
    assert.deepStrictEqual(sent[0], {
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "a" } }
    })
    assert.isFalse(relay.receive({ jsonrpc: "2.0", id: 1, result: {} }))
    assert.isFalse(relay.receive({ jsonrpc: "2.0", id: "someone-else", result: {} }))
    assert.isFalse(relay.receive({ jsonrpc: "2.0", id: 7, method: "sampling/createMessage", params: {} }))
    cancel()
    assert.deepStrictEqual(sent[1], {
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: id, reason: "cancelled by the host" }
    })
    assert.isTrue(relay.receive({ jsonrpc: "2.0", id, result: { content: [] } }))
    await settle()
    assert.deepStrictEqual(outcomes, [])
  })

  it("a malformed answer is a retryable Transport error; a JSON-RPC error is the child's, with its code", () => {
    const { relay, sent, outcomes, done } = setup()
    relay.call({ name: "a" }, done)
    relay.call({ name: "b" }, done)
    relay.receive({ jsonrpc: "2.0", id: sent[0]!.id, result: "not an object" })
    relay.receive({ jsonrpc: "2.0", id: sent[1]!.id, error: { code: -32602, message: "bad arguments" } })
    const [malformed, child] = outcomes.map(failure)
    assert.deepInclude(malformed, { reason: "Transport", retryable: true, tool: "srv.a" })
    assert.deepInclude(child, { reason: "Child", code: -32602, detail: "MCP error -32602: bad arguments" })
  })

  it("with call_timeout: the child is asked for progress under the call's id, and progress resets the timer", async () => {
    const { relay, sent, outcomes, done } = setup(150)
    relay.call({ name: "slow", _meta: { other: 1 } }, done)
    const id = sent[0]!.id as string
    assert.deepStrictEqual(sent[0]!.params._meta, { other: 1, progressToken: id })
    for (let i = 0; i < 4; i++) {
      await new Promise((resolve) => setTimeout(resolve, 80))
      assert.isTrue(
        relay.receive({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: id, progress: i } })
      )
    }
    assert.deepStrictEqual(outcomes, [])
    await new Promise((resolve) => setTimeout(resolve, 250))
    assert.strictEqual(outcomes.length, 1)
    assert.deepInclude(failure(outcomes[0]), { reason: "Timeout" })
    assert.strictEqual(sent[1]!.method, "notifications/cancelled")
  })
})
