import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Either, Layer, Stream } from "effect"
import { SkippedEntry } from "../src/domain/Config.js"
import type { HealthRow } from "../src/domain/Health.js"
import { Config } from "../src/services/Config.js"
import { CatalogCache } from "../src/services/CatalogCache.js"
import { makeSecrets, Secrets, SecretStore } from "../src/services/Secrets.js"
import { SourceClient } from "../src/services/SourceClient/SourceClient.js"
import { Sources } from "../src/services/Sources.js"
import { configFrom, isAlive, stubCommand } from "./lib/sources.js"

// Sources.reconfigure over real children: the per-instance diff applied, one change emitted for it.

const stub = (name: string, extra = "") => `[sources.${name}]\ncommand = ${stubCommand("--name", name)}\n${extra}\n`
const resolverFor = (toml: string) => makeSecrets(SecretStore.empty, {}, configFrom(toml).sources).resolve
/** Sources over real children, with the Config it reads (its live view is what a reload sets). */
const withConfig = (toml: string) => {
  const config = configFrom(toml)
  return Sources.DefaultWithoutDependencies.pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        Config.layerTest(config),
        Secrets.layerTest({ sources: config.sources }),
        SourceClient.Default,
        CatalogCache.Test()
      )
    )
  )
}
const pids = (rows: ReadonlyArray<HealthRow>) => Object.fromEntries(rows.map((row) => [row.name, row.pid]))

describe("Sources.reconfigure", () => {
  it.scopedLive(
    "starts, stops and restarts per instance, keeps the rest, and emits one change for all of it",
    () =>
      Effect.gen(function* () {
        const sources = yield* Sources
        const { live } = yield* Config
        yield* sources.awaitSettled
        const before = pids(yield* sources.health)
        assert.deepStrictEqual(sources.names, ["change", "gone", "keep"])

        // A subscriber to the change notices: its first pull is the stream's own start.
        const pull = yield* Stream.toPull(sources.changes)
        assert.strictEqual(Chunk.size(yield* pull), 1)
        const nextText = stub("keep") + stub("change", `env = { MODE = "two" }`) + stub("added")
        const next = configFrom(nextText)
        const changes = yield* sources.reconfigure(next, resolverFor(nextText))
        assert.deepStrictEqual(changes, {
          start: ["added"],
          stop: ["gone"],
          restart: ["change"],
          keep: ["keep"],
          retag: [],
          settings: []
        })
        assert.deepStrictEqual(sources.names, ["added", "change", "keep"])
        assert.strictEqual(live.get(), next, "the live config is the new one")
        // Everything the reload did (two children stopped, two spawned and listed) is one pending notice.
        assert.strictEqual(Chunk.size(yield* pull), 1)
        yield* sources.awaitSettled
        const after = pids(yield* sources.health)
        assert.strictEqual(after.keep, before.keep)
        assert.notStrictEqual(after.change, before.change)
        assert.isFalse(isAlive(before.gone!))
        assert.isFalse(isAlive(before.change!))
        assert.isTrue(isAlive(after.added!))
        assert.deepStrictEqual(
          (yield* sources.catalog).map((entry) => entry.instance),
          ["added", "change", "keep"]
        )

        // The same config again: nothing done, nothing emitted. Then a failure report, shown as the config row.
        const again = yield* sources.reconfigure(next, resolverFor(nextText))
        assert.deepStrictEqual([again.start, again.stop, again.restart], [[], [], []])
        yield* sources.reportReload(Either.left("config x.toml:1: broken"))
        const rows = yield* sources.health
        assert.deepStrictEqual(
          [rows[0]!.kind, rows[0]!.name, rows[0]!.reason],
          ["config", "config", "last reload failed: config x.toml:1: broken"]
        )
        yield* sources.reportReload(Either.right([]))
        assert.isTrue((yield* sources.health).every((row) => row.kind === "source"))

        // A reload's skipped entries are rows after the sources'; a failed reload keeps them.
        const weird = new SkippedEntry({ name: "weird", reason: `type "carrier-pigeon" is not stdio, http or sse` })
        const nothing = new SkippedEntry({ name: "nothing", reason: "has neither a command nor a url" })
        yield* sources.reportReload(Either.right([nothing, weird]))
        yield* sources.reportReload(Either.left("config x.toml:1: broken"))
        const withSkipped = yield* sources.health
        assert.deepStrictEqual(
          withSkipped.map((row) => [row.name, row.status]),
          [
            ["config", "down"],
            ["added", "running"],
            ["change", "running"],
            ["keep", "running"],
            ["nothing", "skipped"],
            ["weird", "skipped"]
          ]
        )
        assert.strictEqual(withSkipped.at(-1)!.reason, weird.reason)
        yield* sources.reportReload(Either.right([]))
        assert.isFalse((yield* sources.health).some((row) => row.status === "skipped"))
      }).pipe(Effect.provide(withConfig(stub("keep") + stub("change") + stub("gone")))),
    60_000
  )
})
