import { assert, describe, it } from "@effect/vitest"
import { assertLeft, assertRight } from "@effect/vitest/utils"
import { Either } from "effect"
import type { Tool } from "../../src/domain/Mcp.js"
import type { CatalogEntry } from "../../src/services/Registry.js"
import { callArguments, resolveTool, resultText } from "../../src/cli/Call.js"

const entry = (wire: string, instance: string, original: string, listed = true): CatalogEntry => ({
  wire,
  kind: instance === "" ? "core" : "source",
  instance,
  original,
  shaping: "none" as CatalogEntry["shaping"],
  listed,
  status: listed ? "listed" : "disabled",
  rule: "default",
  alwaysLoad: false,
  hint: undefined,
  tool: { name: wire, inputSchema: { type: "object" } } as Tool,
  tokens: 1
})

const entries = [
  entry("Read", "", "Read"),
  entry("notes__add_note", "notes", "add_note"),
  entry("notes__drop_all", "notes", "drop_all", false)
]

describe("clawtool call: the tool named", () => {
  it("takes a wire name, or instance.tool as tools list shows the origin", () => {
    assertRight(resolveTool("notes__add_note", entries), "notes__add_note")
    assertRight(resolveTool("notes.add_note", entries), "notes__add_note")
    assertRight(resolveTool("Read", entries), "Read")
    // A disabled tool is still named: the call is refused as the host's would be (exit 1, with the rule).
    assertRight(resolveTool("notes.drop_all", entries), "notes__drop_all")
  })

  it("an unknown name gets the close listed names, else the listed names", () => {
    assertLeft(
      resolveTool("notes__add_not", entries),
      'unknown tool "notes__add_not"; did you mean "notes__add_note"? (clawtool tools list shows them all)'
    )
    assertLeft(
      resolveTool("zzz", entries),
      'unknown tool "zzz"; tools: Read, notes__add_note (clawtool tools list shows them all)'
    )
  })
})

describe("clawtool call: the arguments", () => {
  const schema = {
    type: "object",
    properties: { title: { type: "string" }, count: { type: "integer" }, tags: { type: "array" } }
  }

  it("JSON, then each --arg over it: text for string properties, else JSON when it parses", () => {
    assertRight(callArguments('{"title":"a","count":1}', ["count=3", "title=42", "tags=[1,2]", "other=x=y"], schema), {
      title: "42",
      count: 3,
      tags: [1, 2],
      other: "x=y"
    })
    assertRight(callArguments(undefined, [], undefined), {})
    assertRight(callArguments(undefined, ["flag=true", "n=07"], undefined), { flag: true, n: "07" })
  })

  it("bad JSON, a JSON value that is not an object, an --arg without key= are errors saying so", () => {
    const bad = callArguments("{bad", [], schema)
    assert.isTrue(Either.isLeft(bad) && bad.left.startsWith("the arguments are not valid JSON: "), String(bad))
    assertLeft(callArguments("[1]", [], schema), `the arguments must be a JSON object, like '{"path": "README.md"}'`)
    assertLeft(callArguments(undefined, ["=x"], schema), '--arg "=x" is not key=value')
    assertLeft(callArguments(undefined, ["x"], schema), '--arg "x" is not key=value')
  })
})

describe("clawtool call: what is printed", () => {
  it("the text items one per line; other items counted in a note; structuredContent when there is no text", () => {
    const printed = resultText({
      content: [
        { type: "text", text: "one" },
        { type: "image", data: "AAAA", mimeType: "image/png" },
        { type: "text", text: "two" },
        { type: "image", data: "BBBB", mimeType: "image/png" }
      ]
    })
    assert.strictEqual(printed.text, "one\ntwo")
    assert.deepStrictEqual(printed.notes, ["2 image content item(s) not shown (--json prints them)"])
    assert.strictEqual(resultText({ content: [], structuredContent: { a: 1 } }).text, '{\n  "a": 1\n}')
    assert.strictEqual(resultText({ content: [] }).text, "")
  })
})
