// `clawtool connect URL` as a host's stdio server (issue 12, ADR 022): every message relayed to a streamable-HTTP
// MCP server and back (tools, progress, sampling), the bearer token sent, the server going away and coming back
// underneath it, and exit 0 on stdin EOF. The upstream is an SDK server in this process (test/fixtures/http-mcp.ts).
import { assert, beforeAll, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Exit, Scope } from "effect"
import { spawn } from "node:child_process"
import { ensureBuilt, exitOf, main, writeConfig } from "../lib/cli.js"
import { startDaemon } from "../lib/daemon.js"
import { rawHost } from "../lib/rawHost.js"
import { root, stubCommand, tempDir } from "../lib/sources.js"
import { type HttpMcp, startHttpMcp } from "../fixtures/http-mcp.js"

beforeAll(ensureBuilt, 120_000)

const token = "s3cret-token"

/** HOME is a fresh folder, so no secrets.toml of the user's is read: the token comes from the environment only. */
const connectEnv = (env: Record<string, string>) => ({
  ...getDefaultEnvironment(),
  HOME: tempDir(),
  XDG_CONFIG_HOME: "",
  CLAWTOOL_CONFIG: "",
  ...env
})

const upstream = (options: { readonly port?: number; readonly generation?: number } = {}) =>
  Effect.acquireRelease(
    Effect.promise(() => startHttpMcp({ token, ...options })),
    (server) => Effect.promise(() => server.close())
  )

/** The host: an SDK client (with sampling) over stdio to `clawtool connect url`, closed with the scope. */
const host = (url: string, env: Record<string, string> = { CLAWTOOL_HTTP_TOKEN: token }) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [main, "connect", url],
        cwd: root,
        env: connectEnv(env),
        stderr: "pipe"
      })
      const client = new Client({ name: "connect-host", version: "1.0.0" }, { capabilities: { sampling: {} } })
      client.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
        role: "assistant",
        model: "test-model",
        content: { type: "text", text: `forty-two to ${JSON.stringify(request.params.messages[0]?.content)}` }
      }))
      await client.connect(transport)
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

const textOf = (result: unknown) => (result as { content: Array<{ text: string }> }).content[0]!.text

const echo = (client: Client, text: string) =>
  Effect.tryPromise(() => client.callTool({ name: "echo", arguments: { text } })).pipe(Effect.map(textOf))

/** The error a call gets, as text; a call that succeeds fails the test. */
const failureOf = <A>(effect: Effect.Effect<A, unknown>) =>
  Effect.flip(effect).pipe(Effect.map((error) => String((error as { error?: unknown }).error ?? error)))

describe("clawtool connect (built CLI, streamable-HTTP upstream)", () => {
  it.scopedLive("relays tools/list, calls, progress and sampling, and sends the bearer token", () =>
    Effect.gen(function* () {
      const server: HttpMcp = yield* upstream()
      const client = yield* host(server.url)
      const tools = yield* Effect.promise(() => client.listTools())
      assert.deepStrictEqual(tools.tools.map((tool) => tool.name).sort(), ["ask", "echo", "hang", "progress"])
      assert.strictEqual(yield* echo(client, "hi"), "echo hi (generation 1)")

      // Progress is asserted on the raw stdout in the EOF test below: the SDK client dispatches notifications after
      // the result it arrived with, so a burst's last ones never reach onprogress (http-and-remote.md §4.4).
      const done = yield* Effect.promise(() =>
        client.callTool({ name: "progress", arguments: {} }, undefined, { onprogress: () => {} })
      )
      assert.strictEqual(textOf(done), "done")

      const asked = yield* Effect.promise(() => client.callTool({ name: "ask", arguments: { question: "why?" } }))
      assert.strictEqual(textOf(asked), 'sampled: forty-two to {"type":"text","text":"why?"}')

      assert.isAbove(server.authorizations.length, 3)
      assert.deepStrictEqual([...new Set(server.authorizations)], [`Bearer ${token}`])
    })
  )

  it.scopedLive("the upstream stopping fails calls with an error naming the URL; restarted, calls work again", () =>
    Effect.gen(function* () {
      const first = yield* Effect.promise(() => startHttpMcp({ token }))
      const client = yield* host(first.url)
      assert.strictEqual(yield* echo(client, "a"), "echo a (generation 1)")
      yield* Effect.promise(() => first.close())

      const down = yield* failureOf(echo(client, "b"))
      assert.include(down, first.url)
      assert.include(down, "not reachable")

      const second = yield* Effect.promise(() => startHttpMcp({ token, port: first.port, generation: 2 }))
      // The new server knows nothing of the old session: connect re-initializes with the host's own params.
      assert.strictEqual(yield* echo(client, "c"), "echo c (generation 2)")

      // Restarted between two calls, unseen: the next call meets 404 (unknown session), is re-sent on a new one.
      yield* Effect.promise(() => second.close())
      yield* upstream({ port: first.port, generation: 3 })
      assert.strictEqual(yield* echo(client, "d"), "echo d (generation 3)")
    })
  )

  it.scopedLive("a call in flight when the upstream goes away fails with an error naming the URL", () =>
    Effect.gen(function* () {
      const first = yield* Effect.promise(() => startHttpMcp({ token }))
      const client = yield* host(first.url)
      const hanging = yield* Effect.fork(
        failureOf(Effect.tryPromise(() => client.callTool({ name: "hang", arguments: {} })))
      )
      while (!first.calls.includes("hang")) yield* Effect.sleep("20 millis")
      yield* Effect.promise(() => first.close())
      const failed = yield* hanging.await.pipe(Effect.flatten)
      assert.include(failed, first.url)
      assert.include(failed, "before answering")

      yield* upstream({ port: first.port, generation: 2 })
      assert.strictEqual(yield* echo(client, "after"), "echo after (generation 2)")
    })
  )

  it.scopedLive("started while the upstream is down: initialize is answered, calls fail, then work once it is up", () =>
    Effect.gen(function* () {
      const probe = yield* Effect.promise(() => startHttpMcp({ token }))
      yield* Effect.promise(() => probe.close())
      const client = yield* host(probe.url)
      assert.strictEqual(client.getServerVersion()?.name, "clawtool")
      const down = yield* failureOf(Effect.tryPromise(() => client.listTools()))
      assert.include(down, probe.url)

      yield* upstream({ port: probe.port })
      const tools = yield* Effect.promise(() => client.listTools())
      assert.deepStrictEqual(tools.tools.map((tool) => tool.name).sort(), ["ask", "echo", "hang", "progress"])
    })
  )

  it.scopedLive("a wrong token: calls fail with the HTTP status and where the token comes from", () =>
    Effect.gen(function* () {
      const server = yield* upstream()
      const client = yield* host(server.url, { CLAWTOOL_HTTP_TOKEN: "wrong" })
      const refused = yield* failureOf(echo(client, "x"))
      assert.include(refused, "HTTP 401")
      assert.include(refused, "CLAWTOOL_HTTP_TOKEN")
      assert.deepStrictEqual([...new Set(server.authorizations)], ["Bearer wrong"])
    })
  )

  it.scopedLive("stdin EOF: exit 0, nothing but JSON-RPC on stdout", () =>
    Effect.gen(function* () {
      const server = yield* upstream()
      const child = spawn(process.execPath, [main, "connect", server.url], {
        cwd: root,
        env: connectEnv({ CLAWTOOL_HTTP_TOKEN: token }),
        stdio: ["pipe", "pipe", "pipe"]
      })
      child.stderr.resume()
      const exited = exitOf(child)
      const raw = rawHost(child)
      const tools = yield* raw.handshake
      assert.deepStrictEqual(tools.map((tool) => tool.name).sort(), ["ask", "echo", "hang", "progress"])
      raw.send({
        jsonrpc: "2.0",
        id: "p",
        method: "tools/call",
        params: { name: "progress", arguments: {}, _meta: { progressToken: "tok" } }
      })
      yield* raw.answer("p")
      // Every progress notification, in order, before the result: nothing lost on the way through.
      const after = raw.messages.slice(raw.messages.findIndex((message) => message.method === "notifications/progress"))
      assert.deepStrictEqual(
        after.map((message) => message.params?.message ?? message.result?.content?.[0]?.text),
        ["step 1", "step 2", "step 3", "done"]
      )
      child.stdin.end()
      assert.deepStrictEqual(yield* exited, { code: 0, signal: null })
      assert.deepStrictEqual(raw.violations, [])
    })
  )

  it.live("a URL that is not http(s) is a usage error (exit 2)", () =>
    Effect.gen(function* () {
      const child = spawn(process.execPath, [main, "connect", "ftp://example.com/mcp"], {
        cwd: root,
        env: connectEnv({}),
        stdio: ["pipe", "pipe", "pipe"]
      })
      let stderr = ""
      child.stderr.on("data", (chunk) => (stderr += String(chunk)))
      const exit = yield* exitOf(child)
      assert.strictEqual(exit.code, 2)
      assert.include(stderr, "ftp://example.com/mcp")
    })
  )
})

describe("clawtool connect in front of clawtool serve --listen (the real daemon)", () => {
  it.scopedLive(
    "lists and calls the daemon's sources; the daemon down fails calls naming it; restarted, calls work",
    () =>
      Effect.gen(function* () {
        const config = writeConfig(`
        [http]
        token = "\${CLAWTOOL_HTTP_TOKEN}"
        [sources.stub]
        command = ${stubCommand()}
      `)
        const env = { CLAWTOOL_HTTP_TOKEN: token }
        const echoStub = (client: Client, text: string) =>
          Effect.tryPromise(() => client.callTool({ name: "stub__echo", arguments: { text } })).pipe(Effect.map(textOf))

        // The first daemon lives in its own scope, closed (SIGTERM, exit awaited) while the host stays connected.
        const daemonScope = yield* Scope.make()
        const daemon = yield* startDaemon(config, { env }).pipe(Scope.extend(daemonScope))
        const client = yield* host(daemon.url.href)
        const tools = (yield* Effect.promise(() => client.listTools())).tools.map((tool) => tool.name)
        assert.include(tools, "stub__echo")
        assert.strictEqual(yield* echoStub(client, "one"), "echo:one")

        yield* Scope.close(daemonScope, Exit.void)
        const down = yield* failureOf(echoStub(client, "two"))
        assert.include(down, daemon.url.href)

        yield* startDaemon(config, { env, listen: `127.0.0.1:${daemon.port}` })
        assert.strictEqual(yield* echoStub(client, "three"), "echo:three")
      })
  )
})
