// What `clawtool` loads before it can answer a host (ADR 017): the bin's static import graph — dist/main.js and the
// shared chunks it imports — must not hold what only some commands, configs or tool calls use. Each file's source map
// names the modules bundled into it, so this reads exactly what Node parses and evaluates at start-up.
import { assert, beforeAll, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, main } from "./lib/cli.js"

beforeAll(ensureBuilt, 120_000)

/** The files `file` imports statically, in the order Node evaluates them. */
const importsOf = (file: string): ReadonlyArray<string> =>
  [...fs.readFileSync(file, "utf8").matchAll(/(?:^|[;}\s])import\s*(?:[\w*{}\s,$]+from\s*)?"(\.{1,2}\/[^"]+)"/g)].map(
    (match) => path.resolve(path.dirname(file), match[1]!)
  )

/** The files Node loads for `dist/main.js` before running it: static `import … from "./…"` only, never `import()`. */
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

/** The original modules bundled into `file`, from its linked source map (the bin's launcher, written by hand, has none). */
const sourcesOf = (file: string): ReadonlyArray<string> =>
  file === main
    ? []
    : (JSON.parse(fs.readFileSync(`${file}.map`, "utf8")) as { sources: ReadonlyArray<string> }).sources

/** Builtins imported by the static graph (`from "node:http"`). */
const builtinsOf = (file: string): ReadonlyArray<string> =>
  [...fs.readFileSync(file, "utf8").matchAll(/from\s*"(node:[\w/]+)"/g)].map((match) => match[1]!)

describe("the bin's start path", () => {
  it("loads none of the modules only a command, a remote source, a tool call or an exporter needs", () => {
    const files = staticGraph(main)
    assert.isAbove(files.length, 0)
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
      "src/services/Registry/CoreTools/WebFetchHttp.ts",
      "src/services/Registry/CoreTools/WebFetchGuard.ts",
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
      "src/services/Registry/TypeScriptExport.ts",
      "node_modules/@effect/opentelemetry/",
      "node_modules/@modelcontextprotocol/sdk/dist/esm/server/streamableHttp.js"
    ]
    const loaded = deferred.filter((module) => sources.some((source) => source.includes(module)))
    assert.deepStrictEqual(loaded, [], "modules loaded at start-up that only some paths use")
    const builtins = new Set(files.flatMap(builtinsOf))
    const heavy = ["node:http", "node:https", "node:zlib", "node:dns", "node:tls"].filter((name) => builtins.has(name))
    assert.deepStrictEqual(heavy, [], "network builtins imported at start-up")
  })

  it("sets V8's young-generation flag before any other module of the bundle is evaluated", () => {
    // ES modules are evaluated in import order, each after its own imports: the bin's first import, and all it imports,
    // run before anything else. With code splitting that only holds in the launcher (scripts/bundle.mjs).
    const [first] = importsOf(main)
    assert.isDefined(first)
    const sources = staticGraph(first!).flatMap(sourcesOf)
    assert.isTrue(
      sources.some((source) => source.endsWith("src/heap.ts")),
      "src/heap.ts is the bin's first import"
    )
    assert.deepStrictEqual(
      sources.filter((source) => !source.endsWith("src/heap.ts")),
      [],
      "the bin's first import loads nothing but src/heap.ts"
    )
  })
})
