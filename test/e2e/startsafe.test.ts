// Start-up safety (issue 10), on the built CLI and real processes: a config that lists clawtool itself ends at once
// with reason Recursion and at most one nested clawtool; ./ paths resolve against the config's folder whatever the
// working directory; the health table shows why a child died (its stderr) beside the reason.
import { assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, freshCacheDir, main, runCli, serveClient, tempDirEnv } from "../lib/cli.js"
import { pollUntil, root, tempDir } from "../lib/sources.js"
import { removeWhenDone } from "../lib/temp.js"

beforeAll(ensureBuilt, 120_000)

const tiny = path.join(root, "test/fixtures/tiny-server.mjs")

interface Row {
  readonly name: string
  readonly status: string
  readonly reason: string
  readonly restarts: number
  readonly nextRetryAt: string | null
}

const healthJson = (config: string, cwd = root) => {
  const result = spawnSync(process.execPath, [main, "health", "--json", "--config", config], {
    cwd,
    encoding: "utf8",
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      ...tempDirEnv,
      CLAWTOOL_CACHE_DIR: freshCacheDir()
    },
    timeout: 60_000
  })
  return { code: result.status, rows: JSON.parse(result.stdout) as ReadonlyArray<Row>, stderr: result.stderr }
}

/** Live processes (from /proc) whose argv runs the built CLI with this config. */
const servingPids = (config: string): ReadonlySet<string> =>
  new Set(
    fs.readdirSync("/proc").filter((entry) => {
      if (!/^\d+$/.test(entry)) return false
      try {
        const argv = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0")
        return argv.includes(main) && argv.includes(config)
      } catch {
        return false // gone meanwhile
      }
    })
  )

/**
 * The clawtools serving `config`, seen in two looks 100 ms apart: a process clawtool forks to start any child shows
 * clawtool's own command line until it execs, so a single look can count a child on its way to becoming `sh` or node.
 */
const clawtoolsServing = (config: string): Promise<number> => {
  const first = servingPids(config)
  return new Promise((resolve) =>
    setTimeout(() => {
      const second = servingPids(config)
      resolve([...first].filter((pid) => second.has(pid)).length)
    }, 100)
  )
}

/**
 * A JSON config (mcpServers, as hosts write it) listing clawtool itself with this very file, beside a healthy source.
 * The nested clawtool gets a cache folder beside the file: it inherits HOME, not CLAWTOOL_CACHE_DIR, and would write
 * its code cache into the user's ~/.cache.
 */
const recursiveConfig = () => {
  const dir = fs.realpathSync(tempDir())
  const file = path.join(dir, "mcp.json")
  const servers = {
    self: {
      command: process.execPath,
      args: [main, "serve", "--config", file],
      env: { CLAWTOOL_CACHE_DIR: path.join(dir, "cache") }
    },
    tiny: { command: process.execPath, args: [tiny] }
  }
  fs.writeFileSync(file, JSON.stringify({ mcpServers: servers }, null, 2))
  return file
}

describe.skipIf(process.platform !== "linux")("a config that starts clawtool with itself", () => {
  it.live("health --json: down, reason Recursion naming the config, no restart pending; the other source runs", () =>
    Effect.sync(() => {
      const file = recursiveConfig()
      const { code, rows } = healthJson(file)
      assert.strictEqual(code, 1)
      const self = rows.find((row) => row.name === "self")!
      assert.strictEqual(self.status, "down")
      assert.match(self.reason, /^Recursion: /)
      assert.include(self.reason, file)
      assert.strictEqual(self.restarts, 0)
      assert.strictEqual(self.nextRetryAt, null)
      assert.strictEqual(rows.find((row) => row.name === "tiny")!.status, "running")
    })
  )

  it.scopedLive("serve: never more than 2 clawtools for the config, the nested one ends, and none comes back", () =>
    Effect.gen(function* () {
      const file = recursiveConfig()
      const client = yield* serveClient(file)
      let most = 0
      const sourceHealth = Effect.promise(async () => {
        most = Math.max(most, await clawtoolsServing(file))
        const result = await client.callTool({ name: "SourceHealth", arguments: { instance: "self" } })
        return (result.structuredContent as { sources: ReadonlyArray<Row> }).sources[0]!
      })
      const row = yield* pollUntil(sourceHealth, (row) => row.status === "down", "self to be down", 30_000)
      assert.match(row.reason, /^Recursion: /)
      assert.include(row.reason, file)
      // The nested clawtool is gone: only the one serving the host is left.
      yield* pollUntil(
        Effect.promise(() => clawtoolsServing(file)),
        (count) => count === 1,
        "the nested clawtool to exit"
      )
      // Watched for a while (20 polls of Health and /proc): no restart, no new clawtool.
      for (let i = 0; i < 20; i++) {
        const later = yield* sourceHealth
        assert.strictEqual(later.restarts, 0)
        assert.strictEqual(later.status, "down")
        yield* Effect.sleep("150 millis")
      }
      assert.isAtMost(most, 2)
      assert.strictEqual(yield* Effect.promise(() => clawtoolsServing(file)), 1)
    })
  )
})

describe("relative paths resolve against the config file's folder", () => {
  it.live("./ and ../ command elements and a relative cwd, with clawtool started in another folder", () =>
    Effect.sync(() => {
      const dir = fs.realpathSync(tempDir())
      fs.mkdirSync(path.join(dir, "work"))
      fs.mkdirSync(path.join(dir, "conf"))
      // ./server.mjs records the folder it runs in, then is the tiny server.
      fs.writeFileSync(
        path.join(dir, "conf", "server.mjs"),
        `import { writeFileSync } from "node:fs"\n` +
          `writeFileSync(${JSON.stringify(path.join(dir, "cwd.txt"))}, process.cwd())\n` +
          `await import(${JSON.stringify(tiny)})\n`
      )
      const up = path.relative(path.join(dir, "conf"), tiny)
      assert.match(up, /^\.\.\//)
      const toml = path.join(dir, "conf", "config.toml")
      fs.writeFileSync(
        toml,
        [
          `[sources.local]`,
          `command = ["node", "./server.mjs"]`,
          `cwd = "../work"`,
          `[sources.up]`,
          `command = ["node", ${JSON.stringify(up)}]`
        ].join("\n")
      )
      const json = path.join(dir, "conf", "mcp.json")
      fs.writeFileSync(json, JSON.stringify({ mcpServers: { up: { command: "node", args: [up], cwd: "." } } }))
      const elsewhere = tempDir()
      const fromToml = healthJson(toml, elsewhere)
      assert.deepStrictEqual(
        fromToml.rows.map((row) => [row.name, row.status]),
        [
          ["local", "running"],
          ["up", "running"]
        ],
        fromToml.stderr
      )
      assert.strictEqual(fs.readFileSync(path.join(dir, "cwd.txt"), "utf8"), path.join(dir, "work"))
      const fromJson = healthJson(json, elsewhere)
      assert.deepStrictEqual(
        fromJson.rows.map((row) => [row.name, row.status]),
        [["up", "running"]]
      )
    })
  )

  it.live("the demo config works from any folder", () =>
    Effect.sync(() => {
      // The first run pins the demo's tools in examples/clawtool.lock (issue 25): removed unless it was there before.
      const lock = path.join(root, "examples/clawtool.lock")
      if (!fs.existsSync(lock)) removeWhenDone(lock)
      const { code, rows } = healthJson(path.join(root, "examples/demo.toml"), tempDir())
      assert.deepStrictEqual(
        rows.map((row) => [row.name, row.status]),
        [
          ["clock", "running"],
          ["notes", "running"]
        ]
      )
      assert.strictEqual(code, 0)
    })
  )
})

describe("the health table's stderr hint", () => {
  it.live("node missing-module.mjs: the row shows the reason and `Error: Cannot find module …`, whole on a pipe", () =>
    Effect.sync(() => {
      const dir = tempDir()
      const config = path.join(dir, "config.toml")
      fs.writeFileSync(config, `[sources.broken]\ncommand = ["node", "missing-module.mjs"]\nrestart = "never"\n`)
      const { code, stdout } = runCli(["health", "--config", config])
      assert.strictEqual(code, 1)
      const line = stdout.split("\n").find((text) => text.startsWith("broken"))!
      assert.match(line, /\bdown\b/)
      assert.match(line, /Exited: .* — Error: Cannot find module '.*missing-module\.mjs'$/)
    })
  )
})
