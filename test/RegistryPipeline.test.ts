import { assert, describe, it } from "@effect/vitest"
import type { Tool } from "../src/domain/Mcp.js"
import * as Pipeline from "../src/services/Registry/Pipeline.js"

const tool = (name: string, extra: Partial<Tool> = {}): Tool => ({
  name,
  inputSchema: { type: "object" },
  ...extra
})

describe("applyUsageHints", () => {
  it("writes _meta.clawtool.usage_hint as a nested object", () => {
    const [glob] = Pipeline.applyUsageHints([tool("Glob")], new Map([["Glob", "Pick Glob for a file LIST"]]))
    assert.deepStrictEqual(glob!._meta, { clawtool: { usage_hint: "Pick Glob for a file LIST" } })
    assert.include(JSON.stringify(glob), `"_meta":{"clawtool":{"usage_hint":"Pick Glob for a file LIST"}}`)
  })

  it("keeps every other _meta key the child sent and extends an existing _meta.clawtool", () => {
    const child = tool("x", { _meta: { vendor: 1, clawtool: { other: "kept", usage_hint: "old" } } })
    const [out] = Pipeline.applyUsageHints([child], new Map([["x", "new hint"]]))
    assert.deepStrictEqual(out!._meta, { vendor: 1, clawtool: { other: "kept", usage_hint: "new hint" } })
    assert.deepStrictEqual(
      child._meta,
      { vendor: 1, clawtool: { other: "kept", usage_hint: "old" } },
      "input untouched"
    )
  })

  it("replaces a _meta.clawtool that is not an object", () => {
    const [out] = Pipeline.applyUsageHints([tool("x", { _meta: { clawtool: "str" } })], new Map([["x", "hint"]]))
    assert.deepStrictEqual(out!._meta, { clawtool: { usage_hint: "hint" } })
  })

  it("tools without a hint get no _meta; empty hints and an empty map are no-ops", () => {
    const tools = [tool("a"), tool("b")]
    assert.strictEqual(Pipeline.applyUsageHints(tools, new Map()), tools)
    const out = Pipeline.applyUsageHints(tools, new Map([["b", "   "]]))
    assert.deepStrictEqual(out, tools)
    assert.notProperty(out[0]!, "_meta")
    assert.deepStrictEqual(Pipeline.applyUsageHints([], new Map([["a", "hint"]])), [])
  })
})

describe("applyAlwaysLoad", () => {
  it('sets the flat key _meta["anthropic/alwaysLoad"] = true on the hot set only', () => {
    const out = Pipeline.applyAlwaysLoad([tool("Bash"), tool("RecipeList")], new Set(["Bash"]))
    assert.strictEqual(out[0]!._meta?.["anthropic/alwaysLoad"], true)
    assert.include(JSON.stringify(out[0]), `"_meta":{"anthropic/alwaysLoad":true}`)
    assert.notProperty(out[1]!, "_meta")
  })

  it("keeps existing _meta (a usage hint stays beside the flag)", () => {
    const hinted = tool("Bash", { _meta: { clawtool: { usage_hint: "h" }, k: "v" } })
    const [out] = Pipeline.applyAlwaysLoad([hinted], new Set(["Bash"]))
    assert.deepStrictEqual(out!._meta, { clawtool: { usage_hint: "h" }, k: "v", "anthropic/alwaysLoad": true })
  })

  it("an empty set and an empty list are no-ops", () => {
    const tools = [tool("Bash")]
    assert.strictEqual(Pipeline.applyAlwaysLoad(tools, new Set()), tools)
    assert.deepStrictEqual(Pipeline.applyAlwaysLoad([], new Set(["Bash"])), [])
  })
})

describe("sortByName", () => {
  it("sorts byte-wise (uppercase core tools before lowercase source tools), stable, fields untouched", () => {
    const tools = ["Zebra", "alpha__x", "Alpha", "Mango", "Bash", "AAA", "a-b__c", "a__c"].map((name) =>
      tool(name, { description: `d-${name}`, _meta: { key: name } })
    )
    const out = Pipeline.sortByName(tools)
    assert.deepStrictEqual(
      out.map((t) => t.name),
      ["AAA", "Alpha", "Bash", "Mango", "Zebra", "a-b__c", "a__c", "alpha__x"]
    )
    for (const t of out) {
      assert.strictEqual(t.description, `d-${t.name}`)
      assert.deepStrictEqual(t._meta, { key: t.name })
    }
    assert.deepStrictEqual(Pipeline.sortByName([]), [])
  })

  it("keeps the input order of equal names (stable)", () => {
    const out = Pipeline.sortByName([tool("b", { n: 1 }), tool("a"), tool("b", { n: 2 })])
    assert.deepStrictEqual(
      out.map((t) => t.n ?? 0),
      [0, 1, 2]
    )
  })
})

describe("pipeline", () => {
  it("hints, then alwaysLoad, then the sort last", () => {
    const out = Pipeline.pipeline([tool("zeta__b"), tool("ToolSearch"), tool("alpha__a")], {
      hints: new Map([
        ["ToolSearch", "search hint"],
        ["alpha__a", "source hint"]
      ]),
      alwaysLoad: new Set(["ToolSearch"])
    })
    assert.deepStrictEqual(
      out.map((t) => t.name),
      ["ToolSearch", "alpha__a", "zeta__b"]
    )
    assert.deepStrictEqual(out[0]!._meta, { clawtool: { usage_hint: "search hint" }, "anthropic/alwaysLoad": true })
    assert.deepStrictEqual(out[1]!._meta, { clawtool: { usage_hint: "source hint" } })
    assert.notProperty(out[2]!, "_meta")
  })
})

describe("catalog stability", () => {
  it("canonical JSON sorts object keys recursively, keeps array order and drops undefined", () => {
    const a = { b: 1, a: { d: [3, { z: 1, y: 2 }], c: undefined } }
    assert.strictEqual(Pipeline.canonicalJson(a), `{"a":{"d":[3,{"y":2,"z":1}]},"b":1}`)
  })

  it("the hash depends on content, not on key order", () => {
    const one = [tool("a", { description: "x", inputSchema: { type: "object", properties: { p: {}, q: {} } } })]
    const two = [{ inputSchema: { properties: { q: {}, p: {} }, type: "object" }, description: "x", name: "a" }]
    assert.strictEqual(Pipeline.catalogHash(one), Pipeline.catalogHash(two))
    assert.match(Pipeline.catalogHash(one), /^[0-9a-f]{64}$/)
    assert.notStrictEqual(Pipeline.catalogHash(one), Pipeline.catalogHash([tool("a", { description: "y" })]))
  })
})

// Mutation-testing follow-ups (docs/mutation.md): Pipeline's helpers and NameBudget's claim resolution.
describe("Pipeline helpers", () => {
  it("byteOrder: -1, 1 or 0", () => {
    assert.strictEqual(Pipeline.byteOrder("a", "b"), -1)
    assert.strictEqual(Pipeline.byteOrder("b", "a"), 1)
    assert.strictEqual(Pipeline.byteOrder("a", "a"), 0)
    assert.strictEqual(Pipeline.byteOrder("Z", "a"), -1, "code-unit order: uppercase first")
  })

  it("canonical keeps nulls, drops undefined keys and leaves scalars alone", () => {
    assert.deepStrictEqual(Pipeline.canonical({ b: null, a: [null, { d: 1, c: undefined }] }), {
      a: [null, { d: 1 }],
      b: null
    })
    assert.deepStrictEqual(Object.keys(Pipeline.canonical({ x: undefined, y: 1 })), ["y"])
    assert.strictEqual(Pipeline.canonical(null), null)
    assert.strictEqual(Pipeline.canonical("s"), "s")
  })

  it("withUsageHint replaces a null _meta.clawtool", () => {
    const out = Pipeline.withUsageHint(tool("x", { _meta: { clawtool: null } }), "hint")
    assert.deepStrictEqual(out._meta, { clawtool: { usage_hint: "hint" } })
  })

  it("shapeTool: a blank hint is no hint; alwaysLoad alone adds only the flag", () => {
    const plain = tool("x")
    assert.strictEqual(Pipeline.shapeTool(plain, "  ", false), plain)
    assert.strictEqual(Pipeline.shapeTool(plain, undefined, false), plain)
    assert.deepStrictEqual(Pipeline.shapeTool(plain, "  ", true)._meta, { "anthropic/alwaysLoad": true })
    assert.deepStrictEqual(Pipeline.shapeTool(plain, "use it", false)._meta, { clawtool: { usage_hint: "use it" } })
  })

  it("token estimate: a quarter of the JSON length, rounded up", () => {
    assert.strictEqual(Pipeline.tokensOfJson("12345"), 2)
    assert.strictEqual(Pipeline.tokensOfJson("1234"), 1)
    assert.strictEqual(Pipeline.tokensOfJson(""), 0)
  })
})
