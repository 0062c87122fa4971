// Fault tolerance of the built `clawtool serve` (issue 6): SIGKILL of clawtool leaves nothing behind, malformed
// JSON-RPC on stdin is answered and survived, a restarted child sends list_changed only when its catalog changed,
// megabyte results pass intact, and bad supervision settings stop the start before anything is spawned.
import { assert, beforeAll, describe, it } from "@effect/vitest"
import { ToolListChangedNotificationSchema, CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Schedule } from "effect"
import type { ChildProcessWithoutNullStreams } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { reaperMarker } from "../../src/services/Reaper.js"
import { ensureBuilt, exitOf, runCli, serveClient, spawnServe, writeConfig } from "../lib/cli.js"
import { eventually, isAlive, readPid, stubCommand, tempDir } from "../lib/sources.js"

beforeAll(ensureBuilt, 120_000)

/** Pids of live processes whose command line contains every one of `parts` (Linux /proc). */
const processesWith = (...parts: ReadonlyArray<string>): ReadonlyArray<number> =>
  fs.existsSync("/proc/self/cmdline")
    ? fs.readdirSync("/proc").flatMap((entry) => {
        if (!/^\d+$/.test(entry)) return []
        try {
          const args = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0")
          return parts.every((part) => args.includes(part)) ? [Number(entry)] : []
        } catch {
          return []
        }
      })
    : []

/** Line-by-line reader of a process's stdout: `next` resolves with the next JSON message. */
const jsonLines = (child: ChildProcessWithoutNullStreams) => {
  const queue: Array<unknown> = []
  const waiting: Array<(message: unknown) => void> = []
  let pending = ""
  child.stdout.setEncoding("utf8")
  child.stdout.on("data", (chunk: string) => {
    pending += chunk
    let newline
    while ((newline = pending.indexOf("\n")) !== -1) {
      const line = pending.slice(0, newline)
      pending = pending.slice(newline + 1)
      // Every stdout line of serve is JSON-RPC: a non-JSON line fails the test here.
      const message = JSON.parse(line) as unknown
      const waiter = waiting.shift()
      if (waiter === undefined) queue.push(message)
      else waiter(message)
    }
  })
  const next = Effect.async<unknown>((resume) => {
    const ready = queue.shift()
    if (ready !== undefined) return resume(Effect.succeed(ready))
    waiting.push((message) => resume(Effect.succeed(message)))
  }).pipe(Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => new Error("no answer from serve") }))
  return { next }
}

const initialize = {
  jsonrpc: "2.0",
  id: "init",
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "faults-e2e", version: "1.0.0" } }
}

describe("clawtool serve under faults (built CLI)", () => {
  it.live(
    "SIGKILL of clawtool: no child, grandchild or helper survives it, not even one ignoring EOF and SIGTERM",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const pidfile = (name: string) => path.join(dir, name)
        const serve = spawnServe(
          writeConfig(`
          [sources.wrapper]
          command = ${stubCommand("--grandchild", pidfile("wrapper"))}
          [sources.stubborn]
          command = ${stubCommand("--grandchild", pidfile("stubborn"), "--ignore-stdin-eof", "--ignore-sigterm")}
        `)
        )
        serve.stderr.resume()
        // Listened to from the start: the close can come before the test gets to wait for it.
        const closed = new Promise<void>((resolve) => serve.stdout.once("close", () => resolve()))
        serve.stdout.resume()
        const files = ["wrapper", "stubborn"].flatMap((name) => [pidfile(name), pidfile(`${name}.self`)])
        yield* eventually(
          () => files.every((file) => fs.existsSync(file) && fs.readFileSync(file, "utf8") !== ""),
          20_000,
          "pidfiles"
        )
        const pids = files.map(readPid)
        assert.isTrue(pids.every(isAlive))
        const helpers = processesWith(reaperMarker, String(serve.pid))
        if (fs.existsSync("/proc/self/cmdline")) assert.strictEqual(helpers.length, 1)

        serve.kill("SIGKILL")
        const exit = yield* exitOf(serve)
        assert.strictEqual(exit.signal, "SIGKILL")
        // The host sees clawtool's stdout close: nothing else held the pipe (not the helper, not a child).
        yield* Effect.promise(() => closed)
        yield* eventually(() => !pids.some(isAlive), 10_000, "every child and grandchild to be gone")
        yield* eventually(() => !helpers.some(isAlive), 10_000, "the reaper helper to exit")
        fs.rmSync(dir, { recursive: true, force: true })
      })
  )

  it.live("malformed JSON-RPC on stdin: each line gets the right error, and serve keeps serving", () =>
    Effect.gen(function* () {
      const serve = spawnServe(writeConfig(`[sources.stub]\ncommand = ${stubCommand()}`))
      serve.stderr.resume()
      const { next } = jsonLines(serve)
      const send = (line: string) => Effect.sync(() => serve.stdin.write(line + "\n"))
      const exchange = (line: string) => Effect.zipRight(send(line), next) as Effect.Effect<Record<string, any>, Error>
      const json = (value: unknown) => JSON.stringify(value)

      const init = yield* exchange(json(initialize))
      assert.strictEqual(init.id, "init")
      assert.strictEqual(init.result.serverInfo.name, "clawtool")
      yield* send(json({ jsonrpc: "2.0", method: "notifications/initialized" }))

      const cases: ReadonlyArray<readonly [string, string, string | number | null, number]> = [
        ["invalid JSON", "{not json", null, -32700],
        ["a truncated message", '{"jsonrpc":"2.0","id":1,"method":"pi', null, -32700],
        ["a JSON string", '"just a string"', null, -32600],
        ["an empty batch", "[]", null, -32600],
        ["a batch (not in MCP since 2025-06-18)", json([{ jsonrpc: "2.0", id: 2, method: "ping" }]), null, -32600],
        ["a number as method", json({ jsonrpc: "2.0", id: 3, method: 42 }), 3, -32600],
        ["jsonrpc 1.0", json({ jsonrpc: "1.0", id: 4, method: "ping" }), 4, -32600],
        ["an object as id", json({ jsonrpc: "2.0", id: { x: 1 }, method: "ping" }), null, -32600],
        [
          "params that are not structured",
          json({ jsonrpc: "2.0", id: 5, method: "tools/list", params: "x" }),
          5,
          -32600
        ],
        ["an unknown method", json({ jsonrpc: "2.0", id: 6, method: "no/such/method" }), 6, -32601],
        ["tools/call without params", json({ jsonrpc: "2.0", id: 7, method: "tools/call" }), 7, -32602],
        [
          "tools/call with a number as name",
          json({ jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: 5 } }),
          8,
          -32602
        ],
        [
          "tools/call with a list as arguments",
          json({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "stub__echo", arguments: [1] } }),
          9,
          -32602
        ],
        ["initialize without params", json({ jsonrpc: "2.0", id: 10, method: "initialize" }), 10, -32602]
      ]
      for (const [what, line, id, code] of cases) {
        const answer = yield* exchange(line)
        assert.strictEqual(answer.jsonrpc, "2.0", what)
        assert.strictEqual(answer.id, id, what)
        assert.strictEqual(answer.error?.code, code, `${what}: ${json(answer)}`)
        assert.isString(answer.error?.message, what)
      }

      // Huge ids are answered under the very same id.
      const maxSafe = yield* exchange(json({ jsonrpc: "2.0", id: Number.MAX_SAFE_INTEGER, method: "ping" }))
      assert.deepStrictEqual(maxSafe, { jsonrpc: "2.0", id: Number.MAX_SAFE_INTEGER, result: {} })
      const longId = "id-".repeat(50_000)
      const long = yield* exchange(json({ jsonrpc: "2.0", id: longId, method: "ping" }))
      assert.deepStrictEqual(long, { jsonrpc: "2.0", id: longId, result: {} })
      // An id beyond 2^53 cannot be echoed exactly: it is an Invalid Request, not a crash.
      const beyond = yield* exchange('{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}')
      assert.strictEqual(beyond.error?.code, -32600)

      // Notifications (even unknown ones) and blank lines get no answer; the next request is answered normally.
      yield* send(json({ jsonrpc: "2.0", method: "notifications/no-such-thing" }))
      yield* send("")
      const listed = yield* exchange(json({ jsonrpc: "2.0", id: "list", method: "tools/list" }))
      assert.strictEqual(listed.id, "list")
      assert.include(
        (listed.result.tools as Array<{ name: string }>).map((tool) => tool.name),
        "stub__echo"
      )
      const called = yield* exchange(
        json({
          jsonrpc: "2.0",
          id: "call",
          method: "tools/call",
          params: { name: "stub__echo", arguments: { text: "ok" } }
        })
      )
      assert.deepStrictEqual(called.result.content, [{ type: "text", text: "echo:ok" }])
      assert.isNull(serve.exitCode)

      serve.stdin.end()
      const exit = yield* exitOf(serve)
      assert.strictEqual(exit.code, 0)
    })
  )

  it.scopedLive("a restarted child: no list_changed when its catalog is the same, exactly one when it changed", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const record = path.join(dir, "starts")
      const extra = path.join(dir, "extra")
      const client = yield* serveClient(
        writeConfig(`
          [sources.stub]
          command = ${stubCommand("--record-start", record, "--extra-tool", extra)}
          restart_backoff = "50ms"
        `)
      )
      let notices = 0
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => void notices++)
      const names = Effect.map(
        Effect.promise(() => client.listTools()),
        ({ tools }) => tools.map((tool) => tool.name)
      )
      const before = yield* names
      const starts = () => fs.readFileSync(record, "utf8").trim().split("\n").map(Number)
      /** Kills the current child and waits until a new one answers calls through serve. */
      const killAndWait = Effect.gen(function* () {
        const count = starts().length
        process.kill(starts().at(-1)!, "SIGKILL")
        yield* eventually(() => starts().length > count, 20_000, "a restart")
        yield* Effect.promise(() =>
          client.request(
            { method: "tools/call", params: { name: "stub__echo", arguments: { text: "up" } } },
            CallToolResultSchema
          )
        ).pipe(
          Effect.filterOrFail((result) => result.isError !== true),
          Effect.retry({ schedule: Schedule.spaced("50 millis"), times: 200 })
        )
      })

      yield* killAndWait
      // An identical catalog sends nothing (nor once the Gateway's debounce is over: test/Gateway.test.ts, TestClock).
      assert.strictEqual(notices, 0)
      assert.deepStrictEqual(yield* names, before)

      fs.writeFileSync(extra, "added_later")
      yield* killAndWait
      yield* eventually(() => notices >= 1, 10_000, "a list_changed")
      // One notice (that no second one follows is shown under TestClock in test/Gateway.test.ts).
      assert.strictEqual(notices, 1)
      const after = yield* names
      assert.include(after, "stub__added_later")
      assert.deepStrictEqual(
        after.filter((name) => name !== "stub__added_later"),
        before
      )
    })
  )

  it.scopedLive("a result of several megabytes is relayed intact", () =>
    Effect.gen(function* () {
      const client = yield* serveClient(writeConfig(`[sources.stub]\ncommand = ${stubCommand()}`))
      const result = yield* Effect.promise(() =>
        client.request(
          { method: "tools/call", params: { name: "stub__big", arguments: { kb: 5 * 1024 } } },
          CallToolResultSchema
        )
      )
      const text = (result.content[0] as { text: string }).text
      assert.strictEqual(text.length, 5 * 1024 * 1024)
      assert.isTrue(/^x+$/.test(text))
    })
  )

  it.live("invalid supervision settings stop serve with exit code 2 naming the key; nothing is spawned", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const record = path.join(dir, "starts")
      // Two runs of the built CLI (each ~1 s of start-up); test/Config/Supervision.test.ts covers every rule.
      for (const [setting, key] of [
        ["max_restarts = 0", "max_restarts"],
        [`restart_backoff = "-5s"`, "restart_backoff"]
      ] as const) {
        const config = writeConfig(`[sources.stub]\ncommand = ${stubCommand("--record-start", record)}\n${setting}\n`)
        const result = runCli(["serve", "--config", config])
        assert.strictEqual(result.code, 2, result.stderr)
        assert.include(result.stderr, `at sources.stub.${key}: `)
        assert.strictEqual(result.stdout, "")
      }
      assert.isFalse(fs.existsSync(record))
    })
  )
})
