import { assert, beforeAll, describe, it } from "@effect/vitest"
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, serveClient, writeConfig } from "../lib/cli.js"
import { eventually, stubCommand, tempDir } from "../lib/sources.js"

// Issue 10's warm start through `serve`: with a persisted catalog the host's tools/list does not wait for a slow
// child, an identical listing sends nothing, a changed one sends exactly one tools/list_changed.

beforeAll(ensureBuilt, 120_000)

interface Row {
  readonly status: string
  readonly reason: string
}

/**
 * One host session against a source whose initialize takes 3 s; `changed`: its listing differs from the cached one, so
 * the session waits for the tools/list_changed that announces it.
 */
const session = (config: string, cacheDir: string, changed = false) =>
  Effect.scoped(
    Effect.gen(function* () {
      const client = yield* serveClient(config, {}, cacheDir)
      let notices = 0
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        notices++
      })
      const listed = (yield* Effect.promise(() => client.listTools())).tools.map((t) => t.name)
      // Right after the list: is the child still starting (the list did not wait for it)?
      const health = yield* Effect.promise(() => client.callTool({ name: "SourceHealth", arguments: {} }))
      const row = (health.structuredContent as { sources: ReadonlyArray<Row> }).sources[0]!
      // The call waits for the slow child, which lists its own tools before answering.
      const answer = yield* Effect.promise(() => client.callTool({ name: "slow__echo", arguments: { text: "hi" } }))
      // The notice comes after the Gateway's 50 ms debounce; that nothing follows it (or comes at all for an identical
      // listing) once the debounce is over is shown under TestClock in test/Gateway.test.ts.
      if (changed) yield* eventually(() => notices >= 1, 10_000, "tools/list_changed")
      const after = (yield* Effect.promise(() => client.listTools())).tools.map((t) => t.name)
      return { listed, row, answer, notices, after }
    })
  )

describe("warm start through serve (persisted catalog)", () => {
  it.live(
    "lists the cached tools while the slow child starts; no notice when its list matches, exactly one when it changed",
    () =>
      Effect.gen(function* () {
        const cacheDir = path.join(tempDir(), "cache")
        const extra = path.join(tempDir(), "extra-tool")
        const config = writeConfig(
          `list_wait = "30s"\n[sources.slow]\ncommand = ${stubCommand("--slow-start", "3000", "--extra-tool", extra)}\n`
        )
        const cold = yield* session(config, cacheDir)
        assert.include(cold.listed, "slow__echo")
        // Cold, list_wait (30 s) covers the 3 s start: the first list waited for the child.
        assert.strictEqual(cold.row.status, "running")

        const warm = yield* session(config, cacheDir)
        assert.deepStrictEqual(warm.listed, cold.listed)
        assert.strictEqual(warm.row.status, "starting")
        assert.strictEqual(warm.row.reason, "catalog: cached")
        assert.deepStrictEqual(warm.answer.content, [{ type: "text", text: "echo:hi" }])
        assert.strictEqual(warm.notices, 0)
        assert.deepStrictEqual(warm.after, cold.listed)

        // The same spec, a different listing: the child now also serves `extra`.
        fs.writeFileSync(extra, "extra\n")
        const changed = yield* session(config, cacheDir, true)
        assert.deepStrictEqual(changed.listed, cold.listed)
        assert.strictEqual(changed.row.status, "starting")
        assert.strictEqual(changed.notices, 1)
        assert.include(changed.after, "slow__extra")
      }),
    90_000
  )
})
