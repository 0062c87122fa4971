// RunCode's sandbox (ADR 035) in-process: QuickJS on a worker thread (the worker tsc built under dist/, so `npm run
// build` first), a fresh capped wasm memory per run. The memory cap is measured here: a bomb ends as OutOfMemory while
// this process's resident memory (the worker's thread and its wasm memory are part of it) grows well under 512 MB.
import { assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { run, type RunSettings } from "../../src/services/CoreTools/RunCode/Sandbox.js"
import { ensureBuilt } from "../lib/cli.js"

beforeAll(ensureBuilt, 120_000)

const settings = (code: string, overrides: Partial<RunSettings> = {}): RunSettings => ({
  code: `(async () => {\n${code}\n})()`,
  names: { echo: { say: "echo__say" }, Core: "Core" },
  memoryBytes: 64 * 2 ** 20,
  timeoutMs: 5_000,
  maxCalls: 200,
  maxLog: 1000,
  call: (name, args) => Effect.succeed(JSON.stringify({ name, args: args === undefined ? null : JSON.parse(args) })),
  ...overrides
})

/** The run's outcome and the peak growth of this process's RSS while it ran, in MB. */
const measured = (of: RunSettings) =>
  Effect.gen(function* () {
    const before = process.memoryUsage().rss
    let peak = before
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10)
    const outcome = yield* Effect.ensuring(
      run(of),
      Effect.sync(() => clearInterval(sampler))
    )
    return { outcome, grewMb: (peak - before) / 2 ** 20 }
  })

describe("RunCode's sandbox", () => {
  it.live(
    "tools and call reach the host as wire names with JSON args; console is captured; the value comes back as JSON",
    () =>
      Effect.gen(function* () {
        const outcome = yield* run(
          settings(
            `console.log("two", { calls: 2 }); return await Promise.all([tools.echo.say({ a: 1 }), tools.Core(), call("x__y", { b: [2] })])`
          )
        )
        assert.isTrue(outcome.ok)
        if (!outcome.ok) return
        assert.deepStrictEqual(JSON.parse(outcome.json!), [
          { name: "echo__say", args: { a: 1 } },
          { name: "Core", args: null },
          { name: "x__y", args: { b: [2] } }
        ])
        assert.strictEqual(outcome.log.text, 'two {"calls":2}')
        assert.strictEqual(outcome.calls, 3)
      })
  )

  for (const [name, bomb] of [
    ["strings", 'const a = []; while (true) a.push("x".repeat(1 << 20) + a.length)'],
    ["typed arrays", "const a = []; while (true) a.push(new Uint8Array(1 << 20))"],
    ["small objects", "const a = []; for (let i = 0; ; i++) a.push({ i, s: 'v' + i })"],
    ["one huge string", 'return "x".repeat(2 ** 29)']
  ] as const) {
    it.live(`a memory bomb (${name}) ends as OutOfMemory while the process grows well under 512 MB`, () =>
      Effect.gen(function* () {
        const { outcome, grewMb } = yield* measured(settings(bomb, { timeoutMs: 20_000 }))
        assert.isFalse(outcome.ok)
        if (outcome.ok) return
        assert.strictEqual(outcome.reason, "OutOfMemory", outcome.message)
        assert.isBelow(grewMb, 256, `RSS grew ${grewMb} MB`)
      })
    )
  }

  it.live("the time limit stops a busy loop; max_calls ends the run even when the code catches", () =>
    Effect.gen(function* () {
      const loop = yield* run(settings("while (true) {}", { timeoutMs: 300 }))
      assert.strictEqual(loop.ok ? "ok" : loop.reason, "Timeout")
      const calls = yield* run(
        settings("for (let i = 0; i < 10000; i++) { try { await tools.echo.say({ i }) } catch {} }", { maxCalls: 20 })
      )
      assert.strictEqual(calls.ok ? "ok" : calls.reason, "MaxCalls")
      assert.strictEqual(calls.calls, 20)
    })
  )

  it.live("a promise nothing can settle ends at once; a rejected inner call is a ToolError the code catches", () =>
    Effect.gen(function* () {
      const never = yield* run(settings("await new Promise(() => {}); return 1"))
      assert.strictEqual(never.ok ? "ok" : never.reason, "NeverSettles")
      const caught = yield* run(
        settings("try { await call('bad') } catch (error) { return error.name + ': ' + error.message }", {
          call: () => Effect.fail("no such tool")
        })
      )
      assert.isTrue(caught.ok && JSON.parse(caught.json!) === "ToolError: no such tool")
    })
  )

  it.live("interrupting a run interrupts its inner calls", () =>
    Effect.gen(function* () {
      let interrupted = 0
      const fiber = yield* Effect.fork(
        run(
          settings("await Promise.all([tools.echo.say({}), tools.echo.say({})])", {
            call: () => Effect.onInterrupt(Effect.never, () => Effect.sync(() => (interrupted += 1)))
          })
        )
      )
      yield* Effect.sleep("500 millis")
      yield* Fiber.interrupt(fiber)
      assert.strictEqual(interrupted, 2)
    })
  )

  it.live("the guest has no process, require, timers, fetch or WebAssembly; the console output is bounded", () =>
    Effect.gen(function* () {
      const globals = yield* run(
        settings(
          "return [typeof process, typeof require, typeof setTimeout, typeof fetch, typeof WebAssembly, typeof globalThis.constructor.constructor('return this')().process]"
        )
      )
      assert.isTrue(globals.ok && JSON.parse(globals.json!).every((type: string) => type === "undefined"))
      const chatty = yield* run(
        settings("for (let i = 0; i < 1000; i++) console.log('0123456789'); return 1", { maxLog: 100 })
      )
      assert.isTrue(chatty.ok)
      assert.isAtMost(chatty.log.text.length, 100)
      assert.isAbove(chatty.log.dropped, 9000)
    })
  )
})
