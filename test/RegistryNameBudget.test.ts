import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import { ToolConfig } from "../src/domain/Config.js"
import type { Tool } from "../src/domain/Mcp.js"
import * as Catalog from "../src/services/Registry/Catalog.js"
import { coreSpecs } from "../src/services/CoreTools.js"
import * as Manifest from "../src/services/CoreTools/Manifest.js"
import * as NameBudget from "../src/services/Registry/NameBudget.js"

const hostPattern = /^[a-zA-Z0-9_-]{1,64}$/
const manifest = Either.getOrThrow(Manifest.make(coreSpecs))
const tool = (name: string): Tool => ({ name, inputSchema: { type: "object" } })

describe("wireName", () => {
  it("keeps names that fit as <instance>__<tool>", () => {
    assert.deepStrictEqual(NameBudget.wireName("github", "create_issue"), {
      wire: "github__create_issue",
      instance: "github",
      tool: "create_issue",
      shaping: "as-is"
    })
  })

  it("maps dots, slashes and other characters hosts reject to _", () => {
    const mapped = NameBudget.wireName("fs", "files/read.text v2")
    assert.strictEqual(mapped.wire, "fs__files_read_text_v2")
    assert.strictEqual(mapped.shaping, "sanitized")
    assert.match(NameBudget.wireName("x1", "ünïcode.tool").wire, hostPattern)
  })

  it("shortens long names to the budget with a stable hash of the original names", () => {
    const long = `a_very_long_tool_name_${"x".repeat(80)}`
    for (const budget of [64, 60, 40, 24]) {
      const mapped = NameBudget.wireName("my-company-notion", long, budget)
      assert.strictEqual(mapped.wire.length, budget)
      assert.match(mapped.wire, hostPattern)
      assert.strictEqual(mapped.shaping, "shortened")
      assert.isTrue(mapped.wire.endsWith(`_${NameBudget.shortHash("my-company-notion", long)}`))
    }
    assert.strictEqual(
      NameBudget.wireName("notion", long).wire,
      NameBudget.wireName("notion", long).wire,
      "deterministic"
    )
    // Same truncated prefix, different originals: different names.
    assert.notStrictEqual(
      NameBudget.wireName("notion", `${long}1`).wire,
      NameBudget.wireName("notion", `${long}2`).wire
    )
  })

  it("a name exactly at the budget is kept; one character more is shortened", () => {
    const fits = "t".repeat(64 - "ab__".length)
    assert.strictEqual(NameBudget.wireName("ab", fits).wire, `ab__${fits}`)
    assert.strictEqual(NameBudget.wireName("ab", `${fits}t`).shaping, "shortened")
  })
})

describe("Catalog.build: names, routing and collisions", () => {
  const build = (
    sources: ReadonlyArray<Catalog.InstanceTools>,
    options: { budget?: number; toolConfig?: Record<string, ToolConfig> } = {}
  ) => Catalog.build({ manifest, sources, toolConfig: options.toolConfig ?? {}, budget: options.budget ?? 64 })

  it("every wire name fits the host pattern, and the reverse map leads back to instance and original name", () => {
    const originals = ["read.file", "a/b/c", `long_${"y".repeat(90)}`, "plain", "dash-ed", "sp ace"]
    const catalog = build([{ instance: "my-company-notion", tools: originals.map(tool) }], { budget: 60 })
    for (const t of catalog.tools) {
      assert.match(t.name, hostPattern)
      assert.isAtMost(t.name.length, 60)
    }
    const routed = [...catalog.routes.entries()].map(([, route]) => route.tool).sort()
    assert.deepStrictEqual(routed, [...originals].sort())
    for (const [wire, route] of catalog.routes) {
      assert.strictEqual(NameBudget.wireName(route.instance, route.tool, 60).wire, wire)
    }
  })

  it("names do not depend on how many instances or tools exist", () => {
    const long = `x_${"z".repeat(80)}`
    const alone = build([{ instance: "gh", tools: [tool(long), tool("search_code")] }])
    const crowded = build([
      { instance: "aa", tools: [tool("search_code"), tool(long)] },
      { instance: "gh", tools: [tool(long), tool("search_code"), tool("other")] },
      { instance: "zz", tools: [tool(long)] }
    ])
    const ghNames = (catalog: Catalog.Catalog) =>
      [...catalog.routes].filter(([, route]) => route.instance === "gh" && route.tool !== "other").map(([wire]) => wire)
    assert.deepStrictEqual(ghNames(alone).sort(), ghNames(crowded).sort())
  })

  it("a collision after mapping keeps the unchanged name, reports the other and never overwrites it", () => {
    const catalog = build([{ instance: "fs", tools: [tool("read.file"), tool("read_file")] }])
    assert.deepStrictEqual(catalog.collisions, [
      { wire: "fs__read_file", kept: "fs.read_file", dropped: ["fs.read.file"] }
    ])
    assert.deepStrictEqual(catalog.routes.get("fs__read_file"), { instance: "fs", tool: "read_file" })
    const dropped = catalog.entries.find((entry) => entry.original === "read.file")!
    assert.isFalse(dropped.listed)
    assert.strictEqual(dropped.rule, "collision with fs.read_file")
    assert.strictEqual(catalog.tools.filter((t) => t.name === "fs__read_file").length, 1)
  })

  it("between two mapped names, the rule is byte order of the original names, whatever order the child used", () => {
    const one = build([{ instance: "fs", tools: [tool("a/b"), tool("a.b")] }])
    const two = build([{ instance: "fs", tools: [tool("a.b"), tool("a/b")] }])
    assert.deepStrictEqual(one.collisions, two.collisions)
    assert.deepStrictEqual(one.collisions, [{ wire: "fs__a_b", kept: "fs.a.b", dropped: ["fs.a/b"] }])
    assert.strictEqual(one.hash, two.hash)
  })

  it("two instances whose shortened names collide (a 32-bit hash collision): one keeps the name, by byte order", () => {
    // Found by search: both shorten to the first 15 characters plus _a26b3a26 under a budget of 24.
    const a = { instance: "abcdefghijklmno-a", tools: [tool("t95251"), tool("fine")] }
    const b = { instance: "abcdefghijklmno-b", tools: [tool("t16644")] }
    assert.strictEqual(NameBudget.wireName(a.instance, "t95251", 24).wire, "abcdefghijklmno_a26b3a26")
    assert.strictEqual(NameBudget.wireName(b.instance, "t16644", 24).wire, "abcdefghijklmno_a26b3a26")
    for (const sources of [
      [a, b],
      [b, a]
    ]) {
      const catalog = build(sources, { budget: 24 })
      assert.deepStrictEqual(catalog.collisions, [
        { wire: "abcdefghijklmno_a26b3a26", kept: "abcdefghijklmno-a.t95251", dropped: ["abcdefghijklmno-b.t16644"] }
      ])
      assert.deepStrictEqual(catalog.routes.get("abcdefghijklmno_a26b3a26"), { instance: a.instance, tool: "t95251" })
      assert.strictEqual(catalog.tools.filter((t) => t.name === "abcdefghijklmno_a26b3a26").length, 1)
      assert.isTrue([...catalog.routes.values()].some((route) => route.tool === "fine"))
    }
  })

  it("disabling one side of a collision settles it", () => {
    const catalog = build([{ instance: "fs", tools: [tool("read.file"), tool("read_file")] }], {
      toolConfig: { "fs.read_file": ToolConfig.make({ enabled: false }) }
    })
    assert.deepStrictEqual(catalog.collisions, [])
    assert.deepStrictEqual(catalog.routes.get("fs__read_file"), { instance: "fs", tool: "read.file" })
  })

  it("core tools are never shadowed: they always list, and no source name can equal one", () => {
    const catalog = build([{ instance: "ab", tools: [tool("ToolSearch")] }], { budget: 24 })
    assert.isTrue(catalog.tools.some((t) => t.name === "ToolSearch" && t.description?.startsWith("Search every tool")))
    assert.isTrue(catalog.routes.has("ab__ToolSearch"))
    assert.isFalse(catalog.routes.has("ToolSearch"))
  })
})

// Mutation-testing follow-ups (docs/mutation.md): Pipeline's helpers and NameBudget's claim resolution.
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
