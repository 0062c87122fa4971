import { assert, describe, it } from "@effect/vitest"
import { assertNone, assertSome } from "@effect/vitest/utils"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { CatalogCache, keyOf } from "../src/services/CatalogCache.js"
import { Config } from "../src/services/Config.js"
import { Registry } from "../src/services/Registry.js"
import { Secrets } from "../src/services/Secrets.js"
import { SourceClient } from "../src/services/SourceClient.js"
import { Sources } from "../src/services/Sources.js"
import { registryLayer } from "./lib/registry.js"
import { configFrom, eventually, isAlive, rowOf, stubCommand, tempDir, waitFor } from "./lib/sources.js"

const spec = { command: ["node", "server.js"], cwd: undefined, env: { TOKEN: "s3cret-value", HOME: "/home/u" } }
const tool = { name: "echo", inputSchema: { type: "object" } }

/** Sources over real children with the file cache in `dir`. */
const sourcesWithCache = (toml: string, dir: string) => {
  const config = configFrom(toml)
  return Sources.DefaultWithoutDependencies.pipe(
    Layer.provide(
      Layer.mergeAll(
        Config.layerTest(config),
        Secrets.layerTest({ env: {}, sources: config.sources }),
        SourceClient.Default,
        CatalogCache.layerDir(dir)
      )
    )
  )
}

const withSources = <A, E>(toml: string, dir: string, body: Effect.Effect<A, E, Sources>) =>
  Effect.scoped(Effect.provide(body, sourcesWithCache(toml, dir)))

const catalogOf = (name: string) =>
  Effect.flatMap(Sources, (sources) =>
    Effect.map(sources.catalog, (all) => all.find((entry) => entry.instance === name))
  )

describe("CatalogCache", () => {
  it("keys a child by command, cwd, env names and a hash of env values; no value appears in clear", () => {
    const key = keyOf(spec)
    assert.strictEqual(keyOf({ ...spec }), key)
    assert.notStrictEqual(keyOf({ ...spec, command: ["node", "other.js"] }), key)
    assert.notStrictEqual(keyOf({ ...spec, cwd: "/tmp" }), key)
    assert.notStrictEqual(keyOf({ ...spec, env: { ...spec.env, TOKEN: "rotated" } }), key)
    assert.notStrictEqual(keyOf({ ...spec, env: { ...spec.env, EXTRA: "" } }), key)
    assert.notInclude(key, "s3cret")
  })

  it("keys a remote source by url, transport and header values (hashed); a local key is unchanged by the field", () => {
    const local = { command: [], cwd: undefined, env: {} }
    const remote = { url: "https://x.example/mcp", transport: "auto", headers: { Authorization: "Bearer s3cret" } }
    const key = keyOf({ ...local, remote })
    assert.notStrictEqual(key, keyOf(local))
    assert.strictEqual(keyOf({ ...local, remote: { ...remote } }), key)
    assert.notStrictEqual(keyOf({ ...local, remote: { ...remote, url: "https://y.example/mcp" } }), key)
    assert.notStrictEqual(keyOf({ ...local, remote: { ...remote, transport: "sse" } }), key)
    assert.notStrictEqual(keyOf({ ...local, remote: { ...remote, headers: { Authorization: "Bearer rotated" } } }), key)
    assert.strictEqual(keyOf({ ...local, remote: undefined }), keyOf(local))
  })

  it("keys a child by the capabilities it is declared too (a child may list other tools for another host)", () => {
    const spec = { command: ["node", "server.js"], cwd: undefined, env: { A: "1" } }
    const roots = keyOf({ ...spec, capabilities: { roots: { listChanged: true }, sampling: {} } })
    assert.notStrictEqual(roots, keyOf(spec))
    assert.notStrictEqual(roots, keyOf({ ...spec, capabilities: { sampling: {} } }))
    // The host's key order does not matter.
    assert.strictEqual(roots, keyOf({ ...spec, capabilities: { sampling: {}, roots: { listChanged: true } } }))
    // No capabilities and an empty set are the same declaration.
    assert.strictEqual(keyOf(spec), keyOf({ ...spec, capabilities: {} }))
  })

  it.effect("writes entries 0600 in a folder it creates 0700, reads them back, clears them", () =>
    Effect.gen(function* () {
      const dir = path.join(tempDir(), "nested", "clawtool")
      const cache = yield* Effect.provide(CatalogCache, CatalogCache.layerDir(dir))
      const key = keyOf(spec)
      assertNone(yield* cache.load(key))
      yield* cache.store(key, [tool])
      assert.strictEqual(fs.statSync(dir).mode & 0o777, 0o700)
      const files = fs.readdirSync(dir)
      assert.strictEqual(files.length, 1)
      assert.strictEqual(fs.statSync(path.join(dir, files[0]!)).mode & 0o777, 0o600)
      assert.notInclude(fs.readFileSync(path.join(dir, files[0]!), "utf8"), "s3cret")
      assertSome(yield* cache.load(key), [tool] as ReadonlyArray<typeof tool>)
      fs.writeFileSync(path.join(dir, "unrelated.txt"), "not ours")
      assert.strictEqual(yield* cache.clear, 1)
      assertNone(yield* cache.load(key))
      assert.deepStrictEqual(fs.readdirSync(dir), ["unrelated.txt"])
    })
  )

  it.effect("a corrupt, truncated or foreign entry is ignored (no failure) and rewritten by the next store", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const cache = yield* Effect.provide(CatalogCache, CatalogCache.layerDir(dir))
      const key = keyOf(spec)
      yield* cache.store(key, [tool])
      const file = path.join(dir, fs.readdirSync(dir)[0]!)
      for (const text of [
        "{not json",
        fs.readFileSync(file, "utf8").slice(0, 20),
        JSON.stringify({ format: "other/1", key, tools: [] })
      ]) {
        fs.writeFileSync(file, text)
        assertNone(yield* cache.load(key))
      }
      yield* cache.store(key, [tool])
      assertSome(yield* cache.load(key), [tool] as ReadonlyArray<typeof tool>)
    })
  )
})

describe("Sources with a persisted catalog (real children)", () => {
  it.live(
    "a warm cache lists the tools while the slow child starts; the same listing keeps the same array",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const toml = `[sources.slow]\ncommand = ${stubCommand("--slow-start", "3000")}\n`
        // Cold: nothing listed until the child answers; then the listing is stored.
        yield* withSources(
          toml,
          dir,
          Effect.gen(function* () {
            assert.isUndefined(yield* catalogOf("slow"))
            yield* waitFor("slow", (row) => row.status === "running", "running")
          })
        )
        assert.strictEqual(fs.readdirSync(dir).filter((name) => name.endsWith(".json")).length, 1)
        // Warm: listed at once, status starting, Health says so; the child's identical listing changes nothing.
        yield* withSources(
          toml,
          dir,
          Effect.gen(function* () {
            const sources = yield* Sources
            yield* sources.awaitListed
            const row = yield* rowOf("slow")
            assert.strictEqual(row.status, "starting")
            assert.strictEqual(row.reason, "catalog: cached")
            const cached = (yield* catalogOf("slow"))!
            assert.include(
              cached.tools.map((t) => t.name),
              "echo"
            )
            yield* waitFor("slow", (row) => row.status === "running", "running")
            assert.strictEqual((yield* catalogOf("slow"))!.tools, cached.tools)
            assert.strictEqual((yield* rowOf("slow")).reason, "")
          })
        )
      }),
    30_000
  )

  it.live(
    "a child that lists differently swaps its tools in and rewrites the entry; a corrupt entry is survived",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const extra = path.join(tempDir(), "extra")
        const toml = `[sources.srv]\ncommand = ${stubCommand("--extra-tool", extra)}\n`
        const run = withSources(
          toml,
          dir,
          Effect.gen(function* () {
            const sources = yield* Sources
            yield* sources.awaitListed
            const before = (yield* catalogOf("srv"))?.tools.map((t) => t.name) ?? []
            yield* waitFor("srv", (row) => row.status === "running", "running")
            return { before, after: (yield* catalogOf("srv"))!.tools.map((t) => t.name) }
          })
        )
        yield* run
        fs.writeFileSync(extra, "added_tool")
        const changed = yield* run
        assert.notInclude(changed.before, "added_tool")
        assert.include(changed.after, "added_tool")
        const entry = path.join(
          dir,
          fs.readdirSync(dir).find((name) => name.endsWith(".json"))!
        )
        assert.include(fs.readFileSync(entry, "utf8"), "added_tool")
        fs.writeFileSync(entry, "\u0000garbage")
        const survived = yield* run
        assert.include(survived.after, "added_tool")
        assert.include(fs.readFileSync(entry, "utf8"), "added_tool")
      }),
    30_000
  )

  it.live(
    "lazy: learns its catalog once, then is not spawned until a call, stops after idle_timeout, restarts on the next",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const starts = path.join(tempDir(), "starts")
        const toml = `[sources.lazy]\ncommand = ${stubCommand("--record-start", starts)}\nstart = "lazy"\nidle_timeout = "1s"\n`
        const startCount = () => (fs.existsSync(starts) ? fs.readFileSync(starts, "utf8").trim().split("\n").length : 0)
        // No cache entry: it starts once like an eager source, to learn its catalog.
        yield* withSources(
          toml,
          dir,
          waitFor("lazy", (row) => row.status === "running", "running")
        )
        assert.strictEqual(startCount(), 1)
        yield* withSources(
          toml,
          dir,
          Effect.gen(function* () {
            const sources = yield* Sources
            yield* sources.awaitSettled
            assert.strictEqual((yield* rowOf("lazy")).status, "idle")
            assert.include(
              (yield* catalogOf("lazy"))!.tools.map((t) => t.name),
              "echo"
            )
            assert.strictEqual(startCount(), 1)
            const first = yield* sources.callTool("lazy", { name: "echo", arguments: { text: "a" } })
            assert.deepStrictEqual(first.content, [{ type: "text", text: "echo:a" }])
            assert.strictEqual(startCount(), 2)
            const pid = Number(fs.readFileSync(starts, "utf8").trim().split("\n").at(-1))
            yield* waitFor("lazy", (row) => row.status === "idle", "idle after idle_timeout")
            yield* eventually(() => !isAlive(pid), 5_000, "the idle child to exit")
            assert.include(
              (yield* catalogOf("lazy"))!.tools.map((t) => t.name),
              "echo"
            )
            const second = yield* sources.callTool("lazy", { name: "echo", arguments: { text: "b" } })
            assert.deepStrictEqual(second.content, [{ type: "text", text: "echo:b" }])
            assert.strictEqual(startCount(), 3)
          })
        )
      }),
    40_000
  )

  it.live(
    "the host's catalog hash: unchanged when the child lists what was cached, changed when it lists differently",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const extra = path.join(tempDir(), "extra")
        const toml = `[sources.srv]\ncommand = ${stubCommand("--extra-tool", extra, "--slow-start", "1000")}\n`
        const hashes = Effect.scoped(
          Effect.provide(
            Effect.gen(function* () {
              const registry = yield* Registry
              yield* (yield* Sources).awaitListed
              const cached = (yield* registry.catalog).hash
              yield* waitFor("srv", (row) => row.status === "running", "running")
              return { cached, live: (yield* registry.catalog).hash }
            }),
            registryLayer(toml, CatalogCache.layerDir(dir))
          )
        )
        yield* hashes
        const same = yield* hashes
        assert.strictEqual(same.live, same.cached)
        fs.writeFileSync(extra, "added_tool")
        const changed = yield* hashes
        assert.strictEqual(changed.cached, same.live)
        assert.notStrictEqual(changed.live, changed.cached)
      }),
    30_000
  )
})
