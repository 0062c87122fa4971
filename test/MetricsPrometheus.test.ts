import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { make, maxToolLabels } from "../src/services/Metrics/Prometheus.js"
import type { AuditCall } from "../src/services/Trust/AuditLine.js"

const call = (instance: string, tool: string, durationMs: number): AuditCall => ({
  at: 0,
  durationMs,
  session: "s1",
  client: "host",
  instance,
  tool,
  outcome: "ok",
  arguments: undefined,
  bytesOut: 0,
  traceId: undefined
})

const registry = {
  health: Effect.succeed([]),
  catalog: Effect.succeed({ tools: [] }),
  listWaitTimeouts: () => 0
} as unknown as Parameters<typeof make>[0]

/** The exposition's sample lines whose name starts with `prefix`. */
const lines = (text: string, prefix: string) => text.split("\n").filter((line) => line.startsWith(prefix))

describe("Metrics/Prometheus (calls counted on the call's path, written at scrape time)", () => {
  it.effect("a source's durations as a cumulative histogram: buckets, +Inf, sum and count", () =>
    Effect.gen(function* () {
      const meter = yield* make(registry)
      for (const ms of [2, 20, 2000]) {
        meter.begin()
        meter.end(call("gh", "search", ms))
      }
      const { text } = yield* meter.exposition
      const buckets = lines(text, "clawtool_tool_call_duration_seconds_bucket")
      assert.include(buckets, `clawtool_tool_call_duration_seconds_bucket{source="gh",le="0.001"} 0`)
      assert.include(buckets, `clawtool_tool_call_duration_seconds_bucket{source="gh",le="0.0025"} 1`)
      assert.include(buckets, `clawtool_tool_call_duration_seconds_bucket{source="gh",le="0.01"} 1`)
      assert.include(buckets, `clawtool_tool_call_duration_seconds_bucket{source="gh",le="0.025"} 2`)
      assert.include(buckets, `clawtool_tool_call_duration_seconds_bucket{source="gh",le="1"} 2`)
      assert.include(buckets, `clawtool_tool_call_duration_seconds_bucket{source="gh",le="2.5"} 3`)
      assert.include(buckets, `clawtool_tool_call_duration_seconds_bucket{source="gh",le="60"} 3`)
      assert.include(buckets, `clawtool_tool_call_duration_seconds_bucket{source="gh",le="+Inf"} 3`)
      assert.deepStrictEqual(lines(text, "clawtool_tool_call_duration_seconds_count"), [
        `clawtool_tool_call_duration_seconds_count{source="gh"} 3`
      ])
      assert.deepStrictEqual(lines(text, "clawtool_tool_call_duration_seconds_sum"), [
        `clawtool_tool_call_duration_seconds_sum{source="gh"} 2.022`
      ])
      assert.deepStrictEqual(lines(text, "clawtool_tool_calls_total"), [
        `clawtool_tool_calls_total{source="gh",tool="search",outcome="ok"} 3`
      ])
      assert.deepStrictEqual(lines(text, "clawtool_calls_in_flight"), ["clawtool_calls_in_flight 0"])
      assert.strictEqual(text.match(/^# TYPE clawtool_tool_call_duration_seconds histogram$/gm)?.length, 1)
    })
  )

  it.effect(
    'past the cap, new source/tool pairs count under one tool="other" series; a scrape twice adds nothing',
    () =>
      Effect.gen(function* () {
        const meter = yield* make(registry)
        for (let i = 0; i < maxToolLabels; i++) meter.end(call("many", `t${i}`, 1))
        meter.end(call("many", "late1", 1))
        meter.end(call("many", "late2", 1))
        meter.end(call("many", "late1", 1))
        meter.end(call("many", "t0", 1))
        yield* meter.exposition
        const { text } = yield* meter.exposition
        const counts = lines(text, "clawtool_tool_calls_total")
        assert.strictEqual(counts.length, maxToolLabels + 1)
        assert.deepStrictEqual(
          counts.filter((line) => line.includes(`tool="other"`)),
          [`clawtool_tool_calls_total{source="many",tool="other",outcome="ok"} 3`]
        )
        assert.include(counts, `clawtool_tool_calls_total{source="many",tool="t0",outcome="ok"} 2`)
      })
  )
})
