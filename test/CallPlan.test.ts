// CallPlan: which tools/call takes the line relay, and why the others take the SDK path (ADR 009).
import { assert, describe, it } from "@effect/vitest"
import * as CallPlan from "../src/domain/CallPlan.js"

const idle: { untraced: boolean; inFlight: (id: string | number) => boolean } = {
  untraced: true,
  inFlight: () => false
}
const call = (params: unknown, id: unknown = 7) => ({ jsonrpc: "2.0", id, method: "tools/call", params })
const why = (plan: CallPlan.HostPlan | CallPlan.Plan) => (plan.relay ? "relay" : plan.why)

describe("CallPlan", () => {
  it("a plain call to the host is relayed, with its parsed params and id", () => {
    const plan = CallPlan.forHost(call({ name: "a__b", arguments: { x: 1 }, _meta: { other: true } }), idle)
    assert.isTrue(plan.relay)
    if (!plan.relay) return
    assert.strictEqual(plan.id, 7)
    assert.deepStrictEqual(plan.call, {
      name: "a__b",
      arguments: { x: 1 },
      task: undefined,
      meta: { other: true },
      metaMalformed: false
    })
    assert.strictEqual(why(CallPlan.forHost(call({ name: "a__b" }, "s-1"), idle)), "relay")
  })

  it("every feature only the SDK path has sends the call there, naming it", () => {
    const cases: ReadonlyArray<[string, Record<string, unknown>, Partial<typeof idle>?]> = [
      ["NotACall", { jsonrpc: "2.0", id: 1, method: "tools/list" }],
      ["NotACall", { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } }],
      ["Traced", call({ name: "a__b" }), { untraced: false }],
      ["Traced", call({ name: "a__b", _meta: { traceparent: "00-…" } })],
      ["IdUnusable", call({ name: "a__b" }, null)],
      ["IdUnusable", call({ name: "a__b" }, { nested: 1 })],
      ["IdUnusable", call({ name: "a__b" }, 7), { inFlight: (id) => id === 7 }],
      ["InvalidParams", call(undefined)],
      ["InvalidParams", call({ name: 3 })],
      ["InvalidParams", call({ name: "a__b", arguments: [1] })],
      ["InvalidParams", call({ name: "a__b", task: "soon" })],
      ["Task", call({ name: "a__b", task: { ttl: 1000 } })],
      ["ProgressAsked", call({ name: "a__b", _meta: { progressToken: "t" } })],
      // Even a token the SDK path would not honour: the rule is "asked", not "asked well".
      ["ProgressAsked", call({ name: "a__b", _meta: { progressToken: null } })],
      ["MetaMalformed", call({ name: "a__b", _meta: "x" })]
    ]
    for (const [expected, message, context] of cases) {
      assert.strictEqual(why(CallPlan.forHost(message, { ...idle, ...context })), expected, JSON.stringify(message))
    }
  })

  it("parse: the -32602 messages of the SDK path", () => {
    const invalid = (params: unknown) => {
      const parsed = CallPlan.parse(params)
      return parsed.ok ? undefined : parsed.invalid
    }
    assert.strictEqual(invalid({}), "tools/call needs params.name (a string)")
    assert.strictEqual(invalid({ name: "t", arguments: "x" }), 'tools/call arguments for "t" must be an object')
    assert.strictEqual(invalid({ name: "t", task: [] }), 'tools/call task for "t" must be an object')
    // A _meta that is not an object is ignored by the SDK path (not an error) and declined by the relay.
    const parsed = CallPlan.parse({ name: "t", _meta: 5 })
    assert.isTrue(parsed.ok && parsed.call.meta === undefined && parsed.call.metaMalformed)
  })

  it("forRoute: only a listed tool of a running source that [trust] confirm does not name", () => {
    const route = (core: boolean, listed: boolean, running: boolean, confirm = false) =>
      why(CallPlan.forRoute({ core, listed, running, confirm }))
    assert.strictEqual(route(false, true, true), "relay")
    assert.strictEqual(route(true, false, false), "CoreTool")
    assert.strictEqual(route(false, false, false), "NotListed")
    assert.strictEqual(route(false, true, false), "NotRunning")
    // A call that needs the user's yes is never relayed: the SDK path asks first, running or not.
    assert.strictEqual(route(false, true, true, true), "Confirm")
    assert.strictEqual(route(false, true, false, true), "Confirm")
    assert.strictEqual(route(true, false, false, true), "CoreTool")
  })

  it("the host's progress token, and what the child is asked for", () => {
    assert.strictEqual(CallPlan.hostProgressToken({ progressToken: "t" }), "t")
    assert.strictEqual(CallPlan.hostProgressToken({ progressToken: 0 }), 0)
    assert.strictEqual(CallPlan.hostProgressToken({ progressToken: null }), undefined)
    assert.strictEqual(CallPlan.hostProgressToken(undefined), undefined)
    assert.strictEqual(CallPlan.childProgress(true, undefined), "forHost")
    assert.strictEqual(CallPlan.childProgress(true, 1000), "forHost")
    assert.strictEqual(CallPlan.childProgress(false, 1000), "keepAlive")
    assert.strictEqual(CallPlan.childProgress(false, undefined), "none")
  })
})

describe("CallPlan: CallTool (catalog = search, ADR 025)", () => {
  it("a CallTool call parses as the call of its target, with the same _meta and task", () => {
    const parsed = CallPlan.parse({
      name: "CallTool",
      arguments: { name: "gh__create_issue", arguments: { title: "t" } },
      _meta: { progressToken: 3, traceparent: "00-x" },
      task: { ttl: 1 }
    })
    assert.isTrue(parsed.ok)
    if (!parsed.ok) return
    assert.deepStrictEqual(parsed.call, {
      name: "gh__create_issue",
      arguments: { title: "t" },
      task: { ttl: 1 },
      meta: { progressToken: 3, traceparent: "00-x" },
      metaMalformed: false
    })
    const plain = CallPlan.forHost(call({ name: "CallTool", arguments: { name: "a__b" } }), idle)
    assert.isTrue(plain.relay, "a plain CallTool call takes the relay like a direct one")
    if (plain.relay) assert.strictEqual(plain.call.name, "a__b")
    assert.isUndefined(plain.relay ? plain.call.arguments : "unreached", "no arguments: none sent")
  })

  it("a CallTool call without a target, calling itself or with non-object arguments is Invalid params", () => {
    const invalid = (args: unknown) => {
      const parsed = CallPlan.parse({ name: "CallTool", arguments: args })
      return parsed.ok ? "ok" : parsed.invalid
    }
    assert.strictEqual(
      invalid(undefined),
      "CallTool needs arguments.name: the wire name of the tool to call (ToolSearch returns it)"
    )
    assert.strictEqual(invalid({ name: "" }), invalid(undefined))
    assert.strictEqual(invalid({ name: 3 }), invalid(undefined))
    assert.strictEqual(invalid({ name: "CallTool" }), "CallTool cannot call itself")
    assert.strictEqual(
      invalid({ name: "a__b", arguments: [1] }),
      `CallTool arguments.arguments for "a__b" must be an object`
    )
    assert.strictEqual(invalid({ name: "a__b", arguments: {} }), "ok")
    assert.strictEqual(why(CallPlan.forHost(call({ name: "CallTool", arguments: {} }), idle)), "InvalidParams")
  })
})
