// The pure parts of issue 27's child edge (src/domain/Era.ts, ADR 033): the probe's verdict, the typed input_required a
// modern child answers with and its retry, and the verdict kept in the catalog cache.
import { assert, describe, it } from "@effect/vitest"
import { assertSome } from "@effect/vitest/utils"
import { Effect, Option } from "effect"
import {
  completeResult,
  envelopeOf,
  inputRequiredOf,
  legacyVerdict,
  retryParams,
  verdictFromJson,
  verdictOf
} from "../src/domain/Era.js"
import { CatalogCache, keyOf } from "../src/services/CatalogCache.js"
import { tempDir } from "./lib/sources.js"

const discover = { supportedVersions: ["2026-07-28"], capabilities: { tools: {} } }

describe("Era.verdictOf (the probe's answer)", () => {
  it("a DiscoverResult naming 2026-07-28 is modern; any error, other versions or a non-answer is legacy", () => {
    assert.deepStrictEqual(verdictOf({ jsonrpc: "2.0", id: "p", result: discover }), {
      era: "modern",
      discover
    })
    for (const response of [
      { jsonrpc: "2.0", id: "p", error: { code: -32601, message: "Method not found" } },
      { jsonrpc: "2.0", id: "p", error: { code: -32602, message: "bad" } },
      { jsonrpc: "2.0", id: "p", result: { supportedVersions: ["2027-01-01"] } },
      { jsonrpc: "2.0", id: "p", result: {} },
      undefined,
      "garbage"
    ]) {
      assert.strictEqual(verdictOf(response), legacyVerdict, JSON.stringify(response))
    }
  })

  it("a cached verdict reads back as written; anything else is none", () => {
    assert.deepStrictEqual(verdictFromJson({ era: "modern", discover }), { era: "modern", discover })
    assert.strictEqual(verdictFromJson({ era: "legacy" }), legacyVerdict)
    for (const value of [undefined, { era: "modern" }, { era: "future" }, "legacy"]) {
      assert.isUndefined(verdictFromJson(value))
    }
  })
})

describe("Era input_required (MRTR)", () => {
  it("a complete result needs nothing and loses resultType; input_required gives its requests and state", () => {
    assert.isUndefined(inputRequiredOf({ resultType: "complete", content: [] }))
    assert.deepStrictEqual(completeResult({ resultType: "complete", content: [] }) as unknown, { content: [] })
    // The child's serverInfo goes (clawtool is the host's server); the rest of its _meta stays.
    const named = { "io.modelcontextprotocol/serverInfo": { name: "child", version: "1" } }
    assert.deepStrictEqual(completeResult({ resultType: "complete", content: [], _meta: named }) as unknown, {
      content: []
    })
    assert.deepStrictEqual(completeResult({ content: [], _meta: { ...named, "x/trace": "t" } }) as unknown, {
      content: [],
      _meta: { "x/trace": "t" }
    })
    assert.deepStrictEqual(completeResult({ resultType: "complete", content: [], _meta: { a: 1 } }) as unknown, {
      content: [],
      _meta: { a: 1 }
    })
    const needed = inputRequiredOf({
      resultType: "input_required",
      inputRequests: {
        a: { method: "elicitation/create", params: { message: "who?" } },
        b: { method: "roots/list" },
        broken: { params: {} }
      },
      requestState: "s1"
    })
    assert.deepStrictEqual(needed, {
      inputRequests: {
        a: { method: "elicitation/create", params: { message: "who?" } },
        b: { method: "roots/list", params: undefined }
      },
      requestState: "s1"
    })
    // The retry: the original params, the answers by key, the state verbatim.
    assert.deepStrictEqual(retryParams({ name: "ask", arguments: { q: 1 } }, needed!, { a: { action: "decline" } }), {
      name: "ask",
      arguments: { q: 1 },
      inputResponses: { a: { action: "decline" } },
      requestState: "s1"
    })
    const stateless = inputRequiredOf({ resultType: "input_required", inputRequests: {} })!
    assert.notProperty(retryParams({ name: "x" }, stateless, {}), "requestState")
  })

  it("the envelope names the modern version, the declared capabilities and clawtool", () => {
    assert.deepStrictEqual(envelopeOf({ elicitation: {} }, { name: "clawtool", version: "1" }), {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
      "io.modelcontextprotocol/clientInfo": { name: "clawtool", version: "1" }
    })
  })
})

describe("CatalogCache keeps the era verdict", () => {
  it.effect("an entry with a verdict reads back with it; one without has none", () =>
    Effect.gen(function* () {
      const cache = yield* Effect.provide(CatalogCache, CatalogCache.layerDir(tempDir()))
      const lists = { capabilities: {}, resources: [], resourceTemplates: [], prompts: [] }
      const modern = keyOf({ command: ["modern"], cwd: undefined, env: {} })
      const plain = keyOf({ command: ["plain"], cwd: undefined, env: {} })
      yield* cache.store(modern, { tools: [], lists: Option.some({ ...lists, era: { era: "modern", discover } }) })
      yield* cache.store(plain, { tools: [], lists: Option.some(lists) })
      const kept = yield* cache.load(modern)
      assertSome(
        Option.flatMap(kept, (entry) => Option.fromNullable(Option.getOrUndefined(entry.lists)?.era?.era)),
        "modern"
      )
      const none = yield* cache.load(plain)
      assert.isUndefined(Option.getOrUndefined(Option.getOrThrow(none).lists)?.era)
    })
  )
})
