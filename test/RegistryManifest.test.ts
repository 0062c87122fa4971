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
        "WebSearch"
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

  it("the hot set is the Go hot set, restricted to the tools that exist here", () => {
    const goHotSet = ["Bash", "Read", "Edit", "Glob", "Grep", "WebFetch", "WebSearch", "ToolSearch"]
    const expected = goHotSet.filter((name) => manifest.byName.has(name))
    assert.deepStrictEqual([...Manifest.alwaysLoadSet(manifest)].sort(), expected.sort())
  })
})
