import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import { ToolConfig } from "../src/domain/Config.js"
import type { Tool } from "../src/domain/Mcp.js"
import * as Catalog from "../src/services/Registry/Catalog.js"
import { coreSpecs } from "../src/services/CoreTools.js"
import * as Manifest from "../src/services/CoreTools/Manifest.js"
import * as Pipeline from "../src/services/Registry/Pipeline.js"

const manifest = Either.getOrThrow(Manifest.make(coreSpecs))

// Keys in a child's order (not canonical), as children send them.
const tool = (name: string, description = `does ${name}`): Tool =>
  ({
    name,
    description,
    inputSchema: { type: "object", properties: { q: { type: "string" }, a: { type: "number" } } }
  }) as Tool

const toolConfig: Readonly<Record<string, ToolConfig>> = {
  "gh.hinted": new ToolConfig({ usage_hint: "use for issues", always_load: true }),
  "gh.off": new ToolConfig({ enabled: false })
}

const input = (gh: ReadonlyArray<Tool>, fs: ReadonlyArray<Tool>, config = toolConfig): Catalog.CatalogInput => ({
  manifest,
  sources: [
    { instance: "gh", tools: gh },
    { instance: "fs", tools: fs }
  ],
  toolConfig: config,
  budget: 64
})

describe("Catalog.build", () => {
  it("each listed tool is canonicalised once: the hash and token counts agree with Pipeline's", () => {
    const gh = [tool("hinted"), tool("off"), tool("x.y"), tool("x_y", "the same wire name as x.y")]
    const catalog = Catalog.build(input(gh, [tool("read")]))
    assert.strictEqual(catalog.hash, Pipeline.catalogHash(catalog.tools))
    for (const entry of catalog.entries) assert.strictEqual(entry.tokens, Pipeline.estimateTokens(entry.tool))
    // The listed tools are what Pipeline.pipeline then canonical give.
    const listed = catalog.entries.filter((entry) => entry.listed)
    const reference = Pipeline.pipeline(
      listed
        .filter((entry) => entry.kind === "source")
        .map((entry) => ({ ...gh.concat(tool("read")).find((t) => t.name === entry.original)!, name: entry.wire })),
      { hints: new Map([["gh__hinted", "use for issues"]]), alwaysLoad: new Set(["gh__hinted"]) }
    ).map((t) => Pipeline.canonical(t))
    assert.strictEqual(JSON.stringify(catalog.tools.filter((t) => t.name.includes("__"))), JSON.stringify(reference))
    assert.deepStrictEqual(
      catalog.entries.filter((entry) => !entry.listed).map((entry) => [entry.original, entry.status]),
      [
        ["off", "disabled"],
        ["x.y", "collision"]
      ]
    )
    // A listed entry's tool is the very object tools/list sends.
    for (const entry of listed) assert.isTrue(catalog.tools.includes(entry.tool))
    assert.deepStrictEqual(catalog.routes.get("gh__x_y"), { instance: "gh", tool: "x_y" })
  })

  it("listJson is exactly the tools/list result, serialised once", () => {
    const catalog = Catalog.build(input([tool("b"), tool("a")], [tool("read")]))
    assert.strictEqual(catalog.listJson, JSON.stringify({ tools: catalog.tools }))
    assert.strictEqual(catalog.listJson, catalog.listJson)
  })

  it("a rebuild after one instance re-listed reuses every other instance's listed objects", () => {
    const gh = [tool("hinted"), tool("issues")]
    const first = Catalog.build(input(gh, [tool("read")]))
    const second = Catalog.build(input(gh, [tool("read"), tool("write")]))
    const byName = (catalog: Catalog.Catalog, name: string) => catalog.tools.find((t) => t.name === name)
    assert.strictEqual(byName(second, "gh__hinted"), byName(first, "gh__hinted"))
    assert.strictEqual(byName(second, "gh__issues"), byName(first, "gh__issues"))
    assert.notStrictEqual(byName(second, "fs__read"), byName(first, "fs__read"))
    assert.deepStrictEqual(byName(second, "fs__read"), byName(first, "fs__read"))
    assert.notStrictEqual(second.hash, first.hash)
    // Same tools, same config: the same bytes and hash.
    assert.strictEqual(Catalog.build(input(gh, [tool("read"), tool("write")])).hash, second.hash)
  })

  it("a different config re-shapes the same tool objects", () => {
    const gh = [tool("hinted")]
    const before = Catalog.build(input(gh, []))
    const after = Catalog.build(input(gh, [], { "gh.hinted": new ToolConfig({ usage_hint: "another hint" }) }))
    const hinted = after.tools.find((t) => t.name === "gh__hinted")!
    assert.deepStrictEqual(hinted._meta, { clawtool: { usage_hint: "another hint" } })
    assert.notStrictEqual(after.hash, before.hash)
    assert.strictEqual(after.hash, Pipeline.catalogHash(after.tools))
  })
})

describe("Catalog host views (catalog = full | search, ADR 025)", () => {
  it("full: every listed tool; search: the alwaysLoad tools and CallTool, sorted, with their own hash and tokens", () => {
    const gh = [tool("create_issue"), tool("hinted")]
    const full = Catalog.build(input(gh, [tool("read")]))
    assert.strictEqual(full.host, full.view("full"))
    assert.strictEqual(full.host.tools, full.tools)
    assert.strictEqual(full.host.hash, full.hash)
    assert.strictEqual(full.host.listJson, full.listJson)

    const search = Catalog.build({ ...input(gh, [tool("read")]), mode: "search" })
    assert.strictEqual(search.hash, full.hash, "routing and search see the same catalog")
    assert.deepStrictEqual(search.tools, full.tools)
    const names = search.host.tools.map((shown) => shown.name)
    const hot = full.tools.filter((shown) => shown._meta?.[Pipeline.alwaysLoadKey] === true).map((shown) => shown.name)
    assert.deepStrictEqual(names, [...hot, "CallTool"].sort())
    assert.notStrictEqual(search.host.hash, full.hash)
    assert.strictEqual(search.host.hash, Pipeline.catalogHash(search.host.tools))
    assert.deepStrictEqual(JSON.parse(search.host.listJson), { tools: search.host.tools })
    assert.isBelow(search.host.tokens, full.host.tokens)
    assert.strictEqual(search.view("full").tokens, full.host.tokens)
  })
})
