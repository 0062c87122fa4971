import { afterAll, assert, describe, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import { Registry } from "../src/services/Registry.js"
import * as ToolSearch from "../src/services/Registry/ToolSearch.js"
import { makeTempDir, referenceSources, registryLayer } from "./lib/registry.js"

const dir = makeTempDir()
afterAll(() => Fs.rmSync(dir, { recursive: true, force: true }))

describe("ToolSearch tokenizer", () => {
  it("splits camelCase, snake_case, kebab-case and drops stop words", () => {
    assert.deepStrictEqual(ToolSearch.tokenize("ToolSearch read_text_file get-sum"), [
      "tool",
      "search",
      "toolsearch",
      "read",
      "text",
      "file",
      "get",
      "sum"
    ])
    assert.deepStrictEqual(ToolSearch.tokenize("Read the file of a URL"), ["read", "file", "url"])
  })
})

layer(registryLayer(referenceSources(dir, ["everything", "filesystem", "memory"])), {
  timeout: "60 seconds",
  excludeTestServices: true
})("ToolSearch over real server-everything, server-filesystem and server-memory", (it) => {
  // excludeTestServices: these `it.effect`s run on the live clock, against real children.
  const search = (query: string, limit?: number) =>
    Effect.gen(function* () {
      const registry = yield* Registry
      yield* registry.awaitSettled
      const result = yield* registry.call("ToolSearch", {
        arguments: limit === undefined ? { query } : { query, limit }
      })
      return result.structuredContent as {
        readonly results: ReadonlyArray<{ name: string; description?: string; inputSchema: { type: string } }>
        readonly catalogHash: string
      }
    })
  const top = (query: string, limit?: number) =>
    Effect.map(search(query, limit), (out) => out.results.map((hit) => hit.name))

  it.effect("every source started", () =>
    Effect.gen(function* () {
      const registry = yield* Registry
      yield* registry.awaitSettled
      const rows = yield* registry.health
      assert.deepStrictEqual(
        rows.map((row) => [row.name, row.status]),
        [
          ["everything", "running"],
          ["filesystem", "running"],
          ["memory", "running"]
        ]
      )
    })
  )

  it.effect("ranks the tool an agent means first, across sources", () =>
    Effect.gen(function* () {
      const cases: ReadonlyArray<readonly [string, string]> = [
        ["create entities in the knowledge graph", "memory__create_entities"],
        ["relations between entities", "memory__create_relations"],
        ["search nodes", "memory__search_nodes"],
        ["sum of two numbers", "everything__get-sum"],
        ["echo", "everything__echo"],
        ["tiny image", "everything__get-tiny-image"],
        ["long running operation with progress", "everything__trigger-long-running-operation"],
        ["move or rename a file", "filesystem__move_file"],
        ["list directory", "filesystem__list_directory"],
        ["health of sources", "SourceHealth"]
      ]
      for (const [query, expected] of cases) {
        const names = yield* top(query)
        assert.strictEqual(names[0], expected, `"${query}" → ${names.join(", ")}`)
      }
    })
  )

  it.effect("parameter names are indexed", () =>
    Effect.gen(function* () {
      // edit_file's parameters are path, edits (oldText/newText) and dryRun; "dryRun" appears nowhere else.
      const names = yield* top("dryRun")
      assert.strictEqual(names[0], "filesystem__edit_file")
    })
  )

  it.effect("returns the top-k with description and input schema; limit defaults to 5", () =>
    Effect.gen(function* () {
      const out = yield* search("read file")
      assert.strictEqual(out.results.length, 5)
      assert.includeMembers(
        out.results.slice(0, 3).map((hit) => hit.name),
        ["filesystem__read_text_file", "filesystem__read_file"]
      )
      for (const hit of out.results) {
        assert.strictEqual(hit.inputSchema.type, "object")
        assert.isString(hit.description)
      }
      assert.strictEqual((yield* search("read file", 2)).results.length, 2)
      assert.strictEqual(out.catalogHash, (yield* (yield* Registry).catalog).hash)
    })
  )

  it.effect("the same query gives the same answer", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* top("file", 20), yield* top("file", 20))
    })
  )
})
