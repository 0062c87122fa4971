import { assert, describe, it } from "@effect/vitest"
import * as Era from "../src/domain/HostEra.js"
import { makeQuota } from "../src/services/Gateway/HttpListens.js"
import { makeListen, parseFilter } from "../src/services/Gateway/Listen.js"
import { hintFor, listTtlMs, withoutEnvelope } from "../src/services/Gateway/Modern.js"
import { argumentsDigest, maxStateLength, openState, sealPassed, sealState } from "../src/services/Gateway/Mrtr.js"
import { logLevels } from "../src/services/HostSessions.js"

/** The 2026-07-28 era's pure parts (ADR 032): which era a request opens, its envelope, the stamp on results. */

const envelope = (extra: Record<string, unknown> = {}) => ({
  _meta: {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
    "io.modelcontextprotocol/clientInfo": { name: "host", version: "1" },
    ...extra
  }
})

describe("Era", () => {
  it("a connection's opening: server/discover or a modern envelope is modern, initialize and bare requests legacy", () => {
    assert.strictEqual(Era.openingEra("server/discover", undefined), "modern")
    assert.strictEqual(Era.openingEra("tools/list", envelope()), "modern")
    assert.strictEqual(Era.openingEra("initialize", { protocolVersion: "2025-06-18" }), "legacy")
    assert.strictEqual(Era.openingEra("tools/list", { _meta: { progressToken: 1 } }), "legacy")
  })

  it("checkEnvelope: the envelope, -32022 naming the supported versions, -32602 for a missing or malformed one", () => {
    const ok = Era.checkEnvelope(envelope({ "io.modelcontextprotocol/logLevel": "info" }), logLevels)
    assert.isTrue(ok.ok)
    if (ok.ok) {
      assert.deepStrictEqual(ok.envelope, {
        version: "2026-07-28",
        capabilities: { elicitation: {} },
        clientInfo: { name: "host", version: "1" },
        logLevel: "info"
      })
    }
    const unknown = Era.checkEnvelope(envelope({ "io.modelcontextprotocol/protocolVersion": "2099-01-01" }), logLevels)
    assert.deepStrictEqual(unknown, {
      ok: false,
      error: {
        code: -32022,
        message: "Unsupported protocol version: 2099-01-01",
        data: { supported: ["2026-07-28"], requested: "2099-01-01" }
      }
    })
    // No _meta or no version is a malformed request (-32602), not one of another version (the conformance suite's
    // sep-2575-request-meta-invalid-* checks).
    for (const params of [{}, { _meta: { "io.modelcontextprotocol/clientCapabilities": {} } }]) {
      const missing = Era.checkEnvelope(params, logLevels)
      assert.isFalse(missing.ok)
      if (!missing.ok) assert.strictEqual(missing.error.code, -32602)
    }
    // An initialize on a modern connection names a legacy version: -32022 with what this era serves.
    const initialize = Era.checkEnvelope({ protocolVersion: "2025-06-18", capabilities: {} }, logLevels)
    assert.isFalse(initialize.ok)
    if (!initialize.ok)
      assert.deepStrictEqual(initialize.error.data, { supported: ["2026-07-28"], requested: "2025-06-18" })
    const noCapabilities = Era.checkEnvelope(
      envelope({ "io.modelcontextprotocol/clientCapabilities": "all" }),
      logLevels
    )
    assert.isFalse(noCapabilities.ok)
    if (!noCapabilities.ok) assert.strictEqual(noCapabilities.error.code, -32602)
    const badLevel = Era.checkEnvelope(envelope({ "io.modelcontextprotocol/logLevel": "loud" }), logLevels)
    assert.isFalse(badLevel.ok)
    if (!badLevel.ok) assert.include(badLevel.error.message, "logLevel")
  })

  it("the envelope stays at the edge: children get the rest of _meta", () => {
    assert.deepStrictEqual(withoutEnvelope({ name: "t", ...envelope({ progressToken: 7 }) }), {
      name: "t",
      _meta: { progressToken: 7 }
    })
    assert.deepStrictEqual(withoutEnvelope({ name: "t", ...envelope() }), { name: "t" })
    assert.strictEqual(Era.forwardedMeta(undefined), undefined)
  })

  it("stamp: resultType, the cache hint and serverInfo beside the result's own _meta; the JSON splice agrees", () => {
    const info = { name: "clawtool", version: "1" }
    const hint = { ttlMs: 5, cacheScope: "private" as const }
    const stamped = Era.stamp({ tools: [], _meta: { mine: 1 } }, info, hint)
    assert.deepStrictEqual(stamped, {
      tools: [],
      resultType: "complete",
      ttlMs: 5,
      cacheScope: "private",
      _meta: { mine: 1, "io.modelcontextprotocol/serverInfo": info }
    })
    // A modern child's own resultType (input_required) is kept.
    assert.strictEqual(Era.stamp({ resultType: "input_required" }, info, undefined).resultType, "input_required")
    assert.deepStrictEqual(JSON.parse(Era.stampJson(`{"tools":[]}`, info, hint)), {
      resultType: "complete",
      ttlMs: 5,
      cacheScope: "private",
      _meta: { "io.modelcontextprotocol/serverInfo": info },
      tools: []
    })
    assert.deepStrictEqual(JSON.parse(Era.stampJson("{}", info, undefined)), {
      resultType: "complete",
      _meta: { "io.modelcontextprotocol/serverInfo": info }
    })
  })

  it("the cache hint: lists short and only once settled, reads never, calls none", () => {
    assert.deepStrictEqual(hintFor("tools/list", true), { ttlMs: listTtlMs, cacheScope: "private" })
    assert.deepStrictEqual(hintFor("prompts/list", false), { ttlMs: 0, cacheScope: "private" })
    assert.deepStrictEqual(hintFor("resources/read", true), { ttlMs: 0, cacheScope: "private" })
    assert.strictEqual(hintFor("tools/call", true), undefined)
  })

  it("a listen filter: the kinds asked for, URIs once each; anything else is not a filter", () => {
    assert.deepStrictEqual(
      parseFilter({
        notifications: { toolsListChanged: true, promptsListChanged: false, resourceSubscriptions: ["a", "a"] }
      }),
      { toolsListChanged: true, resourceSubscriptions: ["a"] }
    )
    assert.strictEqual(parseFilter({}), undefined)
    assert.strictEqual(parseFilter({ notifications: { toolsListChanged: "yes" } }), undefined)
    assert.strictEqual(parseFilter({ notifications: { resourceSubscriptions: [1] } }), undefined)
  })
})

describe("requestState (MRTR toward modern hosts)", () => {
  const key = Buffer.alloc(32, 7)

  it("opens what clawtool sealed, until it expires", () => {
    const state = sealState(key, "parked-1", 1_000)
    assert.deepStrictEqual(openState(key, state, 999), { ok: true, parked: "parked-1" })
    assert.deepStrictEqual(openState(key, state, 1_001), { ok: false, why: "has expired ([http] input_required_ttl)" })
    assert.isAtMost(state.length, maxStateLength)
  })

  it("a passed-through state carries the child's state and its call's route; one too long is not issued", () => {
    const passed = {
      instance: "modern",
      method: "tools/call",
      target: "modern__ask",
      args: argumentsDigest({ q: 1 }),
      state: "child"
    }
    const state = sealPassed(key, passed, 1_000)!
    assert.deepStrictEqual(openState(key, state, 999), { ok: true, passed })
    assert.deepStrictEqual(openState(key, state, 1_001), { ok: false, why: "has expired ([http] input_required_ttl)" })
    assert.notStrictEqual(argumentsDigest({ q: 2 }), passed.args)
    assert.strictEqual(sealPassed(key, { ...passed, state: "x".repeat(maxStateLength) }, 1_000), undefined)
  })

  it("refuses a forged state: another key, an edited payload, garbage", () => {
    const state = sealState(key, "parked-1", 1_000)
    const forged = openState(Buffer.alloc(32, 8), state, 0)
    assert.deepStrictEqual(forged, { ok: false, why: "was not issued by this clawtool (signature mismatch)" })
    const [, mac] = state.split(".")
    const edited = `${Buffer.from(JSON.stringify({ p: "parked-2", e: 1_000 })).toString("base64url")}.${mac}`
    assert.isFalse(openState(key, edited, 0).ok)
    assert.isFalse(openState(key, "not-a-state", 0).ok)
    assert.isFalse(openState(key, 42, 0).ok)
    assert.isFalse(openState(key, "x".repeat(maxStateLength + 1), 0).ok)
  })
})

describe("listens over HTTP: the quota", () => {
  it("refuses past the cap per token and per daemon, naming which; a closed listen frees its place", () => {
    const quota = makeQuota({ total: 3, perToken: 2 })
    assert.isUndefined(quota.take("alice"))
    assert.isUndefined(quota.take("alice"))
    assert.strictEqual(quota.take("alice"), `Subscription limit reached: 2 listens are open for token "alice"`)
    assert.isUndefined(quota.take(undefined))
    assert.strictEqual(quota.take("bob"), "Subscription limit reached: 3 listens are open on this clawtool")
    quota.give("alice")
    assert.strictEqual(quota.open(), 2)
    assert.isUndefined(quota.take("bob"))
    assert.strictEqual(quota.take(undefined), "Subscription limit reached: 3 listens are open on this clawtool")
    quota.give(undefined)
    assert.strictEqual(quota.take(undefined), undefined)
    assert.strictEqual(quota.take(undefined), "Subscription limit reached: 3 listens are open on this clawtool")
  })
})

describe("subscriptions/listen: the acknowledgement", () => {
  it("waits for the children's subscriptions; nothing reaches a listen before it; one cancelled meanwhile gets none", async () => {
    const pending = new Map<string, () => void>()
    const calls: Array<string> = []
    const listen = makeListen((uri, on) => {
      calls.push(`${on ? "subscribe" : "unsubscribe"} ${uri}`)
      return on ? new Promise<void>((resolve) => pending.set(uri, resolve)) : Promise.resolve()
    })
    const seen: Array<string> = []
    const wire: Era.ModernWire = {
      result: (id) => void seen.push(`result ${id}`),
      error: (id) => void seen.push(`error ${id}`),
      notify: (method, _params, about) => void seen.push(`${method} ${about}`)
    }
    const settle = () => new Promise((resolve) => setImmediate(resolve))
    listen.open(1, { notifications: { toolsListChanged: true, resourceSubscriptions: ["a://x"] } }, wire)
    listen.updated({ uri: "a://x" })
    listen.listChanged("tools")
    await settle()
    assert.deepStrictEqual(seen, [], "no acknowledgement nor notice while the child subscribes")
    pending.get("a://x")!()
    await settle()
    listen.updated({ uri: "a://x" })
    assert.deepStrictEqual(seen, ["notifications/subscriptions/acknowledged 1", "notifications/resources/updated 1"])
    // Cancelled before its child answered: never acknowledged, its URI released.
    listen.open(2, { notifications: { resourceSubscriptions: ["b://y"] } }, wire)
    assert.isTrue(listen.cancel(2))
    pending.get("b://y")!()
    await settle()
    assert.strictEqual(seen.length, 2)
    assert.deepStrictEqual(calls, ["subscribe a://x", "subscribe b://y", "unsubscribe b://y"])
    // Without URIs: at once, as before.
    listen.open(3, { notifications: { toolsListChanged: true } }, wire)
    assert.deepStrictEqual(seen.slice(2), ["notifications/subscriptions/acknowledged 3"])
  })
})
