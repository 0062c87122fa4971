import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, Ref, Stream } from "effect"
import { CallError } from "../src/domain/Errors.js"
import { HealthRow } from "../src/domain/Health.js"
import type { CallToolResult, JsonObject, Tool } from "../src/domain/Mcp.js"
import {
  type CatalogView,
  CurrentToolProvider,
  type ProvidedTool,
  type ToolProvider
} from "../src/domain/ToolProvider.js"
import { Config, parseConfig, ProcessEnv } from "../src/services/Config.js"
import { CoreTools } from "../src/services/CoreTools.js"
import { Registry } from "../src/services/Registry.js"
import { Sources } from "../src/services/Sources.js"

// The tool-provider contract (src/domain/ToolProvider.ts) from both sides: the Registry serves whatever provider it is
// given, and CoreTools is such a provider.

const provided = (name: string, alwaysLoad: boolean): ProvidedTool => ({
  tool: { name, description: `the ${name} probe`, inputSchema: { type: "object", properties: {} } },
  spec: { name, keywords: ["probe"], usageHint: `Call ${name} when a test needs a probe.`, alwaysLoad }
})

const healthRow = new HealthRow({
  name: "fs",
  status: "running",
  reason: "",
  toolCount: 1,
  package: "fs",
  pid: null,
  startedAt: null,
  startupMs: null,
  stderrTail: []
})

const sourceTool: Tool = { name: "read_file", inputSchema: { type: "object", properties: {} } }

/** A Registry over one running source and a fake provider that records its calls and roots changes. */
const withFakeProvider = Effect.gen(function* () {
  const calls = yield* Ref.make<ReadonlyArray<{ name: string; args: JsonObject | undefined; view: CatalogView }>>([])
  const rootsChanges = yield* Ref.make(0)
  const tools = [provided("Probe", true), provided("Off", false)]
  const provider: ToolProvider = {
    listing: { tools, byName: new Map(tools.map((each) => [each.spec.name, each])) },
    disabled: new Map([["Off", "probe.Off.enabled"]]),
    call: (name, args, view) =>
      Effect.as(
        Ref.update(calls, (all) => [...all, { name, args, view }]),
        { content: [{ type: "text", text: `${name} ran` }] } satisfies CallToolResult
      ),
    rootsChanged: Ref.update(rootsChanges, (count) => count + 1)
  }
  const sources = new Sources({
    reconfigure: () => Effect.dieMessage("not reloaded in this test"),
    restart: () => Effect.dieMessage("not restarted in this test"),
    reportReload: () => Effect.void,
    names: ["fs"],
    awaitSettled: Effect.void,
    awaitListed: Effect.void,
    catalog: Effect.succeed([{ instance: "fs", tools: [sourceTool] }]),
    catalogNow: () => [{ instance: "fs", tools: [sourceTool] }],
    connectionNow: () => undefined,
    awaitInstance: () => Effect.void,
    health: Effect.succeed([healthRow]),
    callTool: () => Effect.die("no source call in this test"),
    changes: Stream.never,
    connection: () => Effect.die("unused"),
    running: Effect.succeed([])
  })
  const config = Either.getOrThrow(parseConfig(`[sources.fs]\ncommand = ["fs"]\n`, "test.toml"))
  const registry = yield* Registry.pipe(
    Effect.provide(
      Registry.DefaultWithoutDependencies.pipe(
        Layer.provide(
          Layer.mergeAll(
            Layer.succeed(CurrentToolProvider, provider),
            Layer.succeed(Sources, sources),
            Config.layerTest(config)
          )
        )
      )
    )
  )
  return { registry, calls, rootsChanges }
})

describe("the Registry through the tool-provider contract", () => {
  it.effect("lists the provider's served tools beside the sources', without the ones it switches off", () =>
    Effect.gen(function* () {
      const { registry } = yield* withFakeProvider
      const names = (yield* registry.list()).map((tool) => tool.name)
      assert.deepStrictEqual([...names].sort(), ["Probe", "fs__read_file"])
      const off = (yield* registry.catalog).entries.find((entry) => entry.wire === "Off")
      assert.strictEqual(off?.status, "disabled")
      assert.strictEqual(off?.rule, "probe.Off.enabled")
    })
  )

  it.effect("routes a provider tool's call to the provider, with a view of the live catalog and health", () =>
    Effect.gen(function* () {
      const { registry, calls } = yield* withFakeProvider
      const result = yield* registry.call("Probe", { arguments: { n: 1 } })
      assert.deepStrictEqual(result.content, [{ type: "text", text: "Probe ran" }])
      const [call] = yield* Ref.get(calls)
      assert.strictEqual(call?.name, "Probe")
      assert.deepStrictEqual(call?.args, { n: 1 })
      assert.strictEqual((yield* call!.view.catalog).hash, (yield* registry.catalog).hash)
      assert.deepStrictEqual(
        (yield* call!.view.health).map((row) => row.name),
        ["fs"]
      )
    })
  )

  it.effect("refuses a tool the provider switched off without calling it, and passes roots changes on", () =>
    Effect.gen(function* () {
      const { registry, calls, rootsChanges } = yield* withFakeProvider
      const error = yield* Effect.flip(registry.call("Off", {}))
      assert.strictEqual(error.reason, "NoSuchTool")
      assert.include(error.detail, "probe.Off.enabled")
      assert.deepStrictEqual(yield* Ref.get(calls), [])
      yield* registry.forward.rootsChanged
      assert.strictEqual(yield* Ref.get(rootsChanges), 1)
    })
  )
})

/** CoreTools as the provider, over a config and the process environment the test gives. */
const coreTools = (env: Readonly<Record<string, string>>) =>
  Effect.gen(function* () {
    return yield* CurrentToolProvider
  }).pipe(
    Effect.provide(
      CoreTools.ProviderWithoutDependencies.pipe(
        Layer.provide(
          Layer.merge(Config.layerTest(Either.getOrThrow(parseConfig("", "test.toml"))), Layer.succeed(ProcessEnv, env))
        )
      )
    )
  )

const view: CatalogView = {
  catalog: Effect.succeed({ tools: [sourceTool], hash: "c0ffee", collisions: [] }),
  health: Effect.succeed([healthRow]),
  search: () => Effect.die("no search in this test"),
  codeNames: Effect.succeed({})
}

describe("CoreTools as a tool provider", () => {
  it.scoped("gates its tools on the secrets of the process environment it is given (ProcessEnv)", () =>
    Effect.gen(function* () {
      const without = yield* coreTools({})
      assert.include(without.disabled.get("WebSearch") ?? "", "no search backend key")
      const keyed = yield* coreTools({ BRAVE_API_KEY: "test-key" })
      assert.isFalse(keyed.disabled.has("WebSearch"))
      assert.isTrue(keyed.listing.byName.has("WebSearch"))
    })
  )

  it.scoped("its tools read the catalog through the view the call brings", () =>
    Effect.gen(function* () {
      const provider = yield* coreTools({})
      const result = yield* provider.call("SourceHealth", {}, view)
      const structured = result.structuredContent as { catalogHash: string; sources: ReadonlyArray<{ name: string }> }
      assert.strictEqual(structured.catalogHash, "c0ffee")
      assert.deepStrictEqual(
        structured.sources.map((row) => row.name),
        ["fs"]
      )
    })
  )

  it.scoped("a name it does not list is NoSuchTool", () =>
    Effect.gen(function* () {
      const provider = yield* coreTools({})
      const error = yield* Effect.flip(provider.call("Nope", {}, view))
      assert.instanceOf(error, CallError)
      assert.strictEqual(error.reason, "NoSuchTool")
    })
  )
})
