import { assert, describe, it } from "@effect/vitest"
import { Clock, Duration, Effect, Either, Option, TestClock } from "effect"
import type { SourceConfig } from "../src/domain/Config.js"
import { SourceError } from "../src/domain/Errors.js"
import { parseConfig } from "../src/services/Config.js"
import * as Policy from "../src/services/Sources/Policy.js"

// The restart policy (ADR-004) on TestClock: no children, no sleeps.

const source = (lines: string): SourceConfig =>
  Either.getOrThrow(parseConfig(`[sources.srv]\ncommand = ["node", "server.js"]\n${lines}\n`, "/x/config.toml"))
    .sources["srv"]!

const exited = new SourceError({ instance: "srv", reason: "Exited", detail: "exited with code 1" })

/** One failure now, of a child that ran for `ranFor` (never ran: undefined). */
const fail = (config: SourceConfig, state: Policy.State, ranFor?: Duration.DurationInput, error = exited) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Policy.decide(config, state, {
      error,
      runningSince: ranFor === undefined ? Option.none() : Option.some(now - Duration.toMillis(Duration.decode(ranFor)))
    })
  )

/** The delay of a Restart decision, in ms (fails the test on any other decision). */
const restartDelay = (decision: Policy.Decision): number =>
  decision._tag === "Restart"
    ? Duration.toMillis(decision.delay)
    : assert.fail(`expected Restart, got ${decision._tag}`)

/** `restart_backoff * 2^attempt`, capped, ±20 % and never above the cap. */
const assertBackoff = (delay: number, nominal: number, cap: number, what: string) => {
  const expected = Math.min(nominal, cap)
  assert.isAtLeast(delay, Math.floor(expected * 0.8), what)
  assert.isAtMost(delay, Math.min(Math.ceil(expected * 1.2), cap), what)
}

describe("restart policy", () => {
  it.effect("backoff starts at restart_backoff, doubles, is capped at restart_backoff_max, jittered by ±20 %", () =>
    Effect.gen(function* () {
      const srv = source(`restart_backoff = "100ms"\nrestart_backoff_max = "1s"`)
      const firsts = new Set<number>()
      for (let run = 0; run < 20; run++) {
        for (let attempt = 0; attempt < 8; attempt++) {
          const delay = Duration.toMillis(yield* Policy.backoff(srv, attempt))
          if (attempt === 0) firsts.add(delay)
          assertBackoff(delay, 100 * 2 ** attempt, 1_000, `attempt ${attempt}: ${delay}`)
        }
      }
      // Jittered: twenty runs do not all pick the same first delay.
      assert.isAbove(firsts.size, 1)
      // Far past the cap (no overflow to Infinity or NaN).
      assert.isAtMost(Duration.toMillis(yield* Policy.backoff(srv, 5_000)), 1_000)
    })
  )

  it.effect("rapid failures double the delay; a stable run (restart_window) resets it", () =>
    Effect.gen(function* () {
      const srv = source(`restart_backoff = "200ms"\nrestart_window = "1s"\nmax_restarts = 100`)
      let state = Policy.initial
      const delays: Array<number> = []
      for (let i = 0; i < 3; i++) {
        const [decision, next] = yield* fail(srv, state, "100 millis")
        delays.push(restartDelay(decision))
        state = next
        yield* TestClock.adjust(Duration.millis(delays.at(-1)! + 100))
      }
      delays.forEach((delay, i) => assertBackoff(delay, 200 * 2 ** i, 5_000, delays.join(", ")))
      assert.strictEqual(state.attempt, 3)
      // Just short of the window is not stable: the backoff keeps doubling.
      const [unstable] = yield* fail(srv, state, "999 millis")
      assertBackoff(restartDelay(unstable), 1_600, 5_000, "still doubling")
      const [decision, afterStable] = yield* fail(srv, state, "1 second")
      assertBackoff(restartDelay(decision), 200, 5_000, "reset by the stable run")
      assert.strictEqual(afterStable.attempt, 1)
      assert.strictEqual(afterStable.recent.length, 1)
    })
  )

  it.effect("crash-loop after max_restarts within the window, retried every crash_loop_retry until a stable run", () =>
    Effect.gen(function* () {
      const srv = source(
        `restart_backoff = "20ms"\nrestart_backoff_max = "50ms"\nmax_restarts = 3\nrestart_window = "1m"\ncrash_loop_retry = "1h"`
      )
      let state = Policy.initial
      for (let i = 0; i < 3; i++) {
        const [decision, next] = yield* fail(srv, state)
        assert.strictEqual(decision._tag, "Restart")
        state = next
        yield* TestClock.adjust("50 millis")
      }
      const [looping, inLoop] = yield* fail(srv, state)
      assert.isTrue(looping._tag === "CrashLoop" && Duration.toMillis(looping.delay) === 3_600_000, looping._tag)
      assert.isTrue(inLoop.crashLoop)
      // A crash-loop outlives the window: only a stable run ends it.
      yield* TestClock.adjust("1 hour")
      const [still, stillInLoop] = yield* fail(srv, inLoop, "59 seconds")
      assert.strictEqual(still._tag, "CrashLoop")
      const [out, outOfLoop] = yield* fail(srv, stillInLoop, "1 minute")
      assertBackoff(restartDelay(out), 20, 50, "a fresh backoff after the stable run")
      assert.isFalse(outOfLoop.crashLoop)
    })
  )

  it.effect("restarts older than restart_window no longer count", () =>
    Effect.gen(function* () {
      const srv = source(`max_restarts = 2\nrestart_window = "10s"`)
      const [, one] = yield* fail(srv, Policy.initial)
      yield* TestClock.adjust("6 seconds")
      const [, two] = yield* fail(srv, one)
      yield* TestClock.adjust("1 second")
      // Two restarts within the last 10 s: the third failure crash-loops…
      assert.strictEqual((yield* fail(srv, two))[0]._tag, "CrashLoop")
      // …but 4 s later the first restart has left the window, so one more restart is allowed.
      yield* TestClock.adjust("4 seconds")
      const [decision, three] = yield* fail(srv, two)
      assert.strictEqual(decision._tag, "Restart")
      assert.strictEqual(three.recent.length, 2)
    })
  )

  it.effect("restart = never, missing secrets and rejected credentials stop, whatever the state", () =>
    Effect.gen(function* () {
      const cases: ReadonlyArray<readonly [string, SourceConfig, SourceError]> = [
        ["never", source(`restart = "never"`), exited],
        [
          "missing secrets",
          source(""),
          new SourceError({ instance: "srv", reason: "MissingSecrets", detail: "missing secrets: TOKEN" })
        ],
        [
          "auth",
          source(""),
          new SourceError({ instance: "srv", reason: "Initialize", detail: "error 401", auth: true })
        ]
      ]
      for (const [what, config, error] of cases) {
        const [decision, state] = yield* fail(config, Policy.initial, "1 hour", error)
        assert.strictEqual(decision._tag, "Stop", what)
        assert.strictEqual(state, Policy.initial, what)
      }
      // An ordinary exit restarts.
      assert.strictEqual((yield* fail(source(""), Policy.initial, undefined, exited))[0]._tag, "Restart")
    })
  )

  it.effect("a recursion (a source starting clawtool with a config above it) stops at once, never restarted", () =>
    Effect.gen(function* () {
      const recursion = new SourceError({
        instance: "srv",
        reason: "Recursion",
        detail: "starts clawtool with /x/config.toml again"
      })
      const [decision, state] = yield* fail(source(""), Policy.initial, undefined, recursion)
      assert.strictEqual(decision._tag, "Stop")
      assert.strictEqual(state, Policy.initial)
      // Not an authentication failure: Health says down.
      assert.isFalse(Policy.unauthenticated(recursion))
    })
  )

  it.effect(
    "a refused remote source (Unauthenticated) is tried again only every crash_loop_retry, never in a loop",
    () =>
      Effect.gen(function* () {
        const refused = new SourceError({ instance: "srv", reason: "Unauthenticated", detail: "HTTP 401" })
        const [decision, state] = yield* fail(source(`crash_loop_retry = "30s"`), Policy.initial, undefined, refused)
        if (decision._tag !== "CrashLoop") return assert.fail(`expected CrashLoop, got ${decision._tag}`)
        assert.strictEqual(Duration.toMillis(decision.delay), 30_000)
        assert.strictEqual(state, Policy.initial)
        assert.isTrue(Policy.unauthenticated(refused))
        // restart = "never" means never, refused or not.
        assert.strictEqual(
          (yield* fail(source(`restart = "never"`), Policy.initial, undefined, refused))[0]._tag,
          "Stop"
        )
      })
  )
})

// Edges of Sources' pure parts that mutation testing found unpinned (docs/mutation.md).

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
