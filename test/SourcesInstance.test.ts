import { assert, describe, it } from "@effect/vitest"
import { assertNone, assertSome } from "@effect/vitest/utils"
import { Duration } from "effect"
import type { Connection } from "../src/domain/Connection.js"
import { SourceError } from "../src/domain/Errors.js"
import type { Tool } from "../src/domain/Mcp.js"
import { Diagnostics } from "../src/services/Sources/Diagnostics.js"
import * as Instance from "../src/services/Sources/Instance.js"
import { Decision } from "../src/services/Sources/Policy.js"
import { Snapshot } from "../src/services/Sources/Snapshot.js"
import * as Policy from "../src/services/Sources/Policy.js"

// Instance transitions and the Snapshot derived from them: plain values, no children.

const tool = (name: string): Tool => ({ name, inputSchema: { type: "object" } }) as Tool
const child = (pid: number, tools: ReadonlyArray<Tool>) =>
  ({ instance: "srv", pid, tools, era: { era: "legacy" } }) as unknown as Connection
const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms)
const exited = new SourceError({ instance: "srv", reason: "Exited", detail: "exited with code 1" })
const auth = new SourceError({ instance: "srv", reason: "Initialize", detail: "error 401", auth: true })
const restartIn = (ms: number) => Decision.Restart({ delay: Duration.millis(ms) })

const rowOf = (instance: Instance.Instance, now = at(10_000).getTime(), diagnostics = new Diagnostics()) =>
  Instance.healthRow(instance, { package: "stub", diagnostics, now })

const runningAt = (pid: number, tools: ReadonlyArray<Tool>, from = Instance.make("srv")) =>
  Instance.running(Instance.spawning(from, at(0)), child(pid, tools), at(250))

describe("Instance", () => {
  it("starts as starting with nothing known", () => {
    const row = rowOf(Instance.make("srv"))
    assert.deepStrictEqual(
      [row.status, row.reason, row.toolCount, row.pid, row.startedAt, row.startupMs, row.restarts, row.uptimeMs],
      ["starting", "", 0, null, null, null, 0, null]
    )
  })

  it("running: the child's connection and tools, start-up time and uptime", () => {
    const running = runningAt(7, [tool("echo")])
    assert.strictEqual(Instance.status(running), "running")
    assert.strictEqual(Instance.connectionOf(running)?.pid, 7)
    const row = rowOf(running, at(1_250).getTime())
    assert.strictEqual(row.pid, 7)
    assert.strictEqual(row.startupMs, 250)
    assert.strictEqual(row.uptimeMs, 1_000)
    assert.strictEqual(row.startedAt, at(0).toISOString())
    assert.strictEqual(row.toolCount, 1)
  })

  it("a failure with a restart pending keeps the tools, says why and when the next restart is", () => {
    const running = runningAt(7, [tool("echo")])
    const down = Instance.failed(running, exited, restartIn(400), at(1_000))
    const row = rowOf(down)
    assert.strictEqual(row.status, "down")
    assert.strictEqual(row.reason, "Exited: exited with code 1")
    assert.isNull(row.pid)
    assert.isNull(row.uptimeMs)
    assert.strictEqual(row.nextRetryAt, at(1_400).toISOString())
    assert.strictEqual(down.tools, running.tools)
    assert.strictEqual(Instance.connectionOf(down), undefined)
  })

  it("crash-loop and stop empty the catalog; unauthenticated stays down for good", () => {
    const running = runningAt(7, [tool("echo")])
    const looping = Instance.failed(running, exited, Decision.CrashLoop({ delay: Duration.hours(1) }), at(1_000))
    assert.strictEqual(Instance.status(looping), "crash-loop")
    assert.deepStrictEqual(looping.tools, [])
    const stopped = Instance.failed(running, exited, Decision.Stop(), at(1_000))
    assert.strictEqual(Instance.status(stopped), "down")
    assert.isNull(rowOf(stopped).nextRetryAt)
    assert.deepStrictEqual(stopped.tools, [])
    const unauthenticated = Instance.failed(running, auth, Decision.Stop(), at(1_000))
    assert.strictEqual(Instance.status(unauthenticated), "unauthenticated")
  })

  it("restarting counts the restart; the next spawn clears the retry time but keeps the reason until it runs", () => {
    const down = Instance.failed(runningAt(7, [tool("echo")]), exited, restartIn(400), at(1_000))
    const restarting = Instance.restarting(down)
    assert.deepStrictEqual(
      [Instance.status(restarting), restarting.restarts, rowOf(restarting).nextRetryAt],
      ["starting", 1, null]
    )
    const spawning = Instance.spawning(restarting, at(1_400))
    const row = rowOf(spawning)
    assert.deepStrictEqual(
      [row.status, row.reason, row.nextRetryAt, row.restarts],
      ["starting", "Exited: exited with code 1", null, 1]
    )
    const back = Instance.running(spawning, child(8, [tool("echo")]), at(1_500))
    assertNone(back.error)
    assert.strictEqual(back.restarts, 1)
    assertSome(back.startupMs, 100)
  })

  it("a child that lists the same tools again keeps the very same array; other tools swap it", () => {
    const first = runningAt(7, [tool("echo")])
    const down = Instance.failed(first, exited, restartIn(10), at(1_000))
    const same = Instance.running(Instance.spawning(down, at(1_010)), child(8, [tool("echo")]), at(1_020))
    assert.strictEqual(same.tools, first.tools)
    const other = Instance.running(Instance.spawning(down, at(1_010)), child(8, [tool("echo"), tool("new")]), at(1_020))
    assert.deepStrictEqual(
      other.tools.map((t) => t.name),
      ["echo", "new"]
    )
    assert.isTrue(other.toolNames.has("new"))
  })

  it("a re-listing applies only to the current child, and records a failed one", () => {
    const connection = child(7, [tool("echo")])
    const running = Instance.running(Instance.spawning(Instance.make("srv"), at(0)), connection, at(1))
    const relisted = Instance.surfaceChanged(running, connection, {
      tools: [tool("echo"), tool("b")],
      error: undefined
    })
    assert.strictEqual(relisted.tools.length, 2)
    const failedList = new SourceError({ instance: "srv", reason: "ListTools", detail: "boom" })
    const kept = Instance.surfaceChanged(relisted, connection, { tools: relisted.tools, error: failedList })
    assert.strictEqual(kept.tools, relisted.tools)
    assertSome(kept.error, failedList)
    // A late re-listing of a previous child changes nothing.
    assert.strictEqual(Instance.surfaceChanged(relisted, child(6, []), { tools: [], error: undefined }), relisted)
    const down = Instance.failed(relisted, exited, restartIn(10), at(5))
    assert.strictEqual(Instance.surfaceChanged(down, connection, { tools: [], error: undefined }), down)
  })

  it("one not-running refusal: why, when it restarts, retryable unless unauthenticated", () => {
    const down = Instance.failed(runningAt(7, [tool("echo")]), exited, restartIn(400), at(1_000))
    const refused = Instance.notRunning(down, "srv.echo")
    assert.strictEqual(refused.reason, "NotRunning")
    assert.strictEqual(refused.tool, "srv.echo")
    assert.strictEqual(
      refused.detail,
      `source "srv" is not running (Exited: exited with code 1); next restart at ${at(1_400).toISOString()}`
    )
    assert.isTrue(refused.retryable)
    const starting = Instance.notRunning(Instance.make("srv"), "srv")
    assert.strictEqual(starting.detail, `source "srv" is not running (starting)`)
    assert.isTrue(starting.retryable)
    const locked = Instance.notRunning(Instance.failed(Instance.make("srv"), auth, Decision.Stop(), at(0)), "srv")
    assert.strictEqual(locked.detail, `source "srv" is not running (Initialize: error 401)`)
    assert.isFalse(locked.retryable)
  })
})

describe("Snapshot", () => {
  it("derives the catalog (running, and restarting with their tools) and the running children once", () => {
    const initial = Snapshot.initial(["a", "b", "c"])
    assert.deepStrictEqual(initial.catalog, [])
    const withA = initial.update("a", (a) => runningAt(1, [tool("x")], a))
    const withB = withA.update("b", (b) => runningAt(2, [tool("y")], b))
    assert.deepStrictEqual(
      withB.catalog.map((entry) => entry.instance),
      ["a", "b"]
    )
    assert.deepStrictEqual(
      withB.running.map((connection) => connection.pid),
      [1, 2]
    )
    assert.strictEqual(withB.connection("b")?.pid, 2)
    // b restarts: listed still, not running; crash-looping a leaves the catalog.
    const restarting = withB.update("b", (b) => Instance.failed(b, exited, restartIn(10), at(0)))
    const looping = restarting.update("a", (a) =>
      Instance.failed(a, exited, Decision.CrashLoop({ delay: Duration.hours(1) }), at(0))
    )
    assert.deepStrictEqual(
      looping.catalog.map((entry) => entry.instance),
      ["b"]
    )
    assert.deepStrictEqual(looping.running, [])
    assert.strictEqual(looping.connection("b"), undefined)
    assert.strictEqual(looping.catalog[0]!.tools, withB.catalog[1]!.tools)
  })

  it("an update that changes nothing, or names no instance, is the same snapshot", () => {
    const snapshot = Snapshot.initial(["a"])
    assert.strictEqual(
      snapshot.update("a", (a) => a),
      snapshot
    )
    assert.strictEqual(
      snapshot.update("zz", () => Instance.make("zz")),
      snapshot
    )
    assert.strictEqual(snapshot.connection("zz"), undefined)
  })
})

describe("Instance with a persisted catalog", () => {
  const cachedTools = [tool("echo"), tool("add")]

  it("fromCache: starting, the cached tools listed, Health says catalog: cached", () => {
    const cached = Instance.fromCache(Instance.make("srv"), cachedTools)
    assert.strictEqual(Instance.status(cached), "starting")
    assert.strictEqual(cached.tools, cachedTools)
    assert.isTrue(cached.toolNames.has("add"))
    const row = rowOf(cached)
    assert.deepStrictEqual([row.status, row.reason, row.toolCount], ["starting", "catalog: cached", 2])
    assert.deepStrictEqual(new Snapshot(["srv"], new Map([["srv", cached]])).catalog, [
      { instance: "srv", tools: cachedTools }
    ])
  })

  it("fromCache only before the first spawn: a child's own listing is never replaced by the cache", () => {
    const spawned = Instance.spawning(Instance.make("srv"), at(0))
    assert.strictEqual(Instance.fromCache(spawned, cachedTools), spawned)
    const running = runningAt(7, [tool("echo")])
    assert.strictEqual(Instance.fromCache(running, cachedTools), running)
  })

  it("a child listing the same tools keeps the cached array; different tools are swapped in; cached ends", () => {
    const cached = Instance.fromCache(Instance.make("srv"), cachedTools)
    const same = runningAt(7, [tool("echo"), tool("add")], cached)
    assert.strictEqual(same.tools, cachedTools)
    assert.strictEqual(rowOf(same).reason, "")
    const changed = runningAt(7, [tool("echo")], cached)
    assert.deepStrictEqual(
      changed.tools.map((t) => t.name),
      ["echo"]
    )
    assert.isFalse(changed.toolNames.has("add"))
  })

  it("a cached source that ends down for good loses its cached tools and the cached mark", () => {
    const cached = Instance.fromCache(Instance.make("srv"), cachedTools)
    const down = Instance.failed(Instance.spawning(cached, at(0)), exited, Decision.Stop(), at(10))
    assert.deepStrictEqual(down.tools, [])
    assert.deepStrictEqual([rowOf(down).status, rowOf(down).reason], ["down", "Exited: exited with code 1"])
    assert.deepStrictEqual(new Snapshot(["srv"], new Map([["srv", down]])).catalog, [])
  })

  it("idle: no child, its tools stay listed, status idle; the next spawn starts it again", () => {
    const running = runningAt(7, cachedTools)
    const idle = Instance.idle(running)
    assert.strictEqual(Instance.status(idle), "idle")
    assert.strictEqual(idle.tools, running.tools)
    assert.strictEqual(Instance.connectionOf(idle), undefined)
    const row = rowOf(idle)
    assert.deepStrictEqual([row.status, row.pid, row.uptimeMs], ["idle", null, null])
    assert.deepStrictEqual(new Snapshot(["srv"], new Map([["srv", idle]])).catalog, [
      { instance: "srv", tools: cachedTools }
    ])
    assert.strictEqual(Instance.status(Instance.spawning(idle, at(20))), "starting")
    assert.strictEqual(idle.restarts, running.restarts)
  })

  it("idle never hides a failure: a down instance stays down", () => {
    const down = Instance.failed(runningAt(7, cachedTools), exited, restartIn(400), at(1_000))
    assert.strictEqual(Instance.idle(down), down)
  })
})

// Edges of Sources' pure parts that mutation testing found unpinned (docs/mutation.md).

const describedTool = (name: string, description = ""): Tool =>
  ({ name, description, inputSchema: { type: "object" } }) as Tool
const running = (tools: ReadonlyArray<Tool>) => {
  const connection = child(7, tools)
  return { connection, instance: Instance.running(Instance.spawning(Instance.make("srv"), at(0)), connection, at(1)) }
}
const rowWith = (instance: Instance.Instance, diagnostics = new Diagnostics()) =>
  Instance.healthRow(instance, { package: "stub", diagnostics, now: at(10_000).getTime() })

describe("Instance edges", () => {
  it("a re-listing with as many tools but different ones swaps them in", () => {
    const { connection, instance } = running([describedTool("a", "one")])
    const relisted = Instance.surfaceChanged(instance, connection, {
      tools: [describedTool("a", "two")],
      error: undefined
    })
    assert.notStrictEqual(relisted.tools, instance.tools)
    assert.strictEqual(relisted.tools[0]!.description, "two")
  })

  it("restarting is only for a stopped instance: a starting or running one is left as it is", () => {
    const starting = Instance.spawning(Instance.make("srv"), at(0))
    assert.strictEqual(Instance.restarting(starting), starting)
    const { instance } = running([describedTool("a")])
    assert.strictEqual(Instance.restarting(instance), instance)
  })

  it("Health shows the last exit of the child, and null for a retry time that will never come", () => {
    const diagnostics = new Diagnostics()
    diagnostics.lastExit = { code: 3, signal: null, at: at(5) }
    const stopped = Instance.failed(running([describedTool("a")]).instance, exited, Policy.Decision.Stop(), at(5))
    const row = rowWith(stopped, diagnostics)
    assert.deepStrictEqual(row.lastExit, { code: 3, signal: null, at: at(5).toISOString() })
    assert.strictEqual(row.nextRetryAt, null)
  })
})
