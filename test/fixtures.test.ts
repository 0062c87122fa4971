// Self-test of test/fixtures/stub-server.mjs with the plain SDK client, so that a fixture bug never masquerades as a
// clawtool bug in the other suites.
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { McpError } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Schedule } from "effect"
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

const stub = fileURLToPath(new URL("./fixtures/stub-server.mjs", import.meta.url))

const makeTransport = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  new StdioClientTransport({
    command: process.execPath,
    args: [stub, ...args],
    env: { PATH: process.env.PATH ?? "", ...env },
    stderr: "pipe"
  })

/** Collects the child's stderr; the transport exposes the stream before start. */
const collectStderr = (transport: StdioClientTransport) => {
  const chunks: Array<string> = []
  transport.stderr?.on("data", (chunk: Buffer) => chunks.push(chunk.toString()))
  return () => chunks.join("")
}

/** Connects a client; on failure the transport is closed so no stub outlives the test. */
const connect = (transport: StdioClientTransport) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const client = new Client({ name: "fixture-test", version: "1.0.0" })
        try {
          await client.connect(transport, { timeout: 20_000 })
        } catch (error) {
          await transport.close()
          throw error
        }
        return client
      },
      catch: (error) => error
    }),
    (client) => Effect.promise(() => client.close())
  )

/** Retry policy for "ask until it is so": up to ~2 s, then the last failure stands. */
const poll = { times: 100, schedule: Schedule.spaced("20 millis") }

const textOf = (result: unknown): string => {
  const content = (result as { content: Array<{ type: string; text?: string }> }).content
  return content.map((item) => item.text ?? "").join("")
}

describe("stub-server fixture", () => {
  it.scopedLive("default mode: echo, add, env_names, meta", () =>
    Effect.gen(function* () {
      const client = yield* connect(makeTransport([], { FIXTURE_MARKER: "1" }))
      assert.strictEqual(client.getServerVersion()?.name, "stub")

      const names = (yield* Effect.promise(() => client.listTools())).tools.map((tool) => tool.name)
      assert.deepStrictEqual(names, ["echo", "add", "env_names", "meta", "slow", "cancelled", "big"])

      const echo = yield* Effect.promise(() => client.callTool({ name: "echo", arguments: { text: "hi" } }))
      assert.strictEqual(textOf(echo), "echo:hi")
      assert.notStrictEqual(echo.isError, true)

      const missing = yield* Effect.promise(() => client.callTool({ name: "echo", arguments: {} }))
      assert.strictEqual(missing.isError, true)
      assert.strictEqual(textOf(missing), "missing text")

      const add = yield* Effect.promise(() => client.callTool({ name: "add", arguments: { a: 2, b: 3 } }))
      assert.strictEqual(textOf(add), "5")
      assert.deepStrictEqual(add.structuredContent, { sum: 5 })

      const env = yield* Effect.promise(() => client.callTool({ name: "env_names", arguments: {} }))
      const envNames = (env.structuredContent as { names: Array<string> }).names
      assert.include(envNames, "FIXTURE_MARKER")
      assert.include(envNames, "PATH")
      assert.deepStrictEqual(envNames, [...envNames].sort())

      const meta = yield* Effect.promise(() =>
        client.callTool({ name: "meta", arguments: {}, _meta: { traceparent: "00-abc-def-01" } })
      )
      assert.deepStrictEqual(meta.structuredContent, { meta: { traceparent: "00-abc-def-01" } })
    })
  )

  it.scopedLive("--tools and --name extend the catalog and rename the server", () =>
    Effect.gen(function* () {
      const client = yield* connect(makeTransport(["--tools", "3", "--name", "wide"]))
      assert.strictEqual(client.getServerVersion()?.name, "wide")
      const names = (yield* Effect.promise(() => client.listTools())).tools.map((tool) => tool.name)
      assert.deepStrictEqual(names.slice(-3), ["tool_0000", "tool_0001", "tool_0002"])
    })
  )

  it.scopedLive("slow reports progress and counts a cancellation", () =>
    Effect.gen(function* () {
      const transport = makeTransport([])
      const stderr = collectStderr(transport)
      const client = yield* connect(transport)
      const controller = new AbortController()
      // Abort on the first progress notification: event-driven, no timing involved.
      const outcome = yield* Effect.promise(() =>
        client
          .callTool({ name: "slow", arguments: { ms: 20_000, steps: 200 } }, undefined, {
            signal: controller.signal,
            onprogress: () => controller.abort("test cancels")
          })
          .then(
            () => "completed",
            () => "rejected"
          )
      )
      assert.strictEqual(outcome, "rejected")
      // The stub handles the cancel notification asynchronously: ask until it has counted it.
      const count = yield* Effect.promise(() => client.callTool({ name: "cancelled", arguments: {} })).pipe(
        Effect.map((result) => (result.structuredContent as { count: number }).count),
        Effect.filterOrFail((n) => n === 1),
        Effect.retry(poll)
      )
      assert.strictEqual(count, 1)
      // stderr is a separate pipe from the replies: its line can land a little later.
      const log = yield* Effect.sync(stderr).pipe(
        Effect.filterOrFail((text) => text.includes("stub: cancelled")),
        Effect.retry(poll)
      )
      assert.include(log, "stub: cancelled")
    })
  )

  it.scopedLive("--slow-start still completes the handshake and says so on stderr", () =>
    Effect.gen(function* () {
      const transport = makeTransport(["--slow-start", "300"])
      const stderr = collectStderr(transport)
      const client = yield* connect(transport)
      assert.strictEqual(client.getServerVersion()?.name, "stub")
      assert.include(stderr(), "stub: slow start 300")
    })
  )

  it.scopedLive("--auth-error answers initialize with JSON-RPC error 401", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(connect(makeTransport(["--auth-error"])))
      assert.instanceOf(error, McpError)
      assert.strictEqual((error as McpError).code, 401)
      assert.include((error as McpError).message, "Unauthorized: bad credentials")
    })
  )

  it.live("--exit-at-once 7 exits with code 7 and says so on stderr", () =>
    Effect.async<{ code: number | null; stderr: string }>((resume) => {
      const child = spawn(process.execPath, [stub, "--exit-at-once", "7"], { stdio: ["pipe", "ignore", "pipe"] })
      let stderr = ""
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
      child.on("close", (code) => resume(Effect.succeed({ code, stderr })))
      return Effect.sync(() => child.kill("SIGKILL"))
    }).pipe(
      Effect.map(({ code, stderr }) => {
        assert.strictEqual(code, 7)
        assert.include(stderr, "stub: exiting 7")
      })
    )
  )
})
