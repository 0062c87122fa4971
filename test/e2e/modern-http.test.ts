import { assert, beforeAll, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/client"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { Deferred, Effect } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as path from "node:path"
import { ensureBuilt, writeConfig } from "../lib/cli.js"
import { httpClient, initializeBody, messagesOf, rawRequest, startDaemon } from "../lib/daemon.js"
import { eventually, pollUntil, stubCommand, tempDir } from "../lib/sources.js"

/**
 * 2026-07-28 hosts on `serve --listen` (ADR 032): sessionless POSTs with the envelope, the Mcp-Method/Mcp-Name checks,
 * progress on an SSE response, MRTR across two POSTs; legacy hosts beside them as before.
 */

beforeAll(ensureBuilt, 120_000)

type Json = Record<string, any>

const meta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } },
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" }
}

const post = (
  port: number,
  id: number,
  method: string,
  params: Json,
  headers: Record<string, string> = {},
  path = "/mcp"
) =>
  Effect.map(
    rawRequest(port, {
      path,
      headers: { "mcp-method": method, ...headers },
      body: JSON.stringify({ jsonrpc: "2.0", id, method, params: { ...params, _meta: { ...meta, ...params._meta } } })
    }),
    (response) => ({ ...response, messages: messagesOf(response.body) as ReadonlyArray<Json> })
  )

/** An SDK v2 host pinned to 2026-07-28 over HTTP, closed with the scope. */
const modernClient = (url: URL) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client(
        { name: "v2-http", version: "1" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } }
      )
      await client.connect(new StreamableHTTPClientTransport(url))
      return client
    }),
    (client) => Effect.promise(() => client.close().catch(() => {}))
  )

/** A listen POST whose stream is read as it comes: `acknowledged` once its first event arrived, `ended` with the body. */
const openListen = (port: number, profilePath: string, token: string) =>
  Effect.gen(function* () {
    const acknowledged = yield* Deferred.make<void>()
    const ended = yield* Deferred.make<string>()
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        path: profilePath,
        headers: {
          accept: "application/json, text/event-stream",
          "content-type": "application/json",
          "mcp-method": "subscriptions/listen",
          authorization: `Bearer ${token}`
        }
      },
      (res) => {
        let body = ""
        res.on("data", (chunk: Buffer) => {
          body += chunk.toString("utf8")
          if (body.includes("data:")) Deferred.unsafeDone(acknowledged, Effect.void)
        })
        res.on("close", () => Deferred.unsafeDone(ended, Effect.succeed(body)))
      }
    )
    req.on("error", () => Deferred.unsafeDone(ended, Effect.succeed("")))
    req.end(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method: "subscriptions/listen",
        params: { notifications: { toolsListChanged: true }, _meta: meta }
      })
    )
    yield* Effect.addFinalizer(() => Effect.sync(() => req.destroy()))
    yield* Deferred.await(acknowledged)
    return { ended }
  })

const listenConfig = (chatTools: string, more = "") => `
[sources.stub]
command = ${stubCommand("--resources", "--subscribe")}
${more}
[profiles.chat]
sources = ["stub"]
tools = ${chatTools}
`

describe("modern hosts over HTTP", () => {
  it.scopedLive(
    "sessionless requests: discover, header checks (-32020), -32022, calls, progress on SSE, MRTR, legacy beside",
    () =>
      Effect.gen(function* () {
        const config = writeConfig(`[sources.stub]\ncommand = ${stubCommand("--reverse")}\n`)
        const { port, url } = yield* startDaemon(config)
        const discover = yield* post(port, 1, "server/discover", {})
        assert.strictEqual(discover.status, 200)
        assert.isUndefined(discover.headers["mcp-session-id"])
        assert.deepStrictEqual(discover.messages[0]!.result.supportedVersions, ["2026-07-28"])

        const wrongMethod = yield* post(port, 2, "tools/call", { name: "stub__echo" }, { "mcp-method": "tools/list" })
        assert.strictEqual(wrongMethod.status, 400)
        assert.strictEqual(wrongMethod.messages[0]!.error.code, -32020)
        assert.include(wrongMethod.messages[0]!.error.message, "Mcp-Method header names tools/list")
        const noName = yield* post(port, 3, "tools/call", { name: "stub__echo" })
        assert.strictEqual(noName.messages[0]!.error.code, -32020)
        assert.include(noName.messages[0]!.error.message, "Mcp-Name")
        const unknown = yield* post(port, 4, "tools/list", {
          _meta: { "io.modelcontextprotocol/protocolVersion": "2099-01-01" }
        })
        assert.strictEqual(unknown.messages[0]!.error.code, -32022)
        assert.deepStrictEqual(unknown.messages[0]!.error.data.supported, ["2026-07-28"])
        // A header that disagrees with the body is -32020 even when the body's version is unknown (the headers are
        // what a proxy routed by).
        const disagrees = yield* post(
          port,
          4,
          "server/discover",
          { _meta: { "io.modelcontextprotocol/protocolVersion": "2099-01-01" } },
          { "mcp-protocol-version": "2026-07-28" }
        )
        assert.strictEqual(disagrees.status, 400)
        assert.strictEqual(disagrees.messages[0]!.error.code, -32020)
        // Methods the era removed (and unknown ones) are 404 with -32601 in the body.
        for (const method of ["ping", "initialize", "logging/setLevel", "no/such"]) {
          const removed = yield* post(port, 4, method, {})
          assert.strictEqual(removed.status, 404)
          assert.strictEqual(removed.messages[0]!.error.code, -32601)
        }

        const echo = yield* post(
          port,
          5,
          "tools/call",
          { name: "stub__echo", arguments: { text: "hi" } },
          { "mcp-name": "stub__echo" }
        )
        assert.deepStrictEqual(echo.messages[0]!.result.content, [{ type: "text", text: "echo:hi" }])
        assert.strictEqual(echo.messages[0]!.result.resultType, "complete")

        const slow = yield* post(
          port,
          6,
          "tools/call",
          { name: "stub__slow", arguments: { ms: 100, steps: 2 }, _meta: { progressToken: "p" } },
          { "mcp-name": "stub__slow" }
        )
        assert.match(String(slow.headers["content-type"]), /text\/event-stream/)
        assert.strictEqual(slow.messages.filter((message) => message.method === "notifications/progress").length, 2)
        assert.strictEqual(slow.messages.at(-1)!.id, 6)

        const ask = { name: "stub__ask", arguments: { method: "elicitation/create" } }
        const first = yield* post(port, 7, "tools/call", ask, { "mcp-name": "stub__ask" })
        const required = first.messages[0]!.result
        assert.strictEqual(required.resultType, "input_required")
        const [key] = Object.keys(required.inputRequests)
        const retry = {
          ...ask,
          inputResponses: { [key!]: { action: "accept", content: { name: "Ada" } } },
          requestState: required.requestState
        }
        const done = yield* post(port, 8, "tools/call", retry, { "mcp-name": "stub__ask" })
        assert.strictEqual(done.messages[0]!.result.content[0].text, `ok {"action":"accept","content":{"name":"Ada"}}`)
        const replay = yield* post(port, 9, "tools/call", retry, { "mcp-name": "stub__ask" })
        assert.include(replay.messages[0]!.error.message, "already used")

        // A legacy host on the same endpoint: initialize opens a session, as before.
        const legacy = yield* rawRequest(port, { body: initializeBody })
        assert.strictEqual(legacy.status, 200)
        assert.isString(legacy.headers["mcp-session-id"])

        // An SDK v2 host pinned to the modern era, over HTTP.
        const client = new Client(
          { name: "v2-http", version: "1" },
          { versionNegotiation: { mode: { pin: "2026-07-28" } } }
        )
        yield* Effect.promise(() => client.connect(new StreamableHTTPClientTransport(url)))
        const called = (yield* Effect.promise(() =>
          client.callTool({ name: "stub__echo", arguments: { text: "v2" } })
        )) as Json
        assert.deepStrictEqual(called.content, [{ type: "text", text: "echo:v2" }])
        yield* Effect.promise(() => client.close())
      }),
    90_000
  )

  it.scopedLive(
    "audit: a modern call on /mcp/<profile> with a named token names both, as a legacy session's call does",
    () =>
      Effect.gen(function* () {
        const state = tempDir()
        const config = writeConfig(`
[sources.stub]
command = ${stubCommand()}

[profiles.code]
sources = ["stub"]

[http.tokens.alice]
token = "alice-secret-token"
profiles = ["code"]
`)
        const { port, url } = yield* startDaemon(config, { env: { CLAWTOOL_STATE_DIR: state } })
        const authorization = "Bearer alice-secret-token"
        const modern = yield* post(
          port,
          1,
          "tools/call",
          { name: "stub__echo", arguments: { text: "modern" } },
          { "mcp-name": "stub__echo", authorization },
          "/mcp/code"
        )
        assert.strictEqual(modern.messages[0]!.result.content[0].text, "echo:modern")
        const { client } = yield* httpClient(new URL("/mcp/code", url), { token: "alice-secret-token" })
        yield* Effect.promise(() => client.callTool({ name: "stub__echo", arguments: { text: "legacy" } }))
        const file = path.join(state, "audit.jsonl")
        const lines = () =>
          fs.existsSync(file)
            ? fs
                .readFileSync(file, "utf8")
                .split("\n")
                .filter((line) => line !== "")
                .map((line) => JSON.parse(line) as Json)
            : []
        yield* eventually(() => lines().length >= 2, 20_000, "two audit lines")
        const byClient = Object.fromEntries(lines().map((line) => [line.client, line]))
        for (const client of ["http-host", "raw"]) {
          assert.strictEqual(byClient[client]?.profile, "code", client)
          assert.strictEqual(byClient[client]?.token, "alice", client)
        }
      }),
    90_000
  )

  it.scopedLive(
    "subscriptions/listen: resources/updated and tools list_changed on the listen's stream, per profile; closing frees it",
    () =>
      Effect.gen(function* () {
        const config = writeConfig(listenConfig(`["*"]`))
        const save = (text: string) => {
          fs.writeFileSync(`${config}.tmp`, text)
          fs.renameSync(`${config}.tmp`, config)
        }
        const { url } = yield* startDaemon(config)
        const whole = yield* modernClient(url)
        const chat = yield* modernClient(new URL("/mcp/chat", url))
        const heard = { whole: [] as Array<Json>, chat: [] as Array<Json> }
        for (const [name, client] of [
          ["whole", whole],
          ["chat", chat]
        ] as const) {
          // Every source settled before the listens open: what they announce is a change after that.
          yield* pollUntil(
            Effect.promise(() => client.listTools()),
            (listed) => listed.tools.some((tool) => tool.name === "stub__echo"),
            `${name}'s stub tools`
          )
          for (const method of ["notifications/tools/list_changed", "notifications/resources/updated"] as const) {
            client.setNotificationHandler(method, (note) => void heard[name].push(note as Json))
          }
        }
        const filter = { toolsListChanged: true, resourceSubscriptions: ["stub://info"] }
        const wholeListen = yield* Effect.promise(() => whole.listen(filter))
        assert.deepStrictEqual(wholeListen.honoredFilter, filter)
        yield* Effect.promise(() => chat.listen(filter))
        const subscribed = () =>
          Effect.map(
            Effect.promise(() => whole.callTool({ name: "stub__subscribed", arguments: {} })),
            (answer) => (answer as Json).content[0].text as string
          )
        yield* pollUntil(subscribed(), (text) => text.includes("stub://info"), "the child's subscription")

        // resources/updated for the subscribed URI, on each listen's stream, tagged with its subscription id.
        yield* Effect.promise(() => whole.callTool({ name: "stub__touch", arguments: {} }))
        const updated = (name: "whole" | "chat") =>
          heard[name].filter((note) => note.method === "notifications/resources/updated")
        yield* eventually(() => updated("whole").length === 1 && updated("chat").length === 1, 10_000, "the updates")
        assert.strictEqual(updated("whole")[0]!.params.uri, "stub://info")
        assert.match(updated("whole")[0]!.params._meta["io.modelcontextprotocol/subscriptionId"], /^listen:/)

        // Profile-aware: chat's view loses stub.echo, the whole catalog does not change; then a new source changes only
        // the whole catalog (chat serves stub alone).
        const changed = (name: "whole" | "chat") =>
          heard[name].filter((note) => note.method === "notifications/tools/list_changed").length
        save(listenConfig(`["*", "!stub.echo"]`))
        yield* eventually(() => changed("chat") === 1, 20_000, "chat's list_changed")
        save(listenConfig(`["*", "!stub.echo"]`, `[sources.more]\ncommand = ${stubCommand("--name", "more")}\n`))
        yield* eventually(() => changed("whole") === 1, 20_000, "the whole catalog's list_changed")
        assert.deepStrictEqual({ whole: changed("whole"), chat: changed("chat") }, { whole: 1, chat: 1 })

        // Closing frees the stream: the whole listen's close leaves chat's subscription at the child (counted), closing
        // the chat client ends the last one and the child is unsubscribed.
        yield* Effect.promise(() => wholeListen.close())
        yield* Effect.promise(() => chat.close())
        yield* pollUntil(subscribed(), (text) => !text.includes("stub://info"), "the child unsubscribed")
      }),
    90_000
  )

  it.scopedLive(
    "the request's log level: a child's messages during the call come on its SSE response at or above it, before the result",
    () =>
      Effect.gen(function* () {
        const config = writeConfig(`[sources.stub]\ncommand = ${stubCommand("--logging")}\n`)
        const { port } = yield* startDaemon(config)
        const log = (id: number, level: string, text: string) =>
          post(
            port,
            id,
            "tools/call",
            {
              name: "stub__log",
              arguments: { level, text },
              _meta: { "io.modelcontextprotocol/logLevel": "warning" }
            },
            { "mcp-name": "stub__log" }
          )
        const below = yield* log(1, "info", "below")
        assert.deepStrictEqual(
          below.messages.map((message) => message.method ?? message.id),
          [1]
        )
        const above = yield* log(2, "error", "above")
        assert.match(String(above.headers["content-type"]), /text\/event-stream/)
        assert.deepStrictEqual(
          above.messages.map((message) => message.method ?? message.id),
          ["notifications/message", 2]
        )
        assert.deepStrictEqual(above.messages[0]!.params, {
          level: "error",
          logger: "stub",
          data: "above",
          _meta: { clawtool: { logger: "stub-logger" } }
        })
      }),
    60_000
  )

  it.scopedLive(
    "a reload that removes a token ends the listens it let in, with their result; another token's listen stays open",
    () =>
      Effect.gen(function* () {
        const tokens = (names: ReadonlyArray<string>) =>
          names.map((name) => `[http.tokens.${name}]\ntoken = "${name}-secret-token"\nprofiles = ["chat"]\n`).join("\n")
        const configText = (names: ReadonlyArray<string>) =>
          `[sources.stub]\ncommand = ${stubCommand()}\n\n[profiles.chat]\nsources = ["stub"]\n\n${tokens(names)}`
        const config = writeConfig(configText(["dave", "erin"]))
        const daemon = yield* startDaemon(config)
        const dave = yield* openListen(daemon.port, "/mcp/chat", "dave-secret-token")
        const erin = yield* openListen(daemon.port, "/mcp/chat", "erin-secret-token")
        fs.writeFileSync(`${config}.tmp`, configText(["erin"]))
        fs.renameSync(`${config}.tmp`, config)
        const body = yield* Deferred.await(dave.ended).pipe(Effect.timeout("20 seconds"))
        // The acknowledgement, then the listen's result: the stream was ended by clawtool, not cut.
        const messages = messagesOf(body) as ReadonlyArray<Json>
        assert.strictEqual(messages.at(-1)?.id, 7)
        assert.property(messages.at(-1), "result")
        yield* pollUntil(
          Effect.sync(() => daemon.stderr()),
          (text) => text.includes("removed [dave], changed []; 0 session(s) ended, 1 listen(s) ended"),
          "the tokens' reload line"
        )
        assert.isFalse(yield* Deferred.isDone(erin.ended))
      }),
    60_000
  )
})
