import { assert, describe, it } from "@effect/vitest"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { ReplayLog } from "../src/transport/ReplayLog.js"

const progress = (n: number): JSONRPCMessage => ({
  jsonrpc: "2.0",
  method: "notifications/progress",
  params: { progressToken: 1, progress: n }
})

/** What a resume after `id` delivers: [event id, message] in order. */
const replay = async (log: ReplayLog, id: string) => {
  const sent: Array<[string, JSONRPCMessage]> = []
  const stream = await log.replayEventsAfter(id, {
    send: async (eventId, message) => void sent.push([eventId, message])
  })
  return { stream, sent }
}

describe("ReplayLog (a daemon session's SSE events, for Last-Event-ID)", () => {
  it("replays, in order, only the events after the given one on that one's stream, priming events skipped", async () => {
    const log = new ReplayLog()
    await log.storeEvent("call-1", {} as JSONRPCMessage) // the SDK's priming event
    const first = await log.storeEvent("call-1", progress(1))
    await log.storeEvent("_GET_stream", progress(99))
    const second = await log.storeEvent("call-1", progress(2))
    const result = await log.storeEvent("call-1", { jsonrpc: "2.0", id: 7, result: { content: [] } })
    assert.strictEqual(await log.getStreamIdForEventId(first), "call-1")
    const { stream, sent } = await replay(log, first)
    assert.strictEqual(stream, "call-1")
    assert.deepStrictEqual(
      sent.map(([id]) => id),
      [second, result]
    )
    assert.deepStrictEqual(sent[0]![1], progress(2))
    // Event ids are unique across the session's streams.
    assert.strictEqual(new Set([first, second, result]).size, 3)
  })

  it("an id it never held, or no longer holds, is unknown (the SDK then answers 400)", async () => {
    const log = new ReplayLog({ maxEvents: 2, maxBytes: 1_000_000, maxAgeMs: 60_000 })
    const oldest = await log.storeEvent("s", progress(1))
    await log.storeEvent("s", progress(2))
    await log.storeEvent("s", progress(3))
    assert.strictEqual(await log.getStreamIdForEventId(oldest), undefined)
    assert.strictEqual(await log.getStreamIdForEventId("no-such-id"), undefined)
    assert.strictEqual(log.size, 2)
  })

  it("is bounded by size (a single larger message is kept alone) and by age", async () => {
    let now = 0
    const log = new ReplayLog({ maxEvents: 100, maxBytes: 200, maxAgeMs: 1_000 }, () => now)
    for (let n = 0; n < 10; n++) await log.storeEvent("s", progress(n))
    assert.isBelow(log.size, 10, "200 characters hold fewer than ten progress notifications")
    const big = await log.storeEvent("s", { jsonrpc: "2.0", id: 1, result: { text: "x".repeat(500) } })
    assert.strictEqual(log.size, 1)
    assert.strictEqual(await log.getStreamIdForEventId(big), "s")
    now = 1_500
    const fresh = await log.storeEvent("s", progress(11))
    assert.strictEqual(await log.getStreamIdForEventId(big), undefined, "older than maxAgeMs")
    assert.strictEqual(await log.getStreamIdForEventId(fresh), "s")
  })
})
