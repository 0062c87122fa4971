import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Schedule, Scope } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Reaper } from "../src/services/Reaper.js"
import { Sources } from "../src/services/Sources.js"
import { eventually, isAlive, rowOf, settled, sourcesLayer, stubCommand, tempDir, waitFor } from "./lib/sources.js"

/** Pids a `--record-start FILE` stub wrote, one per start. */
const starts = (file: string): ReadonlyArray<number> =>
  fs.existsSync(file) ? fs.readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map(Number) : []

const toolsOf = (instance: string) =>
  Effect.flatMap(Sources, (sources) =>
    Effect.map(sources.catalog, (catalog) => catalog.find((entry) => entry.instance === instance)?.tools)
  )

describe("supervision (real children)", () => {
  it.scopedLive(
    "restarts a killed child after a backoff; the catalog stays listed and equals what the child serves",
    () => {
      const dir = tempDir()
      const record = path.join(dir, "starts")
      return Effect.gen(function* () {
        const sources = yield* Sources
        yield* settled
        const first = yield* rowOf("srv")
        assert.strictEqual(first.status, "running")
        assert.strictEqual(first.restarts, 0)
        assert.isNull(first.lastExit)
        assert.isAtLeast(first.uptimeMs!, 0)
        const before = yield* toolsOf("srv")
        process.kill(first.pid!, "SIGKILL")

        // Down at once, with the exit and the time of the next attempt; the tools stay listed meanwhile.
        const down = yield* waitFor("srv", (row) => row.status === "down", "down")
        assert.match(down.reason, /^Exited: killed by signal SIGKILL/)
        assert.strictEqual(down.lastExit?.signal, "SIGKILL")
        assert.isNull(down.lastExit?.code)
        assert.isNull(down.pid)
        assert.isNull(down.uptimeMs)
        const nextRetry = Date.parse(
          (yield* waitFor("srv", (row) => row.nextRetryAt !== null, "a next retry time")).nextRetryAt!
        )
        assert.isAbove(nextRetry, Date.parse(down.lastExit!.at))
        assert.strictEqual(yield* toolsOf("srv"), before)
        const refused = yield* Effect.flip(sources.callTool("srv", { name: "echo", arguments: { text: "x" } }))
        assert.strictEqual(refused.reason, "NotRunning")
        assert.isTrue(refused.retryable)

        const back = yield* waitFor("srv", (row) => row.status === "running", "running again")
        assert.strictEqual(back.restarts, 1)
        assert.notStrictEqual(back.pid, first.pid)
        assert.strictEqual(back.pid, starts(record).at(-1))
        assert.isNull(back.nextRetryAt)
        assert.strictEqual(back.reason, "")
        // Same tools: the very same array (nothing downstream rebuilds, no list_changed).
        assert.strictEqual(yield* toolsOf("srv"), before)
        const echoed = yield* sources.callTool("srv", { name: "echo", arguments: { text: "again" } })
        assert.deepStrictEqual(echoed.content, [{ type: "text", text: "echo:again" }])
      }).pipe(
        Effect.provide(
          sourcesLayer(`
          [sources.srv]
          command = ${stubCommand("--record-start", record)}
          restart_backoff = "1s"
          restart_backoff_max = "1s"
        `)
        )
      )
    }
  )

  it.scopedLive("a restart that serves other tools swaps the instance's catalog in one step", () => {
    const dir = tempDir()
    const extra = path.join(dir, "extra")
    return Effect.gen(function* () {
      yield* settled
      const before = (yield* toolsOf("srv"))!.map((tool) => tool.name)
      assert.notInclude(before, "added_later")
      fs.writeFileSync(extra, "added_later")
      const first = yield* rowOf("srv")
      process.kill(first.pid!, "SIGKILL")
      yield* waitFor("srv", (row) => row.status === "running" && row.pid !== first.pid, "running again")
      const after = (yield* toolsOf("srv"))!.map((tool) => tool.name)
      assert.deepStrictEqual(after, [...before, "added_later"])
      const row = yield* rowOf("srv")
      assert.strictEqual(row.toolCount, after.length)
    }).pipe(
      Effect.provide(
        sourcesLayer(`
          [sources.srv]
          command = ${stubCommand("--extra-tool", extra)}
          restart_backoff = "50ms"
        `)
      )
    )
  })

  it.scopedLive("crash-loop after max_restarts within the window; the other instance is never disturbed", () => {
    const dir = tempDir()
    const record = path.join(dir, "starts")
    return Effect.gen(function* () {
      const sources = yield* Sources
      yield* settled
      const steady = yield* rowOf("steady")
      const looping = yield* waitFor("looping", (row) => row.status === "crash-loop", "crash-loop")
      assert.strictEqual(looping.restarts, 3)
      assert.strictEqual(starts(record).length, 4)
      assert.strictEqual(looping.lastExit?.code, 1)
      assert.match(looping.reason, /^Exited: exited with code 1 during Initialize/)
      assert.strictEqual(looping.toolCount, 0)
      // The next attempt is a crash_loop_retry away (1h), not a backoff away.
      assert.isAbove(Date.parse(looping.nextRetryAt!) - Date.now(), 30 * 60_000)
      const refused = yield* Effect.flip(sources.callTool("looping", { name: "echo" }))
      assert.strictEqual(refused.reason, "NotRunning")
      assert.match(refused.detail, /next restart at /)
      const catalog = yield* sources.catalog
      assert.deepStrictEqual(
        catalog.map((entry) => entry.instance),
        ["steady"]
      )
      const after = yield* rowOf("steady")
      assert.strictEqual(after.status, "running")
      assert.strictEqual(after.pid, steady.pid)
      assert.strictEqual(after.restarts, 0)
    }).pipe(
      Effect.provide(
        sourcesLayer(`
          [sources.looping]
          command = ${stubCommand("--exit-during-initialize", "--record-start", record)}
          restart_backoff = "20ms"
          restart_backoff_max = "50ms"
          max_restarts = 3
          crash_loop_retry = "1h"
          [sources.steady]
          command = ${stubCommand()}
        `)
      )
    )
  })

  it.scopedLive("rapid failures double the backoff; a stable run (restart_window) resets it", () =>
    Effect.gen(function* () {
      yield* settled
      /** Kills the running child; the delay it was given before its restart (exit time to announced retry time). */
      const killAndMeasure = Effect.gen(function* () {
        const running = yield* waitFor("srv", (row) => row.status === "running", "running")
        process.kill(running.pid!, "SIGKILL")
        const down = yield* waitFor("srv", (row) => row.status === "down" && row.nextRetryAt !== null, "a retry time")
        return Date.parse(down.nextRetryAt!) - Date.parse(down.lastExit!.at)
      })
      const rapid = [yield* killAndMeasure, yield* killAndMeasure, yield* killAndMeasure]
      // 200ms, 400ms, 800ms, each ±20 %.
      assert.isAtLeast(rapid[0]!, 160, rapid.join(", "))
      assert.isAtLeast(rapid[1]!, 320, rapid.join(", "))
      assert.isAtLeast(rapid[2]!, 640, rapid.join(", "))
      yield* waitFor("srv", (row) => (row.uptimeMs ?? 0) > 1_200, "a stable run")
      const afterStable = yield* killAndMeasure
      assert.isBelow(afterStable, rapid[2]!, rapid.join(", ") + ` then ${afterStable}`)
      assert.isAtLeast(afterStable, 160)
      const row = yield* waitFor("srv", (row) => row.status === "running", "running")
      assert.strictEqual(row.restarts, 4)
    }).pipe(
      Effect.provide(
        sourcesLayer(`
          [sources.srv]
          command = ${stubCommand()}
          restart_backoff = "200ms"
          restart_window = "1s"
          max_restarts = 100
        `)
      )
    )
  )

  it.scopedLive("restart = never, missing secrets and auth errors are not restarted", () =>
    Effect.gen(function* () {
      yield* settled
      const never = yield* rowOf("never")
      process.kill(never.pid!, "SIGKILL")
      const down = yield* waitFor("never", (row) => row.status === "down", "down")
      assert.isNull(down.nextRetryAt)
      assert.strictEqual(down.toolCount, 0)
      const sources = yield* Sources
      assert.deepStrictEqual(
        (yield* sources.catalog).map((entry) => entry.instance),
        []
      )
      yield* Effect.sleep("300 millis")
      const rows = yield* sources.health
      assert.deepStrictEqual(
        rows.map((row) => [row.name, row.status, row.restarts]),
        [
          ["auth", "unauthenticated", 0],
          ["never", "down", 0],
          ["secret", "unauthenticated", 0]
        ]
      )
    }).pipe(
      Effect.provide(
        sourcesLayer(`
          [sources.never]
          command = ${stubCommand()}
          restart = "never"
          [sources.auth]
          command = ${stubCommand("--auth-error")}
          restart_backoff = "20ms"
          [sources.secret]
          command = ${stubCommand()}
          env = { TOKEN = "\${NOT_SET}" }
          restart_backoff = "20ms"
        `)
      )
    )
  )

  it.scopedLive("call_timeout: a hung call is cancelled at the child and answered with a Timeout error", () =>
    Effect.gen(function* () {
      const sources = yield* Sources
      yield* settled
      const pid = (yield* rowOf("srv")).pid
      const error = yield* Effect.flip(sources.callTool("srv", { name: "slow", arguments: { ms: 60_000 } }))
      assert.strictEqual(error.reason, "Timeout")
      assert.isFalse(error.retryable)
      assert.match(
        error.detail,
        /timed out: no answer or progress within call_timeout \(1000ms\); the call was cancelled/
      )
      // The child saw notifications/cancelled and stopped the work.
      yield* Effect.gen(function* () {
        const count = yield* sources.callTool("srv", { name: "cancelled" })
        return (count.structuredContent as { count: number }).count
      }).pipe(
        Effect.repeat({ until: (count) => count === 1, schedule: Schedule.spaced("100 millis") }),
        Effect.timeout("10 seconds")
      )
      // The instance is fine: same child, still running.
      const row = yield* rowOf("srv")
      assert.strictEqual(row.status, "running")
      assert.strictEqual(row.pid, pid)
    }).pipe(
      Effect.provide(
        sourcesLayer(`
          [sources.srv]
          command = ${stubCommand()}
          call_timeout = "1s"
        `)
      )
    )
  )

  it.scopedLive("call_timeout is reset by progress, with or without a host progress token", () =>
    Effect.gen(function* () {
      const sources = yield* Sources
      yield* settled
      // 1.8s of work with a progress notification every 100ms never goes 1s without one.
      const quiet = yield* sources.callTool("srv", { name: "slow", arguments: { ms: 1_800, steps: 18 } })
      assert.deepStrictEqual(quiet.content, [{ type: "text", text: "slept 1800ms" }])
      const seen: Array<number> = []
      const watched = yield* sources.callTool(
        "srv",
        { name: "slow", arguments: { ms: 1_800, steps: 18 } },
        { onProgress: (progress) => seen.push(progress.progress) }
      )
      assert.deepStrictEqual(watched.content, [{ type: "text", text: "slept 1800ms" }])
      assert.isAbove(seen.length, 0)
    }).pipe(
      Effect.provide(
        sourcesLayer(`
          [sources.srv]
          command = ${stubCommand()}
          call_timeout = "1s"
        `)
      )
    )
  )

  it.live("shutdown while a restart is pending is bounded and starts nothing more", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const record = path.join(dir, "starts")
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(
        sourcesLayer(`
          [sources.srv]
          command = ${stubCommand("--record-start", record)}
          restart_backoff = "1s"
          restart_backoff_max = "1s"
        `),
        scope
      )
      const first = yield* Effect.gen(function* () {
        yield* settled
        const row = yield* rowOf("srv")
        process.kill(row.pid!, "SIGKILL")
        yield* waitFor("srv", (row) => row.nextRetryAt !== null, "a pending restart")
        return row
      }).pipe(Effect.provide(context))
      yield* Scope.close(scope, Exit.void)
      // Past the time the restart was due: no second start happened.
      yield* Effect.sleep("1500 millis")
      assert.deepStrictEqual(starts(record), [first.pid!])
    })
  )

  it.scopedLive("children that write garbage, flood stderr or answer with megabytes: clawtool stays up", () =>
    Effect.gen(function* () {
      const sources = yield* Sources
      yield* settled
      const garbage = yield* waitFor("garbage", (row) => row.stdoutGarbage >= 2, "two garbage lines")
      assert.strictEqual(garbage.status, "running")
      assert.include(garbage.stderrTail, "[stdout, not JSON-RPC] this is not json")
      const echoed = yield* sources.callTool("garbage", { name: "echo", arguments: { text: "fine" } })
      assert.deepStrictEqual(echoed.content, [{ type: "text", text: "echo:fine" }])

      const flood = yield* waitFor("flood", (row) => row.stderrTail.length === 100, "a full stderr tail")
      assert.match(flood.stderrTail.at(-1)!, /^stub stderr flood line \d+$/)
      for (let i = 0; i < 20; i++) {
        const result = yield* sources.callTool("flood", { name: "echo", arguments: { text: `f${i}` } })
        assert.deepStrictEqual(result.content, [{ type: "text", text: `echo:f${i}` }])
      }

      // 6 MiB in one JSON-RPC line, relayed intact.
      const big = yield* sources.callTool("garbage", { name: "big", arguments: { kb: 6 * 1024 } })
      const text = (big.content as ReadonlyArray<{ type: string; text: string }>)[0]!.text
      assert.strictEqual(text.length, 6 * 1024 * 1024)
      assert.isTrue(/^x+$/.test(text))
      const rows = yield* sources.health
      assert.deepStrictEqual(
        rows.map((row) => [row.name, row.status, row.restarts]),
        [
          ["flood", "running", 0],
          ["garbage", "running", 0]
        ]
      )
    }).pipe(
      Effect.provide(
        sourcesLayer(`
          [sources.garbage]
          command = ${stubCommand("--garbage-stdout")}
          [sources.flood]
          command = ${stubCommand("--stderr-flood")}
        `)
      )
    )
  )
})

describe("Reaper", () => {
  /** A detached process group whose leader ignores SIGTERM, as a stubborn child would. */
  const stubbornGroup = () => {
    const child = spawn(process.execPath, ["-e", "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)"], {
      detached: true,
      stdio: "ignore"
    })
    child.unref()
    return child.pid!
  }

  it.live("when its pipe closes it kills every recorded group (SIGKILL after SIGTERM is ignored), and only those", () =>
    Effect.gen(function* () {
      const tracked = stubbornGroup()
      const untracked = stubbornGroup()
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(Reaper.Default, scope)
      const reaper = Effect.runSync(Effect.provide(Reaper, context))
      reaper.track(tracked)
      reaper.track(untracked)
      reaper.untrack(untracked)
      // Closing the layer is what clawtool's death does to the helper's stdin.
      yield* Scope.close(scope, Exit.void)
      yield* eventually(() => !isAlive(tracked), 10_000, "the tracked group to be killed")
      yield* Effect.sleep("1500 millis")
      assert.isTrue(isAlive(untracked))
      process.kill(-untracked, "SIGKILL")
    })
  )
})
