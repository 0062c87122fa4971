// Profiles as views over the one catalog (issue 26): each view lists, searches and routes only its own tools, under
// the wire names the whole catalog gives them; a name outside the view is refused as an unknown name is.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, Stream } from "effect"
import { CallError } from "../../src/domain/Errors.js"
import type { CallToolResult, Tool } from "../../src/domain/Mcp.js"
import { Config, parseConfig } from "../../src/services/Config.js"
import { CoreTools } from "../../src/services/CoreTools.js"
import { Registry } from "../../src/services/Registry.js"
import type { InstanceTools } from "../../src/services/Registry/Catalog.js"
import { Sources } from "../../src/services/Sources.js"

const tool = (name: string, readOnly = false): Tool => ({
  name,
  description: `does ${name} with the repository`,
  inputSchema: { type: "object" },
  annotations: { readOnlyHint: readOnly }
})

const catalog: ReadonlyArray<InstanceTools> = [
  { instance: "fs", tools: [tool("read_file", true), tool("write_file")] },
  { instance: "gh", tools: [tool("create_issue"), tool("delete_repo"), tool("list_issues", true)] },
  { instance: "mem", tools: [tool("recall", true), tool("remember")] }
]

const configText = `
[sources.fs]
command = ["fs"]
tags = ["code"]
[sources.gh]
command = ["gh"]
[sources.mem]
command = ["mem"]
[profiles.code]
tags = ["code"]
sources = ["gh"]
tools = ["*", "!gh.delete_*"]
core_tools = ["Read"]
[profiles.chat]
sources = ["mem"]
catalog = "search"
[profiles.ro]
read_only = true
`

const layer = () => {
  const sources = new Sources({
    reconfigure: () => Effect.dieMessage("not reloaded in this test"),
    restart: () => Effect.dieMessage("not restarted in this test"),
    reportReload: () => Effect.void,
    names: ["fs", "gh", "mem"],
    awaitSettled: Effect.void,
    awaitListed: Effect.void,
    catalog: Effect.succeed([...catalog]),
    catalogNow: () => [...catalog],
    connectionNow: () => undefined,
    awaitInstance: () => Effect.void,
    health: Effect.succeed([]),
    callTool: (instance, request) =>
      Effect.succeed({ content: [{ type: "text", text: `${instance}:${request.name}` }] } satisfies CallToolResult),
    changes: Stream.never,
    connection: () => Effect.succeed(undefined as never),
    running: Effect.succeed([])
  })
  const config = Either.getOrThrow(parseConfig(configText, "test.toml"))
  return Registry.DefaultWithoutDependencies.pipe(
    Layer.provide(CoreTools.ProviderWithoutDependencies),
    Layer.provide(Layer.merge(Layer.succeed(Sources, sources), Config.layerTest(config)))
  )
}

const names = (tools: ReadonlyArray<Tool>) => tools.map((listed) => listed.name)
const sourceNames = (tools: ReadonlyArray<Tool>) => names(tools).filter((name) => name.includes("__"))

describe("Registry: profiles are views over the one catalog", () => {
  it.effect("each view lists its sources' tools under the whole catalog's wire names", () =>
    Effect.gen(function* () {
      const registry = yield* Registry
      const whole = yield* registry.list()
      const code = yield* registry.viewOf("code").list()
      const ro = yield* registry.viewOf("ro").list()
      assert.deepStrictEqual(sourceNames(code), [
        "fs__read_file",
        "fs__write_file",
        "gh__create_issue",
        "gh__list_issues"
      ])
      // Core tools: the ones named, and the registry's own.
      assert.deepStrictEqual(
        names(code).filter((name) => !name.includes("__")),
        ["Read", "SourceHealth", "ToolSearch"]
      )
      assert.deepStrictEqual(sourceNames(ro), ["fs__read_file", "gh__list_issues", "mem__recall"])
      assert.includeMembers(names(ro), ["Read", "Grep", "Glob"])
      assert.notInclude(names(ro), "Bash")
      // The very objects the whole catalog lists: same names, same bytes.
      const byName = new Map(whole.map((listed) => [listed.name, listed]))
      for (const listed of [...code, ...ro]) assert.strictEqual(listed, byName.get(listed.name))
      // Search mode for chat alone: CallTool and the hot set (core tools), no source tool; the whole catalog is full.
      const chat = yield* registry.viewOf("chat").catalog
      assert.include(names(chat.host.tools), "CallTool")
      assert.deepStrictEqual(sourceNames(chat.host.tools), [])
      assert.notInclude(names(whole), "CallTool")
      assert.deepStrictEqual(sourceNames(chat.tools), ["mem__recall", "mem__remember"])
      assert.notStrictEqual(chat.hash, (yield* registry.catalog).hash)
    }).pipe(Effect.provide(layer()))
  )

  it.effect("a call outside the view is answered as an unknown name; one inside is routed", () =>
    Effect.gen(function* () {
      const registry = yield* Registry
      const code = registry.viewOf("code")
      const inside = yield* code.call("gh__create_issue", {})
      assert.deepStrictEqual(inside.content, [{ type: "text", text: "gh:create_issue" }])
      const unknown = (wire: string) => Effect.flip(registry.viewOf("code").call(wire, {}))
      const outside = yield* unknown("mem__recall")
      assert.instanceOf(outside, CallError)
      assert.strictEqual(outside.reason, "NoSuchTool")
      assert.strictEqual(outside.detail, `unknown tool "mem__recall"`)
      assert.strictEqual((yield* unknown("nothing__at_all")).detail, `unknown tool "nothing__at_all"`)
      // Excluded by a selector, in a source of the view: as a name that source does not list.
      assert.strictEqual(
        (yield* unknown("gh__delete_repo")).detail,
        `source "gh" has no tool listed as "gh__delete_repo"`
      )
      assert.strictEqual(
        (yield* unknown("gh__no_such_tool")).detail,
        `source "gh" has no tool listed as "gh__no_such_tool"`
      )
      // A core tool outside the view.
      assert.strictEqual((yield* unknown("Bash")).detail, `unknown tool "Bash"`)
      assert.isUndefined(code.relayCall("mem__recall", {}, () => {}))
      assert.isUndefined(code.routeNow("mem__recall"))
      // The whole catalog still routes it.
      assert.deepStrictEqual(registry.routeNow("mem__recall"), { instance: "mem", tool: "recall" })
    }).pipe(Effect.provide(layer()))
  )

  it.effect("ToolSearch finds nothing outside the view", () =>
    Effect.gen(function* () {
      const registry = yield* Registry
      const whole = yield* registry.search("repository", 50)
      assert.includeMembers(
        whole.hits.map((hit) => hit.name),
        ["mem__recall", "gh__delete_repo"]
      )
      const code = yield* registry.viewOf("code").search("repository", 50)
      assert.deepStrictEqual(code.hits.map((hit) => hit.name).sort(), [
        "fs__read_file",
        "fs__write_file",
        "gh__create_issue",
        "gh__list_issues"
      ])
      // Through the core tool itself, as a host calls it.
      const result = yield* registry.viewOf("code").call("ToolSearch", { arguments: { query: "recall repository" } })
      assert.notInclude(JSON.stringify(result), "mem__")
    }).pipe(Effect.provide(layer()))
  )

  it.effect("a profile the config does not define sees nothing", () =>
    Effect.gen(function* () {
      const registry = yield* Registry
      assert.deepStrictEqual(names(yield* registry.viewOf("gone").list()), [])
      assert.deepStrictEqual(registry.profileNames(), ["code", "chat", "ro"])
    }).pipe(Effect.provide(layer()))
  )
})
