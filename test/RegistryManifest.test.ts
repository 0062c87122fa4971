import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import { CallError, ManifestError } from "../src/domain/Errors.js"
import { coreSpecs } from "../src/services/CoreTools.js"
import * as Manifest from "../src/services/CoreTools/Manifest.js"
import { coreContext } from "./lib/coreContext.js"

const spec = (name: string, category: string = "discovery"): Manifest.AnyToolSpec =>
  Manifest.defineTool({
    name,
    description: `the ${name} tool`,
    keywords: [],
    category: category as Manifest.Category,
    usageHint: "a hint that is long enough to pass",
    alwaysLoad: false,
    input: Schema.Struct({ text: Schema.String }),
    output: Schema.Struct({ echoed: Schema.String }),
    handler: (input) => Effect.succeed({ text: input.text, structured: { echoed: input.text } })
  })

const error = (specs: ReadonlyArray<Manifest.AnyToolSpec>): ManifestError => {
  const result = Manifest.make(specs)
  if (Either.isRight(result)) return assert.fail("expected a ManifestError")
  assert.instanceOf(result.left, ManifestError)
  return result.left
}

const context: Manifest.CoreContext = coreContext()

describe("Manifest.make", () => {
  it("keeps insertion order", () => {
    const manifest = Either.getOrThrow(Manifest.make([spec("Zeta"), spec("Alpha")]))
    assert.deepStrictEqual(
      manifest.tools.map((core) => core.spec.name),
      ["Zeta", "Alpha"]
    )
  })

  it("an empty name is a typed error", () => {
    assert.strictEqual(error([spec("")]).reason, "EmptyName")
    assert.strictEqual(error([spec("   ")]).reason, "EmptyName")
  })

  it("a duplicate name is a typed error naming the tool", () => {
    const e = error([spec("Echo"), spec("Other"), spec("Echo")])
    assert.strictEqual(e.reason, "DuplicateName")
    assert.strictEqual(e.tool, "Echo")
  })

  it("an unknown category is a typed error", () => {
    const e = error([spec("Echo", "wat")])
    assert.strictEqual(e.reason, "InvalidCategory")
    assert.include(e.message, "wat")
  })

  it("a name that is not PascalCase (or would look like a source tool) is a typed error", () => {
    assert.strictEqual(error([spec("echo")]).reason, "InvalidName")
    assert.strictEqual(error([spec("My__Tool")]).reason, "InvalidName")
    assert.strictEqual(error([spec("A".repeat(25))]).reason, "InvalidName")
  })

  it("turns effect schemas into object JSON Schemas without $schema or generated titles", () => {
    const manifest = Either.getOrThrow(Manifest.make(coreSpecs))
    for (const core of manifest.tools) {
      assert.strictEqual(core.tool.inputSchema.type, "object", core.spec.name)
      assert.strictEqual(core.tool.outputSchema?.type, "object", core.spec.name)
      assert.notInclude(JSON.stringify(core.tool), '"$schema"')
      assert.notInclude(JSON.stringify(core.tool), '"title":"minLength')
    }
  })

  it.effect("decodes input: invalid or extra arguments are InvalidArguments, valid ones reach the handler", () =>
    Effect.gen(function* () {
      const manifest = Either.getOrThrow(Manifest.make([spec("Echo")]))
      const echo = manifest.byName.get("Echo")!
      const ok = yield* echo.call({ text: "hi" }, context)
      assert.deepStrictEqual(ok, { content: [{ type: "text", text: "hi" }], structuredContent: { echoed: "hi" } })
      for (const bad of [{}, { text: 1 }, { text: "hi", extra: true }]) {
        const failure = yield* Effect.flip(echo.call(bad, context))
        assert.instanceOf(failure, CallError)
        assert.strictEqual(failure.reason, "InvalidArguments")
      }
    })
  )
})

describe("the core manifest", () => {
  const manifest = Either.getOrThrow(Manifest.make(coreSpecs))

  it("builds", () => {
    assert.deepStrictEqual(
      manifest.tools.map((core) => core.spec.name),
      [
        "ToolSearch",
        "SourceHealth",
        "Bash",
        "BashPoll",
        "BashKill",
        "Read",
        "Edit",
        "Write",
        "Glob",
        "Grep",
        "WebFetch",
        "WebSearch",
        "RunCode"
      ]
    )
  })

  it("every core tool has a usage hint of at least 20 characters", () => {
    const missing = coreSpecs.filter((s) => s.usageHint.trim() === "").map((s) => s.name)
    const stubs = coreSpecs
      .filter((s) => s.usageHint.trim() !== "" && s.usageHint.trim().length < 20)
      .map((s) => s.name)
    assert.deepStrictEqual(missing, [], "tools without a usage hint")
    assert.deepStrictEqual(stubs, [], "tools with a stub usage hint (< 20 characters)")
  })

  it("the hot set is the Go hot set, restricted to the tools that exist here, and RunCode (issue 30)", () => {
    const goHotSet = ["Bash", "Read", "Edit", "Glob", "Grep", "WebFetch", "WebSearch", "ToolSearch", "RunCode"]
    const expected = goHotSet.filter((name) => manifest.byName.has(name))
    assert.deepStrictEqual([...Manifest.alwaysLoadSet(manifest)].sort(), expected.sort())
  })
})

// Mutation-testing follow-ups (docs/mutation.md): Manifest.make run inside the tests (a manifest built when the file
// loads hides its mutants): the wire schemas, the error details and the hint map.
const specWith = (name: string, extra: Partial<Manifest.AnyToolSpec> = {}): Manifest.AnyToolSpec =>
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
    const manifest = Either.getOrThrow(Manifest.make([specWith("Probe")]))
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
    const annotated = Either.getOrThrow(Manifest.make([specWith("Probe", { annotations: { readOnlyHint: true } })]))
    assert.deepStrictEqual(annotated.tools[0]!.tool.annotations, { readOnlyHint: true })
  })

  it("error details name the tool and the rule; 24 characters is the longest name", () => {
    assert.strictEqual(detail([specWith(" ")]), "a tool has an empty name")
    assert.strictEqual(detail([specWith("A".repeat(24))]), "built")
    assert.strictEqual(
      detail([specWith("A".repeat(25))]),
      `"${"A".repeat(25)}" is not a PascalCase name of at most 24 characters`
    )
    assert.strictEqual(detail([specWith("Twice"), specWith("Twice")]), `duplicate tool name "Twice"`)
    assert.include(
      detail([specWith("Odd", { category: "nope" as never })]),
      `invalid category "nope" for tool "Odd" (one of`
    )
  })

  it("usageHints leaves out blank hints", () => {
    const manifest = Either.getOrThrow(Manifest.make([specWith("Hinted"), specWith("Blank", { usageHint: "   " })]))
    assert.deepStrictEqual([...Manifest.usageHints(manifest)], [["Hinted", "Use it when a test needs a tool."]])
  })

  it.effect("invalid arguments name the tool", () =>
    Effect.gen(function* () {
      const manifest = Either.getOrThrow(Manifest.make([specWith("Probe")]))
      const error = yield* Effect.flip(manifest.tools[0]!.call({ title: 1 }, undefined as never))
      assert.strictEqual(error.reason, "InvalidArguments")
      assert.match(error.detail, /^invalid arguments for Probe: /)
    })
  )
})
