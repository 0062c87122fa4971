import { assert, beforeAll, describe, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import {
  type CallToolResult,
  CallToolResultSchema,
  CreateMessageRequestSchema,
  CreateTaskResultSchema,
  GetTaskResultSchema,
  ListTasksResultSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema
} from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { ensureBuilt, exitOf, runCli, writeConfig } from "../lib/cli.js"
import { callTool, httpClient, initializeBody, messagesOf, rawRequest, startDaemon, textOf } from "../lib/daemon.js"
import { eventually, gone, isAlive, isRunning, pollUntil, root, stubCommand, tempDir } from "../lib/sources.js"
import { startHttpFixture } from "../fixtures/http-server.js"

beforeAll(ensureBuilt, 120_000)

/** The pids the stub recorded at each start: one line per child process ever started. */
const startsOf = (file: string) =>
  fs.existsSync(file)
    ? fs
        .readFileSync(file, "utf8")
        .split("\n")
        .filter((line) => line !== "")
        .map(Number)
    : []

const stubConfig = (flags: ReadonlyArray<string>, extra = "") => {
  const starts = path.join(tempDir(), "starts")
  const config = writeConfig(`
    ${extra}
    [sources.stub]
    command = ${stubCommand(...flags, "--record-start", starts)}
  `)
  return { config, starts }
}

/** A host session that declares sampling and answers every sampling/createMessage with "from <name>". */
const samplingHost = (name: string) => ({
  capabilities: { sampling: {} },
  setup: (client: Client) =>
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({
      model: name,
      role: "assistant" as const,
      content: { type: "text" as const, text: `from ${name}` }
    }))
})

describe("clawtool serve --listen (built CLI, SDK streamable HTTP clients as hosts)", () => {
  for (const sessions of [2, 10]) {
    it.scopedLive(
      `${sessions} concurrent sessions share one child (one pid) with no cross-talk`,
      () =>
        Effect.gen(function* () {
          const { config, starts } = stubConfig([])
          const daemon = yield* startDaemon(config)
          const clients = yield* Effect.forEach(Array.from({ length: sessions }), () => httpClient(daemon.url), {
            concurrency: "unbounded"
          })
          // Every session calls at once, several times: each answer is its own.
          const answers = yield* Effect.forEach(
            clients.flatMap(({ client }, session) =>
              Array.from({ length: 5 }, (_, call) => ({ client, text: `s${session}-c${call}` }))
            ),
            ({ client, text }) =>
              Effect.map(callTool(client, "stub__echo", { text }), (result) => [text, result] as const),
            { concurrency: "unbounded" }
          )
          for (const [text, result] of answers) assert.strictEqual(textOf(result), `echo:${text}`)
          const pids = startsOf(starts)
          assert.strictEqual(pids.length, 1, `one child for ${sessions} sessions, got pids ${pids.join(",")}`)
          // Distinct sessions: each client got its own session id.
          const ids = new Set(clients.map(({ transport }) => transport.sessionId))
          assert.strictEqual(ids.size, sessions)
        }),
      120_000
    )
  }

  it.scopedLive(
    "log level per session: the child gets the lowest level asked, each session only what it asked for",
    () =>
      Effect.gen(function* () {
        const { config } = stubConfig(["--logging"])
        const daemon = yield* startDaemon(config)
        const received = { quiet: [] as Array<string>, chatty: [] as Array<string> }
        const listen = (into: Array<string>) => (client: Client) =>
          client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
            into.push(String((notification.params.data as { text?: string } | string | undefined) ?? ""))
          })
        const quiet = yield* httpClient(daemon.url, { setup: listen(received.quiet) })
        const chatty = yield* httpClient(daemon.url, { setup: listen(received.chatty) })
        yield* Effect.promise(() => quiet.client.setLoggingLevel("error"))
        yield* Effect.promise(() => chatty.client.setLoggingLevel("debug"))
        // Both standalone streams are open once an error-level message reaches both sessions.
        let warm = 0
        while (!(received.quiet.some((t) => t.includes("warm")) && received.chatty.some((t) => t.includes("warm")))) {
          yield* callTool(chatty.client, "stub__log", { level: "error", text: `warm${warm++}` })
          yield* Effect.sleep("100 millis")
          if (warm > 100) assert.fail("the sessions' notification streams never opened")
        }
        // The child is at debug (the lowest asked): it logs info.
        assert.strictEqual(
          textOf(yield* callTool(quiet.client, "stub__log", { level: "info", text: "info-1" })),
          "logged"
        )
        yield* callTool(quiet.client, "stub__log", { level: "error", text: "error-1" })
        yield* eventually(
          () => received.quiet.some((t) => t.includes("error-1")) && received.chatty.some((t) => t.includes("error-1")),
          10_000,
          "error-1 in both sessions"
        )
        assert.isTrue(received.chatty.some((t) => t.includes("info-1")))
        assert.isFalse(
          received.quiet.some((t) => t.includes("info-1")),
          "the error-level session got an info message"
        )
        // The chatty session leaves: the child goes back to the lowest level left (error) and ignores info.
        yield* Effect.promise(() => chatty.transport.terminateSession())
        yield* Effect.promise(() => chatty.client.close())
        const after = yield* Effect.gen(function* () {
          for (let attempt = 0; attempt < 50; attempt++) {
            const text = textOf(yield* callTool(quiet.client, "stub__log", { level: "info", text: "info-2" }))
            if (text === "ignored") return text
            yield* Effect.sleep("100 millis")
          }
          return "logged"
        })
        assert.strictEqual(after, "ignored")
      }),
    120_000
  )

  it.scopedLive(
    "progress, cancel and session end per session: a closed session's call is cancelled at the child",
    () =>
      Effect.gen(function* () {
        const { config } = stubConfig([])
        const daemon = yield* startDaemon(config)
        const a = yield* httpClient(daemon.url)
        const b = yield* httpClient(daemon.url)
        const progress = { a: 0, b: 0 }
        const [resultA, resultB] = yield* Effect.all(
          [
            callTool(a.client, "stub__slow", { ms: 300, steps: 3 }, { onprogress: () => progress.a++ }),
            callTool(b.client, "stub__slow", { ms: 300, steps: 3 }, { onprogress: () => progress.b++ })
          ],
          { concurrency: "unbounded" }
        )
        assert.isNotTrue(resultA.isError)
        assert.isNotTrue(resultB.isError)
        // The last progress can be dropped by any SDK hop (sdk-notes): at least one each, each on its own session.
        assert.isAtLeast(progress.a, 1)
        assert.isAtLeast(progress.b, 1)

        // Cancel: A aborts its call; the child hears it.
        const controller = new AbortController()
        const cancelled = yield* Effect.fork(
          Effect.either(
            Effect.tryPromise(() =>
              a.client.request(
                { method: "tools/call", params: { name: "stub__slow", arguments: { ms: 30_000, steps: 30 } } },
                CallToolResultSchema,
                { signal: controller.signal, onprogress: () => controller.abort() }
              )
            )
          )
        )
        yield* cancelled.await
        const countOf = Effect.map(callTool(b.client, "stub__cancelled"), (result) => Number(textOf(result)))
        yield* Effect.gen(function* () {
          for (let attempt = 0; attempt < 100 && (yield* countOf) < 1; attempt++) yield* Effect.sleep("100 millis")
        })
        assert.strictEqual(yield* countOf, 1)

        // Session end: B's call in flight is cancelled when B's session is deleted.
        let started = false
        yield* Effect.fork(
          Effect.either(
            Effect.tryPromise(() =>
              b.client.request(
                { method: "tools/call", params: { name: "stub__slow", arguments: { ms: 30_000, steps: 30 } } },
                CallToolResultSchema,
                { onprogress: () => (started = true), timeout: 60_000 }
              )
            )
          )
        )
        yield* eventually(() => started, 10_000, "B's slow call to start")
        yield* Effect.promise(() => b.transport.terminateSession())
        const countA = Effect.map(callTool(a.client, "stub__cancelled"), (result) => Number(textOf(result)))
        yield* Effect.gen(function* () {
          for (let attempt = 0; attempt < 100 && (yield* countA) < 2; attempt++) yield* Effect.sleep("100 millis")
        })
        assert.strictEqual(yield* countA, 2)
      }),
    120_000
  )

  it.scopedLive(
    "subscriptions are counted per session toward the child; updates reach only subscribed sessions",
    () =>
      Effect.gen(function* () {
        const { config } = stubConfig(["--resources", "--subscribe"])
        const daemon = yield* startDaemon(config)
        const updates = { a: 0, b: 0 }
        const a = yield* httpClient(daemon.url, {
          setup: (client) => client.setNotificationHandler(ResourceUpdatedNotificationSchema, () => void updates.a++)
        })
        const b = yield* httpClient(daemon.url, {
          setup: (client) => client.setNotificationHandler(ResourceUpdatedNotificationSchema, () => void updates.b++)
        })
        const { resources } = yield* Effect.promise(() => a.client.listResources())
        const uri = resources.find((resource) => resource.uri.includes("info"))?.uri
        assert.isDefined(uri)
        const subscribed = Effect.map(callTool(a.client, "stub__subscribed"), textOf)
        yield* Effect.promise(() => a.client.subscribeResource({ uri: uri! }))
        yield* Effect.promise(() => b.client.subscribeResource({ uri: uri! }))
        assert.include(yield* subscribed, "stub://info")
        // A leaves the subscription: the child stays subscribed for B, and only B hears the update.
        yield* Effect.promise(() => a.client.unsubscribeResource({ uri: uri! }))
        assert.include(yield* subscribed, "stub://info")
        yield* Effect.gen(function* () {
          for (let attempt = 0; attempt < 100 && updates.b === 0; attempt++) {
            yield* callTool(b.client, "stub__touch")
            yield* Effect.sleep("100 millis")
          }
        })
        assert.isAtLeast(updates.b, 1)
        assert.strictEqual(updates.a, 0)
        // The last subscriber leaves (its session ends): the child is unsubscribed.
        yield* Effect.promise(() => b.transport.terminateSession())
        const left = yield* Effect.gen(function* () {
          for (let attempt = 0; attempt < 50; attempt++) {
            const text = yield* subscribed
            if (!text.includes("stub://info")) return text
            yield* Effect.sleep("100 millis")
          }
          return yield* subscribed
        })
        assert.notInclude(left, "stub://info")
      }),
    120_000
  )

  it.scopedLive(
    "a child's sampling request reaches the session whose call is in flight; refused when ambiguous or undeclared",
    () =>
      Effect.gen(function* () {
        const { config } = stubConfig(["--reverse"])
        const daemon = yield* startDaemon(config)
        const a = yield* httpClient(daemon.url, samplingHost("A"))
        const b = yield* httpClient(daemon.url, samplingHost("B"))
        const plain = yield* httpClient(daemon.url)
        const ask = (client: Client) =>
          Effect.map(callTool(client, "stub__ask", { method: "sampling/createMessage" }), textOf)
        assert.include(yield* ask(a.client), "from A")
        assert.include(yield* ask(b.client), "from B")
        const undeclared = yield* ask(plain.client)
        assert.include(undeclared, "did not declare the sampling capability")
        // While A has a call in flight on the same child, B's child request cannot be routed.
        let started = false
        const slow = yield* Effect.fork(
          callTool(a.client, "stub__slow", { ms: 3000, steps: 30 }, { onprogress: () => (started = true) })
        )
        yield* eventually(() => started, 10_000, "A's slow call to start")
        const ambiguous = yield* ask(b.client)
        assert.include(ambiguous, "cannot be routed")
        yield* slow.await
      }),
    120_000
  )

  it.scopedLive(
    "a reverse request made while a child answers prompts/get reaches the session that asked",
    () =>
      Effect.gen(function* () {
        const { config } = stubConfig(["--reverse", "--resources"])
        const daemon = yield* startDaemon(config)
        const a = yield* httpClient(daemon.url, samplingHost("A"))
        const b = yield* httpClient(daemon.url, samplingHost("B"))
        const got = (client: Client) =>
          Effect.promise(() => client.getPrompt({ name: "stub__sampled" })).pipe(
            Effect.map((result) => (result.messages[0]?.content as { text?: string }).text)
          )
        assert.deepStrictEqual(yield* Effect.all([got(a.client), got(b.client)]), ["from A", "from B"])
      }),
    120_000
  )

  it.scopedLive("the host's Authorization header never reaches a source: a remote one gets only its own headers", () =>
    Effect.gen(function* () {
      const remote = yield* Effect.acquireRelease(
        Effect.promise(() => startHttpFixture({ mode: "stateful" })),
        (fixture) => Effect.promise(() => fixture.close())
      )
      const config = writeConfig(`
        [http]
        token = "\${CLAWTOOL_HTTP_TOKEN}"
        [sources.remote]
        url = "${remote.url}"
      `)
      const daemon = yield* startDaemon(config, { env: { CLAWTOOL_HTTP_TOKEN: "host-s3cret" } })
      const { client } = yield* httpClient(daemon.url, { token: "host-s3cret" })
      assert.strictEqual(textOf(yield* callTool(client, "remote__echo", { text: "hi" })), "echo:hi")
      assert.isAbove(remote.authorizations.length, 0, "the remote source was reached")
      assert.deepStrictEqual(
        remote.authorizations.filter((header) => header !== undefined),
        [],
        "no request to the source carried an Authorization header"
      )
    })
  )

  it.scopedLive(
    "bearer token: 401 with WWW-Authenticate without it or with a wrong one; the right one works",
    () =>
      Effect.gen(function* () {
        const { config } = stubConfig([], `[http]\ntoken = "\${CLAWTOOL_HTTP_TOKEN}"`)
        const daemon = yield* startDaemon(config, { env: { CLAWTOOL_HTTP_TOKEN: "s3cret-token" } })
        const missing = yield* rawRequest(daemon.port, {
          headers: { host: `127.0.0.1:${daemon.port}` },
          body: initializeBody
        })
        assert.strictEqual(missing.status, 401)
        assert.match(String(missing.headers["www-authenticate"]), /^Bearer /)
        const wrong = yield* rawRequest(daemon.port, {
          headers: { host: `127.0.0.1:${daemon.port}`, authorization: "Bearer nope" },
          body: initializeBody
        })
        assert.strictEqual(wrong.status, 401)
        const { client } = yield* httpClient(daemon.url, { token: "s3cret-token" })
        assert.strictEqual(textOf(yield* callTool(client, "stub__echo", { text: "ok" })), "echo:ok")
        // Probes need no token.
        assert.strictEqual((yield* rawRequest(daemon.port, { method: "GET", path: "/healthz" })).status, 200)
        assert.notInclude(daemon.stderr(), "s3cret-token")
      }),
    60_000
  )

  it.scopedLive(
    "403 for a foreign Host or Origin, 413 past max_body, 400 -32700 for malformed JSON, 404 for a gone session",
    () =>
      Effect.gen(function* () {
        const { config } = stubConfig([], `[http]\nmax_body = 2048\nallowed_origins = ["https://app.example"]`)
        const daemon = yield* startDaemon(config)
        const local = `127.0.0.1:${daemon.port}`
        const foreignHost = yield* rawRequest(daemon.port, {
          headers: { host: `evil.example:${daemon.port}` },
          body: initializeBody
        })
        assert.strictEqual(foreignHost.status, 403)
        const foreignOrigin = yield* rawRequest(daemon.port, {
          headers: { host: local, origin: "http://evil.example" },
          body: initializeBody
        })
        assert.strictEqual(foreignOrigin.status, 403)
        // Every loopback spelling of the listen address counts, and a configured origin passes.
        for (const headers of <ReadonlyArray<Record<string, string>>>[
          { host: `localhost:${daemon.port}` },
          { host: local, origin: `http://localhost:${daemon.port}` },
          { host: local, origin: "https://app.example" }
        ]) {
          const ok = yield* rawRequest(daemon.port, { headers, body: initializeBody })
          assert.strictEqual(ok.status, 200, JSON.stringify(headers))
        }
        const big = yield* rawRequest(daemon.port, {
          headers: { host: local },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "x".repeat(4096) } })
        })
        assert.strictEqual(big.status, 413)
        const malformed = yield* rawRequest(daemon.port, { headers: { host: local }, body: "{not json" })
        assert.strictEqual(malformed.status, 400)
        assert.strictEqual((JSON.parse(malformed.body) as { error: { code: number } }).error.code, -32700)
        const gone = yield* rawRequest(daemon.port, {
          headers: { host: local, "mcp-session-id": "no-such-session" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" })
        })
        assert.strictEqual(gone.status, 404)
        // Nothing crashed: a real session still works.
        const { client } = yield* httpClient(daemon.url)
        assert.strictEqual(textOf(yield* callTool(client, "stub__echo", { text: "still" })), "echo:still")
      }),
    60_000
  )

  it.scopedLive(
    "an idle session expires after [http] session_idle; its id then gets 404",
    () =>
      Effect.gen(function* () {
        const { config } = stubConfig([], `[http]\nsession_idle = "300ms"`)
        const daemon = yield* startDaemon(config)
        const headers = { host: `127.0.0.1:${daemon.port}`, "mcp-protocol-version": "2025-11-25" }
        const init = yield* rawRequest(daemon.port, { headers, body: initializeBody })
        assert.strictEqual(init.status, 200)
        const id = String(init.headers["mcp-session-id"])
        const ping = (sessionId: string) =>
          rawRequest(daemon.port, {
            headers: { ...headers, "mcp-session-id": sessionId },
            body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" })
          })
        // No request for longer than session_idle (the sweep runs every quarter of it): the session is closed. Each
        // ping that still finds it counts as use, so the probes are spaced well beyond session_idle.
        let status = 0
        for (let attempt = 0; attempt < 20 && status !== 404; attempt++) {
          yield* Effect.sleep("1 second")
          status = (yield* ping(id)).status
        }
        assert.strictEqual(status, 404)
      }),
    60_000
  )

  it.scopedLive(
    "a message with an id is a request whatever its method: notifications/* with an id gets one -32601 on its POST",
    () =>
      Effect.gen(function* () {
        const config = writeConfig(`[sources.stub]\ncommand = ${stubCommand()}\n`)
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => fs.rmSync(path.dirname(config), { recursive: true, force: true }))
        )
        const daemon = yield* startDaemon(config)
        const headers = { host: `127.0.0.1:${daemon.port}`, "mcp-protocol-version": "2025-11-25" }
        const init = yield* rawRequest(daemon.port, { headers, body: initializeBody })
        const session = { ...headers, "mcp-session-id": String(init.headers["mcp-session-id"]) }
        // A request nothing answers would hold its POST open: bounded, so the test says which one.
        const post = (body: unknown) =>
          rawRequest(daemon.port, { headers: session, body: JSON.stringify(body) }).pipe(
            Effect.timeoutFail({
              duration: "20 seconds",
              onTimeout: () => new Error(`no answer to ${JSON.stringify(body)}`)
            })
          )
        assert.strictEqual((yield* post({ jsonrpc: "2.0", method: "notifications/initialized" })).status, 202)
        // Each method has a notification handler in the SDK's Server (cancels, progress, roots) or is one.
        const misnamed = [
          ["n1", "notifications/cancelled", { requestId: 1 }],
          ["n2", "notifications/progress", { progressToken: 1, progress: 1 }],
          ["n3", "notifications/initialized", {}],
          ["n4", "notifications/roots/list_changed", {}]
        ] as const
        for (const [id, method, params] of misnamed) {
          // A request: its POST gets a stream, which carries its one answer and then ends (a 202 would carry none).
          const answer = yield* post({ jsonrpc: "2.0", id, method, params })
          assert.strictEqual(answer.status, 200)
          assert.deepStrictEqual(messagesOf(answer.body), [
            { jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } }
          ])
        }
        // In one batch with a ping: each answered once on the batch's stream.
        const batch = yield* post([
          ...misnamed.map(([id, method, params]) => ({ jsonrpc: "2.0", id: `batch-${id}`, method, params })),
          { jsonrpc: "2.0", id: "ping", method: "ping" }
        ])
        assert.deepStrictEqual(
          messagesOf(batch.body)
            .map((message) => [message.id, (message.error as { code?: number } | undefined)?.code ?? "result"])
            .sort(),
          [
            ["batch-n1", -32601],
            ["batch-n2", -32601],
            ["batch-n3", -32601],
            ["batch-n4", -32601],
            ["ping", "result"]
          ]
        )
      }),
    60_000
  )

  it.live("a non-loopback address without a token is refused at start (exit 2, naming the setting)", () =>
    Effect.sync(() => {
      const { config } = stubConfig([])
      const result = runCli(["serve", "--config", config, "--listen", "0.0.0.0:0"])
      assert.strictEqual(result.code, 2)
      assert.include(result.stderr, "[http] token")
    })
  )

  it.scopedLive(
    "stateless: two daemons sharing nothing each answer a tools/call POST without initialize, with no session id",
    () =>
      Effect.gen(function* () {
        const { config } = stubConfig([], `[http]\nstateless = true`)
        const daemons = [yield* startDaemon(config), yield* startDaemon(config)]
        for (const [index, daemon] of daemons.entries()) {
          const response = yield* rawRequest(daemon.port, {
            headers: { host: `127.0.0.1:${daemon.port}`, "mcp-protocol-version": "2025-11-25" },
            body: JSON.stringify({
              jsonrpc: "2.0",
              id: 7,
              method: "tools/call",
              params: { name: "stub__echo", arguments: { text: `replica${index}` } }
            })
          })
          assert.strictEqual(response.status, 200, response.body)
          assert.isUndefined(response.headers["mcp-session-id"])
          const answer = messagesOf(response.body).find((message) => message.id === 7) as
            { result: { content: Array<{ text: string }> } } | undefined
          assert.strictEqual(answer?.result.content[0]?.text, `echo:replica${index}`)
        }
      }),
    60_000
  )

  it.scopedLive(
    "stateless: a background Bash run is refused before it starts (no session would own it); BashPoll and BashKill list no run",
    () =>
      Effect.gen(function* () {
        const dir = fs.realpathSync(tempDir())
        yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
        const config = path.join(dir, "config.toml")
        fs.writeFileSync(config, `roots = [${JSON.stringify(dir)}]\n[http]\nstateless = true\n`)
        const daemon = yield* startDaemon(config, { env: { CLAWTOOL_CACHE_DIR: path.join(dir, "cache") } })
        const call = (name: string, args: Record<string, unknown>) =>
          Effect.map(
            rawRequest(daemon.port, {
              headers: { "mcp-protocol-version": "2025-11-25" },
              body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name, arguments: args } })
            }),
            (response) => {
              const answer = messagesOf(response.body).find((message) => message.id === 3) as
                { result: CallToolResult & { _meta?: { clawtool?: { error?: { reason?: string } } } } } | undefined
              assert.isDefined(answer, response.body)
              return {
                ...answer!.result,
                text: textOf(answer!.result),
                reason: answer!.result._meta?.clawtool?.error?.reason
              }
            }
          )
        const started = yield* call("Bash", { command: "touch started; exec sleep 60", run_in_background: true })
        assert.isTrue(started.isError, started.text)
        assert.strictEqual(started.reason, "NoSession")
        assert.include(started.text, "run_in_background needs a session; stateless mode has none")
        assert.isFalse(fs.existsSync(path.join(dir, "started")), "nothing ran")
        // In the foreground, Bash works as ever.
        const foreground = yield* call("Bash", { command: "echo in the foreground" })
        assert.isNotTrue(foreground.isError, foreground.text)
        assert.include(foreground.text, "in the foreground")
        // No table to look in: an unknown id is unknown, and no run of anyone's is named.
        for (const tool of ["BashPoll", "BashKill"]) {
          const unknown = yield* call(tool, { task_id: "bash_nope" })
          assert.isTrue(unknown.isError, unknown.text)
          assert.strictEqual(unknown.reason, "NotFound")
          assert.include(unknown.text, `no background run "bash_nope" (run_in_background needs a session`)
          assert.notInclude(unknown.text, "known")
        }
      }),
    60_000
  )

  it.scopedLive(
    "/readyz answers 503 until every eager source settled, then 200 with health rows and no stderr",
    () =>
      Effect.gen(function* () {
        const { config } = stubConfig(["--slow-start", "1500", "--stderr-lines", "2"])
        const daemon = yield* startDaemon(config)
        const first = yield* rawRequest(daemon.port, {
          method: "GET",
          path: "/readyz",
          headers: { host: "10.0.0.9:80" }
        })
        assert.strictEqual(first.status, 503)
        yield* Effect.gen(function* () {
          for (let attempt = 0; attempt < 200; attempt++) {
            const probe = yield* rawRequest(daemon.port, { method: "GET", path: "/readyz" })
            if (probe.status === 200) return
            yield* Effect.sleep("100 millis")
          }
        })
        const ready = yield* rawRequest(daemon.port, { method: "GET", path: "/readyz" })
        assert.strictEqual(ready.status, 200)
        const body = JSON.parse(ready.body) as { ready: boolean; sources: Array<Record<string, unknown>> }
        assert.isTrue(body.ready)
        assert.strictEqual(body.sources[0]?.name, "stub")
        assert.strictEqual(body.sources[0]?.status, "running")
        assert.notInclude(ready.body, "stub stderr line")
        assert.isUndefined(body.sources[0]?.stderrTail)
      }),
    60_000
  )

  it.scopedLive(
    "SIGTERM: exit 0, every child gone, stdin ignored",
    () =>
      Effect.gen(function* () {
        const { config, starts } = stubConfig([])
        const daemon = yield* startDaemon(config)
        // Daemon mode ignores stdin: closing it ends nothing.
        daemon.child.stdin.end()
        const { client } = yield* httpClient(daemon.url)
        assert.strictEqual(textOf(yield* callTool(client, "stub__echo", { text: "up" })), "echo:up")
        const [pid] = startsOf(starts)
        assert.isTrue(isAlive(pid!))
        daemon.child.kill("SIGTERM")
        const exit = yield* exitOf(daemon.child)
        assert.strictEqual(exit.code, 0)
        yield* eventually(() => !isAlive(pid!), 10_000, "the child to be gone")
      }),
    60_000
  )

  it.scopedLive(
    "clawtool's own file tools use the calling session's roots, never another session's, asked again after its roots/list_changed",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const folders = Object.fromEntries(
          ["a", "b", "c"].map((name) => {
            const folder = path.join(dir, name)
            fs.mkdirSync(folder)
            fs.writeFileSync(path.join(folder, `${name}.txt`), `in ${name}\n`)
            return [name, fs.realpathSync(folder)]
          })
        ) as Record<"a" | "b" | "c", string>
        // The config's roots are c: the fallback for a session that declares no roots.
        const daemon = yield* startDaemon(writeConfig(`roots = [${JSON.stringify(folders.c)}]\n`))
        const withRoots = (roots: { dirs: ReadonlyArray<string> }) => ({
          capabilities: { roots: { listChanged: true } },
          setup: (client: Client) =>
            client.setRequestHandler(ListRootsRequestSchema, () => ({
              roots: roots.dirs.map((folder) => ({ uri: pathToFileURL(folder).href }))
            }))
        })
        const rootsA = { dirs: [folders.a] }
        const a = yield* httpClient(daemon.url, withRoots(rootsA))
        const b = yield* httpClient(daemon.url, withRoots({ dirs: [folders.b] }))
        const c = yield* httpClient(daemon.url)
        const reads = (client: Client, name: "a" | "b" | "c") =>
          Effect.map(callTool(client, "Read", { file_path: path.join(folders[name], `${name}.txt`) }), (result) =>
            result.isError === true ? "refused" : textOf(result).includes(`in ${name}`) ? "read" : textOf(result)
          )
        const table = (client: Client) =>
          Effect.all({ a: reads(client, "a"), b: reads(client, "b"), c: reads(client, "c") }, { concurrency: 3 })
        // All three at once: each call is answered under its own session's roots.
        const [fromA, fromB, fromC] = yield* Effect.all([table(a.client), table(b.client), table(c.client)], {
          concurrency: "unbounded"
        })
        assert.deepStrictEqual(fromA, { a: "read", b: "refused", c: "refused" })
        assert.deepStrictEqual(fromB, { a: "refused", b: "read", c: "refused" })
        assert.deepStrictEqual(fromC, { a: "refused", b: "refused", c: "read" })

        // A moves to b and says so: A's next calls see b; B is unchanged.
        rootsA.dirs = [folders.b]
        yield* Effect.promise(() => a.client.sendRootsListChanged())
        yield* pollUntil(reads(a.client, "b"), (outcome) => outcome === "read", "session A on its new roots", 10_000)
        assert.deepStrictEqual(yield* table(a.client), { a: "refused", b: "read", c: "refused" })
        assert.deepStrictEqual(yield* table(b.client), { a: "refused", b: "read", c: "refused" })
      }),
    120_000
  )

  it.scopedLive(
    "read before edit is per session: a file one session read does not count as read by another",
    () =>
      Effect.gen(function* () {
        const dir = fs.realpathSync(tempDir())
        const file = path.join(dir, "notes.md")
        fs.writeFileSync(file, "first line\n")
        const daemon = yield* startDaemon(writeConfig(`roots = [${JSON.stringify(dir)}]\n`))
        const [a, b] = yield* Effect.all([httpClient(daemon.url), httpClient(daemon.url)])
        const edit = (client: Client, to: string) =>
          callTool(client, "Edit", { file_path: file, old_string: "line", new_string: to })
        assert.isNotTrue((yield* callTool(a.client, "Read", { file_path: file })).isError)
        const fromB = yield* edit(b.client, "row")
        assert.isTrue(fromB.isError, textOf(fromB))
        assert.include(textOf(fromB), "has not been read in this session")
        const fromA = yield* edit(a.client, "row")
        assert.isNotTrue(fromA.isError, textOf(fromA))
        assert.strictEqual(fs.readFileSync(file, "utf8"), "first row\n")
      }),
    60_000
  )

  it.scopedLive(
    "background runs are a session's own: another session cannot see, poll or kill them, and they end with their session",
    () =>
      Effect.gen(function* () {
        const dir = fs.realpathSync(tempDir())
        const daemon = yield* startDaemon(writeConfig(`roots = [${JSON.stringify(dir)}]\n`))
        const [a, b] = yield* Effect.all([httpClient(daemon.url), httpClient(daemon.url)])
        const started = yield* callTool(a.client, "Bash", {
          command: "echo pid $$; exec sleep 60",
          run_in_background: true
        })
        assert.isNotTrue(started.isError, textOf(started))
        const taskId = (started.structuredContent as { taskId: string }).taskId
        const pidText = yield* pollUntil(
          Effect.map(callTool(a.client, "BashPoll", { task_id: taskId }), (result) => /pid (\d+)/.exec(textOf(result))),
          (match) => match !== null,
          "the run's pid"
        )
        const pid = Number(pidText![1])
        // B is told of no run at all (A's id is not listed), and cannot stop A's.
        const polled = yield* callTool(b.client, "BashPoll", { task_id: taskId })
        assert.isTrue(polled.isError, textOf(polled))
        assert.include(textOf(polled), "known: none")
        const killed = yield* callTool(b.client, "BashKill", { task_id: taskId })
        assert.isTrue(killed.isError, textOf(killed))
        assert.isTrue(isRunning(pid), "B could not stop A's run")
        // A's session ends: its runs are killed with it.
        yield* Effect.promise(() => a.transport.terminateSession())
        assert.isTrue(yield* gone(pid, 10_000), "A's run ended with its session")
      }),
    60_000
  )

  it.scopedLive(
    "tasks are a session's own: another session cannot list, read or cancel them (a prefixed source's ids route back)",
    () =>
      Effect.gen(function* () {
        const late = path.join(root, "test/fixtures/late-server.mjs")
        const daemon = yield* startDaemon(
          writeConfig(
            `[sources.late]\ncommand = ${JSON.stringify([process.execPath, late, "--tasks"])}\nprefix = "lt"\n`
          )
        )
        const [a, b] = yield* Effect.all([httpClient(daemon.url), httpClient(daemon.url)])
        const create = (client: Client) =>
          Effect.promise(() =>
            client.request(
              { method: "tools/call", params: { name: "lt__hello", arguments: {}, task: { ttl: 60_000 } } },
              CreateTaskResultSchema
            )
          ).pipe(Effect.map((created) => created.task.taskId))
        const list = (client: Client) =>
          Effect.promise(() => client.request({ method: "tasks/list", params: {} }, ListTasksResultSchema)).pipe(
            Effect.map(({ tasks }) => tasks.map((task) => task.taskId))
          )
        const get = (client: Client, taskId: string) =>
          Effect.promise(() =>
            client
              .request({ method: "tasks/get", params: { taskId } }, GetTaskResultSchema)
              .then((task) => task.status as string)
              .catch((error: { code?: number }) => `error ${error.code}`)
          )
        const ofA = yield* create(a.client)
        const ofB = yield* create(b.client)
        assert.deepStrictEqual([ofA, ofB], ["lt__task-1", "lt__task-2"])
        // The child lists both; each session sees its own.
        assert.deepStrictEqual(yield* list(a.client), [ofA])
        assert.deepStrictEqual(yield* list(b.client), [ofB])
        assert.deepStrictEqual(
          [yield* get(a.client, ofA), yield* get(b.client, ofA), yield* get(b.client, ofB)],
          ["working", "error -32602", "working"]
        )
        const cancelled = yield* Effect.promise(() =>
          b.client
            .request({ method: "tasks/cancel", params: { taskId: ofA } }, GetTaskResultSchema)
            .then(() => "cancelled")
            .catch((error: { code?: number }) => `error ${error.code}`)
        )
        assert.strictEqual(cancelled, "error -32602")
        assert.strictEqual(yield* get(a.client, ofA), "working")
      }),
    60_000
  )
})
