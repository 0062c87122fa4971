// The SDK adapter (ADR 002): every SDK internal clawtool touches is checked at construction, and a missing or
// re-typed member fails with a clear message instead of drifting silently. Also the one cancel map (Cancels) and the
// shared SDK-shape helpers.
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { McpError } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { Cancels } from "../src/transport/Cancels.js"
import {
  assertMembers,
  clientInternals,
  clientMembers,
  SdkInternalsChanged,
  serverInternals,
  serverMembers
} from "../src/transport/Sdk.js"
import { maxPages, mcpErrorText, noTimeout, paginate, peerMessage } from "../src/transport/SdkShape.js"

const server = () => new Server({ name: "t", version: "1" }, { capabilities: {} })
const client = () => new Client({ name: "t", version: "1" })

const failure = (build: () => unknown) => {
  try {
    build()
  } catch (error) {
    assert.instanceOf(error, SdkInternalsChanged)
    return (error as Error).message
  }
  return assert.fail("expected SdkInternalsChanged")
}

describe("SDK adapter", () => {
  it("the pinned SDK has every internal the adapters use", () => {
    const real = server()
    const internals = serverInternals(real)
    internals.startRequestIdsAt(1)
    assert.strictEqual((real as unknown as { _requestMessageId: number })._requestMessageId, 1)
    assert.isFalse(internals.abortHandler(0, "no such request"))
    assert.isFalse(clientInternals(client()).progressNow({ jsonrpc: "2.0", method: "notifications/message" }))
  })

  it("a missing or re-typed member fails at construction, naming each one and ADR 002", () => {
    assert.strictEqual(
      failure(() => serverInternals({} as never)),
      "SDK internals changed (Server._oninitialize is missing, expected a function; Server._requestMessageId is missing, expected a number; Server._requestHandlerAbortControllers is missing, expected a map), see ADR 002"
    )
    // An SDK update that renamed _requestMessageId, with everything else in place.
    const renamed = Object.assign(server(), { _requestMessageId: undefined, _nextRequestId: 0 })
    assert.strictEqual(
      failure(() => serverInternals(renamed)),
      "SDK internals changed (Server._requestMessageId is missing, expected a number), see ADR 002"
    )
    const retyped = Object.assign(client(), { _onprogress: new Map() })
    assert.strictEqual(
      failure(() => clientInternals(retyped)),
      "SDK internals changed (Client._onprogress is a Map, expected a function), see ADR 002"
    )
    assert.strictEqual(
      failure(() => assertMembers("Protocol.prototype", { setRequestHandler: "x" }, { setRequestHandler: "function" })),
      "SDK internals changed (Protocol.prototype.setRequestHandler is a string, expected a function), see ADR 002"
    )
    assert.deepStrictEqual(Object.keys(serverMembers), [
      "_oninitialize",
      "_requestMessageId",
      "_requestHandlerAbortControllers"
    ])
    assert.deepStrictEqual(Object.keys(clientMembers), ["_onprogress"])
  })

  it("progressNow dispatches a child's progress at once, to the request that asked for it", () => {
    const real = client()
    const seen: Array<unknown> = []
    ;(real as unknown as { _progressHandlers: Map<number, (p: unknown) => void> })._progressHandlers.set(4, (p) =>
      seen.push(p)
    )
    const progress = (token: unknown) => ({
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: { progressToken: token, progress: 1, total: 2, extra: "stripped as by the SDK" }
    })
    assert.isTrue(clientInternals(real).progressNow(progress(4)))
    // Synchronously: nothing waits for a later tick, so a result in the same read cannot overtake it.
    assert.deepStrictEqual(seen, [{ progress: 1, total: 2 }])
    // A finished request's progress is taken and dropped; a malformed one is left to the SDK.
    assert.isTrue(clientInternals(real).progressNow(progress(5)))
    assert.isFalse(clientInternals(real).progressNow(progress({ not: "a token" })))
    assert.strictEqual(seen.length, 1)
    // With an id it is a request (which the SDK answers), not progress: left alone, whatever its token.
    assert.isFalse(clientInternals(real).progressNow({ ...progress(4), id: "n2" }))
    assert.strictEqual(seen.length, 1)
  })
})

describe("Cancels", () => {
  it("maps a request id to its cancel, once; id 0 included; unknown ids go to the fallback", () => {
    const fallback: Array<unknown> = []
    const cancels = new Cancels((id) => (fallback.push(id), id === "sdk"))
    const cancelled: Array<unknown> = []
    cancels.set(0, (reason) => cancelled.push(reason))
    const notice = (requestId: unknown) => ({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId, reason: "r" }
    })
    assert.isTrue(cancels.observe(notice(0)))
    assert.isTrue(cancels.observe(notice(0)))
    assert.deepStrictEqual(cancelled, ["r"])
    assert.isTrue(cancels.cancel("sdk", "r"))
    assert.isFalse(cancels.cancel("nobody", "r"))
    assert.deepStrictEqual(fallback, [0, "sdk", "nobody"])
    assert.isFalse(cancels.observe({ jsonrpc: "2.0", method: "notifications/progress", params: { requestId: 1 } }))
    assert.isFalse(cancels.observe(notice(null)))
  })

  it("a notifications/cancelled with an id (null too) is a request: it cancels nothing and is left to be answered", () => {
    const cancels = new Cancels(() => assert.fail("no cancel is looked for"))
    const cancelled: Array<unknown> = []
    cancels.set("h", (reason) => cancelled.push(reason))
    for (const id of ["n1", 0, null]) {
      const request = { jsonrpc: "2.0", id, method: "notifications/cancelled", params: { requestId: "h", reason: "r" } }
      assert.isFalse(cancels.observe(request))
    }
    assert.deepStrictEqual(cancelled, [])
    assert.isTrue(cancels.has("h"))
  })
})

describe("SDK-shape helpers", () => {
  it("the relay's error text is the SDK's McpError text, and the peer's words come back out of it", () => {
    const error = new McpError(-32050, "backend exploded")
    assert.strictEqual(mcpErrorText(-32050, "backend exploded"), error.message)
    assert.strictEqual(peerMessage(error.message), "backend exploded")
    assert.strictEqual(peerMessage("no prefix: kept"), "no prefix: kept")
  })

  it.effect("paginate follows string cursors until none, a repeated one, or maxPages", () =>
    Effect.gen(function* () {
      const asked: Array<string | undefined> = []
      const pages: Record<string, { items: Array<number>; nextCursor?: unknown }> = {
        first: { items: [1], nextCursor: "b" },
        b: { items: [2], nextCursor: "c" },
        c: { items: [3], nextCursor: 42 }
      }
      const all = yield* paginate(
        (cursor) => Effect.sync(() => (asked.push(cursor), pages[cursor ?? "first"]!)),
        (page) => page.items
      )
      assert.deepStrictEqual(all, [1, 2, 3])
      assert.deepStrictEqual(asked, [undefined, "b", "c"])
      const repeated = yield* paginate(
        () => Effect.succeed({ items: [0], nextCursor: "same" }),
        (page) => page.items
      )
      assert.deepStrictEqual(repeated, [0, 0])
      let count = 0
      const endless = yield* paginate(
        () => Effect.sync(() => ({ items: [count], nextCursor: `c${count++}` })),
        (page) => page.items
      )
      assert.strictEqual(endless.length, maxPages)
      assert.strictEqual(noTimeout, 2 ** 31 - 1)
    })
  )
})
