import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Layer, Option, Stream, TestClock } from "effect"
import type { Connection, ExitInfo } from "../src/domain/Connection.js"
import type { HealthRow } from "../src/domain/Health.js"
import { CatalogCache } from "../src/services/CatalogCache.js"
import { Config } from "../src/services/Config.js"
import { Secrets } from "../src/services/Secrets.js"
import { SourceClient } from "../src/services/SourceClient/SourceClient.js"
import { Sources } from "../src/services/Sources.js"
import { configFrom, rowOf, settled } from "./lib/sources.js"

/**
 * idle_timeout runs on Effect's Clock: under TestClock an hour of idleness passes when the test adjusts the clock, and
 * a request in between restarts the quiet time. The children are fakes whose scope closing is their exit.
 */
const fakeChildren = () => {
  const closed: Array<Deferred.Deferred<void>> = []
  const client = new SourceClient({
    connect: (spec) =>
      Effect.gen(function* () {
        const exited = yield* Deferred.make<ExitInfo>()
        const gone = yield* Deferred.make<void>()
        closed.push(gone)
        yield* Effect.addFinalizer(() => Deferred.succeed(gone, undefined))
        return {
          instance: spec.instance,
          pid: 1000 + closed.length,
          tools: [{ name: "echo", inputSchema: { type: "object" } }],
          surfaceChanges: Stream.never,
          exited: Deferred.await(exited),
          era: { era: "legacy" },
          callTool: () => Effect.succeed({ content: [] })
        } as unknown as Connection
      })
  })
  const layer = (toml: string) => {
    const parsed = configFrom(toml)
    return Sources.DefaultWithoutDependencies.pipe(
      Layer.provide(
        Layer.mergeAll(
          Config.layerTest(parsed),
          Secrets.layerTest({ env: {}, sources: parsed.sources }),
          Layer.succeed(SourceClient, client),
          CatalogCache.Test()
        )
      )
    )
  }
  return { closed, layer }
}

/** Waits until an instance's Health row satisfies `check`, on Sources' change stream (no polling, no sleeps). */
const until = (name: string, check: (row: HealthRow) => boolean) =>
  Effect.flatMap(Sources, (sources) =>
    sources.changes.pipe(
      Stream.mapEffect(() => rowOf(name)),
      Stream.filter(check),
      Stream.runHead,
      Effect.map(Option.getOrThrow)
    )
  )

describe("idle_timeout (fake children, TestClock)", () => {
  it.scoped(
    "a lazy source stops once idle_timeout passes on the Clock with no request; a request restarts the wait",
    () => {
      const fake = fakeChildren()
      return Effect.gen(function* () {
        const sources = yield* Sources
        yield* settled
        assert.strictEqual((yield* rowOf("lazy")).status, "running")
        yield* TestClock.adjust("59 minutes")
        yield* sources.callTool("lazy", { name: "echo", arguments: {} })
        // An hour since the start, but only a minute since the request.
        yield* TestClock.adjust("1 minute")
        assert.strictEqual((yield* rowOf("lazy")).status, "running")
        yield* TestClock.adjust("58 minutes")
        assert.strictEqual((yield* rowOf("lazy")).status, "running")
        yield* TestClock.adjust("1 minute")
        yield* until("lazy", (row) => row.status === "idle")
        yield* Deferred.await(fake.closed[0]!)
        // The next request starts a new child.
        yield* sources.awaitInstance("lazy")
        assert.strictEqual((yield* rowOf("lazy")).status, "running")
        assert.strictEqual(fake.closed.length, 2)
      }).pipe(
        Effect.provide(
          fake.layer(`
            [sources.lazy]
            command = ["fake"]
            start = "lazy"
            idle_timeout = "1h"
          `)
        )
      )
    },
    10_000
  )
})
