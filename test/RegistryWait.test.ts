// Issue 10 in the Registry: a call to a listed tool of a source still starting waits for that source (awaitInstance)
// before it is routed, and the lists wait at most list_wait, counted once from the first list.
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Either, Fiber, Layer, Ref, Stream, TestClock } from "effect"
import type { Connection } from "../src/domain/Connection.js"
import { CallError } from "../src/domain/Errors.js"
import type { CallToolResult } from "../src/domain/Mcp.js"
import { Config, parseConfig } from "../src/services/Config.js"
import { CoreTools } from "../src/services/CoreTools.js"
import { Registry } from "../src/services/Registry.js"
import { Sources } from "../src/services/Sources.js"

const tool = { name: "read_file", inputSchema: { type: "object" as const } }

/** One source "fs" whose tools are listed while it starts; `up` makes it running, and nothing ever settles otherwise. */
const setup = (configText: string) =>
  Effect.gen(function* () {
    const up = yield* Deferred.make<void>()
    const routed = yield* Ref.make<ReadonlyArray<string>>([])
    const isUp = () => Effect.runSync(Deferred.isDone(up))
    const sources = new Sources({
      reconfigure: () => Effect.dieMessage("not reloaded in this test"),
      restart: () => Effect.dieMessage("not restarted in this test"),
      reportReload: () => Effect.void,
      names: ["fs"],
      awaitSettled: Effect.never,
      awaitListed: Effect.never,
      awaitInstance: () => Deferred.await(up),
      catalog: Effect.succeed([{ instance: "fs", tools: [tool] }]),
      catalogNow: () => [{ instance: "fs", tools: [tool] }],
      connectionNow: () => (isUp() ? ({} as Connection) : undefined),
      health: Effect.succeed([]),
      callTool: (instance, request) =>
        isUp()
          ? Effect.as(
              Ref.update(routed, (all) => [...all, `${instance}.${request.name}`]),
              {
                content: [{ type: "text", text: "done" }]
              } satisfies CallToolResult
            )
          : Effect.fail(new CallError({ tool: request.name, reason: "NotRunning", detail: "starting" })),
      changes: Stream.never,
      connection: () => Effect.die("unused"),
      running: Effect.succeed([])
    })
    const config = Either.getOrThrow(parseConfig(configText, "test.toml"))
    const registry = yield* Registry.pipe(
      Effect.provide(
        Registry.DefaultWithoutDependencies.pipe(
          Layer.provide(CoreTools.ProviderWithoutDependencies),
          Layer.provide(Layer.merge(Layer.succeed(Sources, sources), Config.layerTest(config)))
        )
      )
    )
    return { registry, up, routed }
  })

const source = `[sources.fs]\ncommand = ["fs"]\n`

describe("Registry waits", () => {
  it.effect("a call to a listed tool of a starting source waits for it, then is routed", () =>
    Effect.gen(function* () {
      const { registry, up, routed } = yield* setup(source)
      const call = yield* Effect.fork(registry.call("fs__read_file", { arguments: {} }))
      yield* Effect.yieldNow()
      assert.isNull(call.unsafePoll(), "the call waits while fs is starting")
      assert.deepStrictEqual(yield* Ref.get(routed), [])
      yield* Deferred.succeed(up, undefined)
      const result = yield* Fiber.join(call)
      assert.deepStrictEqual(result.content, [{ type: "text", text: "done" }])
      assert.deepStrictEqual(yield* Ref.get(routed), ["fs.read_file"])
    })
  )

  it.effect("lists wait at most list_wait, counted from the first list (a second list does not restart it)", () =>
    Effect.gen(function* () {
      const { registry } = yield* setup(`list_wait = "2s"\n${source}`)
      const first = yield* Effect.fork(registry.listWait)
      yield* TestClock.adjust("1 second")
      const second = yield* Effect.fork(registry.listWait)
      yield* Effect.yieldNow()
      assert.isNull(first.unsafePoll(), "still within list_wait")
      yield* TestClock.adjust("1 second")
      yield* Effect.yieldNow()
      assert.isNotNull(first.unsafePoll(), "over at list_wait")
      assert.isNotNull(second.unsafePoll(), "over at the first list's list_wait, not its own")
      // Over for good: later lists answer at once.
      const third = yield* Effect.fork(registry.listWait)
      yield* Effect.yieldNow()
      assert.isNotNull(third.unsafePoll())
    })
  )

  it.effect(`list_wait = "0s" never waits`, () =>
    Effect.gen(function* () {
      const { registry } = yield* setup(`list_wait = "0s"\n${source}`)
      const list = yield* Effect.fork(registry.listWait)
      yield* Effect.yieldNow()
      assert.isNotNull(list.unsafePoll())
    })
  )
})
