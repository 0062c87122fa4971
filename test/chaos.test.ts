// The chaos suite (issue 6): children killed mid-call and at random, hung, dying in initialize, crash-looping, many
// kill/restart cycles, and concurrent calls across children. It asserts outcomes — every call answered (a result or a
// structured error), catalogs equal, no orphans — never how long anything took.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Exit, Fiber, Layer, Random, Scope } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { CallError } from "../src/domain/Errors.js"
import type { CallToolResult } from "../src/domain/Mcp.js"
import { Sources } from "../src/services/Sources.js"
import {
  eventually,
  isAlive,
  readPid,
  root,
  rowOf,
  settled,
  sourcesLayer,
  stubCommand,
  tempDir,
  waitFor
} from "./lib/sources.js"

const tiny = path.join(root, "test/fixtures/tiny-server.mjs")

const textOf = (result: CallToolResult) => (result.content as ReadonlyArray<{ text?: string }>)[0]?.text

const echo = (instance: string, text: string) =>
  Effect.flatMap(Sources, (sources) => sources.callTool(instance, { name: "echo", arguments: { text } }))

/** Fast restarts and no crash-loop: these tests kill on purpose, many times. */
const restless = `restart_backoff = "20ms"\nrestart_backoff_max = "100ms"\nmax_restarts = 1000`

describe("chaos", () => {
  it.scopedLive(
    "killed mid-call: every in-flight call fails at once with a retryable error; the child comes back",
    () =>
      Effect.gen(function* () {
        const sources = yield* Sources
        yield* settled
        const first = yield* rowOf("srv")
        // Each call reports progress every 100 ms: once all three have, the child has every one of them.
        const reached = new Set<number>()
        const inFlight = yield* Effect.forkScoped(
          Effect.forEach(
            [1, 2, 3],
            (i) =>
              Effect.either(
                sources.callTool(
                  "srv",
                  { name: "slow", arguments: { ms: 60_000 + i, steps: 600 } },
                  { onProgress: () => reached.add(i) }
                )
              ),
            { concurrency: "unbounded" }
          )
        )
        yield* eventually(() => reached.size === 3, 10_000, "all three calls to reach the child")
        process.kill(first.pid!, "SIGKILL")
        const outcomes = yield* Fiber.join(inFlight)
        for (const outcome of outcomes) {
          if (Either.isRight(outcome)) return assert.fail("a call to a killed child succeeded")
          const error = outcome.left
          assert.strictEqual(error.reason, "Transport")
          assert.isTrue(error.retryable)
          assert.match(error.detail, /killed by signal SIGKILL/)
        }
        yield* waitFor("srv", (row) => row.status === "running" && row.pid !== first.pid, "running again")
        assert.strictEqual(textOf(yield* echo("srv", "back")), "echo:back")
      }).pipe(Effect.provide(sourcesLayer(`[sources.srv]\ncommand = ${stubCommand()}\n${restless}`)))
  )

  it.scopedLive(
    "killed at random during a stream of calls: every call is answered, right or with a retryable error",
    () =>
      Effect.gen(function* () {
        yield* settled
        const kills = 4
        let killing = true
        let answered = 0
        const killer = yield* Effect.forkScoped(
          Effect.gen(function* () {
            let previous: number | null = null
            for (let kill = 0; kill < kills; kill++) {
              const row = yield* waitFor("srv", (row) => row.status === "running" && row.pid !== previous, "running")
              // At a random point of the stream: after 1 to 40 more answers (from this child).
              const target = answered + (yield* Random.nextIntBetween(1, 41))
              yield* eventually(() => answered >= target, 20_000, "answers from the running child")
              process.kill(row.pid!, "SIGKILL")
              previous = row.pid
            }
            yield* waitFor("srv", (row) => row.status === "running" && row.pid !== previous, "running")
          }).pipe(Effect.ensuring(Effect.sync(() => (killing = false))))
        )
        // Four clients call in a loop for as long as the kills go on (a failed call is simply answered, not retried).
        const client = (c: number) =>
          Effect.gen(function* () {
            const outcomes: Array<readonly [string, Either.Either<CallToolResult, CallError>]> = []
            for (let i = 0; killing; i++) {
              const text = `client-${c}-${i}`
              const outcome = yield* Effect.either(echo("srv", text))
              if (Either.isRight(outcome)) answered++
              outcomes.push([text, outcome])
              yield* Effect.sleep("5 millis")
            }
            return outcomes
          })
        const outcomes = (yield* Effect.forEach([0, 1, 2, 3], client, { concurrency: "unbounded" })).flat()
        yield* Fiber.join(killer)
        let ok = 0
        for (const [text, outcome] of outcomes) {
          if (Either.isRight(outcome)) {
            assert.strictEqual(textOf(outcome.right), `echo:${text}`)
            ok++
          } else {
            assert.include(["Transport", "NotRunning"], outcome.left.reason)
            assert.isTrue(outcome.left.retryable, outcome.left.detail)
          }
        }
        assert.isAbove(ok, 0)
        assert.isBelow(ok, outcomes.length) // the kills did land during the stream
        yield* waitFor("srv", (row) => row.status === "running" && row.restarts === kills, "running after the kills")
        assert.strictEqual(textOf(yield* echo("srv", "after")), "echo:after")
      }).pipe(Effect.provide(sourcesLayer(`[sources.srv]\ncommand = ${stubCommand()}\n${restless}`)))
  )

  it.scopedLive("hung in a call: call_timeout answers it, other calls keep flowing, the child keeps running", () =>
    Effect.gen(function* () {
      const sources = yield* Sources
      yield* settled
      const pid = (yield* rowOf("srv")).pid
      const hung = yield* Effect.fork(
        Effect.flip(sources.callTool("srv", { name: "slow", arguments: { ms: 3_600_000 } }))
      )
      for (let i = 0; i < 30; i++) assert.strictEqual(textOf(yield* echo("srv", `${i}`)), `echo:${i}`)
      const error = yield* Fiber.join(hung)
      assert.strictEqual(error.reason, "Timeout")
      const row = yield* rowOf("srv")
      assert.strictEqual(row.pid, pid)
      assert.strictEqual(row.restarts, 0)
    }).pipe(Effect.provide(sourcesLayer(`[sources.srv]\ncommand = ${stubCommand()}\ncall_timeout = "1s"\n${restless}`)))
  )

  it.scopedLive(
    "exiting during initialize and crash-looping: both end in crash-loop, a healthy sibling is untouched",
    () =>
      Effect.gen(function* () {
        const sources = yield* Sources
        yield* settled
        const healthy = yield* rowOf("healthy")
        const inInit = yield* waitFor("in-init", (row) => row.status === "crash-loop", "crash-loop")
        const atOnce = yield* waitFor("at-once", (row) => row.status === "crash-loop", "crash-loop")
        assert.strictEqual(inInit.restarts, 3)
        assert.strictEqual(atOnce.restarts, 3)
        assert.strictEqual(inInit.lastExit?.code, 1)
        assert.strictEqual(atOnce.lastExit?.code, 9)
        assert.include(atOnce.stderrTail, "stub: exiting 9")
        assert.isNotNull(inInit.nextRetryAt)
        // Meanwhile the healthy one served every call, with the same child.
        for (let i = 0; i < 10; i++) assert.strictEqual(textOf(yield* echo("healthy", `h${i}`)), `echo:h${i}`)
        const after = yield* rowOf("healthy")
        assert.deepStrictEqual([after.status, after.pid, after.restarts], ["running", healthy.pid, 0])
        assert.deepStrictEqual(
          (yield* sources.catalog).map((entry) => entry.instance),
          ["healthy"]
        )
      }).pipe(
        Effect.provide(
          sourcesLayer(`
          [sources.in-init]
          command = ${stubCommand("--exit-during-initialize")}
          restart_backoff = "20ms"
          restart_backoff_max = "80ms"
          max_restarts = 3
          crash_loop_retry = "1h"
          [sources.at-once]
          command = ${stubCommand("--exit-at-once", "9")}
          restart_backoff = "20ms"
          restart_backoff_max = "80ms"
          max_restarts = 3
          crash_loop_retry = "1h"
          [sources.healthy]
          command = ${stubCommand()}
        `)
        )
      )
  )

  it.live("30 kill/restart cycles: the catalog equals the first one after each, and no process is left behind", () =>
    Effect.gen(function* () {
      const cycles = 30
      const dir = tempDir()
      const pidfile = path.join(dir, "grandchild")
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(
        // The SDK-free fixture: thirty starts of an SDK server would cost ~15 s of CPU on their own.
        sourcesLayer(
          `[sources.srv]\ncommand = ${JSON.stringify([process.execPath, tiny, "--grandchild", pidfile])}\n${restless}`
        ),
        scope
      )
      const seen = new Set<number>()
      yield* Effect.gen(function* () {
        const sources = yield* Sources
        yield* settled
        const original = JSON.stringify(yield* sources.catalog)
        let row = yield* rowOf("srv")
        for (let cycle = 1; cycle <= cycles; cycle++) {
          seen.add(row.pid!)
          seen.add(readPid(pidfile))
          process.kill(row.pid!, "SIGKILL")
          const previous = row.pid
          row = yield* waitFor("srv", (r) => r.status === "running" && r.pid !== previous, `restart ${cycle}`)
          assert.strictEqual(JSON.stringify(yield* sources.catalog), original, `catalog after restart ${cycle}`)
          // The pidfile is written by the new child before it answers initialize.
          assert.strictEqual(readPid(`${pidfile}.self`), row.pid)
        }
        assert.strictEqual(row.restarts, cycles)
        // Every earlier child and grandchild is gone (their groups were killed when each leader died).
        yield* eventually(() => ![...seen].some(isAlive), 5_000, "earlier children and grandchildren to be gone")
        seen.add(row.pid!)
        seen.add(readPid(pidfile))
      }).pipe(Effect.provide(context))
      yield* Scope.close(scope, Exit.void)
      yield* eventually(() => ![...seen].some(isAlive), 5_000, "every process to be gone")
      assert.strictEqual(seen.size, 2 * (cycles + 1))
      fs.rmSync(dir, { recursive: true, force: true })
    })
  )

  it.scopedLive("concurrent calls across three children: every response matches its request", () =>
    Effect.gen(function* () {
      const sources = yield* Sources
      yield* settled
      const instances = ["alpha", "beta", "gamma"] as const
      const requests = Array.from({ length: 600 }, (_, i) => ({ instance: instances[i % 3]!, i }))
      const results = yield* Effect.forEach(
        requests,
        ({ instance, i }) =>
          i % 5 === 0
            ? // Some calls go through `meta`, whose answer carries the request's own _meta back.
              Effect.map(
                sources.callTool(instance, { name: "meta", _meta: { request: `${instance}-${i}` } }),
                (result) => (result.structuredContent as { meta: { request: string } }).meta.request
              )
            : Effect.map(echo(instance, `${instance}-${i}`), textOf),
        { concurrency: 60 }
      )
      results.forEach((result, n) => {
        const { instance, i } = requests[n]!
        assert.strictEqual(result, i % 5 === 0 ? `${instance}-${i}` : `echo:${instance}-${i}`)
      })
      const rows = yield* sources.health
      assert.deepStrictEqual(
        rows.map((row) => [row.name, row.status, row.restarts]),
        instances.map((name) => [name, "running", 0])
      )
    }).pipe(
      Effect.provide(
        sourcesLayer(`
          [sources.alpha]
          command = ${stubCommand("--name", "alpha")}
          [sources.beta]
          command = ${stubCommand("--name", "beta")}
          [sources.gamma]
          command = ${stubCommand("--name", "gamma")}
        `)
      )
    )
  )
})
