// Mutation-testing follow-ups (docs/mutation.md): Catalog.build's memoised parts must never serve a stale answer
// when the same tool objects come back under another instance, budget or config; and the entries' rules.
import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import { ToolConfig } from "../../src/domain/Config.js"
import type { Tool } from "../../src/domain/Mcp.js"
import * as Catalog from "../../src/services/Registry/Catalog.js"
import { registrySpecs } from "../../src/services/CoreTools.js"
import * as Manifest from "../../src/services/CoreTools/Manifest.js"

const manifest = Either.getOrThrow(Manifest.make(registrySpecs))
const tool = (name: string): Tool => ({ name, description: `does ${name}`, inputSchema: { type: "object" } })
const long = `operation_${"x".repeat(40)}`

const build = (
  sources: ReadonlyArray<Catalog.InstanceTools>,
  toolConfig: Readonly<Record<string, ToolConfig>> = {},
  budget = 64
) => Catalog.build({ manifest, sources, toolConfig, budget })
const names = (catalog: Catalog.Catalog) => catalog.tools.map((t) => t.name)

describe("Catalog.build reuses work only for identical inputs", () => {
  it("the same tool array under another budget or another instance gets new wire names", () => {
    const tools = [tool("read"), tool(long)]
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
    const tools = [tool(long)]
    assert.include(names(build([{ instance: "fs", tools }])), `fs__${long}`)
    for (const name of names(build([{ instance: "fs", tools }], {}, 30))) assert.isAtMost(name.length, 30, name)
  })

  it("the same tool array under a new config: hints, alwaysLoad and enabled follow the config", () => {
    const tools = [tool("read"), tool("write")]
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

  it("a config key without a dot is not read as <instance>.<tool>", () => {
    const catalog = build([{ instance: "rea", tools: [tool("read")] }], { read: new ToolConfig({ enabled: false }) })
    assert.include(names(catalog), "rea__read")
  })

  it("config keys without an instance part are ignored", () => {
    const catalog = build([{ instance: "fs", tools: [tool("read")] }], {
      read: new ToolConfig({ enabled: false }),
      ".read": new ToolConfig({ enabled: false })
    })
    assert.include(names(catalog), "fs__read")
  })
})

describe("Catalog.build entries", () => {
  it("every tool with its status and rule, sorted by wire name then selector; routes for listed source tools", () => {
    const catalog = build(
      [
        { instance: "gh", tools: [tool("x.y"), tool("x_y"), tool("off")] },
        { instance: "fs", tools: [tool("read")] }
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
    const catalog = build([{ instance: "gh", tools: [tool("x_y"), tool("x.y")] }])
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
      { instance: "gh", tools: [tool("x.y"), tool("x_y")] },
      { instance: "fs", tools: [tool("a.b"), tool("a_b")] }
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
        { instance: "abcdefghijklmno-b", tools: [tool("zz"), tool("t16644"), tool("aa")] },
        { instance: "abcdefghijklmno-a", tools: [tool("zz"), tool("t95251"), tool("aa")] }
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
    const catalog = build([{ instance: "fs", tools: [tool("b"), tool("a")] }])
    assert.strictEqual(catalog.listJson, JSON.stringify({ tools: catalog.tools }))
    assert.strictEqual(catalog.listJson, catalog.listJson)
  })
})
