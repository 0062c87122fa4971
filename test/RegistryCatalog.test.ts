import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import { ToolConfig } from "../src/domain/Config.js"
import type { Tool } from "../src/domain/Mcp.js"
import * as Catalog from "../src/services/Registry/Catalog.js"
import { coreSpecs, registrySpecs } from "../src/services/CoreTools.js"
import * as Manifest from "../src/services/CoreTools/Manifest.js"
import * as NameBudget from "../src/services/Registry/NameBudget.js"
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

// Mutation-testing follow-ups (docs/mutation.md): Catalog.build's memoised parts must never serve a stale answer
// when the same tool objects come back under another instance, budget or config; and the entries' rules.
const registryManifest = Either.getOrThrow(Manifest.make(registrySpecs))
const bareTool = (name: string): Tool => ({ name, description: `does ${name}`, inputSchema: { type: "object" } })
const long = `operation_${"x".repeat(40)}`

const build = (
  sources: ReadonlyArray<Catalog.InstanceTools>,
  toolConfig: Readonly<Record<string, ToolConfig>> = {},
  budget = 64
) => Catalog.build({ manifest: registryManifest, sources, toolConfig, budget })
const names = (catalog: Catalog.Catalog) => catalog.tools.map((t) => t.name)

describe("Catalog.build reuses work only for identical inputs", () => {
  it("the same tool array under another budget or another instance gets new wire names", () => {
    const tools = [bareTool("read"), bareTool(long)]
    const wide = build([{ instance: "fs", tools }])
    assert.includeMembers(names(wide), ["fs__read", `fs__${long}`])
    const renamed = build([{ instance: "disk", tools }])
    assert.includeMembers(names(renamed), ["disk__read", `disk__${long}`])
    assert.notInclude(names(renamed), "fs__read")
    assert.deepStrictEqual(renamed.routes.get("disk__read"), { instance: "disk", tool: "read" })
    const narrow = build([{ instance: "fs", tools }], {}, 30)
    assert.include(names(narrow), "fs__read")
    assert.notInclude(names(narrow), `fs__${long}`)
    for (const name of names(narrow)) assert.isAtMost(name.length, 30, name)
  })

  it("the same tool array under a smaller budget, right after the first build, is shortened", () => {
    const tools = [bareTool(long)]
    assert.include(names(build([{ instance: "fs", tools }])), `fs__${long}`)
    for (const name of names(build([{ instance: "fs", tools }], {}, 30))) assert.isAtMost(name.length, 30, name)
  })

  it("the same tool array under a new config: hints, alwaysLoad and enabled follow the config", () => {
    const tools = [bareTool("read"), bareTool("write")]
    const plain = build([{ instance: "fs", tools }])
    const readOf = (catalog: Catalog.Catalog) => catalog.tools.find((t) => t.name === "fs__read")
    assert.isUndefined(readOf(plain)!._meta)
    const hinted = build([{ instance: "fs", tools }], {
      "fs.read": new ToolConfig({ usage_hint: "read before writing", always_load: true })
    })
    assert.deepStrictEqual(readOf(hinted)!._meta, {
      "anthropic/alwaysLoad": true,
      clawtool: { usage_hint: "read before writing" }
    })
    const hintOnly = build([{ instance: "fs", tools }], { "fs.read": new ToolConfig({ usage_hint: "other hint" }) })
    assert.deepStrictEqual(readOf(hintOnly)!._meta, { clawtool: { usage_hint: "other hint" } })
    const hotOnly = build([{ instance: "fs", tools }], {
      "fs.read": new ToolConfig({ usage_hint: "other hint", always_load: true })
    })
    assert.deepStrictEqual(readOf(hotOnly)!._meta, {
      "anthropic/alwaysLoad": true,
      clawtool: { usage_hint: "other hint" }
    })
    const rehinted = build([{ instance: "fs", tools }], {
      "fs.read": new ToolConfig({ usage_hint: "third hint", always_load: true })
    })
    assert.deepStrictEqual(readOf(rehinted)!._meta, {
      "anthropic/alwaysLoad": true,
      clawtool: { usage_hint: "third hint" }
    })
    const off = build([{ instance: "fs", tools }], { "fs.read": new ToolConfig({ enabled: false }) })
    assert.isUndefined(readOf(off))
    assert.isUndefined(readOf(build([{ instance: "fs", tools }]))!._meta, "back to the plain form")
  })

  it("the same tool array under another prefix, or another instance with the same prefix, gets its names and routes", () => {
    const tools = [bareTool("read")]
    const under = (instance: string, prefix: string) =>
      Catalog.build({
        manifest: registryManifest,
        sources: [{ instance, tools }],
        toolConfig: {},
        budget: 64,
        prefixes: NameBudget.makePrefixes({ [instance]: prefix })
      })
    assert.include(names(build([{ instance: "fs", tools }])), "fs__read")
    const files = under("fs", "files")
    assert.deepStrictEqual(names(files), ["SourceHealth", "ToolSearch", "files__read"])
    assert.deepStrictEqual(files.routes.get("files__read"), { instance: "fs", tool: "read" })
    const disk = under("disk", "files")
    assert.deepStrictEqual(names(disk), ["SourceHealth", "ToolSearch", "files__read"])
    assert.deepStrictEqual(disk.routes.get("files__read"), { instance: "disk", tool: "read" })
    assert.deepStrictEqual(
      disk.entries.filter((entry) => entry.kind === "source").map((entry) => [entry.instance, entry.wire]),
      [["disk", "files__read"]]
    )
  })

  it("a config change for one tool keeps the listed objects of the instance's other tools", () => {
    const tools = [bareTool("read"), bareTool("write")]
    const before = build([{ instance: "fs", tools }])
    const after = build([{ instance: "fs", tools }], { "fs.read": new ToolConfig({ usage_hint: "read first" }) })
    const byName = (catalog: Catalog.Catalog, name: string) => catalog.tools.find((t) => t.name === name)
    assert.strictEqual(byName(after, "fs__write"), byName(before, "fs__write"))
    assert.notStrictEqual(byName(after, "fs__read"), byName(before, "fs__read"))
  })

  it("a config key without a dot is not read as <instance>.<tool>", () => {
    const catalog = build([{ instance: "rea", tools: [bareTool("read")] }], {
      read: new ToolConfig({ enabled: false })
    })
    assert.include(names(catalog), "rea__read")
  })

  it("config keys without an instance part are ignored", () => {
    const catalog = build([{ instance: "fs", tools: [bareTool("read")] }], {
      read: new ToolConfig({ enabled: false }),
      ".read": new ToolConfig({ enabled: false })
    })
    assert.include(names(catalog), "fs__read")
  })
})

describe("Catalog host views, built once per catalog", () => {
  it("each view is one object however often it is read; its tokens are the sum of its tools'", () => {
    const catalog = build([{ instance: "gh", tools: [bareTool("a"), bareTool("b")] }], {
      "gh.a": new ToolConfig({ always_load: true })
    })
    const search = catalog.view("search")
    assert.strictEqual(catalog.view("search"), search)
    assert.strictEqual(catalog.view("full"), catalog.view("full"))
    const sum = (tools: ReadonlyArray<Tool>) => tools.reduce((total, t) => total + Pipeline.estimateTokens(t), 0)
    assert.deepStrictEqual(
      search.tools.map((t) => t.name),
      ["CallTool", "ToolSearch", "gh__a"]
    )
    assert.strictEqual(search.tokens, sum(search.tools))
    assert.strictEqual(catalog.view("full").tokens, sum(catalog.tools))
  })

  it('search: a source tool served as CallTool (prefix "") gives way to clawtool\'s; the list stays in name order', () => {
    const catalog = Catalog.build({
      manifest: registryManifest,
      sources: [{ instance: "conf", tools: [bareTool("CallTool"), bareTool("Apply"), bareTool("zeta")] }],
      toolConfig: {
        "conf.CallTool": new ToolConfig({ always_load: true }),
        "conf.Apply": new ToolConfig({ always_load: true }),
        "conf.zeta": new ToolConfig({ always_load: true })
      },
      budget: 64,
      prefixes: NameBudget.makePrefixes({ conf: "" }),
      mode: "search"
    })
    assert.deepStrictEqual(
      catalog.host.tools.map((t) => t.name),
      ["Apply", "CallTool", "ToolSearch", "zeta"]
    )
    const callTool = catalog.host.tools.find((t) => t.name === "CallTool")!
    assert.notStrictEqual(callTool.description, "does CallTool")
    assert.strictEqual(catalog.tools.find((t) => t.name === "CallTool")!.description, "does CallTool")
  })
})

describe("Catalog.build entries", () => {
  it("every tool with its status and rule, sorted by wire name then selector; routes for listed source tools", () => {
    const catalog = build(
      [
        { instance: "gh", tools: [bareTool("x.y"), bareTool("x_y"), bareTool("off")] },
        { instance: "fs", tools: [bareTool("read")] }
      ],
      { "gh.off": new ToolConfig({ enabled: false }) }
    )
    const rows = catalog.entries.map((entry) => [entry.wire, entry.original, entry.status, entry.rule, entry.listed])
    assert.deepStrictEqual(rows, [
      ["SourceHealth", "SourceHealth", "listed", "core", true],
      ["ToolSearch", "ToolSearch", "listed", "core", true],
      ["fs__read", "read", "listed", "default", true],
      ["gh__off", "off", "disabled", `tools."gh.off".enabled`, false],
      ["gh__x_y", "x.y", "collision", "collision with gh.x_y", false],
      ["gh__x_y", "x_y", "listed", "default", true]
    ])
    assert.deepStrictEqual(
      [...catalog.routes.keys()].sort(),
      ["fs__read", "gh__x_y"],
      "core tools and unlisted tools have no route"
    )
    assert.deepStrictEqual(catalog.routes.get("gh__x_y"), { instance: "gh", tool: "x_y" })
    assert.deepStrictEqual(
      catalog.collisions.map((c) => [c.wire, c.kept, c.dropped]),
      [["gh__x_y", "gh.x_y", ["gh.x.y"]]]
    )
  })

  it("core entries have no instance and keep their names; tied wire names list by selector", () => {
    const catalog = build([{ instance: "gh", tools: [bareTool("x_y"), bareTool("x.y")] }])
    const core = catalog.entries.find((entry) => entry.wire === "ToolSearch")!
    assert.strictEqual(core.instance, "")
    assert.strictEqual(core.shaping, "as-is")
    assert.deepStrictEqual(
      catalog.entries.filter((entry) => entry.wire === "gh__x_y").map((entry) => entry.original),
      ["x.y", "x_y"]
    )
  })

  it("collisions of several instances are reported in wire-name order", () => {
    const catalog = build([
      { instance: "gh", tools: [bareTool("x.y"), bareTool("x_y")] },
      { instance: "fs", tools: [bareTool("a.b"), bareTool("a_b")] }
    ])
    assert.deepStrictEqual(
      catalog.collisions.map((c) => c.wire),
      ["fs__a_b", "gh__x_y"]
    )
  })

  it("a wire name claimed across instances (a hash collision): the whole list is still sorted", () => {
    // Both shorten to abcdefghijklmno_a26b3a26 under a budget of 24 (see RegistryNameBudget.test.ts).
    const catalog = build(
      [
        { instance: "abcdefghijklmno-b", tools: [bareTool("zz"), bareTool("t16644"), bareTool("aa")] },
        { instance: "abcdefghijklmno-a", tools: [bareTool("zz"), bareTool("t95251"), bareTool("aa")] }
      ],
      {},
      24
    )
    const listed = names(catalog)
    assert.deepStrictEqual(listed, [...listed].sort())
    assert.strictEqual(listed.filter((name) => name === "abcdefghijklmno_a26b3a26").length, 1)
    assert.strictEqual(catalog.collisions.length, 1)
  })

  it("listJson is tools/list's answer, byte for byte", () => {
    const catalog = build([{ instance: "fs", tools: [bareTool("b"), bareTool("a")] }])
    assert.strictEqual(catalog.listJson, JSON.stringify({ tools: catalog.tools }))
    assert.strictEqual(catalog.listJson, catalog.listJson)
  })
})
