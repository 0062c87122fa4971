// Config errors in the user's words (src/services/Config/Wording.ts, ADR-011): each asserts the exact sentence a user
// reads. Mutation-driven (docs/mutation.md).
import { assert, describe, it } from "@effect/vitest"
import { Either, ParseResult, Schema } from "effect"
import { decodeStrict } from "../../src/services/Config.js"
import { json, rejected } from "./lib.js"

/** The message `decodeStrict` gives for `input` against a hand-made schema, as the file "f". */
const decodeMessage = <A, I>(
  schema: Schema.Schema<A, I>,
  input: unknown,
  format: "toml" | "json" = "toml",
  describe?: (path: ReadonlyArray<PropertyKey>) => string | undefined
): string => {
  const result = decodeStrict(schema, input, { file: "f", text: "", format, ...(describe ? { describe } : {}) })
  if (Either.isRight(result)) return assert.fail(`expected a ConfigError, got ${JSON.stringify(result.right)}`)
  return result.left.message
}

describe("Config wording: values shown after `got`", () => {
  it("shows a value of 60 characters whole and cuts a longer one at 57 with ...", () => {
    const sixty = "x".repeat(58) // 60 characters once quoted
    assert.strictEqual(
      rejected(`[sources.fs]\ncommand = "${sixty}"\n`),
      `config /x/config.toml:2 at sources.fs.command: expected a non-empty list of strings, like ["npx", "-y", "some-mcp-server"], got "${sixty}"`
    )
    assert.strictEqual(
      rejected(`[sources.fs]\ncommand = "${"y".repeat(59)}"\n`),
      `config /x/config.toml:2 at sources.fs.command: expected a non-empty list of strings, like ["npx", "-y", "some-mcp-server"], got "${"y".repeat(56)}...`
    )
  })

  it("calls [] an empty list but shows a non-empty list as written", () => {
    assert.strictEqual(
      rejected(`[sources.fs]\ncommand = ["a"]\ncwd = []\n`),
      "config /x/config.toml:3 at sources.fs.cwd: expected a string (a directory), got an empty list"
    )
    assert.strictEqual(
      rejected(`[sources.fs]\ncommand = ["a"]\ncwd = [1]\n`),
      "config /x/config.toml:3 at sources.fs.cwd: expected a string (a directory), got [1]"
    )
  })
})

describe("Config wording: structure in the file's own words", () => {
  it("a tuple is a list in TOML and an array in JSON", () => {
    const pair = Schema.Tuple(Schema.String, Schema.Number)
    assert.strictEqual(decodeMessage(pair, 3), "config f: expected a list, got 3")
    assert.strictEqual(decodeMessage(pair, 3, "json"), "config f: expected an array, got 3")
  })

  it("a struct is a table in TOML (named by its header below the top) and an object in JSON", () => {
    const inner = Schema.Struct({ a: Schema.Struct({ b: Schema.String }) })
    assert.strictEqual(decodeMessage(Schema.Struct({ b: Schema.String }), 3), "config f: expected a table, got 3")
    assert.strictEqual(
      decodeMessage(Schema.Struct({ b: Schema.String }), 3, "json"),
      "config f: expected an object, got 3"
    )
    assert.strictEqual(decodeMessage(inner, { a: 3 }), "config f at a: expected a table, like [a], got 3")
    assert.strictEqual(decodeMessage(inner, { a: 3 }, "json"), "config f at a: expected an object, got 3")
  })

  it("names no header for a table without keys or one with open keys", () => {
    assert.strictEqual(
      decodeMessage(Schema.Struct({ a: Schema.Struct({}) }), { a: null }),
      "config f at a: expected a table, got null"
    )
    const open = Schema.Struct({ b: Schema.String }, Schema.Record({ key: Schema.String, value: Schema.String }))
    assert.strictEqual(decodeMessage(Schema.Struct({ a: open }), { a: 3 }), "config f at a: expected a table, got 3")
  })

  it("lists every member of a union of scalars in one sentence, leaving out undefined", () => {
    assert.strictEqual(
      decodeMessage(Schema.Struct({ a: Schema.Union(Schema.String, Schema.Number, Schema.Boolean) }), { a: null }),
      "config f at a: expected a string, a number or a boolean, got null"
    )
    assert.strictEqual(
      decodeMessage(Schema.Struct({ a: Schema.optional(Schema.Literal("x", "y", "z")) }), { a: 1 }),
      `config f at a: expected "x", "y" or "z", got 1`
    )
  })

  it("leaves an explicit undefined member out of the sentence", () => {
    assert.strictEqual(
      decodeMessage(Schema.Struct({ a: Schema.Union(Schema.String, Schema.Number, Schema.Undefined) }), { a: null }),
      "config f at a: expected a string or a number, got null"
    )
  })

  it("reports a union with a table member through that member, not as one sentence", () => {
    const either = Schema.Struct({ a: Schema.Union(Schema.String, Schema.Struct({ b: Schema.String })) })
    assert.strictEqual(decodeMessage(either, { a: { b: 1 } }), 'config f at a: expected a string, got {"b":1}')
  })

  it("describes an undescribed refinement or transformation by what it starts from", () => {
    const refined = Schema.Tuple(Schema.String).pipe(Schema.filter(() => false))
    assert.strictEqual(
      decodeMessage(Schema.Struct({ a: refined }), { a: ["x"] }),
      `config f at a: expected a list, got ["x"]`
    )
    const refused = Schema.transformOrFail(Schema.Struct({ x: Schema.String }), Schema.String, {
      strict: true,
      decode: (value, _, ast) => ParseResult.fail(new ParseResult.Type(ast, value)),
      encode: (value) => ParseResult.succeed({ x: value })
    })
    assert.strictEqual(
      decodeMessage(Schema.Struct({ a: refused }), { a: { x: "y" } }, "json"),
      `config f at a: expected an object, got {"x":"y"}`
    )
  })

  it("describes a refined optional-like union by its one defined member", () => {
    const refined = Schema.Union(Schema.Number, Schema.Undefined).pipe(Schema.filter(() => false))
    assert.strictEqual(
      decodeMessage(Schema.Struct({ a: refined }), { a: 1 }),
      "config f at a: expected a number, got 1"
    )
  })

  it("says 'a valid value' for a schema with nothing to say", () => {
    assert.strictEqual(
      decodeMessage(Schema.Struct({ a: Schema.Undefined }), { a: 1 }),
      "config f at a: expected a valid value, got 1"
    )
  })

  it("passes a forbidden decoding's own message through", () => {
    const forbidden = Schema.transformOrFail(Schema.String, Schema.String, {
      strict: true,
      decode: (value, _, ast) => ParseResult.fail(new ParseResult.Forbidden(ast, value, "not here")),
      encode: ParseResult.succeed
    })
    assert.strictEqual(decodeMessage(Schema.Struct({ a: forbidden }), { a: "x" }), "config f at a: not here")
  })
})

describe("Config wording: descriptions of transformations and refinements", () => {
  const nonEmptyText = Schema.transform(Schema.String.pipe(Schema.minLength(1)), Schema.String, {
    strict: true,
    decode: (s) => s,
    encode: (s) => s
  }).annotations({ description: "some text" })

  it("a described transformation speaks for a value its refined input rejected by type", () => {
    assert.strictEqual(
      decodeMessage(Schema.Struct({ a: nonEmptyText }), { a: 3 }),
      "config f at a: expected some text, got 3"
    )
  })

  it("but not for a value that broke the refinement's own predicate", () => {
    assert.strictEqual(
      decodeMessage(Schema.Struct({ a: nonEmptyText }), { a: "" }),
      `config f at a: expected a string at least 1 character(s) long, got ""`
    )
  })

  it("nor for a decoded value its target type rejected", () => {
    const letterA = Schema.transform(Schema.String, Schema.Literal("a"), {
      strict: false,
      decode: (s) => s,
      encode: (s) => s
    }).annotations({ description: "the letter a" })
    assert.strictEqual(decodeMessage(Schema.Struct({ a: letterA }), { a: "b" }), `config f at a: expected "a", got "b"`)
  })

  it("a description wins over the caller's legacy wording; the legacy one fills the gaps", () => {
    const legacy = (path: ReadonlyArray<PropertyKey>) => `a thing at ${path.join("/")}`
    assert.strictEqual(
      decodeMessage(Schema.Struct({ a: nonEmptyText }), { a: 3 }, "toml", legacy),
      "config f at a: expected some text, got 3"
    )
    assert.strictEqual(
      decodeMessage(Schema.Struct({ a: Schema.String }), { a: 3 }, "toml", legacy),
      "config f at a: a thing at a, got 3"
    )
  })

  it("renders an example as the user would write it: null, and objects in TOML or JSON syntax", () => {
    const nothing = Schema.Null.annotations({ description: "nothing", examples: [null] })
    assert.strictEqual(
      decodeMessage(Schema.Struct({ a: nothing }), { a: 1 }),
      "config f at a: expected nothing, like null, got 1"
    )
    const thing = Schema.Unknown.pipe(Schema.filter(() => false)).annotations({
      description: "a thing",
      examples: [{ "k y": [1, "b"], z: {} }]
    })
    assert.strictEqual(
      decodeMessage(Schema.Struct({ a: thing }), { a: 1 }),
      `config f at a: expected a thing, like { "k y" = [1, "b"], z = {  } }, got 1`
    )
    assert.strictEqual(
      decodeMessage(Schema.Struct({ a: thing }), { a: 1 }, "json"),
      `config f at a: expected a thing, like { "k y": [1, "b"], "z": {  } }, got 1`
    )
  })
})

describe("Config wording: missing items and unknown keys", () => {
  const nested = Schema.Struct({ a: Schema.Struct({ b: Schema.Tuple(Schema.String, Schema.Number) }) })

  it("a missing first item means empty; a later one is missing; a key is a required key", () => {
    assert.strictEqual(decodeMessage(nested, { a: { b: [] } }), "config f at a.b[0]: must not be empty")
    assert.strictEqual(decodeMessage(nested, { a: { b: ["x"] } }), "config f at a.b[1]: an item is missing")
    assert.strictEqual(decodeMessage(nested, { a: {} }), "config f at a.b: this required key is missing")
  })

  it("an extra item of a tuple is unexpected", () => {
    assert.strictEqual(decodeMessage(Schema.Tuple(Schema.String), ["a", "b"]), `config f at [1]: unexpected "1"`)
  })

  it("lists the known keys only when all are bare", () => {
    assert.strictEqual(
      decodeMessage(Schema.Struct({ a: Schema.String, "b c": Schema.String }), { a: "", "b c": "", z: 1 }),
      `config f at z: unknown key "z"`
    )
    assert.strictEqual(
      decodeMessage(Schema.Struct({ a: Schema.String, b_c: Schema.String }), { a: "", b_c: "", z: 1 }),
      `config f at z: unknown key "z"; known keys are a, b_c`
    )
  })

  it("an unknown key of a JSON entry lists the entry's keys", () => {
    assert.strictEqual(
      rejected(json({ mcpServers: { fs: { command: "a", foo: 1 } } }), "/x/c.json"),
      `config /x/c.json:5 at mcpServers.fs.foo: unknown key "foo"; known keys are type, command, args, env, cwd, disabled`
    )
  })
})
