// The pieces under the call relay (ADR 009) that a real child cannot drive into every corner: write coalescing and
// the relay's handling of late, foreign and malformed messages.
import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import { EventEmitter } from "node:events"
import { PassThrough, Writable } from "node:stream"
import type { CallError } from "../src/domain/Errors.js"
import { defaultLimits, exceedsDepth, idAtEdges, type Limits } from "../src/domain/Limits.js"
import type { CallToolResult } from "../src/domain/Mcp.js"
import * as Relay from "../src/services/SourceClient/Relay.js"
import { ChildProcessTransport } from "../src/transport/ChildProcessTransport.js"
import { isNotification, kindOf } from "../src/transport/Envelope.js"
import { LineFramer, type Overflow } from "../src/transport/LineFramer.js"
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
  const setup = (callTimeoutMs?: number, timers?: Relay.Timers) => {
    const sent: Array<Record<string, any>> = []
    const relay = Relay.make({
      instance: "srv",
      send: (lines) => {
        for (const line of lines.trim().split("\n")) sent.push(JSON.parse(line))
      },
      callTimeoutMs,
      timers
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
    assert.strictEqual(outcomes.length, 0)
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

  it("with call_timeout: the child is asked for progress under the call's id, and progress resets the timer", () => {
    // The relay's timers on a clock this test moves (no timing margins on a loaded machine).
    let now = 0
    const timers = new Set<{ at: number; ms: number; fire: () => void }>()
    const clock: Relay.Timers<{ at: number; ms: number; fire: () => void }> = {
      set: (expire, ms, id) => {
        const timer = { at: now + ms, ms, fire: () => expire(id) }
        timers.add(timer)
        return timer
      },
      clear: (timer) => void timers.delete(timer),
      refresh: (timer) => void (timer.at = now + timer.ms)
    }
    const advance = (ms: number) => {
      now += ms
      for (const timer of [...timers]) if (timer.at <= now && timers.delete(timer)) timer.fire()
    }
    const { relay, sent, outcomes, done } = setup(150, clock as Relay.Timers)
    relay.call({ name: "slow", _meta: { other: 1 } }, done)
    const id = sent[0]!.id as string
    assert.deepStrictEqual(sent[0]!.params._meta, { other: 1, progressToken: id })
    for (let i = 0; i < 4; i++) {
      advance(140)
      assert.isTrue(
        relay.receive({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: id, progress: i } })
      )
    }
    // 560 ms in, four progress notifications each within 150 ms of the last: still running.
    assert.strictEqual(outcomes.length, 0)
    advance(149)
    assert.strictEqual(outcomes.length, 0)
    advance(1)
    assert.strictEqual(outcomes.length, 1)
    assert.deepInclude(failure(outcomes[0]), { reason: "Timeout" })
    assert.strictEqual(sent[1]!.method, "notifications/cancelled")
  })

  it("with call_timeout, a progress with an id is the child's request, not a keep-alive: left to be answered", () => {
    const never: Relay.Timers = { set: () => ({}), clear: () => {}, refresh: () => assert.fail("no keep-alive") }
    const { relay, sent } = setup(150, never)
    relay.call({ name: "slow" }, () => assert.fail("the call does not end"))
    const progress = { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: sent[0]!.id } }
    assert.isFalse(relay.receive({ ...progress, id: "n1" }))
    assert.isFalse(relay.receive({ ...progress, id: null }))
  })
})

describe("Envelope", () => {
  it("a message with a method is a request when it has an id member (any name, any id), else a notification", () => {
    assert.strictEqual(kindOf({ jsonrpc: "2.0", id: "n1", method: "notifications/cancelled" }), "request")
    assert.strictEqual(kindOf({ jsonrpc: "2.0", id: null, method: "notifications/progress" }), "request")
    assert.strictEqual(kindOf({ jsonrpc: "2.0", method: "tools/call" }), "notification")
    assert.strictEqual(kindOf({ jsonrpc: "2.0", id: 1, result: {} }), "answer")
    assert.strictEqual(kindOf({ jsonrpc: "2.0", id: 1, error: {} }), "answer")
    for (const other of [{ id: 1 }, null, [], "x", 1]) assert.strictEqual(kindOf(other), "other")
    const cancel = { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } }
    assert.isTrue(isNotification(cancel, "notifications/cancelled"))
    assert.isFalse(isNotification(cancel, "notifications/progress"))
    assert.isFalse(isNotification({ ...cancel, id: 0 }, "notifications/cancelled"))
  })
})

describe("Limits helpers", () => {
  const nested = (depth: number): unknown => JSON.parse("[".repeat(depth) + "]".repeat(depth))

  it("exceedsDepth counts containers on the deepest path, iteratively (no stack overflow at any depth)", () => {
    assert.isFalse(exceedsDepth({}, 1))
    assert.isTrue(exceedsDepth({ a: [] }, 1))
    assert.isFalse(exceedsDepth({ a: [1, { b: "x" }] }, 3))
    assert.isTrue(exceedsDepth({ a: [1, { b: {} }] }, 3))
    assert.isFalse(exceedsDepth("scalar", 0))
    assert.isFalse(exceedsDepth(nested(512), 512))
    assert.isTrue(exceedsDepth(nested(513), 512))
    assert.isTrue(exceedsDepth(nested(200_000), 512))
  })

  it("idAtEdges reads the id at the start (hosts) or at the end (the SDK's order), nowhere else", () => {
    assert.strictEqual(idAtEdges('{"jsonrpc":"2.0","id":7,"method":"tools/call","par', ""), 7)
    assert.strictEqual(idAtEdges('{"id":"a\\"b","jsonrpc"', ""), 'a"b')
    assert.strictEqual(idAtEdges('{"result":{"content', 'xx"}]},"jsonrpc":"2.0","id":"clawtool-3"}'), "clawtool-3")
    assert.strictEqual(idAtEdges('{"result":{"content', 'x"}]},"id":12,"jsonrpc":"2.0"}'), 12)
    assert.isUndefined(idAtEdges('{"jsonrpc":"2.0","method":"x","params":{"id":1', 'x":{"id":5}}'))
  })
})

describe("LineFramer limits", () => {
  const framer = (max: number) => {
    const lines: Array<string> = []
    const overflows: Array<Overflow> = []
    const instance = new LineFramer(
      (line) => lines.push(line),
      (overflow) => overflows.push(overflow),
      max
    )
    return { lines, overflows, push: (text: string) => instance.push(Buffer.from(text)) }
  }

  it("a line of max bytes passes; one byte more is consumed and reported once, with its size and edges", () => {
    const { lines, overflows, push } = framer(10)
    push("0123456789\n")
    push("01234567890\nnext\n")
    assert.deepStrictEqual(lines, ["0123456789", "next"])
    assert.deepStrictEqual(overflows, [{ bytes: 11, head: "01234567890", tail: "01234567890" }])
  })

  it("a long line across many chunks is never buffered past max, and its head and tail survive", () => {
    const { lines, overflows, push } = framer(1024)
    push('{"id":1,')
    for (let i = 0; i < 100; i++) push("x".repeat(1000))
    push('"end":2}\n{"ok":true}\n')
    assert.deepStrictEqual(lines, ['{"ok":true}'])
    assert.strictEqual(overflows.length, 1)
    assert.strictEqual(overflows[0]!.bytes, 8 + 100_000 + 8)
    assert.isTrue(overflows[0]!.head.startsWith('{"id":1,xxx'))
    assert.isTrue(overflows[0]!.tail.endsWith('xxx"end":2}'))
  })
})

/** The written lines of a recorder, parsed. */
const written = (writes: ReadonlyArray<string>) =>
  writes
    .join("")
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Record<string, any>)

describe("StdioServerTransport under hostile input", () => {
  const setup = async (limits?: Partial<Limits>) => {
    const stdin = new PassThrough()
    const { writes, stream } = recorder()
    const transport = new StdioServerTransport(stdin, stream, { ...defaultLimits, ...limits })
    const seen: Array<Record<string, unknown>> = []
    transport.onmessage = (message) => seen.push(message as never)
    await transport.start()
    return { stdin, writes, transport, seen }
  }

  it("reply and send never throw: an answer that cannot be serialised is an Internal error for the same id", async () => {
    const { writes, transport } = await setup()
    const circular: Record<string, unknown> = {}
    circular.self = circular
    assert.doesNotThrow(() => transport.reply(1, circular))
    await transport.send({ jsonrpc: "2.0", id: 2, result: { big: 10n } as never })
    await settle()
    const [one, two] = written(writes)
    assert.deepStrictEqual([one!.id, one!.error.code, two!.id, two!.error.code], [1, -32603, 2, -32603])
    await transport.close()
  })

  it("a throw while dispatching answers that request with -32603 and the next line is still read", async () => {
    const { stdin, writes, transport, seen } = await setup()
    transport.intercept = (message) => {
      if (message.method === "boom") throw new Error("kaboom")
      return false
    }
    stdin.write('{"jsonrpc":"2.0","id":"a","method":"boom"}\n{"jsonrpc":"2.0","method":"boom"}\n')
    stdin.write('{"jsonrpc":"2.0","id":"b","method":"ping"}\n')
    await settle()
    assert.deepStrictEqual(
      written(writes).map((line) => [line.id, line.error.code, line.error.message]),
      [["a", -32603, "Internal error: kaboom"]]
    )
    assert.deepStrictEqual(seen, [{ jsonrpc: "2.0", id: "b", method: "ping" }])
    await transport.close()
  })

  it("a too-deep answer from the host fails clawtool's own request (an error for that id reaches the SDK)", async () => {
    const { stdin, writes, transport, seen } = await setup({ maxDepth: 8 })
    stdin.write(`{"jsonrpc":"2.0","id":1,"result":{"deep":${"[".repeat(20)}${"]".repeat(20)}}}\n`)
    await settle()
    assert.strictEqual(writes.length, 0)
    assert.deepInclude(seen[0], {
      id: 1,
      error: { code: -32600, message: "the host's answer is nested deeper than max_depth (8)" }
    })
    await transport.close()
  })

  it("backpressure: at max_in_flight unanswered requests stdin pauses; an answer (or a cancel) resumes it", async () => {
    const { stdin, transport } = await setup({ maxInFlight: 2 })
    const taken: Array<string | number> = []
    transport.intercept = (message) => {
      taken.push(message.id as number)
      return true
    }
    for (let id = 1; id <= 4; id++) stdin.write(`{"jsonrpc":"2.0","id":${id},"method":"tools/call"}\n`)
    await settle()
    assert.deepStrictEqual(taken, [1, 2])
    assert.isTrue(stdin.isPaused())
    transport.reply(1, {})
    await settle()
    assert.deepStrictEqual(taken, [1, 2, 3])
    transport.reply(2, {})
    transport.reply(3, {})
    await settle()
    assert.deepStrictEqual(taken, [1, 2, 3, 4])
    assert.isFalse(stdin.isPaused())
    await transport.close()
  })

  it("an over-long answer from the host fails clawtool's own request; an over-long request is answered", async () => {
    const { stdin, writes, transport, seen } = await setup({ maxLineBytes: 1024 })
    await transport.send({ jsonrpc: "2.0", id: 3, method: "sampling/createMessage", params: {} })
    await settle()
    writes.length = 0
    stdin.write(`{"jsonrpc":"2.0","result":{"text":"${"x".repeat(2000)}"},"id":3}\n`)
    stdin.write(`{"jsonrpc":"2.0","id":4,"method":"ping","params":{"text":"${"x".repeat(2000)}"}}\n`)
    await settle()
    assert.deepStrictEqual(seen, [
      {
        jsonrpc: "2.0",
        id: 3,
        error: { code: -32600, message: "the host's answer is 2045 bytes, over max_line_bytes (1024)" }
      }
    ])
    assert.deepStrictEqual(
      written(writes).map((line) => [line.id, line.error.code]),
      [[4, -32600]]
    )
    await transport.close()
  })

  it("backpressure never holds back the host's answer to clawtool's own request (sampling, roots…)", async () => {
    const { stdin, transport, seen } = await setup({ maxInFlight: 1 })
    transport.intercept = (message) => message.method === "tools/call"
    stdin.write('{"jsonrpc":"2.0","id":1,"method":"tools/call"}\n')
    await settle()
    assert.isTrue(stdin.isPaused())
    // While the call waits, clawtool asks the host something: stdin is read again for the answer.
    await transport.send({ jsonrpc: "2.0", id: 0, method: "roots/list" })
    assert.isFalse(stdin.isPaused())
    stdin.write('{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}\n')
    await settle()
    assert.deepStrictEqual(seen, [{ jsonrpc: "2.0", id: 0, result: { roots: [] } }])
    assert.isTrue(stdin.isPaused())
    await transport.close()
  })
})

describe("ChildProcessTransport under hostile output", () => {
  const setup = async (limits?: Partial<Limits>) => {
    const child = Object.assign(new EventEmitter(), {
      stdin: new PassThrough(),
      stdout: new PassThrough(),
      stderr: new PassThrough(),
      exitCode: null,
      signalCode: null
    })
    const garbage: Array<string> = []
    const transport = new ChildProcessTransport(child as never, (line) => garbage.push(line), {
      ...defaultLimits,
      ...limits
    })
    const seen: Array<Record<string, unknown>> = []
    transport.onmessage = (message) => seen.push(message as never)
    await transport.start()
    return { child, garbage, transport, seen }
  }
  const deep = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`

  it("a too-deep answer becomes an error answer for its id, counted once as garbage; other deep messages are dropped", async () => {
    const { child, garbage, seen } = await setup({ maxDepth: 8 })
    child.stdout.write(`{"jsonrpc":"2.0","id":4,"result":{"x":${deep(10)}}}\n`)
    child.stdout.write(`{"jsonrpc":"2.0","method":"notifications/message","params":{"x":${deep(10)}}}\n`)
    child.stdout.write(`{"jsonrpc":"2.0","id":5,"result":{}}\n`)
    await settle()
    assert.deepStrictEqual(seen, [
      {
        jsonrpc: "2.0",
        id: 4,
        error: { code: -32603, message: "the source's answer was refused: a message nested deeper than max_depth (8)" }
      },
      { jsonrpc: "2.0", id: 5, result: {} }
    ])
    assert.strictEqual(garbage.length, 2)
  })

  it("a too-deep request from the child is answered at the child with an error, never handed on", async () => {
    const { child, garbage, seen } = await setup({ maxDepth: 8 })
    const written: Array<string> = []
    child.stdin.on("data", (chunk: Buffer) => written.push(...chunk.toString("utf8").split("\n").filter(Boolean)))
    child.stdout.write(`{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"x":${deep(10)}}}\n`)
    await settle()
    assert.deepStrictEqual(seen, [])
    assert.deepStrictEqual(
      written.map((line) => JSON.parse(line)),
      [
        {
          jsonrpc: "2.0",
          id: "s1",
          error: { code: -32600, message: "a message nested deeper than max_depth (8): refused by clawtool" }
        }
      ]
    )
    assert.strictEqual(garbage.length, 1)
  })

  it("a throw in intercept or onmessage is logged as garbage and the next line is still read", async () => {
    const { child, garbage, transport, seen } = await setup()
    transport.intercept = (message) => {
      if (message.id === 1) throw new Error("kaboom")
      return false
    }
    child.stdout.write('{"jsonrpc":"2.0","id":1,"result":{}}\n{"jsonrpc":"2.0","id":2,"result":{}}\n')
    await settle()
    assert.deepStrictEqual(seen, [{ jsonrpc: "2.0", id: 2, result: {} }])
    assert.deepStrictEqual(garbage, ["<handling a stdout message failed: kaboom>"])
  })
})
