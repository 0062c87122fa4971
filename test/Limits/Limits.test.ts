// `[limits]` (ADR 010): the config keys, their defaults and errors, and the pure checks of src/domain/Limits.ts. What a
// child's too-deep answer does below the Gateway (real children) is in child.test.ts.
import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import { defaultLimits, exceedsDepth, idAtEdges, mayExceedDepth, usableId } from "../../src/domain/Limits.js"
import { parseConfig } from "../../src/services/Config.js"
import { configFrom } from "../lib/sources.js"

const problem = (text: string) =>
  Either.match(parseConfig(text, "/x/config.toml"), {
    onLeft: (error) => error.message,
    onRight: (config) => assert.fail(`expected a ConfigError, got ${JSON.stringify(config.limits)}`)
  })

describe("[limits] in the config", () => {
  it("defaults to the transports' defaults; each key can be set", () => {
    const { limits } = configFrom("")
    assert.deepStrictEqual(
      [limits.max_depth, limits.max_line_bytes, limits.max_in_flight],
      [defaultLimits.maxDepth, defaultLimits.maxLineBytes, defaultLimits.maxInFlight]
    )
    const set = configFrom("[limits]\nmax_depth = 100\nmax_line_bytes = 4096\nmax_in_flight = 3\n").limits
    assert.deepStrictEqual([set.max_depth, set.max_line_bytes, set.max_in_flight], [100, 4096, 3])
  })

  it("out of range, fractional or unknown keys are one error naming the key", () => {
    assert.include(problem("[limits]\nmax_depth = 5000\n"), "limits.max_depth: max_depth must be between 8 and 1000")
    assert.include(problem("[limits]\nmax_in_flight = 0\n"), "max_in_flight must be between 1 and 1000000")
    assert.include(problem("[limits]\nmax_line_bytes = 2048.5\n"), "max_line_bytes must be a whole number")
    assert.include(problem("[limits]\nmax_size = 1\n"), 'unknown key "max_size"')
  })
})

// The pure limit checks both transports run on every message (ADR 010), at their boundaries.

const nested = (depth: number, open = "[", close = "]") => JSON.parse(`${open.repeat(depth)}${close.repeat(depth)}`)
const nestedObjects = (depth: number): unknown => {
  let value: unknown = {}
  for (let i = 1; i < depth; i++) value = { a: 1, b: null, c: value }
  return value
}

describe("exceedsDepth", () => {
  it("counts levels of arrays and objects: max is allowed, max + 1 is not", () => {
    assert.isFalse(exceedsDepth(nested(4), 4))
    assert.isTrue(exceedsDepth(nested(5), 4))
    assert.isFalse(exceedsDepth(nestedObjects(4), 4))
    assert.isTrue(exceedsDepth(nestedObjects(5), 4))
  })

  it("scalars have no depth; nulls and scalars inside do not add a level", () => {
    for (const scalar of [null, 1, "x", true]) assert.isFalse(exceedsDepth(scalar, 0))
    assert.isFalse(exceedsDepth({ a: null, b: [1, "x", null] }, 2))
    assert.isTrue(exceedsDepth({ a: null, b: [1, "x", null] }, 1))
  })

  it("finds the deep branch whichever sibling it is", () => {
    assert.isTrue(exceedsDepth([1, [], nested(4)], 4))
    assert.isTrue(exceedsDepth([nested(4), []], 4))
    assert.isTrue(exceedsDepth({ first: [], second: "x", third: nested(4) }, 4))
    assert.isTrue(exceedsDepth({ first: nestedObjects(4), second: 1 }, 4))
  })
})

describe("mayExceedDepth", () => {
  it("a line of at most 2 × max characters cannot be too deep", () => {
    assert.isFalse(mayExceedDepth(8, 4))
    assert.isTrue(mayExceedDepth(9, 4))
    // The boundary is real: 2 × max + 2 characters hold max + 1 levels.
    assert.isTrue(exceedsDepth(nested(5), 4))
    assert.isTrue(mayExceedDepth("[[[[[]]]]]".length, 4))
  })
})

describe("usableId", () => {
  it("strings and finite numbers only, on an object that is not an array", () => {
    assert.strictEqual(usableId({ id: "a" }), "a")
    assert.strictEqual(usableId({ id: 0 }), 0)
    assert.strictEqual(usableId({ id: -3 }), -3)
    for (const message of [{ id: null }, {}, { id: Infinity }, { id: NaN }, { id: true }, [{ id: 1 }], null, "x", 1]) {
      assert.isUndefined(usableId(message), JSON.stringify(message))
    }
  })
})

describe("idAtEdges", () => {
  it("reads the id at the start of a line, with or without jsonrpc first, in any spacing", () => {
    assert.strictEqual(idAtEdges(`{"jsonrpc":"2.0","id":7,"method":"x"`, ""), 7)
    assert.strictEqual(idAtEdges(`  { "jsonrpc" : "2.0" , "id" : "a\\"b" , "method"`, ""), 'a"b')
    assert.strictEqual(idAtEdges(`{"id":-12}`, ""), -12)
    assert.strictEqual(idAtEdges(`{"id":"only"}`, ""), "only")
  })

  it("reads the id at the end of a line, as the SDK writes answers", () => {
    assert.strictEqual(idAtEdges("", `…]}},"jsonrpc":"2.0","id":42}`), 42)
    assert.strictEqual(idAtEdges("", `…],"id":"x-1","jsonrpc":"2.0"}  `), "x-1")
    assert.strictEqual(idAtEdges("", `…],"id":5}`), 5)
  })

  it("no id: in the middle, too long, not a string or number, or not valid JSON", () => {
    assert.isUndefined(idAtEdges(`{"method":"x","id":3,`, `…"params":{}`))
    assert.isUndefined(idAtEdges(`{"id":12345678901234567,`, ""))
    assert.isUndefined(idAtEdges(`{"id":null,`, ""))
    assert.isUndefined(idAtEdges(`{"id":"\\x",`, ""))
    assert.isUndefined(idAtEdges(`{"id":7x`, ""))
    assert.isUndefined(idAtEdges("", `"id":7}`))
    assert.isUndefined(idAtEdges("", `,"id":7},`))
  })
})
