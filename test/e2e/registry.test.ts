// The registry end to end: a host (the SDK Client) → `clawtool serve` (dist/) → stub fixtures, and the `tools` and
// `health` commands of the built CLI. dist/ is rebuilt first when any src/ file is newer than dist/main.js.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as z from "zod"
import { ensureBuilt, freshCacheDir, tempDirEnv } from "../lib/cli.js"

const root = Path.resolve(import.meta.dirname, "../..")
const main = Path.join(root, "dist/main.js")
const stub = Path.join(root, "test/fixtures/stub-server.mjs")
const work = Fs.mkdtempSync(Path.join(Os.tmpdir(), "clawtool-registry-e2e-"))
afterAll(() => Fs.rmSync(work, { recursive: true, force: true }))

beforeAll(ensureBuilt, 120_000)

const hint = "Echo text back: handy to check the connection end to end."

const configText = [
  `[sources.stub]\ncommand = ${JSON.stringify([process.execPath, stub])}`,
  `[sources.alpha]\ncommand = ${JSON.stringify([process.execPath, stub, "--name", "alpha"])}`,
  `[tools."stub.echo"]\nusage_hint = ${JSON.stringify(hint)}\nalways_load = true`,
  `[tools."stub.env_names"]\nenabled = false`
].join("\n")

/** The registry's own tools only (ToolSearch, SourceHealth) beside the stubs: the file tools have their own e2e test. */
const registryOnlyText = `${configText}\n[core_tools]\nenabled = false`

const writeConfig = (text = configText) => {
  const file = Path.join(work, `config-${Math.random().toString(36).slice(2)}.toml`)
  Fs.writeFileSync(file, text)
  return file
}

/** The raw tools/list JSON (no SDK schema parsing, which could reorder keys). */
const RawList = z.object({ tools: z.array(z.unknown()) })

interface ListedTool {
  readonly name: string
  readonly _meta?: Record<string, unknown>
  readonly [key: string]: unknown
}

const serve = (config: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [main, "serve", "--config", config],
        env: { PATH: process.env.PATH ?? "", ...tempDirEnv, CLAWTOOL_CACHE_DIR: freshCacheDir() },
        stderr: "pipe"
      })
      const client = new Client({ name: "registry-e2e", version: "1.0.0" })
      await client.connect(transport)
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

const rawList = (client: Client) =>
  Effect.promise(async () => {
    const result = await client.request({ method: "tools/list", params: {} }, RawList)
    return { json: JSON.stringify(result.tools), tools: result.tools as ReadonlyArray<ListedTool> }
  })

const cli = (...args: Array<string>) => {
  const result = spawnSync(process.execPath, [main, ...args], {
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", HOME: work },
    timeout: 60_000
  })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

describe("clawtool serve: tools/list through the registry", () => {
  it.scopedLive("hints, alwaysLoad, config gating and the byte-wise sort reach the host", () =>
    Effect.gen(function* () {
      const client = yield* serve(writeConfig(registryOnlyText))
      const { tools } = yield* rawList(client)
      const names = tools.map((t) => t.name)
      assert.deepStrictEqual(
        names,
        [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      )
      assert.deepStrictEqual(names.slice(0, 2), ["SourceHealth", "ToolSearch"], "core (uppercase) sorts first")
      assert.includeMembers(names, ["alpha__echo", "stub__echo", "stub__add"])
      assert.isTrue(names.indexOf("alpha__echo") < names.indexOf("stub__add"))
      assert.notInclude(names, "stub__env_names", "enabled = false")
      assert.include(names, "alpha__env_names", "the selector names one instance only")

      const byName = new Map(tools.map((t) => [t.name, t]))
      assert.deepStrictEqual(byName.get("stub__echo")!._meta, {
        "anthropic/alwaysLoad": true,
        clawtool: { usage_hint: hint }
      })
      assert.notProperty(byName.get("alpha__echo")!, "_meta")
      assert.notProperty(byName.get("stub__add")!, "_meta")
      const toolSearch = byName.get("ToolSearch")!._meta!
      assert.strictEqual(toolSearch["anthropic/alwaysLoad"], true)
      assert.isAtLeast(((toolSearch.clawtool as { usage_hint: string }).usage_hint ?? "").length, 20)
      assert.isUndefined(byName.get("SourceHealth")!._meta!["anthropic/alwaysLoad"])
      for (const t of tools) assert.match(t.name, /^[a-zA-Z0-9_-]{1,64}$/)

      const disabled = yield* Effect.promise(() => client.callTool({ name: "stub__env_names", arguments: {} }))
      assert.isTrue(disabled.isError)
      const echoed = yield* Effect.promise(() => client.callTool({ name: "stub__echo", arguments: { text: "hi" } }))
      assert.deepStrictEqual(echoed.content, [{ type: "text", text: "echo:hi" }])
      const found = yield* Effect.promise(() =>
        client.callTool({ name: "ToolSearch", arguments: { query: "echo text", limit: 3 } })
      )
      const results = (found.structuredContent as { results: ReadonlyArray<{ name: string }> }).results
      assert.includeMembers(
        results.map((r) => r.name),
        ["alpha__echo", "stub__echo"]
      )
      const health = yield* Effect.promise(() => client.callTool({ name: "SourceHealth", arguments: {} }))
      assert.match((health.content as Array<{ text: string }>)[0]!.text, /stub\s+running/)
    })
  )

  it.scopedLive("the same config and children give a byte-identical tools/list across restarts", () =>
    Effect.gen(function* () {
      const config = writeConfig()
      const first = yield* Effect.scoped(Effect.flatMap(serve(config), rawList))
      const second = yield* Effect.scoped(Effect.flatMap(serve(config), rawList))
      assert.strictEqual(first.json, second.json)
    })
  )
})

describe("clawtool tools / health (built CLI)", () => {
  it("tools list --json: every tool with origin, rule, alwaysLoad, hint and tokens; the hash health prints", () => {
    const config = writeConfig()
    const list = cli("tools", "list", "--json", "--config", config)
    assert.strictEqual(list.code, 0, list.stderr)
    const out = JSON.parse(list.stdout) as {
      catalogHash: string
      tools: ReadonlyArray<{ wire: string; enabled: boolean; rule: string; alwaysLoad: boolean; hint: string | null }>
      totals: { tools: number; listed: number; disabled: number; tokens: number }
    }
    assert.match(out.catalogHash, /^[0-9a-f]{64}$/)
    const byWire = new Map(out.tools.map((t) => [t.wire, t]))
    assert.isFalse(byWire.get("stub__env_names")!.enabled)
    assert.strictEqual(byWire.get("stub__env_names")!.rule, `tools."stub.env_names".enabled`)
    assert.isTrue(byWire.get("stub__echo")!.alwaysLoad)
    assert.strictEqual(byWire.get("stub__echo")!.hint, hint)
    // Besides the stub's switched-off tool, only WebSearch is not served: no search key here (issue 14).
    assert.deepStrictEqual(
      out.tools.filter((t) => !t.enabled).map((t) => t.wire),
      ["WebSearch", "stub__env_names"]
    )
    assert.strictEqual(out.totals.disabled, 2)
    assert.strictEqual(out.totals.listed, out.totals.tools - 2)
    assert.isAbove(out.totals.tokens, 0)

    const table = cli("tools", "list", "--config", config)
    assert.strictEqual(table.code, 0)
    assert.match(table.stdout, /stub__env_names\s+stub\.env_names\s+pinned\s+no \(tools\."stub\.env_names"\.enabled\)/)
    assert.include(table.stdout, `catalog sha256:${out.catalogHash}`)

    const health = cli("health", "--config", config)
    assert.strictEqual(health.code, 0, health.stderr)
    assert.include(health.stdout, `catalog sha256:${out.catalogHash}`)
    const healthJson = cli("health", "--json", "--config", config)
    assert.isArray(JSON.parse(healthJson.stdout))
    assert.include(healthJson.stderr, `catalog sha256:${out.catalogHash}`)
  })

  it("tools export-typescript: writes, is idempotent, --check passes then detects drift; usage errors exit 2", () => {
    const config = writeConfig()
    const dir = Path.join(work, "stubs")
    const first = cli("tools", "export-typescript", "--config", config, "--output", dir)
    assert.strictEqual(first.code, 0, first.stderr)
    assert.include(first.stdout, "wrote   stub/echo.ts")
    assert.include(first.stdout, "wrote   index.ts")
    assert.isTrue(Fs.existsSync(Path.join(dir, "ToolSearch.ts")))
    const second = cli("tools", "export-typescript", "--config", config, "--output", dir)
    assert.strictEqual(second.code, 0)
    assert.notInclude(second.stdout, "wrote")
    assert.strictEqual(cli("tools", "export-typescript", "--config", config, "--output", dir, "--check").code, 0)
    Fs.appendFileSync(Path.join(dir, "stub", "echo.ts"), "// drift\n")
    const drift = cli("tools", "export-typescript", "--config", config, "--output", dir, "--check")
    assert.strictEqual(drift.code, 1)
    assert.include(drift.stdout, "stub/echo.ts")
    assert.strictEqual(cli("tools", "export-typescript", "--config", config).code, 2, "--output is required")
  })
})
