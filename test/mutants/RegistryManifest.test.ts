// Mutation-testing follow-ups (docs/mutation.md): Manifest.make run inside the tests (a manifest built when the file
// loads hides its mutants): the wire schemas, the error details and the hint map.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import * as Manifest from "../../src/services/CoreTools/Manifest.js"

const spec = (name: string, extra: Partial<Manifest.AnyToolSpec> = {}): Manifest.AnyToolSpec =>
  Manifest.defineTool({
    name,
    description: `does ${name}`,
    keywords: [],
    category: "discovery",
    usageHint: "Use it when a test needs a tool.",
    alwaysLoad: false,
    input: Schema.Struct({ title: Schema.String, items: Schema.Array(Schema.String) }).annotations({ title: "T" }),
    output: Schema.Struct({}),
    handler: () => Effect.succeed({ text: "ok", structured: {} }),
    ...extra
  })
const detail = (specs: ReadonlyArray<Manifest.AnyToolSpec>) =>
  Either.match(Manifest.make(specs), { onLeft: (error) => error.detail, onRight: () => "built" })

describe("Manifest.make", () => {
  it("wire schemas: objects without $schema or generated titles; a property named title stays", () => {
    const manifest = Either.getOrThrow(Manifest.make([spec("Probe")]))
    const tool = manifest.tools[0]!.tool
    const json = JSON.stringify(tool.inputSchema)
    assert.notInclude(json, "$schema")
    assert.notInclude(json, `"title":"T"`)
    assert.strictEqual(tool.inputSchema.type, "object")
    assert.deepStrictEqual(Object.keys(tool.inputSchema.properties as object).sort(), ["items", "title"])
    assert.deepStrictEqual((tool.inputSchema.properties as Record<string, unknown>).items, {
      type: "array",
      items: { type: "string" }
    })
    assert.deepStrictEqual(tool.outputSchema, { type: "object", properties: {}, additionalProperties: false })
    assert.notProperty(tool, "annotations")
    const annotated = Either.getOrThrow(Manifest.make([spec("Probe", { annotations: { readOnlyHint: true } })]))
    assert.deepStrictEqual(annotated.tools[0]!.tool.annotations, { readOnlyHint: true })
  })

  it("error details name the tool and the rule; 24 characters is the longest name", () => {
    assert.strictEqual(detail([spec(" ")]), "a tool has an empty name")
    assert.strictEqual(detail([spec("A".repeat(24))]), "built")
    assert.strictEqual(
      detail([spec("A".repeat(25))]),
      `"${"A".repeat(25)}" is not a PascalCase name of at most 24 characters`
    )
    assert.strictEqual(detail([spec("Twice"), spec("Twice")]), `duplicate tool name "Twice"`)
    assert.include(
      detail([spec("Odd", { category: "nope" as never })]),
      `invalid category "nope" for tool "Odd" (one of`
    )
  })

  it("usageHints leaves out blank hints", () => {
    const manifest = Either.getOrThrow(Manifest.make([spec("Hinted"), spec("Blank", { usageHint: "   " })]))
    assert.deepStrictEqual([...Manifest.usageHints(manifest)], [["Hinted", "Use it when a test needs a tool."]])
  })

  it.effect("invalid arguments name the tool", () =>
    Effect.gen(function* () {
      const manifest = Either.getOrThrow(Manifest.make([spec("Probe")]))
      const error = yield* Effect.flip(manifest.tools[0]!.call({ title: 1 }, undefined as never))
      assert.strictEqual(error.reason, "InvalidArguments")
      assert.match(error.detail, /^invalid arguments for Probe: /)
    })
  )
})
