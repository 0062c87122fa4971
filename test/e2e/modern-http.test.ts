import { assert, beforeAll, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/client"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { Effect } from "effect"
import { ensureBuilt, writeConfig } from "../lib/cli.js"
import { initializeBody, messagesOf, rawRequest, startDaemon } from "../lib/daemon.js"
import { stubCommand } from "../lib/sources.js"

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

const post = (port: number, id: number, method: string, params: Json, headers: Record<string, string> = {}) =>
  Effect.map(
    rawRequest(port, {
      headers: { "mcp-method": method, ...headers },
      body: JSON.stringify({ jsonrpc: "2.0", id, method, params: { ...params, _meta: { ...meta, ...params._meta } } })
    }),
    (response) => ({ ...response, messages: messagesOf(response.body) as ReadonlyArray<Json> })
  )

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

        const listen = yield* post(port, 10, "subscriptions/listen", { notifications: { toolsListChanged: true } })
        assert.strictEqual(listen.messages[0]!.error.code, -32601)
        assert.include(listen.messages[0]!.error.message, "stdio hosts only")

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
})
