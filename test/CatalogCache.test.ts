import { assert, describe, it } from "@effect/vitest"
import { onTestFinished } from "vitest"
import { assertNone, assertSome } from "@effect/vitest/utils"
import { Duration, Effect, Layer, Option } from "effect"
import type { Connection } from "../src/domain/Connection.js"
import { SourceError } from "../src/domain/Errors.js"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import {
  type CachedCatalog,
  type CachedLists,
  CatalogCache,
  createInstallKey,
  installKeyFile,
  keyOf
} from "../src/services/CatalogCache.js"
import { Config } from "../src/services/Config.js"
import { Registry } from "../src/services/Registry.js"
import { Secrets } from "../src/services/Secrets.js"
import { SourceClient } from "../src/services/SourceClient/SourceClient.js"
import { Sources } from "../src/services/Sources.js"
import * as Instance from "../src/services/Sources/Instance.js"
import { Decision } from "../src/services/Sources/Policy.js"
import { registryLayer } from "./lib/registry.js"
import { configFrom, eventually, isAlive, rowOf, stubCommand, tempDir, waitFor } from "./lib/sources.js"

const spec = { command: ["node", "server.js"], cwd: undefined, env: { TOKEN: "s3cret-value", HOME: "/home/u" } }
const tool = { name: "echo", inputSchema: { type: "object" } }
const lists: CachedLists = {
  capabilities: { tools: {}, resources: { subscribe: true }, prompts: {} },
  resources: [{ uri: "stub://info", name: "info", mimeType: "text/plain" }],
  resourceTemplates: [{ uriTemplate: "stub://items/{id}", name: "item" }],
  prompts: [{ name: "greet", arguments: [{ name: "who" }] }]
}
const catalog: CachedCatalog = { tools: [tool], lists: Option.some(lists) }

/** A loaded entry: its tools and, when the entry has them, its other lists. */
const assertCatalog = (loaded: Option.Option<CachedCatalog>, expected: CachedCatalog) => {
  assert.isTrue(Option.isSome(loaded), "an entry")
  const value = Option.getOrThrow(loaded)
  assert.deepStrictEqual(value.tools, expected.tools)
  Option.match(expected.lists, {
    onNone: () => assertNone(value.lists),
    onSome: (lists) => assertSome(value.lists, lists)
  })
}

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

/** The entry files in a cache folder (the install key beside them is not one). */
const entryFiles = (dir: string) => fs.readdirSync(dir).filter((name) => name.endsWith(".json"))

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
      yield* cache.store(key, catalog)
      assert.strictEqual(fs.statSync(dir).mode & 0o777, 0o700)
      const files = entryFiles(dir)
      assert.strictEqual(files.length, 1)
      assert.strictEqual(fs.statSync(path.join(dir, files[0]!)).mode & 0o777, 0o600)
      assert.notInclude(fs.readFileSync(path.join(dir, files[0]!), "utf8"), "s3cret")
      assertCatalog(yield* cache.load(key), catalog)
      fs.writeFileSync(path.join(dir, "unrelated.txt"), "not ours")
      // An earlier clawtool's entry (named by the plain key) goes too, and so does the install key.
      fs.writeFileSync(path.join(dir, `catalog-${key}.json`), "{}")
      assert.strictEqual(yield* cache.clear, 2)
      assertNone(yield* cache.load(key))
      assert.deepStrictEqual(fs.readdirSync(dir), ["unrelated.txt"])
    })
  )

  it.effect("a corrupt, truncated or foreign entry is ignored (no failure) and rewritten by the next store", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const cache = yield* Effect.provide(CatalogCache, CatalogCache.layerDir(dir))
      const key = keyOf(spec)
      yield* cache.store(key, catalog)
      const file = path.join(dir, entryFiles(dir)[0]!)
      const whole = fs.readFileSync(file, "utf8")
      const name = (JSON.parse(whole) as { key: string }).key
      for (const text of [
        "{not json",
        whole.slice(0, 20),
        whole.slice(0, -1),
        JSON.stringify({ format: "other/1", key: name, tools: [] }),
        // Format 2 with a list that is not one.
        JSON.stringify({ ...JSON.parse(whole), prompts: [{ title: "no name" }] }),
        JSON.stringify({ ...JSON.parse(whole), resources: "stub://info" })
      ]) {
        fs.writeFileSync(file, text)
        assertNone(yield* cache.load(key))
      }
      yield* cache.store(key, catalog)
      assertCatalog(yield* cache.load(key), catalog)
    })
  )

  it.effect("an entry of format 1 (tools only) is read as its tools; the next store writes every list", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const cache = yield* Effect.provide(CatalogCache, CatalogCache.layerDir(dir))
      const key = keyOf(spec)
      yield* cache.store(key, { tools: [], lists: Option.none() })
      const file = path.join(dir, entryFiles(dir)[0]!)
      const name = (JSON.parse(fs.readFileSync(file, "utf8")) as { key: string }).key
      fs.writeFileSync(file, JSON.stringify({ format: "clawtool-catalog/1", key: name, tools: [tool] }))
      const old = yield* cache.load(key)
      assertCatalog(old, { tools: [tool], lists: Option.none() })
      yield* cache.store(key, catalog)
      assertCatalog(yield* cache.load(key), catalog)
      assert.include(fs.readFileSync(file, "utf8"), "stub://items/{id}")
    })
  )

  it.effect("storing what the entry holds writes nothing (a warm start that lists the same catalog)", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const cache = yield* Effect.provide(CatalogCache, CatalogCache.layerDir(dir))
      const key = keyOf(spec)
      yield* cache.store(key, catalog)
      const file = path.join(dir, entryFiles(dir)[0]!)
      const before = fs.statSync(file).ino
      yield* cache.store(key, { tools: [tool], lists: Option.some({ ...lists }) })
      assert.strictEqual(fs.statSync(file).ino, before)
      // A different list is written (a new file renamed over the old one).
      yield* cache.store(key, { tools: [tool], lists: Option.some({ ...lists, prompts: [] }) })
      assert.notStrictEqual(fs.statSync(file).ino, before)
    })
  )

  /** A cache folder of the test's own, removed when it ends; `open` is a start of clawtool over it. */
  const ownDir = () => {
    const dir = tempDir()
    onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }))
    return dir
  }
  const open = (dir: string) => Effect.provide(CatalogCache, CatalogCache.layerDir(dir))
  const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

  it.effect(
    "names an entry by an HMAC under the folder's own key (0600): another install names the same child otherwise, a restart the same; no plain SHA-256 of the spec in its name or text",
    () =>
      Effect.gen(function* () {
        const [one, two] = [path.join(ownDir(), "one"), path.join(ownDir(), "two")]
        const key = keyOf(spec)
        yield* (yield* open(one)).store(key, catalog)
        yield* (yield* open(two)).store(key, catalog)
        const [nameOne] = entryFiles(one)
        assert.notStrictEqual(nameOne, entryFiles(two)[0], "two installs name the same child differently")
        const installKey = fs.readFileSync(path.join(one, installKeyFile))
        assert.strictEqual(installKey.length, 32)
        assert.strictEqual(fs.statSync(path.join(one, installKeyFile)).mode & 0o777, 0o600)
        assert.isFalse(installKey.equals(fs.readFileSync(path.join(two, installKeyFile))))
        // The key is the SHA-256 of the spec with its env values: a guess could be checked against it, or a hash of it.
        for (const dir of [one, two]) {
          const name = entryFiles(dir)[0]!
          const text = fs.readFileSync(path.join(dir, name), "utf8")
          for (const plain of [key, sha256(key)]) {
            assert.notInclude(name, plain)
            assert.notInclude(text, plain)
          }
        }
        // A restart over the same folder: the same key, the same name.
        const restarted = yield* open(one)
        assertCatalog(yield* restarted.load(key), catalog)
        yield* restarted.store(key, { tools: [tool], lists: Option.none() })
        assert.deepStrictEqual(entryFiles(one), [nameOne])
      })
  )

  it.effect(
    "a damaged install key (wrong size, open to others) is replaced by the next write; the entries it named miss and are removed then, as are an earlier clawtool's plain SHA-256 files",
    () =>
      Effect.gen(function* () {
        const dir = ownDir()
        const keyPath = path.join(dir, installKeyFile)
        const key = keyOf(spec)
        yield* (yield* open(dir)).store(key, catalog)
        let previous = entryFiles(dir)[0]!
        fs.writeFileSync(
          path.join(dir, `catalog-${key}.json`),
          JSON.stringify({ format: "clawtool-catalog/1", key, tools: [tool] })
        )
        for (const damage of [() => fs.writeFileSync(keyPath, "short"), () => fs.chmodSync(keyPath, 0o644)]) {
          damage()
          const restarted = yield* open(dir)
          assertNone(yield* restarted.load(key))
          yield* restarted.store(key, catalog)
          assert.strictEqual(fs.readFileSync(keyPath).length, 32)
          assert.strictEqual(fs.statSync(keyPath).mode & 0o777, 0o600)
          const names = entryFiles(dir)
          assert.strictEqual(names.length, 1, names.join(", "))
          assert.notStrictEqual(names[0], previous)
          assertCatalog(yield* restarted.load(key), catalog)
          previous = names[0]!
        }
      })
  )

  it("two processes making the install key at once (both found none) end with the one key linked first", () => {
    const file = path.join(ownDir(), installKeyFile)
    const first = createInstallKey(file, false)
    const second = createInstallKey(file, false)
    assert.strictEqual(first?.length, 32)
    assert.isTrue(first!.equals(second!), "the second uses the first's key")
    assert.deepStrictEqual(fs.readdirSync(path.dirname(file)), [installKeyFile], "no temp file is left")
    assert.strictEqual(fs.statSync(file).mode & 0o777, 0o600)
  })
})

describe("Instance with cached resources, templates and prompts", () => {
  const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms)
  const exited = new SourceError({ instance: "srv", reason: "Exited", detail: "exited with code 1" })
  const fromCache = () => Instance.fromCache(Instance.make("srv"), [tool], Option.some(lists))

  it("fromCache serves the cached lists with the tools and the capabilities they were listed under", () => {
    const cached = fromCache().cachedSurface!
    assert.strictEqual(cached.capabilities, lists.capabilities)
    assert.strictEqual(cached.surface.resources, lists.resources)
    assert.strictEqual(cached.surface.resourceTemplates, lists.resourceTemplates)
    assert.strictEqual(cached.surface.prompts, lists.prompts)
    // An entry of format 1 has tools only.
    assert.isUndefined(Instance.fromCache(Instance.make("srv"), [tool]).cachedSurface)
  })

  it("kept, the same object, while starting, idle or restarting; gone once a child runs or it stops for good", () => {
    const cached = fromCache()
    const spawned = Instance.spawning(cached, at(0))
    assert.strictEqual(spawned.cachedSurface, cached.cachedSurface)
    assert.strictEqual(Instance.idle(cached).cachedSurface, cached.cachedSurface)
    const restarting = Instance.failed(spawned, exited, Decision.Restart({ delay: Duration.millis(100) }), at(10))
    assert.strictEqual(restarting.cachedSurface, cached.cachedSurface)
    assert.strictEqual(Instance.restarting(restarting).cachedSurface, cached.cachedSurface)
    const child = { instance: "srv", pid: 7, tools: [tool] } as unknown as Connection
    assert.isUndefined(Instance.running(spawned, child, at(20)).cachedSurface)
    for (const decision of [Decision.Stop(), Decision.CrashLoop({ delay: Duration.seconds(1) })]) {
      const down = Instance.failed(spawned, exited, decision, at(10))
      assert.isUndefined(down.cachedSurface)
      assert.deepStrictEqual(down.tools, [])
    }
  })
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
  it.live(
    "lazy: a source with no child serves its cached resources and prompts; a read and a prompt spawn it once",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const starts = path.join(tempDir(), "starts")
        const toml = `[sources.srv]\ncommand = ${stubCommand("--resources", "--record-start", starts)}\nstart = "lazy"\n`
        const startCount = () => (fs.existsSync(starts) ? fs.readFileSync(starts, "utf8").trim().split("\n").length : 0)
        const entryText = () => {
          const name = fs.existsSync(dir) ? fs.readdirSync(dir).find((file) => file.endsWith(".json")) : undefined
          return name === undefined ? "" : fs.readFileSync(path.join(dir, name), "utf8")
        }
        const session = <A, E>(body: Effect.Effect<A, E, Registry | Sources>) =>
          Effect.scoped(Effect.provide(body, registryLayer(toml, CatalogCache.layerDir(dir))))
        // No entry yet: it starts once to learn its catalog, and stores every list.
        yield* session(eventually(() => entryText().includes("stub://info"), 20_000, "the entry with its resources"))
        assert.include(entryText(), "greet")
        assert.strictEqual(startCount(), 1)
        yield* session(
          Effect.gen(function* () {
            const registry = yield* Registry
            yield* (yield* Sources).awaitListed
            const surface = yield* registry.surface
            assert.deepStrictEqual(
              surface.resources.map((r) => [r.name, r.uri]),
              [["srv__info", "stub://info"]]
            )
            assert.deepStrictEqual(
              surface.prompts.map((p) => p.name),
              ["srv__greet"]
            )
            assert.strictEqual((yield* rowOf("srv")).status, "idle")
            assert.strictEqual(startCount(), 1)
            const read = yield* registry.forward.readResource({ uri: "stub://info" })
            assert.deepStrictEqual(read.contents, [
              { uri: "stub://info", mimeType: "text/plain", text: "stub server stub" }
            ])
            const prompt = yield* registry.forward.getPrompt({ name: "srv__greet", arguments: { name: "Ada" } })
            assert.deepStrictEqual(prompt.messages, [{ role: "user", content: { type: "text", text: "Hello, Ada!" } }])
            assert.strictEqual(startCount(), 2)
          })
        )
      }),
    40_000
  )
})
