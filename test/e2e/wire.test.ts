import { assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, writeConfig } from "../lib/cli.js"
import { handshake, type Id, type Json, wireCommand, wireHost, type WireHost } from "../lib/wire.js"

/**
 * `clawtool serve` seen by a host that speaks raw JSON-RPC lines (test/lib/wire.ts), not the SDK client: the SDK
 * normalises what it receives (a progress token, an id, an error's text), so only the bytes show what clawtool sends.
 * The child is test/fixtures/wire-server.mjs, which records every message it gets. Plain calls take the relay
 * (ADR 009: the child sees string ids `clawtool-N`); calls with a progressToken take the SDK path (numeric ids).
 */

beforeAll(ensureBuilt, 120_000)

const parse = (line: string) => JSON.parse(line) as Json

/** A tools/call's result text (the first content item). */
const textOf = (line: string): string => parse(line).result.content[0].text

const call = (host: WireHost, id: Id, params: Json) => host.request(id, "tools/call", params)

/** Messages the child received, oldest first (its own `seen` tool, called on the relay). */
let seenCalls = 0
const seenByChild = (host: WireHost, method: string) =>
  Effect.map(
    call(host, `seen-${++seenCalls}`, { name: "wire__seen", arguments: { method } }),
    (line) => JSON.parse(textOf(line)) as Array<Json>
  )

/** Polls the child's record until `find` returns something. */
const childSees = <A>(host: WireHost, method: string, find: (messages: Array<Json>) => A | undefined, what: string) =>
  Effect.gen(function* () {
    const until = Date.now() + 30_000
    for (;;) {
      const found = find(yield* seenByChild(host, method))
      if (found !== undefined) return found
      if (Date.now() > until) return yield* Effect.dieMessage(`timed out waiting for the child to see ${what}`)
      yield* Effect.sleep("20 millis")
    }
  })

/** Ends the session and checks every line clawtool wrote: one compact JSON-RPC 2.0 object, request/notification/response. */
const closeAndCheckLines = (host: WireHost) =>
  Effect.gen(function* () {
    const exit = yield* host.close
    assert.strictEqual(exit.code, 0)
    assert.isAbove(host.lines.length, 0)
    for (const line of host.lines) {
      const message = JSON.parse(line) as unknown
      assert.isTrue(typeof message === "object" && message !== null && !Array.isArray(message), line)
      const m = message as Json
      // Exactly the bytes JSON.stringify gives: one object, no padding, nothing after it.
      assert.strictEqual(JSON.stringify(m), line)
      assert.strictEqual(m.jsonrpc, "2.0", line)
      const keys = Object.keys(m).sort()
      const shape =
        "method" in m
          ? "id" in m
            ? ["id", "jsonrpc", "method", "params"]
            : ["jsonrpc", "method", "params"]
          : "error" in m
            ? ["error", "id", "jsonrpc"]
            : ["id", "jsonrpc", "result"]
      assert.deepStrictEqual(
        keys.filter((key) => key !== "params"),
        shape.filter((key) => key !== "params"),
        line
      )
      if ("id" in m) assert.isTrue(typeof m.id === "string" || typeof m.id === "number" || m.id === null, line)
    }
  })

const config = () => writeConfig(`[sources.wire]\ncommand = ${wireCommand("--resource", "wire://doc")}\n`)

/** serve with the wire fixture, handshaken (initialize with id "init"), tools listed; its config removed at the end. */
const session = Effect.gen(function* () {
  const file = config()
  yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(path.dirname(file), { recursive: true, force: true })))
  const host = yield* wireHost(file)
  const init = parse(yield* handshake(host, "init"))
  assert.strictEqual(init.result.serverInfo.name, "clawtool")
  yield* host.request("list", "tools/list")
  return host
})

describe("a raw JSON-RPC host (no SDK client) sees exactly these bytes", () => {
  it.scopedLive(
    "ids of both types (0 included) are echoed exactly; request _meta reaches the child unchanged on both paths",
    () =>
      Effect.gen(function* () {
        const host = yield* wireHost(config())
        // initialize with id 0: answered with the number 0, not "0" or null.
        assert.strictEqual(parse(yield* handshake(host, 0)).id, 0)
        yield* host.request("", "tools/list")
        assert.strictEqual(parse(host.responsesTo("")[0]!).id, "")

        const meta = { "example.com/k": { a: [1, "x", null] }, "example.com/zero": 0, note: "" }
        // The relay: the child's request is the host's, with the relay's own string id.
        const relayed = parse(yield* call(host, 0, { name: "wire__request", arguments: { n: 1 }, _meta: meta }))
        assert.strictEqual(relayed.id, 0)
        const atChild = JSON.parse(relayed.result.content[0].text)
        assert.match(atChild.id, /^clawtool-\d+$/)
        assert.deepStrictEqual(atChild.params, { name: "request", arguments: { n: 1 }, _meta: meta })

        // The SDK path (a progressToken): the host's keys arrive untouched, only the token is the SDK's own number.
        for (const id of ["7", 7] as const) {
          const line = yield* call(host, id, {
            name: "wire__request",
            arguments: { n: 2 },
            _meta: { ...meta, progressToken: "tok-1" }
          })
          assert.strictEqual(parse(line).id, id)
          const seen = JSON.parse(textOf(line))
          assert.isNumber(seen.id)
          const { progressToken, ...rest } = seen.params._meta
          assert.strictEqual(progressToken, seen.id)
          assert.deepStrictEqual({ ...seen.params, _meta: rest }, { name: "request", arguments: { n: 2 }, _meta: meta })
        }
        // Each id got exactly one answer, of its own type.
        assert.strictEqual(host.responsesTo("7").length, 1)
        assert.strictEqual(host.responsesTo(7).length, 1)
        yield* closeAndCheckLines(host)
      }),
    60_000
  )

  it.scopedLive("a child result's _meta and extra fields reach the host unchanged, on the relay and the SDK path", () =>
    Effect.gen(function* () {
      const host = yield* session
      const expected = {
        content: [{ type: "text", text: "with meta" }],
        _meta: { "example.com/vendor": { nested: [1, "two", null, { deep: true }] }, "example.com/zero": 0 },
        "x-extra": "kept"
      }
      assert.deepStrictEqual(parse(yield* call(host, "plain", { name: "wire__result_meta" })).result, expected)
      const sdk = yield* call(host, "sdk", { name: "wire__result_meta", _meta: { progressToken: 1 } })
      assert.deepStrictEqual(parse(sdk).result, expected)
      // prompts/get (forwarded): the child's result _meta too.
      const prompt = parse(yield* host.request(5, "prompts/get", { name: "wire__greet" }))
      assert.deepStrictEqual(prompt.result, {
        messages: [{ role: "user", content: { type: "text", text: "hello from wire" } }],
        _meta: { "example.com/prompt": "wire" }
      })
      yield* closeAndCheckLines(host)
    })
  )

  it.scopedLive(
    "progress comes back under the host's token, its type and value kept: string and number, tools/call and forwarded methods",
    () =>
      Effect.gen(function* () {
        const host = yield* session
        const progressFor = (token: Id) =>
          host.notifications("notifications/progress").filter((note) => note.params.progressToken === token)
        const steps = (token: Id, total: number) =>
          Array.from({ length: total }, (_, i) => ({
            method: "notifications/progress",
            params: { progress: i + 1, total, message: `step ${i + 1}/${total}`, progressToken: token },
            jsonrpc: "2.0"
          }))

        // tools/call (a progressToken always takes the SDK path): the child gets the SDK's numeric token.
        const byString = yield* call(host, "s", {
          name: "wire__progress",
          arguments: { steps: 2 },
          _meta: { progressToken: "tok-1" }
        })
        assert.match(textOf(byString), /^progress \d+$/)
        const byNumber = yield* call(host, 8, {
          name: "wire__progress",
          arguments: { steps: 2 },
          _meta: { progressToken: 7 }
        })
        assert.match(textOf(byNumber), /^progress \d+$/)
        // The number token 0 (falsy) is a token too.
        yield* call(host, "z", { name: "wire__progress", arguments: { steps: 1 }, _meta: { progressToken: 0 } })

        // Forwarded methods: prompts/get and resources/read.
        yield* host.request("p", "prompts/get", { name: "wire__greet", _meta: { progressToken: "prompt-tok" } })
        yield* host.request("r", "resources/read", { uri: "wire://doc", _meta: { progressToken: 42 } })

        assert.deepStrictEqual(progressFor("tok-1"), steps("tok-1", 2))
        assert.deepStrictEqual(progressFor(7), steps(7, 2))
        assert.deepStrictEqual(progressFor(0), steps(0, 1))
        assert.deepStrictEqual(progressFor("prompt-tok"), steps("prompt-tok", 1))
        assert.deepStrictEqual(progressFor(42), steps(42, 1))
        // Nothing under another token or type ("7" for 7, the child's own numbers).
        assert.strictEqual(host.notifications("notifications/progress").length, 7)

        // A plain call (the relay) asks the child for no progress, and the host gets none.
        assert.strictEqual(
          textOf(yield* call(host, "plain", { name: "wire__progress", arguments: {} })),
          "progress none"
        )
        assert.strictEqual(host.notifications("notifications/progress").length, 7)
        yield* closeAndCheckLines(host)
      }),
    60_000
  )

  it.scopedLive(
    "a host cancel reaches the child as a cancel of the child-side id, on both paths; the cancelled id is never answered",
    () =>
      Effect.gen(function* () {
        const host = yield* session
        const hangAt = (check: (id: unknown) => boolean) =>
          childSees(
            host,
            "tools/call",
            (calls) => calls.find((m) => m.params.name === "hang" && check(m.id))?.id as Id | undefined,
            "the hang call"
          )
        const cancelAt = (childId: Id) =>
          childSees(
            host,
            "notifications/cancelled",
            (cancels) => cancels.find((m) => m.params.requestId === childId),
            `the cancel of ${JSON.stringify(childId)}`
          )

        // The relay: host id "h", child id clawtool-N.
        yield* host.send({ jsonrpc: "2.0", id: "h", method: "tools/call", params: { name: "wire__hang" } })
        const relayId = yield* hangAt((id) => typeof id === "string" && id.startsWith("clawtool-"))
        yield* host.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "h", reason: "x" } })
        const relayCancel = yield* cancelAt(relayId)
        assert.isString(relayCancel.params.reason)

        // The SDK path: host id 5 (a number), child id a number of the SDK's.
        yield* host.send({
          jsonrpc: "2.0",
          id: 5,
          method: "tools/call",
          params: { name: "wire__hang", _meta: { progressToken: "p5" } }
        })
        const sdkId = yield* hangAt((id) => typeof id === "number")
        yield* host.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 5, reason: "y" } })
        yield* cancelAt(sdkId)

        // Exactly one cancel per call, none for another id.
        const cancels = yield* seenByChild(host, "notifications/cancelled")
        assert.deepStrictEqual(
          cancels.map((m) => m.params.requestId),
          [relayId, sdkId]
        )
        // The child answered both anyway ("late answer", before the seen answer above): dropped, for the whole session.
        yield* closeAndCheckLines(host)
        assert.deepStrictEqual(host.responsesTo("h"), [])
        assert.deepStrictEqual(host.responsesTo(5), [])
        assert.isFalse(host.lines.some((line) => line.includes("late answer")))
      }),
    60_000
  )

  it.scopedLive(
    "a message with an id is a request whatever its method: notifications/* with an id is answered once, obeyed never",
    () =>
      Effect.gen(function* () {
        const host = yield* session
        yield* host.send({ jsonrpc: "2.0", id: "h", method: "tools/call", params: { name: "wire__hang" } })
        yield* childSees(host, "tools/call", (calls) => calls.find((m) => m.params.name === "hang"), "the hang call")
        // Each method has a notification handler on the host edge (cancels, the SDK's progress, roots) or is one.
        const misnamed: ReadonlyArray<readonly [Id, string, Json]> = [
          ["n1", "notifications/cancelled", { requestId: "h", reason: "a request, not a notification" }],
          [0, "notifications/cancelled", { requestId: "h" }],
          ["n2", "notifications/progress", { progressToken: "h", progress: 1 }],
          ["n3", "notifications/initialized", {}],
          ["n4", "notifications/roots/list_changed", {}]
        ]
        for (const [id, method, params] of misnamed) {
          assert.strictEqual(
            yield* host.request(id, method, params),
            `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":{"code":-32601,"message":"Method not found"}}`
          )
        }
        // An id that is not one (null): an Invalid Request, under id null; the call is not cancelled either.
        yield* host.send({ jsonrpc: "2.0", id: null, method: "notifications/cancelled", params: { requestId: "h" } })
        assert.strictEqual(
          yield* host.responseLine(null),
          '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: not a JSON-RPC 2.0 message"}}'
        )
        // The call runs on: the child was told of no cancel, until the host's real one.
        assert.deepStrictEqual(yield* seenByChild(host, "notifications/cancelled"), [])
        yield* host.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "h" } })
        yield* childSees(host, "notifications/cancelled", (cancels) => cancels[0], "the host's cancel")
        yield* closeAndCheckLines(host)
        for (const [id] of misnamed) assert.lengthOf(host.responsesTo(id), 1)
        assert.lengthOf(host.responsesTo(null), 1)
        assert.deepStrictEqual(host.responsesTo("h"), [])
      }),
    60_000
  )

  it.scopedLive("errors: exact codes and messages, from clawtool and relayed from the child", () =>
    Effect.gen(function* () {
      const host = yield* session

      // Unknown tools: an isError result the agent can read, not a JSON-RPC error.
      assert.deepStrictEqual(parse(yield* call(host, 1, { name: "nope__x" })), {
        result: {
          content: [{ type: "text", text: 'unknown tool "nope__x"' }],
          isError: true,
          _meta: { clawtool: { error: { reason: "NoSuchTool", retryable: false } } }
        },
        jsonrpc: "2.0",
        id: 1
      })
      assert.strictEqual(
        textOf(yield* call(host, 2, { name: "wire__nope" })),
        'source "wire" has no tool listed as "wire__nope"'
      )

      // Bad params: JSON-RPC -32602.
      assert.strictEqual(
        yield* call(host, 3, { arguments: {} }),
        '{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"MCP error -32602: tools/call needs params.name (a string)"}}'
      )
      assert.strictEqual(
        yield* call(host, "4", { name: "wire__request", arguments: [1] }),
        '{"jsonrpc":"2.0","id":"4","error":{"code":-32602,"message":"MCP error -32602: tools/call arguments for \\"wire__request\\" must be an object"}}'
      )

      // The child's own JSON-RPC error on tools/call: the same isError result on the relay and the SDK path.
      const childError = {
        content: [{ type: "text", text: "wire.fail failed: MCP error -32050: backend exploded" }],
        isError: true,
        _meta: { clawtool: { error: { reason: "Child", retryable: false, code: -32050 } } }
      }
      assert.deepStrictEqual(parse(yield* call(host, 5, { name: "wire__fail" })).result, childError)
      const sdkFail = yield* call(host, 6, { name: "wire__fail", _meta: { progressToken: "f" } })
      assert.deepStrictEqual(parse(sdkFail).result, childError)
      // On a forwarded method the child's error is the answer: its code, message and data.
      assert.deepStrictEqual(parse(yield* host.request(7, "prompts/get", { name: "wire__nope" })), {
        jsonrpc: "2.0",
        id: 7,
        error: { code: -32602, message: "no prompt nope", data: { known: ["greet"] } }
      })

      // Framing: clawtool's transport answers lines the SDK would drop.
      yield* host.sendLine("{not json")
      assert.strictEqual(
        yield* host.responseLine(null),
        '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the line is not valid JSON"}}'
      )
      yield* host.send({ jsonrpc: "2.0", id: 9, method: 42 })
      assert.strictEqual(
        yield* host.responseLine(9),
        '{"jsonrpc":"2.0","id":9,"error":{"code":-32600,"message":"Invalid Request: not a JSON-RPC 2.0 message"}}'
      )
      yield* host.send({ jsonrpc: "1.0", id: "v1", method: "ping" })
      assert.strictEqual(
        yield* host.responseLine("v1"),
        '{"jsonrpc":"2.0","id":"v1","error":{"code":-32600,"message":"Invalid Request: not a JSON-RPC 2.0 message"}}'
      )
      // No id to echo: null (a second null-id answer after the parse error's).
      yield* host.send({ jsonrpc: "2.0", method: { not: "a string" } })
      yield* host.request("after", "ping")
      assert.deepStrictEqual(host.responsesTo(null), [
        '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the line is not valid JSON"}}',
        '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: not a JSON-RPC 2.0 message"}}'
      ])
      yield* closeAndCheckLines(host)
    })
  )
})

describe("resources/read when two instances' templates match one URI", () => {
  it.scopedLive("refused with -32602 naming both qualified forms; one match routes; the qualified form routes", () =>
    Effect.gen(function* () {
      const host = yield* wireHost(
        writeConfig(`
          [sources.alpha]
          command = ${wireCommand("--name", "alpha", "--template", "file:///{+path}")}
          [sources.beta]
          command = ${wireCommand("--name", "beta", "--template", "file:///data/{name}")}
        `)
      )
      yield* handshake(host)
      const templates = parse(yield* host.request(1, "resources/templates/list")).result.resourceTemplates
      // Different template strings: nothing clashes, so neither is qualified in the list.
      assert.deepStrictEqual(templates, [
        { uriTemplate: "file:///{+path}", name: "alpha__template-0" },
        { uriTemplate: "file:///data/{name}", name: "beta__template-0" }
      ])
      const read = (id: Id, uri: string) => Effect.map(host.request(id, "resources/read", { uri }), parse)

      assert.deepStrictEqual(
        yield* read(2, "file:///data/x.txt"),
        parse(
          '{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"\\"file:///data/x.txt\\" is served by alpha and beta; use clawtool://alpha/file:///data/x.txt or clawtool://beta/file:///data/x.txt"}}'
        )
      )
      assert.strictEqual(
        (yield* read(3, "file:///other/y.txt")).result.contents[0].text,
        "alpha read file:///other/y.txt"
      )
      assert.strictEqual(
        (yield* read(4, "clawtool://beta/file:///data/x.txt")).result.contents[0].text,
        "beta read file:///data/x.txt"
      )
      assert.strictEqual(
        (yield* read(5, "clawtool://alpha/file:///data/x.txt")).result.contents[0].text,
        "alpha read file:///data/x.txt"
      )
      yield* closeAndCheckLines(host)
    })
  )
})
