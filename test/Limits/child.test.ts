// `[limits]` (ADR 010) below the Gateway: a child's too-deep answer fails that call with the reason, and Health counts
// the refused message once. Real children; the config keys and the pure checks are in Limits.test.ts.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Sources } from "../../src/services/Sources.js"
import { hostileCommand } from "../lib/rawHost.js"
import { rowOf, sourcesLayer } from "../lib/sources.js"

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
