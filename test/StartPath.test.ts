// What `clawtool` loads before it can answer a host (ADR 017): the bin's static import graph — dist/main.js and the
// shared chunks it imports — must not hold what only some commands, configs or tool calls use. Each file's source map
// names the modules bundled into it, so this reads exactly what Node parses and evaluates at start-up.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js"
import { assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, freshCacheDir, main, runCli, serveClient, tempDirEnv, writeConfig } from "./lib/cli.js"
import { root, tempDir } from "./lib/sources.js"

beforeAll(ensureBuilt, 120_000)

/**
 * The bundle's outputs are CommonJS (scripts/bundle.mjs): a static import is a `require("…")`, an `import()` became
 * `Promise.resolve().then(() => __toESM(require("…")))`, loaded on first use. The specifiers `file` requires
 * statically, in the order Node evaluates them.
 */
const staticRequires = (file: string): ReadonlyArray<string> =>
  [...fs.readFileSync(file, "utf8").matchAll(/(then\(\(\)=>__toESM\()?require\("([^"]+)"\)/g)]
    .filter((match) => match[1] === undefined)
    .map((match) => match[2]!)

/** The bundle files `file` loads statically. */
const importsOf = (file: string): ReadonlyArray<string> =>
  staticRequires(file)
    .filter((specifier) => specifier.startsWith("./") || specifier.startsWith("../"))
    .map((specifier) => path.resolve(path.dirname(file), specifier))

/** What the bin runs: the bundle of src/main.ts, which the launcher (dist/main.js) loads by its path. */
const bundle = path.join(path.dirname(main), "clawtool.cjs")

/** The files Node loads for the bundle before running it: static requires only, never the ones `import()` became. */
const staticGraph = (entry: string): ReadonlyArray<string> => {
  const seen = new Set<string>()
  const visit = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    for (const imported of importsOf(file)) visit(imported)
  }
  visit(entry)
  return [...seen]
}

/** The original modules bundled into `file`, in order, from its linked source map. */
const sourcesOf = (file: string): ReadonlyArray<string> =>
  (JSON.parse(fs.readFileSync(`${file}.map`, "utf8")) as { sources: ReadonlyArray<string> }).sources

/** Builtins required statically (`require("node:http")`). */
const builtinsOf = (file: string): ReadonlyArray<string> =>
  staticRequires(file).filter((specifier) => specifier.startsWith("node:"))

describe("the bin's start path", () => {
  it("loads none of the modules only a command, a remote source, a tool call or an exporter needs", () => {
    const files = staticGraph(bundle)
    assert.isAbove(files.length, 1)
    const sources = files.flatMap(sourcesOf)
    // The graph is real: the services serve needs are in it.
    for (const needed of ["src/services/Gateway.ts", "src/services/Sources.ts", "node_modules/effect/"]) {
      assert.isTrue(
        sources.some((source) => source.includes(needed)),
        `${needed} is on the start path`
      )
    }
    const deferred = [
      // tool calls
      "node_modules/minisearch/",
      "node_modules/stemmer/",
      "node_modules/picomatch/",
      "node_modules/diff/",
      "node_modules/ipaddr.js/",
      "src/services/CoreTools/WebFetchHttp.ts",
      "src/services/CoreTools/WebFetchGuard.ts",
      "src/services/Registry/ToolSearch.ts",
      // remote sources and OAuth
      "src/services/SourceClient/Remote.ts",
      "node_modules/eventsource/",
      "node_modules/@modelcontextprotocol/sdk/dist/esm/client/auth.js",
      "node_modules/@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js",
      "src/services/OAuth/Login.ts",
      "src/services/OAuth/Provider.ts",
      "src/services/OAuth/Revoke.ts",
      // commands other than serve, the span exporter
      "src/transport/HttpRelay.ts",
      "src/transport/ReplayLog.ts",
      "src/cli/TypeScriptExport.ts",
      "node_modules/@effect/opentelemetry/",
      // the daemon's metrics (issue 29)
      "node_modules/prom-client/",
      "src/services/Metrics/Prometheus.ts",
      "src/services/Daemon/DashboardRoutes.ts",
      "node_modules/@modelcontextprotocol/sdk/dist/esm/server/streamableHttp.js"
    ]
    const loaded = deferred.filter((module) => sources.some((source) => source.includes(module)))
    assert.deepStrictEqual(loaded, [], "modules loaded at start-up that only some paths use")
    const builtins = new Set(files.flatMap(builtinsOf))
    const heavy = ["node:http", "node:https", "node:zlib", "node:dns", "node:tls"].filter((name) => builtins.has(name))
    assert.deepStrictEqual(heavy, [], "network builtins imported at start-up")
  })

  it("sets V8's flags before any module of the bundle is evaluated", () => {
    // The launcher is one self-contained file whose code starts with src/heap.ts (scripts/bundle.mjs): it requires no
    // file of the bundle statically, and loads dist/clawtool.cjs only after the flags are set.
    assert.deepStrictEqual(importsOf(main), [], "the launcher loads no bundle file before its own code")
    assert.notMatch(fs.readFileSync(main, "utf8"), /from\s*"\.{1,2}\//, "the launcher imports no file of its own")
    assert.include(fs.readFileSync(main, "utf8"), "clawtool.cjs")
    const sources = sourcesOf(main)
    assert.isTrue(
      sources[0]?.endsWith("src/heap.ts"),
      `the launcher's code starts with src/heap.ts: ${sources.join(", ")}`
    )
    for (const source of sources) assert.isTrue(source.includes("src/"), `${source} is clawtool's own code`)
  })
})

// V8's code cache of the bin (src/launcher.ts, ADR 027): `<cache>/code/<node>-<arch>-<install>/<file>.v8`, one per
// bundle file that ran, written when the process has been up 2 s or exits.
describe("the bin's code cache", () => {
  const codeFiles = (cache: string): Map<string, fs.Stats> => {
    const code = path.join(cache, "code")
    if (!fs.existsSync(code)) return new Map()
    return new Map(
      fs
        .readdirSync(code)
        .flatMap((folder) => fs.readdirSync(path.join(code, folder)).map((name) => path.join(code, folder, name)))
        .map((file) => [file, fs.statSync(file)] as const)
    )
  }
  const cacheOf = (cache: string, file: string) =>
    [...codeFiles(cache).keys()].find((name) => name.endsWith(`/${file}.v8`))
  const version = (cache: string) => {
    const run = runCli(["--version"], { CLAWTOOL_CACHE_DIR: cache })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.match(run.stdout, /^\d+\.\d+\.\d+\n+$/)
    assert.strictEqual(run.stderr, "")
    return run.stdout
  }

  it("is written by a first run (0600 files in 0700 folders) and used, not rewritten, by the next", () => {
    const cache = freshCacheDir()
    const first = version(cache)
    const written = codeFiles(cache)
    const entry = cacheOf(cache, "clawtool.cjs")
    assert.isDefined(entry, `clawtool.cjs is cached: ${[...written.keys()].join(", ")}`)
    for (const [file, stat] of written) {
      assert.strictEqual(stat.mode & 0o777, 0o600, file)
      assert.strictEqual(fs.statSync(path.dirname(file)).mode & 0o777, 0o700, path.dirname(file))
    }
    assert.strictEqual(fs.statSync(path.join(cache, "code")).mode & 0o777, 0o700)
    // Every file of the start path ran, so each has its cache.
    const startPath = staticGraph(bundle).map((file) => path.basename(file))
    assert.deepStrictEqual(
      startPath.filter((file) => cacheOf(cache, file) === undefined),
      [],
      "start-path files without a cache"
    )
    assert.strictEqual(version(cache), first)
    // A cache V8 rejected, or one that failed the launcher's checks, would have been written again.
    for (const [file, stat] of codeFiles(cache)) assert.strictEqual(stat.mtimeMs, written.get(file)?.mtimeMs, file)
  })

  it("survives a damaged, truncated, foreign or stale file: compiles from source, same result, writes it again", () => {
    const cache = freshCacheDir()
    const expected = version(cache)
    const entry = cacheOf(cache, "clawtool.cjs")!
    const good = fs.readFileSync(entry)
    const other = [...codeFiles(cache).keys()].find((file) => file !== entry)!
    const damaged = Buffer.from(good)
    damaged[Math.floor(damaged.length / 2)]! ^= 0xff // the same length: V8 alone would take it
    const cases: ReadonlyArray<readonly [string, Buffer]> = [
      ["damaged", damaged],
      ["truncated", good.subarray(0, good.length - 1000)],
      ["foreign", Buffer.from("not a code cache at all")],
      ["empty", Buffer.alloc(0)],
      // A whole, valid cache of another file (another source): its source hash does not match.
      ["stale", fs.readFileSync(other)]
    ]
    for (const [name, bytes] of cases) {
      fs.writeFileSync(entry, bytes)
      assert.strictEqual(version(cache), expected, name)
      const rewritten = fs.readFileSync(entry)
      assert.isFalse(rewritten.equals(bytes), `${name}: written again`)
      // … and whole: the next run uses it as it is.
      assert.strictEqual(version(cache), expected, name)
      assert.isTrue(fs.readFileSync(entry).equals(rewritten), `${name}: the new cache is used`)
    }
  })

  it("is skipped with NODE_DISABLE_COMPILE_CACHE, and a cache folder that cannot be written costs nothing", () => {
    const cache = freshCacheDir()
    const plain = runCli(["--version"], { CLAWTOOL_CACHE_DIR: cache, NODE_DISABLE_COMPILE_CACHE: "1" })
    assert.strictEqual(plain.code, 0, plain.stderr)
    assert.strictEqual(codeFiles(cache).size, 0)
    const notAFolder = path.join(freshCacheDir(), "file")
    fs.writeFileSync(notAFolder, "")
    const blocked = runCli(["--version"], { CLAWTOOL_CACHE_DIR: notAFolder })
    assert.strictEqual(blocked.code, 0, blocked.stderr)
    assert.strictEqual(blocked.stdout, plain.stdout)
    assert.strictEqual(blocked.stderr, "")
  })

  it.scopedLive(
    "loads on-demand chunks through the same loader; a cache written late in a long run is used by the next",
    () =>
      Effect.gen(function* () {
        const cache = freshCacheDir()
        const dir = freshCacheDir()
        fs.writeFileSync(path.join(dir, "a.ts"), "export {}\n")
        const config = writeConfig(`roots = [${JSON.stringify(dir)}]\n`)
        // Glob's matcher is a chunk loaded on its first call (the start-path test above keeps picomatch off the start).
        const serveAndGlob = (upMs: number) =>
          Effect.scoped(
            Effect.gen(function* () {
              const client = yield* serveClient(config, {}, cache)
              const globbed = yield* Effect.promise(() =>
                client.callTool({ name: "Glob", arguments: { pattern: "*.ts" } })
              )
              assert.deepStrictEqual((globbed.structuredContent as { files?: unknown } | undefined)?.files, ["a.ts"])
              yield* Effect.sleep(upMs)
            })
          )
        // Up past the cache's 2 s timer, and past TurboFan's return (src/heap.ts): V8's flags differ from the start's
        // by then, and the cache must still carry the start's, or every next start rejects it.
        yield* serveAndGlob(3000)
        const written = codeFiles(cache)
        // Node's own import() would have loaded the chunk, and a second copy of each shared chunk it needs, uncached.
        const startPath = new Set(staticGraph(bundle).map((file) => `${path.basename(file)}.v8`))
        const onDemand = [...written.keys()].map((file) => path.basename(file)).filter((name) => !startPath.has(name))
        assert.isAbove(onDemand.length, 0, "a chunk loaded on demand has its cache")
        yield* serveAndGlob(0)
        yield* Effect.sleep(300) // the process exits after the client closed
        for (const [file, stat] of codeFiles(cache)) assert.strictEqual(stat.mtimeMs, written.get(file)?.mtimeMs, file)
      })
  )
})

// TurboFan's start-up pause (src/heap.ts, ADR 027): the handshake and the lists run unoptimised; the host's first
// tools/call ends the pause, on the relay as on the SDK path. The probe (test/fixtures/heap-probe.cjs) starts serve
// paused with no 2 s timer, so nothing but the Gateway can end it, however slow the machine.
describe("TurboFan's start-up pause", () => {
  const probe = path.join(root, "test/fixtures/heap-probe.cjs")
  const tiny = path.join(root, "test/fixtures/tiny-server.mjs")

  /** `clawtool serve` over one tiny-server source with the probe preloaded; `paused` asks the probe. */
  const probedServe = Effect.gen(function* () {
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => tempDir("clawtool-heap-")),
      (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
    )
    const config = path.join(dir, "config.toml")
    fs.writeFileSync(config, `[sources.tiny]\ncommand = ${JSON.stringify([process.execPath, tiny])}\n`)
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [main, "serve", "--config", config],
      cwd: root,
      env: {
        ...getDefaultEnvironment(),
        ...tempDirEnv,
        CLAWTOOL_CACHE_DIR: path.join(dir, "cache"),
        NODE_OPTIONS: `--require ${JSON.stringify(probe)}`
      },
      stderr: "pipe"
    })
    let stderr = ""
    transport.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    const client = yield* Effect.acquireRelease(
      Effect.promise(async () => {
        const client = new Client({ name: "e2e-host", version: "1.0.0" })
        await client.connect(transport)
        return client
      }),
      (client) => Effect.promise(() => client.close())
    )
    const answers = () => [...stderr.matchAll(/^heap-probe (.*)\n/gm)].map((match) => JSON.parse(match[1]!))
    const paused = Effect.gen(function* () {
      const before = answers().length
      process.kill(transport.pid!, "SIGUSR2")
      while (answers().length === before) yield* Effect.sleep("20 millis")
      return answers().at(-1).paused as boolean
    }).pipe(Effect.timeout("10 seconds"))
    return { client, paused }
  })

  it.scopedLive("holds through the handshake and tools/list; the host's first tools/call, relayed, ends it", () =>
    Effect.gen(function* () {
      const { client, paused } = yield* probedServe
      const { tools } = yield* Effect.promise(() => client.listTools())
      assert.include(
        tools.map((tool) => tool.name),
        "tiny__echo"
      )
      assert.isTrue(yield* paused, "still paused after initialize and tools/list")
      const result = yield* Effect.promise(() => client.callTool({ name: "tiny__echo", arguments: { text: "hi" } }))
      assert.deepStrictEqual(result.content, [{ type: "text", text: "echo:hi" }])
      assert.isFalse(yield* paused, "resumed by the first call")
    })
  )

  it.scopedLive("a first tools/call on the SDK path (progress asked) ends it too", () =>
    Effect.gen(function* () {
      const { client, paused } = yield* probedServe
      yield* Effect.promise(() => client.listTools())
      assert.isTrue(yield* paused, "still paused after initialize and tools/list")
      const result = yield* Effect.promise(() =>
        client.callTool({ name: "tiny__echo", arguments: { text: "hi" } }, CallToolResultSchema, {
          onprogress: () => {}
        })
      )
      assert.deepStrictEqual(result.content, [{ type: "text", text: "echo:hi" }])
      assert.isFalse(yield* paused, "resumed by the first call")
    })
  )
})
