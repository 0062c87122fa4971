// Mutation-driven tests of src/services/Config.ts's wording (ADR-011): each asserts the exact sentence a user reads.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Option, ParseResult, Schema } from "effect"
import { ClawtoolConfig } from "../../src/domain/Config.js"
import {
  Config,
  decodeStrict,
  errno,
  locateJson,
  locateToml,
  parseConfig,
  parseKeys,
  tomlDocument
} from "../../src/services/Config.js"

/** The whole message of the ConfigError `parseConfig` gives for `text` (file:line, key path and detail). */
const rejected = (text: string, file = "/x/config.toml"): string => {
  const result = parseConfig(text, file)
  if (Either.isRight(result)) return assert.fail(`expected a ConfigError, got ${JSON.stringify(result.right)}`)
  return result.left.message
}

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

const json = (value: unknown) => JSON.stringify(value, null, 2)

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

describe("Config syntax errors", () => {
  it("TOML: the parser's reason with line and column, without its code block", () => {
    assert.strictEqual(rejected("[sources.fs\n"), "config /x/config.toml:1:12: invalid TOML: illegal character in key")
    assert.strictEqual(
      rejected("a = " + "[".repeat(2000)),
      "config /x/config.toml:1:1005: invalid TOML: document contains excessively nested structures. aborting."
    )
  })

  it("JSON: the reason without V8's position, as line and column", () => {
    assert.strictEqual(
      rejected('{\n  "mcpServers": {,\n}', "/x/c.json"),
      "config /x/c.json:2:18: invalid JSON: Expected property name or '}'"
    )
  })

  it("JSON: a one-digit position is cut too", () => {
    assert.strictEqual(
      rejected("{,}", "/x/c.json"),
      "config /x/c.json:1:2: invalid JSON: Expected property name or '}'"
    )
  })

  it("JSON: no line when the parser names no position", () => {
    assert.strictEqual(rejected("", "/x/c.json"), "config /x/c.json: invalid JSON: Unexpected end of JSON input")
    const error = parseConfig("[1,]", "/x/c.json")
    assert.isTrue(Either.isLeft(error))
    if (Either.isLeft(error)) {
      assert.strictEqual(error.left.line, undefined)
      assert.strictEqual(error.left.column, undefined)
    }
  })
})

describe("Config locates the key in TOML", () => {
  it("finds an indented table header", () => {
    assert.strictEqual(
      rejected(`  [sources.fs]\n  command = 3\n`),
      `config /x/config.toml:2 at sources.fs.command: expected a non-empty list of strings, like ["npx", "-y", "some-mcp-server"], got 3`
    )
  })

  it("finds a key with a tab before its =", () => {
    assert.strictEqual(
      rejected(`[sources.fs]\n\n# note\ncommand\t= 3\n`),
      `config /x/config.toml:4 at sources.fs.command: expected a non-empty list of strings, like ["npx", "-y", "some-mcp-server"], got 3`
    )
  })

  it("finds a key whose line ends with #", () => {
    assert.strictEqual(
      rejected(`[sources.fs]\ncommand = ["a"]\ncwd = 3 #\n`),
      "config /x/config.toml:3 at sources.fs.cwd: expected a string (a directory), got 3"
    )
  })

  it("finds a table named with a literal key", () => {
    assert.strictEqual(
      rejected(`[sources.'fs']\ncommand = ["a"]\ncwd = 3\n`),
      "config /x/config.toml:3 at sources.fs.cwd: expected a string (a directory), got 3"
    )
  })

  it("skips the items of a multi-line list that look like keys", () => {
    assert.strictEqual(
      rejected(`[sources.fs]\ncommand = [\n  "env",\n]\nenv = { "1X" = "v" }\n`),
      `config /x/config.toml:5 at sources.fs.env.1X: "1X" is not an environment variable name (letters, digits and _, not starting with a digit)`
    )
  })

  it("points at the first of equally close dotted keys under a table", () => {
    assert.strictEqual(
      rejected(`[sources]\nFoo_Bar.command = ["a"]\nFoo_Bar.cwd = "x"\n`),
      `config /x/config.toml:2 at sources.Foo_Bar: instance names are kebab-case (a-z, 0-9, single dashes), got "Foo_Bar"; use "foo-bar"`
    )
  })

  it("prefers the key itself to a longer key below it", () => {
    assert.strictEqual(locateToml(`a.b.c = 1\n[a.b]\n`, ["a", "b"]), 2)
  })

  it("finds an array-of-tables header and ignores what follows an index", () => {
    assert.strictEqual(locateToml(`x = 1\n[[a.b]]\nc = 1\n`, ["a", "b", 0, "c"]), 2)
    assert.strictEqual(locateToml(`[a]\n"0" = 1\n`, ["a", 0, "b"]), 1)
  })

  it("skips lines that are not headers or keys", () => {
    assert.strictEqual(locateToml(`[a]\n  ["b", 1],\n[]\n"unterminated = 1\n'open = 1\n= 1\nc = 1\n`, ["a", "c"]), 7)
  })

  it("parses basic, literal and bare key parts", () => {
    assert.deepStrictEqual(parseKeys(`"a\\x" . 'b c' .d = 1`, 0), { keys: ["a\\x", "b c", "d"], end: 17 })
    assert.deepStrictEqual(parseKeys(`"a\\"b" = 1`, 0), { keys: ['a"b'], end: 7 })
    assert.strictEqual(parseKeys(`= b`, 0), undefined)
    assert.strictEqual(parseKeys(`'b`, 0), undefined)
  })
})

describe("Config locates the key in JSON", () => {
  it("searches each key after the previous one", () => {
    const text = json({ mcpServers: { aa: { command: "x" }, fs: { command: 3 } } })
    assert.strictEqual(
      rejected(text, "/x/c.json"),
      "config /x/c.json:7 at mcpServers.fs.command: expected a string, got 3"
    )
  })

  it("matches keys with regex characters literally", () => {
    const text = json({ mcpServers: { fsxb: { command: "x" }, "fs.b": { command: "y" } } })
    assert.strictEqual(
      rejected(text, "/x/c.json"),
      `config /x/c.json:6 at mcpServers."fs.b": instance names are kebab-case (a-z, 0-9, single dashes), got "fs.b"; use "fs-b"`
    )
    assert.strictEqual(locateJson(`{"a":\n{"b": 1}}`, ["a", "b"]), 2)
  })
})

describe("Config helpers", () => {
  it("errno reads only a string code of an object", () => {
    assert.strictEqual(errno({ code: "ENOENT" }), "ENOENT")
    assert.strictEqual(errno({ code: 2 }), undefined)
    assert.strictEqual(errno({}), undefined)
    assert.strictEqual(errno(null), undefined)
    assert.strictEqual(errno("ENOENT"), undefined)
  })

  it("tomlDocument keeps only the parser's reason", () => {
    const result = tomlDocument("a = ", "/x/s.toml")
    assert.isTrue(Either.isLeft(result))
    if (Either.isLeft(result)) assert.strictEqual(result.left.detail, "invalid TOML: invalid value")
  })

  it.effect("layerTest without a file stands for config.toml", () =>
    Effect.gen(function* () {
      const config = yield* Config
      assert.strictEqual(config.path, "config.toml")
      assert.strictEqual(config.format, "toml")
      assert.isTrue(Option.isNone(config.file))
    }).pipe(Effect.provide(Config.layerTest(ClawtoolConfig.empty)))
  )

  it.effect("layerTest with a JSON file reads as JSON", () =>
    Effect.gen(function* () {
      const config = yield* Config
      assert.strictEqual(config.path, "/x/c.json")
      assert.strictEqual(config.format, "json")
    }).pipe(Effect.provide(Config.layerTest(ClawtoolConfig.empty, { file: "/x/c.json" })))
  )
})
