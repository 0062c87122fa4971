import { assert, beforeAll, describe, it } from "@effect/vitest"
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import * as z from "zod"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, exitOf, main, runCli, serveClient, spawnServe, writeConfig } from "../lib/cli.js"
import { eventually, isAlive, readPid, root, stubCommand, tempDir } from "../lib/sources.js"

beforeAll(ensureBuilt, 120_000)

const raw = path.join(root, "test/fixtures/tiny-server.mjs")

describe("clawtool serve (built CLI, SDK client as the host)", () => {
  it.scopedLive("lists the whole catalog sorted byte-wise, routes calls and reports errors as the issue says", () =>
    Effect.gen(function* () {
      const config = writeConfig(`
        [sources.stub]
        command = ${stubCommand("--slow-start", "800")}
        [sources.raw]
        command = ${JSON.stringify([process.execPath, raw])}
        [sources.down]
        command = ["/no/such/binary"]
      `)
      const client = yield* serveClient(config)
      // tools/list waits for the slow child: a host that never refreshes still sees everything.
      const { tools } = yield* Effect.promise(() => client.listTools())
      const names = tools.map((tool) => tool.name)
      const sourceNames = names.filter((name) => name.includes("__"))
      assert.includeMembers(sourceNames, ["raw__fail", "raw__ok", "stub__echo", "stub__add", "stub__meta"])
      assert.deepStrictEqual(
        names,
        [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      )
      // Every field the child sent is kept, unknown ones included (read raw: the SDK's own schema would strip them).
      const rawList = yield* Effect.promise(() =>
        client.request(
          { method: "tools/list", params: {} },
          z.looseObject({ tools: z.array(z.looseObject({ name: z.string() })) })
        )
      )
      assert.deepStrictEqual(rawList.tools.find((tool) => tool.name === "raw__ok")?.["x-vendor"], { kept: true })

      const call = (name: string, args?: unknown) =>
        Effect.promise(() =>
          client.request({ method: "tools/call", params: { name, arguments: args } } as never, CallToolResultSchema)
        )
      assert.deepStrictEqual((yield* call("stub__echo", { text: "hi" })).content, [{ type: "text", text: "echo:hi" }])
      // A child's own isError result passes through untouched.
      const isError = yield* call("stub__echo", {})
      assert.deepStrictEqual(isError, { content: [{ type: "text", text: "missing text" }], isError: true })
      // A child JSON-RPC error becomes an isError result carrying the child's message.
      const failed = yield* call("raw__fail", {})
      assert.isTrue(failed.isError)
      assert.include(JSON.stringify(failed.content), "backend exploded")
      // Unknown instance / tool: an error result naming it.
      const unknown = yield* call("nope__echo", {})
      assert.isTrue(unknown.isError)
      assert.include(JSON.stringify(unknown.content), "nope__echo")
      const downCall = yield* call("down__anything", {})
      assert.isTrue(downCall.isError)
      // Arguments that are not an object: invalid params.
      const invalid = yield* Effect.flip(
        Effect.tryPromise(() =>
          client.request(
            { method: "tools/call", params: { name: "stub__echo", arguments: [1] } } as never,
            CallToolResultSchema
          )
        )
      )
      assert.strictEqual((invalid.error as { code: number }).code, -32602)
    })
  )

  it.live(
    "stdout carries JSON-RPC only; malformed lines and unknown methods get errors; stdin EOF exits and reaps",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const pidfile = path.join(dir, "stub")
        const config = writeConfig(`
        [sources.stub]
        command = ${stubCommand("--grandchild", pidfile, "--stderr-lines", "5", "--garbage-stdout")}
      `)
        const child = spawnServe(config)
        let stdout = ""
        child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
        const send = (line: string) => child.stdin.write(line + "\n")
        send(
          JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
          })
        )
        send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }))
        send("this is { not json")
        send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "no/such/method" }))
        send(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/list" }))
        send(
          JSON.stringify({
            jsonrpc: "2.0",
            id: 4,
            method: "tools/call",
            params: { name: "stub__echo", arguments: { text: "raw" } }
          })
        )
        const lines = () => stdout.split("\n").filter((line) => line.length > 0)
        yield* eventually(() => lines().length >= 5, 20_000, "five replies")
        const grandchild = readPid(pidfile)
        const self = readPid(`${pidfile}.self`)
        child.stdin.end()
        const exit = yield* exitOf(child)
        assert.strictEqual(exit.code, 0)
        const messages = lines().map((line) => JSON.parse(line) as Record<string, any>)
        for (const message of messages) assert.strictEqual(message.jsonrpc, "2.0")
        const byId = (id: unknown) => messages.find((message) => message.id === id)
        assert.strictEqual(byId(null)?.error?.code, -32700)
        assert.strictEqual(byId(2)?.error?.code, -32601)
        assert.isTrue((byId(3)?.result?.tools as Array<unknown>).length > 0)
        assert.deepStrictEqual(byId(4)?.result?.content, [{ type: "text", text: "echo:raw" }])
        // Nothing it started outlives it.
        yield* eventually(() => !isAlive(grandchild) && !isAlive(self), 5_000, "children reaped after stdin EOF")
      })
  )

  it.scopedLive("follows every page of a child's tools/list, resources/list, prompts/list and tasks/list", () =>
    Effect.gen(function* () {
      const config = writeConfig(`
        [sources.paged]
        command = ${JSON.stringify([process.execPath, raw, "--paged"])}
      `)
      const client = yield* serveClient(config)
      const tools = (yield* Effect.promise(() => client.listTools())).tools.map((tool) => tool.name)
      assert.includeMembers(tools, ["paged__page-one", "paged__page-two"])
      const resources = (yield* Effect.promise(() => client.listResources())).resources
      assert.deepStrictEqual(
        resources.map((resource) => [resource.name, resource.uri]),
        [
          ["paged__one", "tiny://one"],
          ["paged__two", "tiny://two"]
        ]
      )
      const prompts = (yield* Effect.promise(() => client.listPrompts())).prompts.map((prompt) => prompt.name)
      assert.deepStrictEqual(prompts, ["paged__first", "paged__second"])
      const tasks = (yield* Effect.promise(() =>
        client.request({ method: "tasks/list", params: {} }, z.looseObject({ tasks: z.array(z.looseObject({})) }))
      )).tasks.map((task) => task.taskId)
      assert.deepStrictEqual(tasks, ["paged__task-1", "paged__task-2"])
    })
  )

  it.live("SIGTERM ends serve with every child and grandchild reaped", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const pidfile = path.join(dir, "stub")
      const config = writeConfig(`
        [sources.stub]
        command = ${stubCommand("--grandchild", pidfile, "--ignore-stdin-eof")}
      `)
      const child = spawnServe(config)
      yield* eventually(() => fs.existsSync(`${pidfile}.self`) && fs.existsSync(pidfile), 20_000, "the stub to start")
      const pids = [readPid(pidfile), readPid(`${pidfile}.self`)]
      child.kill("SIGTERM")
      yield* exitOf(child)
      yield* eventually(() => !pids.some(isAlive), 5_000, "children reaped after SIGTERM")
    })
  )
})

describe("clawtool health / source list (built CLI)", () => {
  it.live("health --json: one row per instance with the documented keys; exit 1 when any is not running", () =>
    Effect.gen(function* () {
      const config = writeConfig(`
        [sources.ok]
        command = ${stubCommand()}
        [sources.broken]
        command = ["/no/such/binary"]
      `)
      const result = runCli(["health", "--json", "--config", config])
      assert.strictEqual(result.code, 1, result.stderr)
      const rows = JSON.parse(result.stdout) as Array<Record<string, unknown>>
      assert.deepStrictEqual(
        rows.map((row) => [row.name, row.status]),
        [
          ["broken", "down"],
          ["ok", "running"]
        ]
      )
      for (const key of ["name", "status", "reason", "toolCount", "package", "pid", "startupMs", "stderrTail"]) {
        assert.property(rows[0], key)
      }
      const healthy = runCli(["health", "--config", writeConfig(`[sources.ok]\ncommand = ${stubCommand()}`)])
      assert.strictEqual(healthy.code, 0, healthy.stderr)
      assert.match(healthy.stdout, /^NAME\s+STATUS\s+ERA\s+TOOLS\s+STARTUP\s+RESTARTS\s+PACKAGE\s+REASON/)
      assert.match(healthy.stdout, /\nok\s+running\s+legacy\s+\d+/)
    })
  )

  it.live("health shows a live 'n/m settled' line on a terminal, and none when stderr is a pipe", () =>
    Effect.gen(function* () {
      const config = writeConfig(`
        [sources.slow]
        command = ${stubCommand("--slow-start", "600")}
        [sources.quick]
        command = ${stubCommand()}
      `)
      // util-linux `script` gives the command a pseudo-terminal, as a person's shell would.
      const command = [process.execPath, main, "health", "--config", config].map((arg) => `'${arg}'`).join(" ")
      const tty = spawnSync("script", ["-qec", command, "/dev/null"], { cwd: root, encoding: "utf8", timeout: 60_000 })
      assert.strictEqual(tty.status, 0, tty.stderr)
      assert.match(tty.stdout, /\r[01]\/2 settled/)
      assert.match(tty.stdout, /slow\s+running/)
      const piped = runCli(["health", "--config", config])
      assert.strictEqual(piped.code, 0, piped.stderr)
      assert.notInclude(piped.stderr, "settled")
    })
  )

  it.live(
    "bad config: one clear error naming file, line and key; exit 2; no child spawned",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const pidfile = path.join(dir, "must-not-exist")
        const cases: ReadonlyArray<[string, RegExp]> = [
          [
            `[sources.ok]\ncommand = ${stubCommand("--grandchild", pidfile)}\n[sources.bad]\ncommand = "x"\n`,
            /:4 at sources\.bad\.command: /
          ],
          [
            `[sources.ok]\ncommand = ${stubCommand("--grandchild", pidfile)}\nstartup_timeout = "soon"\n`,
            /:3 at sources\.ok\.startup_timeout: expected a duration/
          ],
          [
            `[sources.Bad_Name]\ncommand = ${stubCommand("--grandchild", pidfile)}\n`,
            /sources\.Bad_Name: .*kebab-case/
          ],
          [
            `[sources.ok]\ncommand = ${stubCommand("--grandchild", pidfile)}\nbogus = 1\n`,
            /:3 at sources\.ok\.bogus: unknown key "bogus"/
          ],
          [`[sources.ok\ncommand = []\n`, /:1/]
        ]
        // Every case through health, the first also through serve (both share the start path).
        for (const [index, [text, message]] of cases.entries()) {
          const config = writeConfig(text)
          for (const command of index === 0 ? ["serve", "health"] : ["health"]) {
            const result = runCli([command, "--config", config])
            assert.strictEqual(result.code, 2, `${command} ${text}\n${result.stderr}`)
            assert.include(result.stderr, config)
            assert.match(result.stderr, message)
            assert.strictEqual(result.stdout, "")
          }
        }
        const missing = runCli(["health", "--config", path.join(dir, "nope.toml")])
        assert.strictEqual(missing.code, 2)
        assert.include(missing.stderr, "nope.toml")
        assert.isFalse(fs.existsSync(pidfile), "a child was spawned despite the bad config")
      }),
    120_000
  )

  it.live("source list: the static view, spawning nothing", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const pidfile = path.join(dir, "must-not-exist")
      const config = writeConfig(`
        [sources.gh]
        command = ["npx", "-y", "@modelcontextprotocol/server-github"]
        env = { GITHUB_TOKEN = "\${GITHUB_TOKEN}" }
        [sources.local]
        command = ${stubCommand("--grandchild", pidfile)}
      `)
      const table = runCli(["source", "list", "--config", config])
      assert.strictEqual(table.code, 0, table.stderr)
      assert.match(table.stdout, /gh\s+yes\s+@modelcontextprotocol\/server-github\s+✗ missing: GITHUB_TOKEN/)
      assert.match(table.stdout, /local\s+yes\s+stub-server\.mjs\s+✓ ready/)
      const json = JSON.parse(runCli(["source", "list", "--json", "--config", config]).stdout)
      assert.deepStrictEqual(json[0], {
        instance: "gh",
        enabled: true,
        package: "@modelcontextprotocol/server-github",
        secrets: "missing",
        missing: ["GITHUB_TOKEN"]
      })
      assert.isFalse(fs.existsSync(pidfile))
    })
  )
})
