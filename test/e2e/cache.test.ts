import { assert, beforeAll, describe, it } from "@effect/vitest"
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, runCli, serveClient, writeConfig } from "../lib/cli.js"
import { stubCommand, tempDir } from "../lib/sources.js"

beforeAll(ensureBuilt, 120_000)

const catalogFiles = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.endsWith(".json")) : [])

/** A host session: its tool names, and how many tools/list_changed it got by the end. */
const session = (config: string, cacheDir: string, tool: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const client = yield* serveClient(config, {}, cacheDir)
      let notices = 0
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        notices++
      })
      const names = (yield* Effect.promise(() => client.listTools())).tools.map((t) => t.name)
      // The call waits for the (slow) child, so by its answer the child has listed its own tools. That no list_changed
      // follows once the Gateway's debounce is over, when that listing equals the cached one, is shown under TestClock
      // in test/Gateway.test.ts (no real wait here).
      const answer = yield* Effect.promise(() => client.callTool({ name: tool, arguments: { text: "hi" } }))
      return { names, answer, notices }
    })
  )

describe("persisted catalog and lazy sources (built CLI)", () => {
  it.live(
    "serve stores the catalog in a 0700 folder it creates, a warm start lists it with no notice, cache clear removes it",
    () =>
      Effect.gen(function* () {
        const cacheDir = path.join(tempDir(), "created", "clawtool")
        const config = writeConfig(`[sources.slow]\ncommand = ${stubCommand("--slow-start", "3000")}\n`)
        const cold = yield* session(config, cacheDir, "slow__echo")
        assert.include(cold.names, "slow__echo")
        assert.strictEqual(fs.statSync(cacheDir).mode & 0o777, 0o700)
        const [file] = catalogFiles(cacheDir)
        assert.isDefined(file)
        assert.strictEqual(fs.statSync(path.join(cacheDir, file!)).mode & 0o777, 0o600)

        const warm = yield* session(config, cacheDir, "slow__echo")
        assert.deepStrictEqual(warm.names, cold.names)
        assert.deepStrictEqual(warm.answer.content, [{ type: "text", text: "echo:hi" }])
        assert.strictEqual(warm.notices, 0)

        // A corrupt entry is survived (one warning) and rewritten.
        fs.writeFileSync(path.join(cacheDir, file!), "{truncated")
        const survived = yield* session(config, cacheDir, "slow__echo")
        assert.deepStrictEqual(survived.names, cold.names)
        assert.include(fs.readFileSync(path.join(cacheDir, file!), "utf8"), "echo")

        // The bin's code cache (ADR 027) sits beside the catalogs, written by the sessions above.
        assert.isTrue(fs.existsSync(path.join(cacheDir, "code")), "the code cache was written")
        const cleared = runCli(["cache", "clear"], { CLAWTOOL_CACHE_DIR: cacheDir })
        assert.strictEqual(cleared.code, 0, cleared.stderr)
        assert.include(cleared.stdout, "removed 1 cached catalog and the code cache")
        assert.deepStrictEqual(catalogFiles(cacheDir), [])
        assert.isFalse(fs.existsSync(path.join(cacheDir, "code")), "cache clear removes the code cache")
      }),
    60_000
  )

  it.live("health: a lazy source with a cached catalog is idle (not spawned) and healthy", () =>
    Effect.gen(function* () {
      const cacheDir = tempDir()
      const starts = path.join(tempDir(), "starts")
      const config = writeConfig(`[sources.lazy]\ncommand = ${stubCommand("--record-start", starts)}\nstart = "lazy"\n`)
      const first = runCli(["health", "--json", "--config", config], { CLAWTOOL_CACHE_DIR: cacheDir })
      assert.strictEqual(first.code, 0, first.stderr)
      assert.strictEqual(JSON.parse(first.stdout)[0].status, "running")
      const second = runCli(["health", "--json", "--config", config], { CLAWTOOL_CACHE_DIR: cacheDir })
      assert.strictEqual(second.code, 0, second.stderr)
      const row = JSON.parse(second.stdout)[0]
      assert.deepStrictEqual([row.status, row.reason, row.pid], ["idle", "catalog: cached", null])
      assert.isAbove(row.toolCount, 0)
      assert.strictEqual(fs.readFileSync(starts, "utf8").trim().split("\n").length, 1)
    })
  )

  it.live(
    "serve: a lazy source with a cached catalog is listed without a spawn; the first call spawns it",
    () =>
      Effect.gen(function* () {
        const cacheDir = tempDir()
        const starts = path.join(tempDir(), "starts")
        const startCount = () => (fs.existsSync(starts) ? fs.readFileSync(starts, "utf8").trim().split("\n").length : 0)
        const config = writeConfig(
          `[sources.lazy]\ncommand = ${stubCommand("--record-start", starts)}\nstart = "lazy"\n`
        )
        // The first session learns the catalog (one start).
        yield* session(config, cacheDir, "lazy__echo")
        assert.strictEqual(startCount(), 1)
        yield* Effect.scoped(
          Effect.gen(function* () {
            const client = yield* serveClient(config, {}, cacheDir)
            const names = (yield* Effect.promise(() => client.listTools())).tools.map((t) => t.name)
            assert.include(names, "lazy__echo")
            assert.strictEqual(startCount(), 1)
            const answer = yield* Effect.promise(() =>
              client.callTool({ name: "lazy__echo", arguments: { text: "x" } })
            )
            assert.deepStrictEqual(answer.content, [{ type: "text", text: "echo:x" }])
            assert.strictEqual(startCount(), 2)
          })
        )
      }),
    60_000
  )
})
