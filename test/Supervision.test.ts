import { assert, describe, it } from "@effect/vitest"
import { Clock, Deferred, Duration, Effect, Exit, Layer, Option, Schedule, Scope, Stream, TestClock } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import type { Connection, ExitInfo } from "../src/domain/Connection.js"
import type { HealthRow } from "../src/domain/Health.js"
import { SourceError } from "../src/domain/Errors.js"
import { CatalogCache } from "../src/services/CatalogCache.js"
import { Config } from "../src/services/Config.js"
import { Reaper } from "../src/services/Reaper.js"
import { Secrets } from "../src/services/Secrets.js"
import { SourceClient } from "../src/services/SourceClient/SourceClient.js"
import type { LaunchSpec } from "../src/services/SourceClient/LaunchSpec.js"
import { Sources } from "../src/services/Sources.js"
import {
  configFrom,
  eventually,
  isAlive,
  rowOf,
  settled,
  sourcesLayer,
  stubCommand,
  tempDir,
  waitFor
} from "./lib/sources.js"

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
      // No restart is pending for any of them (the TestClock tests below show none ever comes).
      const rows = yield* sources.health
      assert.deepStrictEqual(
        rows.map((row) => [row.name, row.status, row.restarts, row.nextRetryAt]),
        [
          ["auth", "unauthenticated", 0, null],
          ["never", "down", 0, null],
          ["secret", "unauthenticated", 0, null]
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
      // Closing the scope interrupts the supervisor and awaits it: nothing can start after it (the TestClock test
      // below goes past the due time).
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual(starts(record), [first.pid!])
      assert.isFalse(isAlive(first.pid!))
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

/**
 * Children that are not processes: each connect is a fake child the test kills, or fails the way `fail` says. With
 * TestClock the supervisor's waits pass when the test adjusts the clock: the loop of lifetimes and the restart policy
 * together, without real time.
 */
const fakeChildren = (fail: (instance: string) => SourceError | undefined = () => undefined) => {
  const children: Array<{ readonly instance: string; readonly pid: number; readonly kill: Effect.Effect<void> }> = []
  const connect = (spec: LaunchSpec) =>
    Effect.gen(function* () {
      const pid = 1001 + children.length
      const error = fail(spec.instance)
      if (error !== undefined) {
        children.push({ instance: spec.instance, pid, kill: Effect.void })
        return yield* error
      }
      const exited = yield* Deferred.make<ExitInfo>()
      const kill = Effect.gen(function* () {
        const exit = { code: null, signal: "SIGKILL", at: new Date(yield* Clock.currentTimeMillis) }
        spec.onExit?.(exit)
        yield* Deferred.succeed(exited, exit)
      })
      children.push({ instance: spec.instance, pid, kill })
      return {
        instance: spec.instance,
        pid,
        tools: [{ name: "echo", inputSchema: { type: "object" } }],
        surfaceChanges: Stream.never,
        exited: Deferred.await(exited),
        era: { era: "legacy" }
      } as unknown as Connection
    })
  const config = (toml: string) => {
    const parsed = configFrom(toml)
    return Sources.DefaultWithoutDependencies.pipe(
      Layer.provide(
        Layer.mergeAll(
          Config.layerTest(parsed),
          Secrets.layerTest({ env: {}, sources: parsed.sources }),
          Layer.succeed(SourceClient, new SourceClient({ connect: (spec) => connect(spec as LaunchSpec) })),
          CatalogCache.Test()
        )
      )
    )
  }
  /** Kills the last child of an instance. */
  const kill = (instance: string) =>
    Effect.suspend(() => children.filter((child) => child.instance === instance).at(-1)!.kill)
  return { children, layer: config, kill }
}

/** Waits until an instance's Health row satisfies `check`, on Sources' change stream (no polling, no sleeps). */
const until = (name: string, check: (row: HealthRow) => boolean) =>
  Effect.flatMap(Sources, (sources) =>
    sources.changes.pipe(
      Stream.mapEffect(() => rowOf(name)),
      Stream.filter(check),
      Stream.runHead,
      Effect.map(Option.getOrThrow)
    )
  )

/** The wait the supervisor announced in the row (next retry time, measured from now on the TestClock). */
const announced = (row: HealthRow) => Effect.map(Clock.currentTimeMillis, (now) => Date.parse(row.nextRetryAt!) - now)

/** A backoff delay: `nominal` ±20 %. */
const assertNear = (delay: number, nominal: number, what: string) => {
  assert.isAtLeast(delay, Math.floor(nominal * 0.8), what)
  assert.isAtMost(delay, Math.ceil(nominal * 1.2), what)
}

describe("supervision (fake children, TestClock)", () => {
  it.scoped("rapid failures double the backoff; a stable run (restart_window) resets it", () => {
    const fake = fakeChildren()
    return Effect.gen(function* () {
      yield* settled
      const delays: Array<number> = []
      for (let i = 0; i < 3; i++) {
        yield* fake.kill("srv")
        const down = yield* until("srv", (row) => row.status === "down")
        delays.push(yield* announced(down))
        assertNear(delays[i]!, 200 * 2 ** i, delays.join(", "))
        assert.strictEqual(Date.parse(down.nextRetryAt!) - Date.parse(down.lastExit!.at), delays[i])
        yield* TestClock.adjust(Duration.millis(delays[i]!))
        yield* until("srv", (row) => row.status === "running" && row.restarts === i + 1)
      }
      // A whole restart_window of running is a stable run: the next delay starts over.
      yield* TestClock.adjust("1 second")
      yield* fake.kill("srv")
      const afterStable = yield* announced(yield* until("srv", (row) => row.status === "down"))
      assertNear(afterStable, 200, `${delays.join(", ")} then ${afterStable}`)
      yield* TestClock.adjust(Duration.millis(afterStable))
      const row = yield* until("srv", (row) => row.status === "running")
      assert.strictEqual(row.restarts, 4)
      assert.strictEqual(row.pid, 1005)
    }).pipe(
      Effect.provide(
        fake.layer(`
          [sources.srv]
          command = ["fake"]
          restart_backoff = "200ms"
          restart_window = "1s"
          max_restarts = 100
        `)
      )
    )
  })

  it.scoped("crash-loop after max_restarts within the window, then one retry every crash_loop_retry", () => {
    const fake = fakeChildren(
      (instance) => new SourceError({ instance, reason: "Initialize", detail: "exited during initialize" })
    )
    return Effect.gen(function* () {
      yield* settled
      for (let restarts = 0; restarts < 3; restarts++) {
        const down = yield* until(
          "looping",
          (row) => row.status === "down" && row.restarts === restarts && row.nextRetryAt !== null
        )
        yield* TestClock.adjust(Duration.millis(yield* announced(down)))
      }
      const looping = yield* until("looping", (row) => row.status === "crash-loop")
      assert.strictEqual(looping.restarts, 3)
      assert.strictEqual(fake.children.length, 4)
      assert.strictEqual(yield* announced(looping), 3_600_000)
      // Nothing happens within the hour; at the hour, one more attempt, and crash-loop again.
      yield* TestClock.adjust("59 minutes")
      assert.strictEqual(fake.children.length, 4)
      yield* TestClock.adjust("1 minute")
      const again = yield* until("looping", (row) => row.status === "crash-loop" && row.restarts === 4)
      assert.strictEqual(fake.children.length, 5)
      assert.strictEqual(yield* announced(again), 3_600_000)
    }).pipe(
      Effect.provide(
        fake.layer(`
          [sources.looping]
          command = ["fake"]
          restart_backoff = "20ms"
          restart_backoff_max = "50ms"
          max_restarts = 3
          crash_loop_retry = "1h"
        `)
      )
    )
  })

  it.scoped("restart = never, missing secrets and auth errors never start again", () => {
    const fake = fakeChildren((instance) =>
      instance === "auth"
        ? new SourceError({ instance, reason: "Initialize", detail: "error 401", auth: true })
        : undefined
    )
    return Effect.gen(function* () {
      yield* settled
      const sources = yield* Sources
      // auth and never were started once; secret was never spawned.
      assert.strictEqual(fake.children.length, 2)
      yield* fake.kill("never")
      yield* until("never", (row) => row.status === "down")
      yield* TestClock.adjust("1 day")
      assert.strictEqual(fake.children.length, 2)
      assert.deepStrictEqual(
        (yield* sources.health).map((row) => [row.name, row.status, row.restarts]),
        [
          ["auth", "unauthenticated", 0],
          ["never", "down", 0],
          ["secret", "unauthenticated", 0]
        ]
      )
    }).pipe(
      Effect.provide(
        fake.layer(`
          [sources.auth]
          command = ["fake"]
          [sources.never]
          command = ["fake"]
          restart = "never"
          [sources.secret]
          command = ["fake"]
          env = { TOKEN = "\${NOT_SET}" }
        `)
      )
    )
  })

  it.effect("shutdown while a restart is pending starts nothing more, even past the due time", () => {
    const fake = fakeChildren()
    return Effect.gen(function* () {
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(
        fake.layer(`
          [sources.srv]
          command = ["fake"]
          restart_backoff = "1s"
        `),
        scope
      )
      yield* Effect.gen(function* () {
        yield* settled
        yield* fake.kill("srv")
        yield* until("srv", (row) => row.nextRetryAt !== null)
      }).pipe(Effect.provide(context))
      yield* Scope.close(scope, Exit.void)
      yield* TestClock.adjust("1 hour")
      assert.strictEqual(fake.children.length, 1)
    })
  })
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
