import { assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as path from "node:path"
import { ensureBuilt, writeConfig } from "../lib/cli.js"
import { modernHost, modernMeta } from "../lib/modernHost.js"
import { eventually, root, stubCommand } from "../lib/sources.js"
import { type Json, wireHost } from "../lib/wire.js"

/**
 * A 2026-07-28 host in front of `clawtool serve` (ADR 032): an SDK v2 client pinned to the modern era, and raw lines
 * for what the SDK would hide (-32022, the era a connection's first request pins). The child is the legacy (SDK v1)
 * stub server: clawtool bridges the eras.
 */

beforeAll(ensureBuilt, 120_000)

describe("modern host over stdio", () => {
  it.scopedLive(
    "discover, stamped lists, calls on the relay and the SDK path (progress), cancellation",
    () =>
      Effect.gen(function* () {
        const config = writeConfig(`[sources.stub]\ncommand = ${stubCommand()}\n`)
        const client = yield* modernHost(config)
        assert.strictEqual(client.getProtocolEra(), "modern")
        assert.strictEqual(client.getNegotiatedProtocolVersion(), "2026-07-28")
        const discover = client.getDiscoverResult() as Json
        assert.deepStrictEqual(discover.supportedVersions, ["2026-07-28"])
        assert.deepStrictEqual(discover.capabilities.tools, { listChanged: true })
        const tools = (yield* Effect.promise(() => client.listTools())) as Json
        assert.isTrue(tools.tools.some((tool: Json) => tool.name === "stub__echo"))
        assert.strictEqual(tools.cacheScope, "private")
        assert.isNumber(tools.ttlMs)
        // A plain call takes the relay: its result still carries clawtool's serverInfo.
        const echo = (yield* Effect.promise(() =>
          client.callTool({ name: "stub__echo", arguments: { text: "hi" } })
        )) as Json
        assert.deepStrictEqual(echo.content, [{ type: "text", text: "echo:hi" }])
        assert.strictEqual(echo._meta["io.modelcontextprotocol/serverInfo"].name, "clawtool")
        // The envelope stays at clawtool: the legacy child sees none of it.
        const meta = (yield* Effect.promise(() => client.callTool({ name: "stub__meta", arguments: {} }))) as Json
        assert.deepStrictEqual(meta.structuredContent.meta, {})
        // Progress asked: the SDK path, progress under the host's token.
        const progress: Array<unknown> = []
        const slow = (yield* Effect.promise(() =>
          client.callTool(
            { name: "stub__slow", arguments: { ms: 150, steps: 3 } },
            { onprogress: (p) => void progress.push(p) }
          )
        )) as Json
        assert.deepStrictEqual(slow.content, [{ type: "text", text: "slept 150ms" }])
        // The SDK client drops a progress that shares a read with its result (http-and-remote.md §4.4): at least one.
        assert.isAbove(progress.length, 0)
        // Cancelled by the host: the child hears it.
        const abort = new AbortController()
        const cancelled = Effect.promise(() =>
          client.callTool({ name: "stub__slow", arguments: { ms: 20_000 } }, { signal: abort.signal }).then(
            () => "answered",
            () => "cancelled"
          )
        )
        const fiber = yield* Effect.fork(cancelled)
        yield* Effect.sleep("300 millis")
        abort.abort("enough")
        assert.strictEqual(yield* fiber.await.pipe(Effect.flatten), "cancelled")
        let count = "0"
        for (let i = 0; i < 100 && count === "0"; i++) {
          const answer = (yield* Effect.promise(() =>
            client.callTool({ name: "stub__cancelled", arguments: {} })
          )) as Json
          count = answer.content[0].text
          if (count === "0") yield* Effect.sleep("50 millis")
        }
        assert.strictEqual(count, "1")
      }),
    60_000
  )

  it.scopedLive(
    "subscriptions/listen: resources/updated of the subscribed URI, tagged with the subscription",
    () =>
      Effect.gen(function* () {
        const config = writeConfig(`[sources.stub]\ncommand = ${stubCommand("--resources", "--subscribe")}\n`)
        const client = yield* modernHost(config)
        const updates: Array<Json> = []
        client.setNotificationHandler("notifications/resources/updated", (note) => void updates.push(note as Json))
        const subscription = yield* Effect.promise(() =>
          client.listen({ resourceSubscriptions: ["stub://info"], toolsListChanged: true })
        )
        assert.deepStrictEqual(subscription.honoredFilter, {
          toolsListChanged: true,
          resourceSubscriptions: ["stub://info"]
        })
        const subscribed = (yield* Effect.promise(() =>
          client.callTool({ name: "stub__subscribed", arguments: {} })
        )) as Json
        assert.include(subscribed.content[0].text, "stub://info")
        yield* Effect.promise(() => client.callTool({ name: "stub__touch", arguments: {} }))
        for (let i = 0; i < 100 && updates.length === 0; i++) yield* Effect.sleep("20 millis")
        assert.strictEqual(updates.length, 1)
        assert.strictEqual(updates[0]!.params.uri, "stub://info")
        yield* Effect.promise(() => subscription.close())
        // Closed: the child is unsubscribed.
        let left = "stub://info"
        for (let i = 0; i < 100 && left.includes("stub://info"); i++) {
          const answer = (yield* Effect.promise(() =>
            client.callTool({ name: "stub__subscribed", arguments: {} })
          )) as Json
          left = answer.content[0].text
          if (left.includes("stub://info")) yield* Effect.sleep("20 millis")
        }
        assert.notInclude(left, "stub://info")
      }),
    60_000
  )

  it.scopedLive(
    "raw lines: an unknown version is -32022 and pins nothing; the first modern request pins the era",
    () =>
      Effect.gen(function* () {
        const config = writeConfig(`[sources.stub]\ncommand = ${stubCommand()}\n`)
        const host = yield* wireHost(config)
        const unknown = JSON.parse(
          yield* host.request(1, "server/discover", {
            _meta: { ...modernMeta, "io.modelcontextprotocol/protocolVersion": "2099-01-01" }
          })
        ) as Json
        assert.deepStrictEqual(unknown.error, {
          code: -32022,
          message: "Unsupported protocol version: 2099-01-01",
          data: { supported: ["2026-07-28"], requested: "2099-01-01" }
        })
        const discover = JSON.parse(yield* host.request(2, "server/discover", { _meta: modernMeta })) as Json
        assert.strictEqual(discover.result.resultType, "complete")
        assert.deepStrictEqual(discover.result._meta["io.modelcontextprotocol/serverInfo"].name, "clawtool")
        // Pinned modern: initialize, ping and logging/setLevel are not methods of this era, and every request needs
        // its envelope.
        const initialize = JSON.parse(
          yield* host.request(3, "initialize", {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "late", version: "1" }
          })
        ) as Json
        assert.strictEqual(initialize.error.code, -32022)
        const ping = JSON.parse(yield* host.request(4, "ping", { _meta: modernMeta })) as Json
        assert.strictEqual(ping.error.code, -32601)
        const list = JSON.parse(yield* host.request(5, "tools/list", { _meta: modernMeta })) as Json
        assert.strictEqual(list.result.cacheScope, "private")
        // The catalog's pre-serialised list is spliced: the stamp sits in front of the tools.
        assert.match(host.responsesTo(5)[0]!, /^\{"jsonrpc":"2.0","id":5,"result":\{"resultType":"complete","ttlMs":/)
      }),
    60_000
  )

  it.scopedLive(
    "MRTR: a child's elicitation in the middle of a call reaches the modern host as input_required and back",
    () =>
      Effect.gen(function* () {
        const config = writeConfig(`[sources.stub]\ncommand = ${stubCommand("--reverse")}\n`)
        const client = yield* modernHost(config, { elicitation: { form: {} } })
        const asked: Array<Json> = []
        client.setRequestHandler("elicitation/create", async (request) => {
          asked.push(request.params as Json)
          return { action: "accept", content: { name: "Ada" } }
        })
        const answer = (yield* Effect.promise(() =>
          client.callTool({ name: "stub__ask", arguments: { method: "elicitation/create" } })
        )) as Json
        assert.strictEqual(answer.content[0].text, `ok {"action":"accept","content":{"name":"Ada"}}`)
        assert.strictEqual(asked.length, 1)
        assert.strictEqual(asked[0]!.message, "Your name?")
      }),
    60_000
  )

  it.scopedLive(
    "MRTR on raw lines: the retry resumes the parked call once; a replayed or forged requestState is an error",
    () =>
      Effect.gen(function* () {
        const config = writeConfig(`[sources.stub]\ncommand = ${stubCommand("--reverse")}\n`)
        const host = yield* wireHost(config)
        const meta = {
          ...modernMeta,
          "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } }
        }
        const params = { name: "stub__ask", arguments: { method: "elicitation/create" }, _meta: meta }
        const first = JSON.parse(yield* host.request(1, "tools/call", params)) as Json
        assert.strictEqual(first.result.resultType, "input_required")
        const [key] = Object.keys(first.result.inputRequests)
        assert.strictEqual(first.result.inputRequests[key!].method, "elicitation/create")
        const state = first.result.requestState as string
        const inputResponses = { [key!]: { action: "accept", content: { name: "Ada" } } }
        const done = JSON.parse(
          yield* host.request(2, "tools/call", { ...params, inputResponses, requestState: state })
        ) as Json
        assert.strictEqual(done.result.resultType, "complete")
        assert.strictEqual(done.result.content[0].text, `ok {"action":"accept","content":{"name":"Ada"}}`)
        const replayed = JSON.parse(
          yield* host.request(3, "tools/call", { ...params, inputResponses, requestState: state })
        ) as Json
        assert.strictEqual(replayed.error.code, -32602)
        assert.include(replayed.error.message, "already used")
        const [payload] = state.split(".")
        const forged = JSON.parse(
          yield* host.request(4, "tools/call", { ...params, inputResponses, requestState: `${payload}.AAAA` })
        ) as Json
        assert.strictEqual(forged.error.code, -32602)
        assert.include(forged.error.message, "signature mismatch")
      }),
    60_000
  )

  it.scopedLive(
    "a legacy host still opens with initialize and gets -32601 for server/discover, as before",
    () =>
      Effect.gen(function* () {
        const config = writeConfig(`[sources.stub]\ncommand = ${stubCommand()}\n`)
        const host = yield* wireHost(config)
        const initialize = JSON.parse(
          yield* host.request(1, "initialize", {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "legacy", version: "1" }
          })
        ) as Json
        assert.strictEqual(initialize.result.protocolVersion, "2025-06-18")
        yield* host.send({ jsonrpc: "2.0", method: "notifications/initialized" })
        const discover = JSON.parse(yield* host.request(2, "server/discover", { _meta: modernMeta })) as Json
        assert.strictEqual(discover.error.code, -32601)
        const list = JSON.parse(yield* host.request(3, "tools/list", { _meta: modernMeta })) as Json
        assert.strictEqual(list.result.resultType, undefined)
        assert.strictEqual(list.result.ttlMs, undefined)
      }),
    60_000
  )

  it.scopedLive(
    "server/discover says what initialize says: the same instructions, capabilities (less logging and tasks) and serverInfo",
    () =>
      Effect.gen(function* () {
        const config = writeConfig(`[sources.stub]\ncommand = ${stubCommand()}\n`)
        const initialize = (
          JSON.parse(
            yield* (yield* wireHost(config)).request(1, "initialize", {
              protocolVersion: "2025-11-25",
              capabilities: {},
              clientInfo: { name: "legacy", version: "1" }
            })
          ) as Json
        ).result
        const discover = (
          JSON.parse(yield* (yield* wireHost(config)).request(1, "server/discover", { _meta: modernMeta })) as Json
        ).result
        // clawtool gives a legacy host no instructions (ADR 032), and a modern host the same.
        assert.strictEqual(discover.instructions, initialize.instructions)
        assert.strictEqual("instructions" in discover, "instructions" in initialize)
        const { logging, tasks, ...served } = initialize.capabilities
        assert.deepStrictEqual([logging, tasks === undefined], [{}, false])
        assert.deepStrictEqual(discover.capabilities, served)
        assert.deepStrictEqual(discover._meta["io.modelcontextprotocol/serverInfo"], initialize.serverInfo)
      }),
    60_000
  )

  it.scopedLive(
    "the request's log level: a child's messages during the call at or above it reach the host, below it not; a modern child gets it",
    () =>
      Effect.gen(function* () {
        const modernChild = JSON.stringify([process.execPath, path.join(root, "test/fixtures/modern-server.mjs")])
        const config = writeConfig(
          `[sources.stub]\ncommand = ${stubCommand("--logging")}\n\n[sources.modern]\ncommand = ${modernChild}\nprotocol = "modern"\n`
        )
        const host = yield* wireHost(config)
        const meta = { ...modernMeta, "io.modelcontextprotocol/logLevel": "warning" }
        const call = (id: number, name: string, level: string, text: string) =>
          Effect.map(
            host.request(id, "tools/call", { name, arguments: { level, text }, _meta: meta }),
            (line) => JSON.parse(line) as Json
          )
        const said = () => host.notifications("notifications/message").map((note) => note.params as Json)
        // A legacy child logs whatever it is asked to: clawtool filters by the request's level.
        yield* call(1, "stub__log", "info", "below")
        yield* call(2, "stub__log", "error", "above")
        yield* eventually(() => said().some((note) => note.data === "above"), 10_000, "the error message")
        // Related to its call: written before the call's result.
        const at = (find: (line: string) => boolean) => host.lines.findIndex(find)
        assert.isBelow(
          at((line) => line.includes(`"data":"above"`)),
          at((line) => line.startsWith(`{"jsonrpc":"2.0","id":2,`))
        )
        assert.deepStrictEqual(
          said().map((note) => [note.level, note.logger, note.data]),
          [["error", "stub", "above"]]
        )
        // A modern child gets the level in its own envelope (and filters itself).
        const modern = yield* call(3, "modern__log", "warning", "modern-above")
        assert.strictEqual(modern.result.content[0].text, "level:warning")
        yield* eventually(
          () => said().some((note) => note.data === "modern-above"),
          10_000,
          "the modern child's message"
        )
        yield* call(4, "modern__log", "info", "modern-below")
        // Without a level in the envelope: no messages for the call at all.
        yield* Effect.map(
          host.request(5, "tools/call", {
            name: "stub__log",
            arguments: { level: "error", text: "unasked" },
            _meta: modernMeta
          }),
          (line) => JSON.parse(line) as Json
        )
        yield* call(6, "stub__log", "critical", "last")
        yield* eventually(() => said().some((note) => note.data === "last"), 10_000, "the last message")
        assert.deepStrictEqual(
          said().map((note) => note.data),
          ["above", "modern-above", "last"]
        )
      }),
    60_000
  )
})
