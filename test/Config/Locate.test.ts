// Where a key path is in the file (src/services/Config/Locate.ts): the line a ConfigError points at.
import { assert, describe, it } from "@effect/vitest"
import { locateJson, locateToml, parseKeys } from "../../src/services/Config.js"
import { json, rejected } from "./lib.js"

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
