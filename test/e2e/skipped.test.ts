// A host's mcpServers JSON with entries clawtool cannot use: every command that reads the config warns once on stderr
// naming each, health, SourceHealth and source list show them as skipped rows, and a serve reload warns only anew.
import { assert, beforeAll, describe, it, onTestFinished } from "@effect/vitest"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, main, serveClient, tempDirEnv } from "../lib/cli.js"
import { pollUntil, root, stub, tempDir } from "../lib/sources.js"

beforeAll(ensureBuilt, 120_000)

/** A folder for one test's files, removed when it ends. */
const testDir = () => {
  const dir = tempDir("clawtool-skipped-")
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

const good = { command: process.execPath, args: [stub] }
const pigeon = `type "carrier-pigeon" is not stdio, http or sse`
const empty = "has neither a command nor a url"

const writeJson = (dir: string, servers: Record<string, unknown>) => {
  const file = path.join(dir, "mcp.json")
  fs.writeFileSync(file, JSON.stringify({ mcpServers: servers }))
  return file
}

/** The built CLI run to completion, with its catalog cache in `dir` (removed with it). */
const runCli = (dir: string, args: ReadonlyArray<string>) => {
  const result = spawnSync(process.execPath, [main, ...args], {
    cwd: root,
    encoding: "utf8",
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      ...tempDirEnv,
      CLAWTOOL_CACHE_DIR: path.join(dir, "cache")
    },
    timeout: 60_000
  })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

/** How many times `text` holds `part`. */
const count = (text: string, part: string) => text.split(part).length - 1

interface Row {
  readonly name: string
  readonly status: string
  readonly reason: string
}

describe("JSON import: entries clawtool cannot use", () => {
  it("health, source list and tools list warn once per skipped entry and show it as skipped; health exits 0", () => {
    const dir = testDir()
    const config = writeJson(dir, { good, weird: { type: "carrier-pigeon" }, nothing: {} })
    const warning = (name: string, why: string) => `warning: config ${config}: entry ${name}: ${why}; skipped`
    const warnedOnce = (stderr: string, command: string) => {
      assert.strictEqual(count(stderr, warning("weird", pigeon)), 1, `${command}: ${stderr}`)
      assert.strictEqual(count(stderr, warning("nothing", empty)), 1, `${command}: ${stderr}`)
    }

    const health = runCli(dir, ["health", "--json", "--config", config])
    assert.strictEqual(health.code, 0, health.stderr)
    warnedOnce(health.stderr, "health --json")
    assert.deepStrictEqual(
      (JSON.parse(health.stdout) as ReadonlyArray<Row>).map((row) => [row.name, row.status, row.reason]),
      [
        ["good", "running", ""],
        ["nothing", "skipped", empty],
        ["weird", "skipped", pigeon]
      ]
    )
    const table = runCli(dir, ["health", "--config", config])
    assert.strictEqual(table.code, 0, table.stderr)
    warnedOnce(table.stderr, "health")
    // ERA is "-": a skipped source never ran, so no era is known (ADR 033).
    assert.match(
      table.stdout,
      /\nweird\s+skipped\s+-\s+0\s+-\s+0\s+-\s+type "carrier-pigeon" is not stdio, http or sse\n/
    )

    const listed = runCli(dir, ["source", "list", "--json", "--config", config])
    assert.strictEqual(listed.code, 0, listed.stderr)
    warnedOnce(listed.stderr, "source list --json")
    assert.deepStrictEqual(
      (JSON.parse(listed.stdout) as ReadonlyArray<{ instance: string; secrets: string; reason?: string }>).map(
        (row) => [row.instance, row.secrets, row.reason]
      ),
      [
        ["good", "ready", undefined],
        ["nothing", "skipped", empty],
        ["weird", "skipped", pigeon]
      ]
    )
    const listTable = runCli(dir, ["source", "list", "--config", config])
    assert.strictEqual(listTable.code, 0, listTable.stderr)
    assert.match(listTable.stdout, /\nweird\s+no\s+-\s+skipped: type "carrier-pigeon" is not stdio, http or sse/)

    const tools = runCli(dir, ["tools", "list", "--config", config])
    assert.strictEqual(tools.code, 0, tools.stderr)
    warnedOnce(tools.stderr, "tools list")
    // The skipped entries were named once; they are not "not running" sources on top of that.
    assert.notInclude(tools.stderr, "source weird")
  })

  it.scopedLive(
    "serve: warns once on stderr, SourceHealth lists the skipped rows, a reload warns only about a newly skipped entry",
    () =>
      Effect.gen(function* () {
        const dir = testDir()
        const config = writeJson(dir, { good, weird: { type: "carrier-pigeon" } })
        const warning = (name: string, why: string) => `warning: config ${config}: entry ${name}: ${why}; skipped`
        const stderr: Array<string> = []
        const client = yield* serveClient(config, {}, path.join(dir, "cache"), (chunk) => stderr.push(chunk))
        const rows = Effect.map(
          Effect.promise(() => client.callTool({ name: "SourceHealth", arguments: {} })),
          (result) => (result.structuredContent as { sources: ReadonlyArray<Row> }).sources
        )
        const started = yield* pollUntil(
          rows,
          (now) => now.some((row) => row.name === "good" && row.status === "running"),
          "the good entry running"
        )
        assert.deepStrictEqual(
          started.map((row) => [row.name, row.status, row.reason]),
          [
            ["good", "running", ""],
            ["weird", "skipped", pigeon]
          ]
        )
        const weird = Effect.promise(() => client.callTool({ name: "SourceHealth", arguments: { instance: "weird" } }))
        assert.deepStrictEqual(
          ((yield* weird).structuredContent as { sources: ReadonlyArray<Row> }).sources.map((row) => row.status),
          ["skipped"]
        )
        assert.strictEqual(count(stderr.join(""), warning("weird", pigeon)), 1, stderr.join(""))

        // The same unusable entry stays, one more appears: only the new one is named.
        fs.writeFileSync(
          config,
          JSON.stringify({ mcpServers: { good, weird: { type: "carrier-pigeon" }, nothing: {} } })
        )
        yield* pollUntil(rows, (now) => now.some((row) => row.name === "nothing"), "the reload", 20_000)
        yield* pollUntil(
          Effect.sync(() => stderr.join("")),
          (text) => text.includes(warning("nothing", empty)),
          "the new entry's warning"
        )
        const text = stderr.join("")
        assert.strictEqual(count(text, warning("weird", pigeon)), 1, text)
        assert.strictEqual(count(text, warning("nothing", empty)), 1, text)
      }),
    60_000
  )
})
