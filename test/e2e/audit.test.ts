// The audit log through the built bin (issue 25, [audit]): a real host over stdio gets one line per tools/call on both
// call paths (the relay and the SDK path) with the outcomes a real child gives (ok, error, timeout, cancelled), the
// default path in the state folder (0600 in 0700); a daemon's lines carry the session id; `clawtool audit` prints,
// filters and skips a bad line with a note; an unwritable path warns once and calls go on. Denied and quarantined
// come from trust's CallErrors: test/Trust/AuditLine.test.ts.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { createHash } from "node:crypto"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as AuditLine from "../../src/services/Trust/AuditLine.js"
import { ensureBuilt, freshCacheDir, main, runCli, tempDirEnv, writeConfig } from "../lib/cli.js"
import { httpClient, startDaemon } from "../lib/daemon.js"
import { eventually, root, stubCommand, tempDir } from "../lib/sources.js"

ensureBuilt()

/** stub: no call_timeout (its slow call is cancelled by the host); timed: call_timeout 500ms. */
const sources = `
[sources.stub]
command = ${stubCommand()}

[sources.timed]
command = ${stubCommand()}
call_timeout = "500ms"
`

const host = (config: string, env: Record<string, string>, onStderr?: (text: string) => void) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [main, "serve", "--config", config],
        cwd: root,
        env: { ...getDefaultEnvironment(), ...tempDirEnv, CLAWTOOL_CACHE_DIR: freshCacheDir(), ...env },
        stderr: "pipe"
      })
      transport.stderr?.on("data", (chunk: Buffer) => onStderr?.(chunk.toString("utf8")))
      const client = new Client({ name: "audit-host", version: "1.0.0" })
      await client.connect(transport)
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

type Line = Record<string, any>

const linesOf = (file: string): Array<Line> =>
  fs.existsSync(file)
    ? fs
        .readFileSync(file, "utf8")
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line) as Line)
    : []

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

describe("audit log (e2e)", () => {
  it.live("stdio: one line per call on both paths, with the outcome a real child gave; clawtool audit reads them", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const state = path.join(tempDir(), "state")
        const env = { CLAWTOOL_STATE_DIR: state }
        const config = writeConfig(sources)
        const file = path.join(state, "audit.jsonl")
        const client = yield* host(config, env)
        yield* Effect.promise(() => client.listTools())
        const call = (name: string, args: Record<string, unknown>, options?: Parameters<Client["callTool"]>[2]) =>
          Effect.promise(() => client.callTool({ name, arguments: args }, undefined, options).catch((error) => error))
        // The relay: ok, an isError result, call_timeout.
        yield* call("stub__echo", { text: "hi" })
        yield* call("stub__echo", {})
        yield* call("timed__slow", { ms: 10_000 })
        // Cancelled by the host (the relay).
        const controller = new AbortController()
        const cancelled = yield* Effect.fork(call("stub__slow", { ms: 30_000 }, { signal: controller.signal }))
        yield* Effect.sleep("300 millis")
        controller.abort("the user pressed stop")
        yield* Fiber.join(cancelled)
        // The SDK path: progress asked for; and a core tool's refusal.
        yield* call("stub__echo", { text: "progress" }, { onprogress: () => {} })
        yield* call("Read", { file_path: path.join(state, "missing.txt") })

        yield* eventually(() => linesOf(file).length >= 6, 20_000, "six audit lines")
        const lines = linesOf(file)
        assert.deepStrictEqual(
          lines.map((line) => [line.instance, line.tool, line.outcome]),
          [
            ["stub", "echo", "ok"],
            ["stub", "echo", "error"],
            ["timed", "slow", "timeout"],
            ["stub", "slow", "cancelled"],
            ["stub", "echo", "ok"],
            ["core", "Read", "error"]
          ]
        )
        for (const line of lines) {
          assert.strictEqual(line.client, "audit-host")
          assert.notProperty(line, "session", "stdio has no session id")
          assert.notProperty(line, "args", 'args = "none" by default')
          assert.isAtLeast(line.duration_ms, 0)
          assert.isFalse(Number.isNaN(Date.parse(line.time)))
        }
        assert.strictEqual(lines[0]!.args_sha256, sha256('{"text":"hi"}'))
        assert.strictEqual(lines[0]!.bytes_in, '{"text":"hi"}'.length)
        assert.isAbove(lines[0]!.bytes_out, 0)
        assert.isAbove(lines[4]!.bytes_out, 0)
        assert.strictEqual(lines[3]!.bytes_out, 0)
        assert.strictEqual(fs.statSync(file).mode & 0o777, 0o600)
        assert.strictEqual(fs.statSync(state).mode & 0o777, 0o700)

        // clawtool audit: the table, JSON lines filtered by a selector, --since, a bad line noted by file:line.
        const table = runCli(["audit", "--config", config], env)
        assert.strictEqual(table.code, 0, table.stderr)
        assert.match(table.stdout, /^TIME\s+CLIENT\s+SESSION\s+TOOL\s+OUTCOME\s+MS\s+IN\s+OUT\n/)
        assert.match(table.stdout, /audit-host\s+-\s+timed\.slow\s+timeout/)
        assert.match(table.stdout, /audit-host\s+-\s+Read\s+error/)
        fs.appendFileSync(file, "this is not an audit line\n")
        const echoes = runCli(["audit", "--config", config, "--json", "--tool", "stub.echo", "--since", "1h"], env)
        assert.strictEqual(echoes.code, 0, echoes.stderr)
        assert.deepStrictEqual(
          echoes.stdout
            .trim()
            .split("\n")
            .map((line) => JSON.parse(line).outcome),
          ["ok", "error", "ok"]
        )
        assert.include(echoes.stderr, `note: ${file}:${lines.length + 1}: skipped (not an audit line)`)
        const all = runCli(["audit", "--config", config, "--json", "--tool", "stub.*"], env)
        assert.strictEqual(all.stdout.trim().split("\n").length, 4)
        const bad = runCli(["audit", "--config", config, "--since", "yesterday"], env)
        assert.strictEqual(bad.code, 2)
        assert.include(bad.stderr, "--since is a duration")
      })
    )
  )

  it.live("clawtool audit --follow prints new lines as they come, across a rotation", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const state = tempDir()
        const file = path.join(state, "audit.jsonl")
        const line = (tool: string) =>
          AuditLine.format(
            {
              at: Date.now(),
              durationMs: 1,
              session: undefined,
              client: "h",
              instance: "fs",
              tool,
              outcome: "ok",
              arguments: {},
              bytesOut: 1,
              traceId: undefined
            },
            "none",
            undefined
          ) + "\n"
        fs.writeFileSync(file, line("first"))
        const config = writeConfig("")
        const child = yield* Effect.acquireRelease(
          Effect.sync(() =>
            spawn(process.execPath, [main, "audit", "--config", config, "--follow", "--json"], {
              cwd: root,
              env: { PATH: process.env.PATH ?? "", ...tempDirEnv, CLAWTOOL_STATE_DIR: state },
              stdio: ["ignore", "pipe", "pipe"]
            })
          ),
          (child) => Effect.sync(() => child.kill("SIGKILL"))
        )
        let out = ""
        child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
        const tools = () =>
          out
            .split("\n")
            .filter((text) => text !== "")
            .map((text) => JSON.parse(text).tool)
        yield* eventually(() => tools().length === 1, 20_000, "the first line")
        fs.appendFileSync(file, line("second"))
        yield* eventually(() => tools().length === 2, 20_000, "the appended line")
        // A rotation right after a line was written: that line (now in .1) and the new file's are both printed.
        fs.appendFileSync(file, line("third"))
        fs.renameSync(file, `${file}.1`)
        fs.writeFileSync(file, line("fourth"))
        yield* eventually(() => tools().length === 4, 20_000, "the lines around the rotation")
        assert.deepStrictEqual(tools(), ["first", "second", "third", "fourth"])
      })
    )
  )

  it.live("the daemon: each line names its session and client", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const state = tempDir()
        const config = writeConfig(sources)
        const daemon = yield* startDaemon(config, { env: { CLAWTOOL_STATE_DIR: state } })
        const { client } = yield* httpClient(daemon.url)
        yield* Effect.promise(() => client.listTools())
        yield* Effect.promise(() => client.callTool({ name: "stub__echo", arguments: { text: "daemon" } }))
        const file = path.join(state, "audit.jsonl")
        yield* eventually(() => linesOf(file).length >= 1, 20_000, "an audit line")
        const [line] = linesOf(file)
        assert.strictEqual(line!.outcome, "ok")
        assert.strictEqual(line!.client, "http-host")
        assert.isString(line!.session)
        assert.isAbove(line!.session.length, 0)
      })
    )
  )

  it.live("an unwritable audit path: warned once on stderr, Health says not written, calls answered", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const dir = tempDir()
        const blocker = path.join(dir, "a-file")
        fs.writeFileSync(blocker, "")
        const config = writeConfig(`${sources}\n[audit]\npath = ${JSON.stringify(path.join(blocker, "audit.jsonl"))}\n`)
        let stderr = ""
        const client = yield* host(config, {}, (text) => (stderr += text))
        yield* Effect.promise(() => client.listTools())
        for (let i = 0; i < 3; i++) {
          const result = yield* Effect.promise(() =>
            client.callTool({ name: "stub__echo", arguments: { text: `n${i}` } })
          )
          assert.deepStrictEqual(result.content, [{ type: "text", text: `echo:n${i}` }])
          yield* eventually(() => stderr.includes("audit: cannot write"), 20_000, "the warning")
        }
        const health = yield* Effect.promise(() => client.callTool({ name: "SourceHealth", arguments: {} }))
        const rows = (health.structuredContent as { sources: Array<Line> }).sources
        const audit = rows.find((row) => row.kind === "audit")
        assert.strictEqual(audit?.status, "down")
        assert.match(audit?.reason, /^not written: /)
        assert.strictEqual(stderr.split("audit: cannot write").length - 1, 1)
      })
    )
  )
})
