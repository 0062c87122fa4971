// The names and signatures code calls tools by (Registry/CodeNames.ts, ADR 035): export-typescript's names, the
// original names as aliases, and compact TypeScript signatures from the JSON Schemas.
import { assert, describe, it } from "@effect/vitest"
import type { CatalogEntry } from "../../src/services/Registry/CatalogTypes.js"
import { codeNamesObject, codeNamesOf, signature, withSignatures } from "../../src/services/Registry/CodeNames.js"

const entry = (wire: string, instance: string, original: string, inputSchema: object, outputSchema?: object) =>
  ({
    wire,
    kind: instance === "" ? "core" : "source",
    instance,
    original,
    listed: true,
    tool: { name: wire, inputSchema, ...(outputSchema === undefined ? {} : { outputSchema }) }
  }) as unknown as CatalogEntry

const entries = [
  entry("Read", "", "Read", { type: "object", properties: { file_path: { type: "string" } }, required: ["file_path"] }),
  entry("fs__read_text_file", "fs", "read_text_file", {
    type: "object",
    properties: { path: { type: "string" }, head: { type: "integer" }, "odd-key": { enum: ["a", "b"] } },
    required: ["path"]
  }),
  entry(
    "gh_work__delete",
    "gh-work",
    "delete",
    { type: "object", properties: { ids: { type: "array", items: { type: "number" } } } },
    {
      type: "object",
      properties: { ok: { type: "boolean" } },
      required: ["ok"]
    }
  )
]

describe("code names", () => {
  it("core tools at the top, namespaces in camelCase, reserved words suffixed, original names as aliases", () => {
    const names = codeNamesObject(codeNamesOf(entries))
    assert.deepStrictEqual(names, {
      Read: "Read",
      fs: { readTextFile: "fs__read_text_file", read_text_file: "fs__read_text_file" },
      ghWork: { delete_: "gh_work__delete", delete: "gh_work__delete" }
    })
  })

  it("signatures say how to call: required and optional fields, arrays, enums, the output's type", () => {
    const [read, text, remove] = codeNamesOf(entries).map(signature)
    assert.strictEqual(read, "tools.Read(input: { file_path: string }): Promise<unknown>")
    assert.strictEqual(
      text,
      'tools.fs.readTextFile(input: { path: string; head?: number; "odd-key"?: "a" | "b" }): Promise<unknown>'
    )
    assert.strictEqual(remove, "tools.ghWork.delete_(input: { ids?: Array<number> }): Promise<{ ok: boolean }>")
    const hits = withSignatures([{ name: "Read" }, { name: "gone" }], codeNamesOf(entries))
    assert.deepStrictEqual(hits, [{ name: "Read", signature: read }, { name: "gone" }])
  })
})
