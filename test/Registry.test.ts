import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, Ref, Stream } from "effect"
import { ClawtoolConfig, CoreToolsConfig } from "../src/domain/Config.js"
import { CallError } from "../src/domain/Errors.js"
import { HealthRow, type Status } from "../src/domain/Health.js"
import type { CallToolRequest, CallToolResult, Tool } from "../src/domain/Mcp.js"
import { Config, parseConfig } from "../src/services/Config.js"
import { CoreTools } from "../src/services/CoreTools.js"
import { Registry } from "../src/services/Registry.js"
import type { InstanceTools } from "../src/services/Registry/Catalog.js"
import { Sources } from "../src/services/Sources.js"

const tool = (name: string, extra: Partial<Tool> = {}): Tool => ({
  name,
  description: `does ${name}`,
  inputSchema: { type: "object", properties: { path: { type: "string" } } },
  ...extra
})

const row = (name: string, status: Status, reason = "") =>
  new HealthRow({
    name,
    status,
    reason,
    toolCount: 0,
    package: name,
    pid: null,
    startedAt: null,
    startupMs: null,
    stderrTail: []
  })

const longTool = `trigger_${"very_".repeat(12)}long_operation`

const configText = [
  "name_budget = 40",
  `[sources.gh]\ncommand = ["gh"]`,
  `[sources.fs]\ncommand = ["fs"]`,
  `[sources.off]\ncommand = ["off"]`,
  `[tools."gh.create_issue"]\nusage_hint = "Search for duplicates before creating an issue."\nalways_load = true`,
  `[tools."gh.delete_repo"]\nenabled = false`
].join("\n")

interface Fake {
  readonly catalog: Ref.Ref<ReadonlyArray<InstanceTools>>
  readonly calls: Ref.Ref<ReadonlyArray<{ instance: string; request: CallToolRequest }>>
}

/** Sources with a catalog the test can change, recording every routed call. */
const makeLayer = (initial: ReadonlyArray<InstanceTools>) =>
  Effect.gen(function* () {
    const catalog = yield* Ref.make(initial)
    const calls = yield* Ref.make<ReadonlyArray<{ instance: string; request: CallToolRequest }>>([])
    const sources = new Sources({
      reconfigure: () => Effect.dieMessage("not reloaded in this test"),
      restart: () => Effect.dieMessage("not restarted in this test"),
      reportReload: () => Effect.void,
      names: ["fs", "gh", "off"],
      awaitSettled: Effect.void,
      awaitListed: Effect.void,
      catalog: Effect.map(Ref.get(catalog), (all) => [...all]),
      catalogNow: () => [...Effect.runSync(Ref.get(catalog))],
      connectionNow: () => undefined,
      awaitInstance: () => Effect.void,
      health: Effect.succeed([
        row("fs", "running"),
        row("gh", "running"),
        row("off", "down", "Exited: exited with code 1")
      ]),
      callTool: (instance, request) =>
        Effect.as(
          Ref.update(calls, (all) => [...all, { instance, request }]),
          { content: [{ type: "text", text: `${instance}:${request.name}` }] } satisfies CallToolResult
        ),
      changes: Stream.never,
      // Only "off" is refused here: the Registry words a stopped source's refusal with Sources' own.
      connection: (instance) =>
        instance === "off"
          ? Effect.fail(
              new CallError({
                tool: instance,
                reason: "NotRunning",
                detail: `source "off" is not running (Exited: exited with code 1)`,
                retryable: true
              })
            )
          : Effect.succeed(undefined as never), // a running child, never used beyond being there
      running: Effect.succeed([])
    })
    const config = Either.getOrThrow(parseConfig(configText, "test.toml"))
    const layer = Registry.DefaultWithoutDependencies.pipe(
      Layer.provide(CoreTools.ProviderWithoutDependencies),
      Layer.provide(Layer.merge(Layer.succeed(Sources, sources), Config.layerTest(config)))
    )
    return { layer, fake: { catalog, calls } satisfies Fake }
  })

const initial: ReadonlyArray<InstanceTools> = [
  {
    instance: "fs",
    tools: [tool("read_file"), tool("read.file"), tool(longTool), tool("write_file", { _meta: { vendor: "x" } })]
  },
  { instance: "gh", tools: [tool("delete_repo"), tool("create_issue", { _meta: { clawtool: { tag: "kept" } } })] }
]

const withRegistry = <A, E>(f: (registry: Registry, fake: Fake) => Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    const { layer, fake } = yield* makeLayer(initial)
    return yield* Effect.flatMap(Registry, (registry) => f(registry, fake)).pipe(Effect.provide(layer))
  })

describe("Registry", () => {
  it.effect("lists core and source tools: budgeted names, config hints and alwaysLoad, sorted last", () =>
    withRegistry((registry) =>
      Effect.gen(function* () {
        const tools = yield* registry.list()
        const names = tools.map((t) => t.name)
        assert.deepStrictEqual(
          names,
          [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
        )
        assert.includeMembers(names, [
          "SourceHealth",
          "ToolSearch",
          "fs__read_file",
          "fs__write_file",
          "gh__create_issue"
        ])
        assert.notInclude(names, "gh__delete_repo", "disabled by config")
        for (const name of names) assert.isAtMost(name.length, 40)
        const byName = new Map(tools.map((t) => [t.name, t]))
        assert.deepStrictEqual(byName.get("gh__create_issue")!._meta, {
          "anthropic/alwaysLoad": true,
          clawtool: { tag: "kept", usage_hint: "Search for duplicates before creating an issue." }
        })
        assert.deepStrictEqual(byName.get("fs__write_file")!._meta, { vendor: "x" })
        assert.notProperty(byName.get("fs__read_file")!, "_meta")
        assert.strictEqual(byName.get("ToolSearch")!._meta?.["anthropic/alwaysLoad"], true)
        assert.isString((byName.get("ToolSearch")!._meta?.clawtool as { usage_hint: string }).usage_hint)
        assert.notProperty(byName.get("SourceHealth")!._meta!, "anthropic/alwaysLoad")
        // Canonical key order: every object's keys are sorted.
        assert.deepStrictEqual(Object.keys(byName.get("fs__read_file")!), ["description", "inputSchema", "name"])
      })
    )
  )

  it.effect("routes budgeted names back to the original tool and forwards arguments and _meta", () =>
    withRegistry((registry, fake) =>
      Effect.gen(function* () {
        const catalog = yield* registry.catalog
        const [shortened] = [...catalog.routes].find(([, route]) => route.tool === longTool)!
        assert.isAtMost(shortened.length, 40)
        yield* registry.call(shortened, { arguments: { path: "/a" }, _meta: { traceparent: "t" } })
        yield* registry.call("fs__read_file", {})
        const calls = yield* Ref.get(fake.calls)
        assert.deepStrictEqual(calls, [
          { instance: "fs", request: { name: longTool, arguments: { path: "/a" }, _meta: { traceparent: "t" } } },
          { instance: "fs", request: { name: "read_file" } }
        ])
      })
    )
  )

  it.effect("a disabled tool, a collision loser and an unknown name are not callable; a stopped source says so", () =>
    withRegistry((registry, fake) =>
      Effect.gen(function* () {
        const disabled = yield* Effect.flip(registry.call("gh__delete_repo", {}))
        assert.strictEqual(disabled.reason, "NoSuchTool")
        assert.include(disabled.detail, "disabled")
        const catalog = yield* registry.catalog
        assert.deepStrictEqual(catalog.collisions, [
          { wire: "fs__read_file", kept: "fs.read_file", dropped: ["fs.read.file"] }
        ])
        const unknown = yield* Effect.flip(registry.call("nope__x", {}))
        assert.strictEqual(unknown.reason, "NoSuchTool")
        const missing = yield* Effect.flip(registry.call("gh__nope", {}))
        assert.strictEqual(missing.reason, "NoSuchTool")
        const down = yield* Effect.flip(registry.call("off__anything", {}))
        assert.instanceOf(down, CallError)
        assert.strictEqual(down.reason, "NotRunning")
        assert.isTrue(down.retryable)
        assert.deepStrictEqual(yield* Ref.get(fake.calls), [], "nothing reached a child")
      })
    )
  )

  it.effect("SourceHealth: a text table and structuredContent, with collisions and the catalog hash", () =>
    withRegistry((registry) =>
      Effect.gen(function* () {
        const result = yield* registry.call("SourceHealth", {})
        const text = (result.content[0] as { text: string }).text
        assert.include(text, "STATUS")
        assert.match(text, /off\s+down/)
        assert.include(text, `name collision on "fs__read_file"`)
        const structured = result.structuredContent as {
          sources: ReadonlyArray<{ name: string; status: string }>
          catalogHash: string
          collisions: ReadonlyArray<unknown>
        }
        assert.deepStrictEqual(
          structured.sources.map((s) => [s.name, s.status]),
          [
            ["fs", "running"],
            ["gh", "running"],
            ["off", "down"]
          ]
        )
        assert.strictEqual(structured.catalogHash, (yield* registry.catalog).hash)
        assert.strictEqual(structured.collisions.length, 1)
        const one = yield* registry.call("SourceHealth", { arguments: { instance: "off" } })
        assert.strictEqual((one.structuredContent as { sources: ReadonlyArray<unknown> }).sources.length, 1)
        const bad = yield* Effect.flip(registry.call("SourceHealth", { arguments: { instance: 3 } }))
        assert.strictEqual(bad.reason, "InvalidArguments")
      })
    )
  )

  it.effect("ToolSearch finds source and core tools, and its index follows the catalog", () =>
    withRegistry((registry, fake) =>
      Effect.gen(function* () {
        const search = (query: string, limit?: number) =>
          Effect.map(
            registry.call("ToolSearch", { arguments: limit === undefined ? { query } : { query, limit } }),
            (result) => result.structuredContent as { results: ReadonlyArray<{ name: string }>; catalogHash: string }
          )
        const first = yield* search("create issue")
        assert.strictEqual(first.results[0]!.name, "gh__create_issue")
        assert.strictEqual((yield* search("health of sources")).results[0]!.name, "SourceHealth")
        assert.deepStrictEqual((yield* search("zebra")).results, [])
        assert.strictEqual((yield* search("file", 1)).results.length, 1)
        const invalid = yield* Effect.flip(registry.call("ToolSearch", { arguments: { query: "x", limit: 0 } }))
        assert.strictEqual(invalid.reason, "InvalidArguments")

        yield* Ref.update(fake.catalog, (all) => [...all, { instance: "gh", tools: [tool("zebra_stripes")] }])
        const after = yield* search("zebra")
        assert.strictEqual(after.results[0]!.name, "gh__zebra_stripes")
        assert.notStrictEqual(after.catalogHash, first.catalogHash)
      })
    )
  )

  it.effect("the same children and config give a byte-identical list and hash, whatever the key order", () =>
    Effect.gen(function* () {
      const reordered: ReadonlyArray<InstanceTools> = initial.map(({ instance, tools }) => ({
        instance,
        tools: tools.map((t) => Object.fromEntries(Object.entries(t).reverse()) as unknown as Tool)
      }))
      const listOf = (catalog: ReadonlyArray<InstanceTools>) =>
        Effect.gen(function* () {
          const { layer } = yield* makeLayer(catalog)
          return yield* Effect.flatMap(Registry, (registry) =>
            Effect.all([registry.list(), Effect.map(registry.catalog, (c) => c.hash)])
          ).pipe(Effect.provide(layer))
        })
      const [one, hashOne] = yield* listOf(initial)
      const [two, hashTwo] = yield* listOf(reordered)
      assert.strictEqual(JSON.stringify(one), JSON.stringify(two))
      assert.strictEqual(hashOne, hashTwo)
    })
  )

  it.effect("a [tools] selector naming no configured source only warns", () =>
    Effect.gen(function* () {
      const config = ClawtoolConfig.make({
        sources: {},
        tools: Either.getOrThrow(parseConfig(`[tools."ghost.x"]\nenabled = false\n`, "t.toml")).tools,
        core_tools: new CoreToolsConfig({ enabled: false })
      })
      const sources = new Sources({
        reconfigure: () => Effect.dieMessage("not reloaded in this test"),
        restart: () => Effect.dieMessage("not restarted in this test"),
        reportReload: () => Effect.void,
        names: [],
        awaitSettled: Effect.void,
        awaitListed: Effect.void,
        catalog: Effect.succeed([]),
        catalogNow: () => [],
        connectionNow: () => undefined,
        awaitInstance: () => Effect.void,
        health: Effect.succeed([]),
        callTool: () => Effect.die("unused"),
        changes: Stream.never,
        connection: () => Effect.die("unused"),
        running: Effect.succeed([])
      })
      const registry = yield* Registry.pipe(
        Effect.provide(
          Registry.DefaultWithoutDependencies.pipe(
            Layer.provide(CoreTools.ProviderWithoutDependencies),
            Layer.provide(Layer.merge(Layer.succeed(Sources, sources), Config.layerTest(config)))
          )
        )
      )
      const names = (yield* registry.list()).map((t) => t.name)
      assert.deepStrictEqual(names, ["SourceHealth", "ToolSearch"])
    })
  )
})
