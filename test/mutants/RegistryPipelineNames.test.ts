// Mutation-testing follow-ups (docs/mutation.md): Pipeline's helpers and NameBudget's claim resolution.
import { assert, describe, it } from "@effect/vitest"
import type { Tool } from "../../src/domain/Mcp.js"
import * as NameBudget from "../../src/services/Registry/NameBudget.js"
import * as Pipeline from "../../src/services/Registry/Pipeline.js"

const tool = (name: string, extra: Partial<Tool> = {}): Tool => ({ name, inputSchema: { type: "object" }, ...extra })

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

describe("NameBudget.resolveClaims", () => {
  const claim = (wire: string, label: string, rank = 1) => ({ wire, label, rank, value: label })

  it("three claims on one name: lowest rank wins, then byte order of the label; every loser is reported", () => {
    const { collisions, kept } = NameBudget.resolveClaims([claim("w", "c"), claim("w", "a"), claim("w", "b")])
    assert.deepStrictEqual(
      kept.map((c) => c.label),
      ["a"]
    )
    assert.deepStrictEqual(collisions, [{ wire: "w", kept: "a", dropped: ["b", "c"] }])
    const ranked = NameBudget.resolveClaims([claim("w", "a", 2), claim("w", "z", 0), claim("w", "b", 1)])
    assert.deepStrictEqual(ranked.collisions, [{ wire: "w", kept: "z", dropped: ["b", "a"] }])
  })

  it("collisions are reported in wire-name order, whatever order the claims came in", () => {
    const { collisions, kept } = NameBudget.resolveClaims([
      claim("z", "z1"),
      claim("z", "z2"),
      claim("solo", "s"),
      claim("y", "y1"),
      claim("y", "y2")
    ])
    assert.deepStrictEqual(
      collisions.map((c) => c.wire),
      ["y", "z"]
    )
    assert.deepStrictEqual(
      kept.map((c) => c.label),
      ["z1", "s", "y1"]
    )
  })

  it("sourceRank: names that needed no change rank before sanitized and shortened ones, after core tools", () => {
    assert.isBelow(NameBudget.coreRank, NameBudget.sourceRank("as-is"))
    assert.isBelow(NameBudget.sourceRank("as-is"), NameBudget.sourceRank("sanitized"))
    assert.strictEqual(NameBudget.sourceRank("sanitized"), NameBudget.sourceRank("shortened"))
  })
})
