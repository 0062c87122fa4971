import { assert, describe, it } from "@effect/vitest"
import * as Recent from "../src/services/Metrics/Recent.js"
import type { AuditCall } from "../src/services/Trust/AuditLine.js"

const minute = 60_000
const call = (at: number, durationMs: number): AuditCall => ({
  at,
  durationMs,
  session: "s1",
  client: "host",
  instance: "gh",
  tool: "search",
  outcome: "ok",
  arguments: { secret: "never kept" },
  bytesOut: 10,
  traceId: undefined
})

describe("Metrics/Recent (the dashboard's calls and latency)", () => {
  it("keeps the last calls in order, without their arguments or session", () => {
    const recent = Recent.make(3, 15)
    for (let i = 0; i < 5; i++) recent.add(call(i, i))
    assert.deepStrictEqual(
      recent.calls().map((kept) => kept.at),
      [2, 3, 4]
    )
    assert.strictEqual(recent.version(), 5)
    assert.deepStrictEqual(Object.keys(recent.calls()[0]!).sort(), [
      "at",
      "durationMs",
      "outcome",
      "source",
      "tool",
      "traceId"
    ])
    assert.strictEqual(Recent.make().calls().length, 0)
  })

  it("gives each source the mean latency of each of the last minutes, null for a minute without calls", () => {
    const recent = Recent.make(10, 3)
    const start = 100 * minute
    recent.add(call(start, 10))
    recent.add(call(start + 1000, 30))
    recent.add(call(start + 2 * minute, 5))
    recent.add({ ...call(start + 2 * minute, 7), instance: undefined, tool: "nope" })
    assert.deepStrictEqual(recent.latency("gh", start + 2 * minute + 5), [20, null, 5])
    assert.deepStrictEqual(recent.latency("unknown", start + 2 * minute), [null, null, 7])
    // Three minutes on, the first minute's slot is reused and its old figures are not mixed in.
    recent.add(call(start + 3 * minute, 1))
    assert.deepStrictEqual(recent.latency("gh", start + 3 * minute), [null, 5, 1])
    assert.deepStrictEqual(recent.latency("gh", start + 10 * minute), [null, null, null])
    assert.deepStrictEqual(recent.latency("other", start), [null, null, null])
  })
})
