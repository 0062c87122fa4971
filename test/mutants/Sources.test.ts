import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Either, Option, TestClock } from "effect"
import type { SourceConfig } from "../../src/domain/Config.js"
import type { Connection } from "../../src/domain/Connection.js"
import { SourceError } from "../../src/domain/Errors.js"
import type { Tool } from "../../src/domain/Mcp.js"
import { parseConfig } from "../../src/services/Config.js"
import { Diagnostics } from "../../src/services/Sources/Diagnostics.js"
import * as Instance from "../../src/services/Sources/Instance.js"
import * as Policy from "../../src/services/Sources/Policy.js"

// Edges of Sources' pure parts that mutation testing found unpinned (docs/mutation.md).

const tool = (name: string, description = ""): Tool => ({ name, description, inputSchema: { type: "object" } }) as Tool
const child = (pid: number, tools: ReadonlyArray<Tool>) => ({ instance: "srv", pid, tools }) as unknown as Connection
const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms)
const exited = new SourceError({ instance: "srv", reason: "Exited", detail: "exited with code 1" })
const running = (tools: ReadonlyArray<Tool>) => {
  const connection = child(7, tools)
  return { connection, instance: Instance.running(Instance.spawning(Instance.make("srv"), at(0)), connection, at(1)) }
}
const rowOf = (instance: Instance.Instance, diagnostics = new Diagnostics()) =>
  Instance.healthRow(instance, { package: "stub", diagnostics, now: at(10_000).getTime() })

describe("Instance edges", () => {
  it("a re-listing with as many tools but different ones swaps them in", () => {
    const { connection, instance } = running([tool("a", "one")])
    const relisted = Instance.surfaceChanged(instance, connection, { tools: [tool("a", "two")], error: undefined })
    assert.notStrictEqual(relisted.tools, instance.tools)
    assert.strictEqual(relisted.tools[0]!.description, "two")
  })

  it("restarting is only for a stopped instance: a starting or running one is left as it is", () => {
    const starting = Instance.spawning(Instance.make("srv"), at(0))
    assert.strictEqual(Instance.restarting(starting), starting)
    const { instance } = running([tool("a")])
    assert.strictEqual(Instance.restarting(instance), instance)
  })

  it("Health shows the last exit of the child, and null for a retry time that will never come", () => {
    const diagnostics = new Diagnostics()
    diagnostics.lastExit = { code: 3, signal: null, at: at(5) }
    const stopped = Instance.failed(running([tool("a")]).instance, exited, Policy.Decision.Stop(), at(5))
    const row = rowOf(stopped, diagnostics)
    assert.deepStrictEqual(row.lastExit, { code: 3, signal: null, at: at(5).toISOString() })
    assert.strictEqual(row.nextRetryAt, null)
  })
})

const source = (lines: string): SourceConfig =>
  Either.getOrThrow(parseConfig(`[sources.srv]\ncommand = ["node", "server.js"]\n${lines}\n`, "/x/config.toml"))
    .sources["srv"]!

describe("restart policy edges", () => {
  it.effect("a restart exactly restart_window ago no longer counts toward max_restarts", () =>
    Effect.gen(function* () {
      const srv = source(`max_restarts = 1\nrestart_window = "10s"`)
      const failure = { error: exited, runningSince: Option.none() }
      const [first, state] = yield* Policy.decide(srv, Policy.initial, failure)
      assert.strictEqual(first._tag, "Restart")
      yield* TestClock.adjust(Duration.seconds(10))
      const [second] = yield* Policy.decide(srv, state, failure)
      assert.strictEqual(second._tag, "Restart")
    })
  )
})
