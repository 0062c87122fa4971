// The call relay (ADR 009) against real children: each outcome equals the SDK path's for the same request (results,
// isError results, the child's JSON-RPC errors), call_timeout with progress, cancellation, a child killed mid-call,
// and hundreds of concurrent calls each answered by its own response.
import { assert, describe, it } from "@effect/vitest"
import { assertSome } from "@effect/vitest/utils"
import { Duration, Effect, Either, Fiber, Option } from "effect"
import type { CallError } from "../src/domain/Errors.js"
import type { CallToolRequest, CallToolResult } from "../src/domain/Mcp.js"
import { SourceClient } from "../src/services/SourceClient/SourceClient.js"
import * as Relay from "../src/services/SourceClient/Relay.js"
import { Sources } from "../src/services/Sources.js"
import { eventually, rowOf, settled, sourcesLayer, stub, stubCommand } from "./lib/sources.js"

interface FakeTimer {
  at: number
  readonly ms: number
  readonly fire: () => void
}

/** call_timeout timers on a clock that moves only when the test says so. */
const fakeClock = () => {
  let now = 0
  let refreshes = 0
  let onRefresh = () => {}
  const timers = new Set<FakeTimer>()
  const advance = (ms: number) => {
    now += ms
    for (const timer of [...timers]) {
      if (timer.at <= now) {
        timers.delete(timer)
        timer.fire()
      }
    }
  }
  const fake: Relay.Timers<FakeTimer> = {
    set: (expire, ms, id) => {
      const timer = { at: now + ms, ms, fire: () => expire(id) }
      timers.add(timer)
      return timer
    },
    clear: (timer) => void timers.delete(timer),
    refresh: (timer) => {
      refreshes++
      onRefresh()
      timer.at = now + timer.ms
    }
  }
  return {
    timers: fake as Relay.Timers,
    advance,
    pending: () => timers.size,
    refreshes: () => refreshes,
    now: () => now,
    /** Runs at each refresh, before the timer restarts (time that passed since the last progress). */
    onRefresh: (run: () => void) => {
      onRefresh = run
    }
  }
}

/** A value JSON.stringify cannot write: nested deeper than the stack allows. */
const tooDeep = () => {
  let value: Record<string, unknown> = {}
  for (let i = 0; i < 200_000; i++) value = { a: value }
  return value
}

/** One call through the relay as an Effect; interrupting it cancels the call (as the host's cancel does). */
const relay = (instance: string, request: CallToolRequest) =>
  Effect.flatMap(Sources, (sources) =>
    Effect.async<Either.Either<CallToolResult, CallError>>((resume) => {
      const connection = sources.connectionNow(instance)
      if (connection === undefined) return resume(Effect.dieMessage(`${instance} is not running`))
      const cancel = connection.relayCall(request, (outcome) => resume(Effect.succeed(outcome)))
      return Effect.sync(cancel)
    })
  )

/** The same child's SDK path (Connection.callTool, below Sources' own name check). */
const sdkPath = (instance: string, request: CallToolRequest) =>
  Effect.flatMap(Sources, (sources) => {
    const connection = sources.connectionNow(instance)
    return connection === undefined
      ? Effect.dieMessage(`${instance} is not running`)
      : Effect.either(connection.callTool(request))
  })

/** What a caller can observe of an outcome (a CallError's fields, not its stack). */
const observable = (outcome: Either.Either<CallToolResult, CallError>) =>
  Either.match(outcome, {
    onRight: (result) => ({ result }),
    onLeft: (error) => ({ reason: error.reason, detail: error.detail, code: error.code, retryable: error.retryable })
  })

const cancelledCount = Effect.map(
  sdkPath("srv", { name: "cancelled" }),
  (outcome) => (Either.getOrThrow(outcome).structuredContent as { count: number }).count
)

describe("call relay (real children)", () => {
  it.scopedLive("answers exactly as the SDK path: results, isError results and the child's JSON-RPC errors", () =>
    Effect.gen(function* () {
      yield* settled
      const requests: ReadonlyArray<CallToolRequest> = [
        { name: "echo", arguments: { text: "hi" } },
        { name: "echo" }, // isError result
        { name: "add", arguments: { a: 2, b: 3 } }, // structuredContent
        { name: "meta", arguments: {}, _meta: { other: "kept", nested: { a: [1, 2] } } },
        { name: "no_such_tool_at_the_child" }, // the child's own error
        { name: "add", arguments: { a: "not a number" } } // the child rejects the arguments
      ]
      for (const request of requests) {
        const viaSdk = observable(yield* sdkPath("srv", request))
        const viaRelay = observable(yield* relay("srv", request))
        assert.deepStrictEqual(viaRelay, viaSdk, `${request.name}: relay and SDK path differ`)
      }
      const meta = Either.getOrThrow(yield* relay("srv", { name: "meta", _meta: { other: "kept" } }))
      assert.deepStrictEqual((meta.structuredContent as { meta: unknown }).meta, { other: "kept" })
    }).pipe(Effect.provide(sourcesLayer(`[sources.srv]\ncommand = ${stubCommand()}\n`)))
  )

  it.scopedLive("hundreds of concurrent calls: each is answered by its own response", () =>
    Effect.gen(function* () {
      yield* settled
      const texts = Array.from({ length: 300 }, (_, i) => `call-${i}`)
      const outcomes = yield* Effect.forEach(texts, (text) => relay("srv", { name: "echo", arguments: { text } }), {
        concurrency: "unbounded"
      })
      assert.deepStrictEqual(
        outcomes.map((outcome) => (Either.getOrThrow(outcome).content[0] as { text: string }).text),
        texts.map((text) => `echo:${text}`)
      )
    }).pipe(Effect.provide(sourcesLayer(`[sources.srv]\ncommand = ${stubCommand()}\n`)))
  )

  it.scopedLive(
    "call_timeout: a hung call is cancelled at the child and fails as Timeout; progress keeps one alive",
    () =>
      Effect.gen(function* () {
        // The relay's timers run on a clock only this test moves: no timing margins.
        const clock = fakeClock()
        const stderr: Array<string> = []
        const connection = yield* (yield* SourceClient).connect({
          instance: "srv",
          command: [process.execPath, stub],
          env: { PATH: process.env.PATH ?? "" },
          onStderrLine: (line) => stderr.push(line),
          onGarbage: () => {},
          callTimeout: Duration.seconds(2),
          relayTimers: clock.timers
        })
        const call = (request: CallToolRequest) =>
          Effect.async<Either.Either<CallToolResult, CallError>>((resume) => {
            const cancel = connection.relayCall(request, (outcome) => resume(Effect.succeed(outcome)))
            return Effect.sync(cancel)
          })
        const hung = yield* Effect.fork(call({ name: "slow", arguments: { ms: 60_000 } }))
        yield* eventually(() => clock.pending() === 1, 10_000, "the call's timer")
        clock.advance(1999)
        assert.strictEqual(clock.pending(), 1, "not expired before call_timeout")
        clock.advance(1)
        assert.deepStrictEqual(observable(yield* Fiber.join(hung)), {
          reason: "Timeout",
          detail:
            "srv.slow timed out: no answer or progress within call_timeout (2000ms); the call was cancelled at the source",
          code: undefined,
          retryable: false
        })
        // The child was told, under the relay's id.
        yield* eventually(() => stderr.includes("stub: cancelled clawtool-1"), 10_000, "the child's cancel")
        // Each progress comes 1999 ms after the last (the clock moves only then): 3 × 1999 ms in all, never 2 s
        // without progress, so the call completes.
        const start = clock.now()
        clock.onRefresh(() => clock.advance(1999))
        const long = yield* call({ name: "slow", arguments: { ms: 30, steps: 3 } })
        assert.deepStrictEqual(Either.getOrThrow(long).content, [{ type: "text", text: "slept 30ms" }])
        assert.strictEqual(clock.refreshes(), 3)
        assert.strictEqual(clock.now() - start, 3 * 1999)
      }).pipe(Effect.provide(SourceClient.Default))
  )

  it.effect("serialisation is total: params JSON cannot write end the call with a CallError, never a throw", () =>
    Effect.gen(function* () {
      const sent: Array<string> = []
      const relay = Relay.make({ instance: "srv", send: (lines) => sent.push(lines) })
      const outcome = yield* Effect.async<Either.Either<CallToolResult, CallError>>((resume) => {
        relay.call({ name: "echo", arguments: tooDeep() }, (result) => resume(Effect.succeed(result)))
      })
      const error = Either.getLeft(outcome)
      assertSome(
        Option.map(error, (e) => e.reason),
        "InvalidArguments"
      )
      assert.match(Option.getOrThrow(error).detail, /^srv\.echo: the call cannot be serialised for the source \(/)
      assert.deepStrictEqual(sent, [], "the child never sees it")
      // The relay keeps working.
      relay.call({ name: "echo" }, () => {})
      assert.strictEqual(sent.length, 1)
    })
  )

  it.scopedLive("a cancelled call: the child is told, and its answer never arrives", () =>
    Effect.gen(function* () {
      yield* settled
      const before = yield* cancelledCount
      const call = yield* Effect.fork(relay("srv", { name: "slow", arguments: { ms: 60_000 } }))
      yield* Effect.sleep("200 millis")
      yield* Fiber.interrupt(call)
      yield* Effect.repeat(cancelledCount, { until: (count) => count === before + 1 })
      // The same child keeps serving.
      const after = yield* relay("srv", { name: "echo", arguments: { text: "still" } })
      assert.deepStrictEqual(Either.getOrThrow(after).content, [{ type: "text", text: "echo:still" }])
    }).pipe(Effect.provide(sourcesLayer(`[sources.srv]\ncommand = ${stubCommand()}\n`)))
  )

  it.scopedLive("a child killed mid-call: every relayed call fails as the SDK path's do (retryable Transport)", () =>
    Effect.gen(function* () {
      yield* settled
      const sources = yield* Sources
      const connection = sources.connectionNow("srv")!
      const pid = (yield* rowOf("srv")).pid!
      const slow = { name: "slow", arguments: { ms: 60_000 } }
      const relayed = yield* Effect.fork(
        Effect.all([relay("srv", slow), relay("srv", slow)], { concurrency: "unbounded" })
      )
      const viaSdk = yield* Effect.fork(sdkPath("srv", slow))
      yield* Effect.sleep("300 millis")
      process.kill(pid, "SIGKILL")
      const expected = observable(yield* Fiber.join(viaSdk))
      assert.deepStrictEqual(expected, {
        reason: "Transport",
        detail: 'source "srv" killed by signal SIGKILL',
        code: undefined,
        retryable: true
      })
      for (const outcome of yield* Fiber.join(relayed)) assert.deepStrictEqual(observable(outcome), expected)
      // A call on the dead connection fails the same way, at once.
      const late = yield* Effect.async<Either.Either<CallToolResult, CallError>>((resume) => {
        connection.relayCall({ name: "echo" }, (outcome) => resume(Effect.succeed(outcome)))
      })
      assert.deepStrictEqual(observable(late), expected)
    }).pipe(Effect.provide(sourcesLayer(`[sources.srv]\ncommand = ${stubCommand()}\nrestart = "never"\n`)))
  )
})
