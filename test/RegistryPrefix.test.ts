// Per-source `prefix` (issue 12, ADR 022): the wire names of tools, prompts and task ids, the way back, the collisions
// an empty prefix makes possible, and the config's rules for the key.
import { assert, describe, it } from "@effect/vitest"
import { assertLeft, assertNone, assertRight, assertSome } from "@effect/vitest/utils"
import { Either } from "effect"
import type { Tool } from "../src/domain/Mcp.js"
import type { Prompt } from "../src/domain/Surface.js"
import { parseConfig } from "../src/services/Config.js"
import * as Catalog from "../src/services/Registry/Catalog.js"
import { coreSpecs } from "../src/services/CoreTools.js"
import * as Manifest from "../src/services/CoreTools/Manifest.js"
import * as NameBudget from "../src/services/Registry/NameBudget.js"
import * as S from "../src/services/Registry/Surface.js"

const manifest = Either.getOrThrow(Manifest.make(coreSpecs))
const tool = (name: string): Tool => ({ name, inputSchema: { type: "object" } }) as Tool

const catalogOf = (
  sources: ReadonlyArray<readonly [string, ReadonlyArray<string>]>,
  table: Record<string, string>
): Catalog.Catalog =>
  Catalog.build({
    manifest,
    sources: sources.map(([instance, names]) => ({ instance, tools: names.map(tool) })),
    toolConfig: {},
    budget: 64,
    prefixes: NameBudget.makePrefixes(table)
  })

const sourceWires = (catalog: Catalog.Catalog) =>
  catalog.entries.filter((entry) => entry.kind === "source" && entry.listed).map((entry) => entry.wire)

describe("prefix: tool wire names", () => {
  it('prefix = "gh" gives gh__<tool>, prefix = "" the tool\'s own name; routes lead back to the instance', () => {
    const catalog = catalogOf(
      [
        ["github", ["create_issue"]],
        ["conf", ["test_simple_text"]],
        ["fs", ["read"]]
      ],
      { github: "gh", conf: "", fs: "fs" }
    )
    assert.deepStrictEqual(sourceWires(catalog), ["fs__read", "gh__create_issue", "test_simple_text"])
    assert.deepStrictEqual(catalog.routes.get("gh__create_issue"), { instance: "github", tool: "create_issue" })
    assert.deepStrictEqual(catalog.routes.get("test_simple_text"), { instance: "conf", tool: "test_simple_text" })
    assert.deepStrictEqual(catalog.collisions, [])
  })

  it("without a table every instance is its own prefix (as before)", () => {
    const catalog = catalogOf([["github", ["create_issue"]]], {})
    assert.deepStrictEqual(sourceWires(catalog), ["github__create_issue"])
  })

  it("unprefixed names that collide are reported and resolved by label, whatever the order of the sources", () => {
    const sources = [
      ["beta", ["read", "only_beta"]],
      ["alpha", ["read"]],
      ["fs", ["x"]],
      ["zed", ["fs__x"]]
    ] as const
    const table = { alpha: "", beta: "", fs: "fs", zed: "" }
    for (const order of [sources, [...sources].reverse()]) {
      const catalog = catalogOf(order, table)
      assert.deepStrictEqual(sourceWires(catalog), ["fs__x", "only_beta", "read"])
      assert.deepStrictEqual(catalog.routes.get("read"), { instance: "alpha", tool: "read" })
      assert.deepStrictEqual(catalog.collisions, [
        { wire: "fs__x", kept: "fs.x", dropped: ["zed.fs__x"] },
        { wire: "read", kept: "alpha.read", dropped: ["beta.read"] }
      ])
    }
  })

  it("an unprefixed tool named like a core tool loses to the core tool", () => {
    const core = manifest.tools[0]!.tool.name
    const catalog = catalogOf([["conf", [core, "other"]]], { conf: "" })
    assert.deepStrictEqual(sourceWires(catalog), ["other"])
    assert.deepStrictEqual(catalog.collisions, [{ wire: core, kept: core, dropped: [`conf.${core}`] }])
  })

  it("the budget still applies to unprefixed names", () => {
    const long = "t".repeat(80)
    const [wire] = sourceWires(catalogOf([["conf", [long]]], { conf: "" }))
    assert.strictEqual(wire!.length, 64)
    assert.isTrue(wire!.startsWith("t".repeat(55)))
  })
})

describe("prefix: routing names back", () => {
  const prefixes = NameBudget.makePrefixes({ github: "gh", conf: "", fs: "fs" })

  it("a known prefix names its instance; anything else belongs to the one unprefixed source", () => {
    assertSome(prefixes.route("gh__create_issue"), { instance: "github", name: "create_issue" })
    assertSome(prefixes.route("fs__a__b"), { instance: "fs", name: "a__b" })
    assertSome(prefixes.route("test_prompt"), { instance: "conf", name: "test_prompt" })
    // github's own name is not its prefix any more.
    assertSome(prefixes.route("github__x"), { instance: "conf", name: "github__x" })
  })

  it("with no unprefixed source an unknown name routes nowhere; with two it is ambiguous", () => {
    const plain = NameBudget.makePrefixes({ github: "gh" })
    assertNone(plain.route("github__x"))
    assertNone(plain.route("x"))
    assertSome(plain.route("other__x"), { instance: "other", name: "x" })
    const two = NameBudget.makePrefixes({ a: "", b: "" })
    assertNone(two.route("x"))
  })

  it("task ids: unprefixed for a prefix-less source, reversible either way", () => {
    assert.strictEqual(S.hostTaskId("conf", "t1", prefixes), "t1")
    assert.strictEqual(S.hostTaskId("github", "t1", prefixes), "gh__t1")
    assertRight(S.routeTaskId("t1", prefixes), { instance: "conf", taskId: "t1" })
    assertRight(S.routeTaskId("gh__t1", prefixes), { instance: "github", taskId: "t1" })
    assert.deepStrictEqual(S.mapTask("conf", { taskId: "t1" }, prefixes), { taskId: "t1" })
    assert.deepStrictEqual(S.mapTask("github", { taskId: "t1" }, prefixes), { taskId: "gh__t1" })
  })

  it("prompts: served under the prefix, collisions resolved by label and routed to the kept one", () => {
    const surfaceOf = (instance: string, prompts: ReadonlyArray<string>): S.SurfaceInput => ({
      instance,
      capabilities: { prompts: {} },
      surface: {
        tools: [],
        resources: [],
        resourceTemplates: [],
        prompts: prompts.map((name): Prompt => ({ name }) as Prompt)
      }
    })
    const table = NameBudget.makePrefixes({ github: "gh", conf: "", other: "" })
    const surface = S.build(
      [surfaceOf("other", ["greet"]), surfaceOf("github", ["greet"]), surfaceOf("conf", ["greet", "solo"])],
      table
    )
    assert.deepStrictEqual(
      surface.prompts.map((prompt) => prompt.name),
      ["gh__greet", "greet", "solo"]
    )
    assert.deepStrictEqual(surface.promptCollisions, [{ wire: "greet", kept: "conf.greet", dropped: ["other.greet"] }])
    assertRight(S.routePrompt(surface, "greet"), { instance: "conf", name: "greet" })
    assertRight(S.routePrompt(surface, "solo"), { instance: "conf", name: "solo" })
    assertRight(S.routePrompt(surface, "gh__greet"), { instance: "github", name: "greet" })
    // Not listed, and two sources share the empty prefix: nothing tells them apart.
    assert.strictEqual(Either.flip(S.routePrompt(surface, "unlisted")).pipe(Either.getOrThrow).code, -32602)
  })
})

describe("prefix: config", () => {
  const parse = (text: string) => parseConfig(text, "/x/config.toml", "toml")

  it('accepts kebab-case and ""', () => {
    const config = Either.getOrThrow(
      parse(`[sources.github]\ncommand = ["gh"]\nprefix = "gh"\n[sources.conf]\ncommand = ["c"]\nprefix = ""`)
    )
    assert.strictEqual(config.sources.github!.prefix, "gh")
    assert.strictEqual(config.sources.conf!.prefix, "")
  })

  it("rejects a prefix that is not kebab-case, at its line", () => {
    const result = parse(`[sources.github]\ncommand = ["gh"]\nprefix = "Git_Hub"`)
    assertLeft(
      Either.mapLeft(result, (error) => error.message),
      `config /x/config.toml:3 at sources.github.prefix: prefix is kebab-case (a-z, 0-9, single dashes) or "" for the tools' own names, got "Git_Hub"; use "git-hub"`
    )
  })

  it("rejects a prefix another source already has (its own name included), naming both", () => {
    const taken = parse(`[sources.fs]\ncommand = ["a"]\n[sources.files]\ncommand = ["b"]\nprefix = "fs"`)
    assert.include(Either.flip(taken).pipe(Either.getOrThrow).message, `at sources.files.prefix: prefix "fs"`)
    assert.include(Either.flip(taken).pipe(Either.getOrThrow).message, `of source "fs"`)
    const twice = parse(`[sources.aa]\ncommand = ["a"]\nprefix = "x"\n[sources.bb]\ncommand = ["b"]\nprefix = "x"`)
    assert.include(Either.flip(twice).pipe(Either.getOrThrow).message, `at sources.bb.prefix: prefix "x"`)
    // Several sources may share the empty prefix: their names collide (and are reported) instead.
    assert.isTrue(
      Either.isRight(parse(`[sources.aa]\ncommand = ["a"]\nprefix = ""\n[sources.bb]\ncommand = ["b"]\nprefix = ""`))
    )
  })
})
