// `[limits]` (ADR 010): the config keys, their defaults and errors, and what a child's too-deep answer does below the
// Gateway: that call fails with the reason, and Health counts the refused message once.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { defaultLimits } from "../src/domain/Limits.js"
import { parseConfig } from "../src/services/Config.js"
import { Sources } from "../src/services/Sources.js"
import { configFrom, rowOf, sourcesLayer } from "./lib/sources.js"
import { hostileCommand } from "./lib/rawHost.js"

const problem = (text: string) =>
  Either.match(parseConfig(text, "/x/config.toml"), {
    onLeft: (error) => error.message,
    onRight: (config) => assert.fail(`expected a ConfigError, got ${JSON.stringify(config.limits)}`)
  })

describe("[limits] in the config", () => {
  it("defaults to the transports' defaults; each key can be set", () => {
    const { limits } = configFrom("")
    assert.deepStrictEqual(
      [limits.max_depth, limits.max_line_bytes, limits.max_in_flight],
      [defaultLimits.maxDepth, defaultLimits.maxLineBytes, defaultLimits.maxInFlight]
    )
    const set = configFrom("[limits]\nmax_depth = 100\nmax_line_bytes = 4096\nmax_in_flight = 3\n").limits
    assert.deepStrictEqual([set.max_depth, set.max_line_bytes, set.max_in_flight], [100, 4096, 3])
  })

  it("out of range, fractional or unknown keys are one error naming the key", () => {
    assert.include(problem("[limits]\nmax_depth = 5000\n"), "limits.max_depth: max_depth must be between 8 and 1000")
    assert.include(problem("[limits]\nmax_in_flight = 0\n"), "max_in_flight must be between 1 and 1000000")
    assert.include(problem("[limits]\nmax_line_bytes = 2048.5\n"), "max_line_bytes must be a whole number")
    assert.include(problem("[limits]\nmax_size = 1\n"), 'unknown key "max_size"')
  })
})

describe("a child's too-deep answer below the Gateway", () => {
  it.scopedLive("the SDK path's call fails as the child's error naming max_depth; Health counts it once", () =>
    Effect.gen(function* () {
      const sources = yield* Sources
      yield* sources.awaitSettled
      const failed = yield* Effect.flip(sources.callTool("hostile", { name: "deep", arguments: { depth: 2000 } }))
      assert.strictEqual(failed.reason, "Child")
      assert.include(failed.detail, "max_depth (512)")
      const ok = yield* sources.callTool("hostile", { name: "echo", arguments: { text: "on" } })
      assert.deepStrictEqual(ok.content, [{ type: "text", text: "echo:on" }])
      assert.strictEqual((yield* rowOf("hostile")).stdoutGarbage, 1)
    }).pipe(Effect.provide(sourcesLayer(`[sources.hostile]\ncommand = ${hostileCommand()}\n`)))
  )
})
