// Mutation-testing follow-ups (docs/mutation.md) for src/cli/TypeScriptExport.ts, in-process (export.test.ts runs the
// reference servers and tsc): the exact text of the generated modules and barrels (schema preparation, compile
// failures, clashing names, sorting, doc-comment wrapping) and the error paths of write and check. Fixtures are built
// inside each test (Stryker runs with ignoreStatic).
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { compile } from "json-schema-to-typescript"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as TypeScriptExport from "../../src/cli/TypeScriptExport.js"
import { ToolConfig } from "../../src/domain/Config.js"
import type { Tool } from "../../src/domain/Mcp.js"
import { registrySpecs } from "../../src/services/CoreTools.js"
import * as Catalog from "../../src/services/Registry/Catalog.js"
import * as Manifest from "../../src/services/CoreTools/Manifest.js"
import { outputDirs } from "../lib/sources.js"

const { base, fresh: freshDir } = outputDirs("clawtool-mutants-tsexport-")
afterAll(() => Fs.rmSync(base, { recursive: true, force: true }))

const catalogOf = (sources: ReadonlyArray<Catalog.InstanceTools>, toolConfig: Record<string, ToolConfig> = {}) =>
  Catalog.build({ manifest: Either.getOrThrow(Manifest.make(registrySpecs)), sources, toolConfig, budget: 64 })

const generated = (sources: ReadonlyArray<Catalog.InstanceTools>, toolConfig: Record<string, ToolConfig> = {}) =>
  Effect.gen(function* () {
    const catalog = catalogOf(sources, toolConfig)
    const files = yield* TypeScriptExport.generate(catalog)
    const top = `${TypeScriptExport.header}\n// Catalog: sha256:${catalog.hash}\n`
    return { files, byPath: new Map(files.map((file) => [file.path, file.content])), top }
  })

const stub = (typeBase: string, fn: string, doc: string) =>
  `export interface ${typeBase}Input {}\n\n/** The tool declares no schema. */\nexport type ${typeBase}Output = unknown\n\n` +
  `/**\n${doc}\n */\nexport declare function ${fn}(input: ${typeBase}Input): Promise<${typeBase}Output>\n`
const coreLines = [
  `export { SourceHealth, type SourceHealthInput, type SourceHealthOutput } from "./SourceHealth.js"`,
  `export { ToolSearch, type ToolSearchInput, type ToolSearchOutput } from "./ToolSearch.js"`
]

describe("TypeScriptExport.generate: names, sorting and barrels", () => {
  it.effect("clashing names get a hash; unlisted tools are left out; instances and tools sorted; exact barrels", () =>
    Effect.gen(function* () {
      const { files, byPath, top } = yield* generated(
        [
          {
            instance: "zz-top",
            tools: [
              { name: "getSum", inputSchema: { type: "object" } },
              { name: "get-sum", inputSchema: { type: "object" } },
              { name: "a_b", inputSchema: { type: "object" } },
              { name: "hidden", inputSchema: { type: "object" } }
            ]
          },
          { instance: "aa", tools: [{ name: "one", inputSchema: { type: "object" } }] }
        ],
        { "zz-top.hidden": new ToolConfig({ enabled: false }) }
      )
      assert.deepStrictEqual(
        files.map((file) => file.path),
        [
          "SourceHealth.ts",
          "ToolSearch.ts",
          "aa/index.ts",
          "aa/one.ts",
          "index.ts",
          "zz-top/a_b.ts",
          "zz-top/get-sum.ts",
          "zz-top/getSum.ts",
          "zz-top/index.ts"
        ]
      )
      assert.strictEqual(
        byPath.get("index.ts"),
        `${top}\n${coreLines.join("\n")}\nexport * as aa from "./aa/index.js"\nexport * as zzTop from "./zz-top/index.js"\n`
      )
      assert.strictEqual(
        byPath.get("zz-top/index.ts"),
        `${top}\n` +
          `export { aB, type ABInput, type ABOutput } from "./a_b.js"\n` +
          `export { getSum, type GetSumInput, type GetSumOutput } from "./get-sum.js"\n` +
          `export { getSum_9a953e, type GetSum_9A953EInput, type GetSum_9A953EOutput } from "./getSum.js"\n`
      )
      assert.strictEqual(
        byPath.get("aa/index.ts"),
        `${top}\nexport { one, type OneInput, type OneOutput } from "./one.js"\n`
      )
      assert.strictEqual(
        byPath.get("zz-top/getSum.ts"),
        `${top}\n` + stub("GetSum_9A953E", "getSum_9a953e", ` * @tool zz-top__getSum (source "zz-top", tool "getSum")`)
      )
      assert.strictEqual(
        byPath.get("zz-top/a_b.ts"),
        `${top}\n` + stub("AB", "aB", ` * @tool zz-top__a_b (source "zz-top", tool "a_b")`)
      )
    })
  )

  it.effect("a catalog with no sources has only the core tools in its root barrel", () =>
    Effect.gen(function* () {
      const { files, byPath, top } = yield* generated([])
      assert.deepStrictEqual(
        files.map((file) => file.path),
        ["SourceHealth.ts", "ToolSearch.ts", "index.ts"]
      )
      assert.strictEqual(byPath.get("index.ts"), `${top}\n${coreLines.join("\n")}\n`)
      assert.isTrue(byPath.get("ToolSearch.ts")!.startsWith(`${top}\nexport interface ToolSearchInput {\n`))
      assert.isTrue(
        byPath
          .get("ToolSearch.ts")!
          .endsWith(
            ` *\n * @readonly\n * @tool ToolSearch (clawtool core tool)\n */\nexport declare function ToolSearch(input: ToolSearchInput): Promise<ToolSearchOutput>\n`
          )
      )
    })
  )

  it.effect("typeName is the name json-schema-to-typescript declares, for more shapes of name", () =>
    Effect.gen(function* () {
      for (const name of [
        "_abc",
        "a_bc",
        "x1y",
        "x12y",
        "a$b",
        "$1b",
        "a  b",
        "a-1",
        "a-_b",
        "12ab",
        "a-b",
        "1-b",
        "_1a"
      ]) {
        const declared = yield* Effect.promise(() => compile({ type: "object" } as never, name, { bannerComment: "" }))
        assert.strictEqual(TypeScriptExport.typeName(name), declared.match(/export interface (\S+)/)?.[1], name)
      }
    })
  )

  it("camelCase splits on runs of separators and prefixes a leading digit", () => {
    assert.strictEqual(TypeScriptExport.camelCase("a__b--c"), "aBC")
    assert.strictEqual(TypeScriptExport.camelCase("x_9a"), "x9a")
    assert.strictEqual(TypeScriptExport.camelCase("9_a"), "_9A")
  })
})

describe("TypeScriptExport.generate: schemas", () => {
  it.effect("titles, $schema and $id dropped; $defs and definitions renamed per type; tuples and null kept", () =>
    Effect.gen(function* () {
      const { byPath, top } = yield* generated([
        {
          instance: "s",
          tools: [
            {
              name: "shapes",
              inputSchema: {
                $schema: "https://json-schema.org/draft/2020-12/schema",
                $id: "urn:shapes",
                title: "Renamed",
                type: "object",
                properties: {
                  title: { type: "string", title: "String" },
                  point: { $ref: "#/$defs/Point" },
                  tag: { $ref: "#/$defs/Tag" },
                  pair: { type: "array", items: [{ type: "string" }, { type: "number" }], minItems: 2, maxItems: 2 },
                  choice: { enum: ["a", null, 1] }
                },
                patternProperties: { "^x-": { type: "boolean" } },
                required: ["point"],
                $defs: {
                  Point: { type: "object", properties: { x: { type: "number" } }, required: ["x"] },
                  Tag: { type: "string", enum: ["red", "blue"] }
                }
              },
              outputSchema: {
                type: "object",
                properties: { at: { $ref: "#/definitions/Point" } },
                definitions: { Point: { type: "string", title: "Text" } }
              }
            }
          ]
        }
      ])
      assert.strictEqual(
        byPath.get("s/shapes.ts"),
        `${top}
export type ShapesInputTag = "red" | "blue"

export interface ShapesInput {
  choice?: "a" | null | 1
  /**
   * @minItems 2
   * @maxItems 2
   */
  pair?: [string, number]
  point: ShapesInputPoint
  tag?: ShapesInputTag
  title?: string
  /**
   * This interface was referenced by \`ShapesInput\`'s JSON-Schema definition
   * via the \`patternProperty\` "^x-".
   */
  [k: string]: boolean | "a" | null | 1 | [string, number] | ShapesInputPoint | ShapesInputTag | string | undefined
}
export interface ShapesInputPoint {
  x: number
}

export type ShapesOutputPoint = string

export interface ShapesOutput {
  at?: ShapesOutputPoint
}

/**
 * @tool s__shapes (source "s", tool "shapes")
 */
export declare function shapes(input: ShapesInput): Promise<ShapesOutput>
`
      )
    })
  )

  it.effect("a schema that does not convert becomes unknown with the reason on one shortened line", () =>
    Effect.gen(function* () {
      const { byPath, top } = yield* generated([
        {
          instance: "s",
          tools: [
            {
              name: "odd",
              inputSchema: { type: "object", properties: { a: { $ref: 5 } } },
              outputSchema: { type: "object", properties: { a: { $ref: "x.json#/$defs/P*/q" } } }
            },
            {
              name: "broken",
              inputSchema: { type: "object", properties: { a: { $ref: "#/$defs/Missing" } } },
              outputSchema: { type: "object", properties: { b: { $ref: "#/definitions/Gone" } } }
            }
          ]
        }
      ])
      assert.strictEqual(
        byPath.get("s/broken.ts"),
        `${top}\n` +
          `/** The schema could not be converted (MissingPointerError: Missing $ref pointer "#/$defs/BrokenInputMissing". Token "$defs" does not exis…). */\n` +
          `export type BrokenInput = unknown\n\n` +
          `/** The schema could not be converted (MissingPointerError: Missing $ref pointer "#/definitions/BrokenOutputGone". Token "definitions" doe…). */\n` +
          `export type BrokenOutput = unknown\n\n` +
          `/**\n * @tool s__broken (source "s", tool "broken")\n */\n` +
          `export declare function broken(input: BrokenInput): Promise<BrokenOutput>\n`
      )
      // A `$ref` that is not a string, or not to this schema, is passed on untouched (and fails to resolve).
      assert.strictEqual(
        byPath.get("s/odd.ts"),
        `${top}\n` +
          `/** The schema could not be converted (Error: Refs should have been resolved by the resolver! { '$ref': 5 }). */\n` +
          `export type OddInput = unknown\n\n` +
          `/** The schema could not be converted (Error: Refs should have been resolved by the resolver! { '$ref': 'x.json#/$defs/P*\\/q' }). */\n` +
          `export type OddOutput = unknown\n\n` +
          `/**\n * @tool s__odd (source "s", tool "odd")\n */\n` +
          `export declare function odd(input: OddInput): Promise<OddOutput>\n`
      )
    })
  )
})

describe("TypeScriptExport.generate: more edges", () => {
  it.effect("an empty tool name is file tool.ts; a reason of exactly 100 characters is kept whole, longer is cut", () =>
    Effect.gen(function* () {
      const { byPath, top } = yield* generated([
        {
          instance: "s",
          tools: [
            { name: "", inputSchema: { type: "object" } },
            { name: "exact", inputSchema: { type: "object", properties: { a: { $ref: `y.json#${"a".repeat(24)}` } } } },
            { name: "wide", inputSchema: { type: "object", properties: { a: { $ref: `y.json#${"a".repeat(80)}` } } } }
          ]
        }
      ])
      assert.strictEqual(
        byPath.get("s/index.ts"),
        `${top}\n` +
          `export { tool, type ToolInput, type ToolOutput } from "./tool.js"\n` +
          `export { exact, type ExactInput, type ExactOutput } from "./exact.js"\n` +
          `export { wide, type WideInput, type WideOutput } from "./wide.js"\n`
      )
      assert.strictEqual(
        byPath.get("s/tool.ts"),
        `${top}\n` + stub("Tool", "tool", ` * @tool s__ (source "s", tool "")`)
      )
      const reason = `Error: Refs should have been resolved by the resolver! { '$ref': 'y.json#${"a".repeat(24)}' }`
      assert.strictEqual(reason.length, 100)
      assert.isTrue(
        byPath
          .get("s/exact.ts")!
          .startsWith(
            `${top}\n/** The schema could not be converted (${reason}). */\nexport type ExactInput = unknown\n\n`
          )
      )
      const cut = `Error: Refs should have been resolved by the resolver! { '$ref': 'y.json#${"a".repeat(26)}…`
      assert.isTrue(
        byPath
          .get("s/wide.ts")!
          .startsWith(`${top}\n/** The schema could not be converted (${cut}). */\nexport type WideInput = unknown\n\n`)
      )
    })
  )
})

describe("TypeScriptExport.generate: doc comments", () => {
  it.effect("wraps at 100 columns, a long word alone, blank and CRLF lines kept, */ escaped in the name", () =>
    Effect.gen(function* () {
      const hundred = `${"a".repeat(48)} ${"b".repeat(51)}`
      const { byPath, top } = yield* generated([
        {
          instance: "aa",
          tools: [
            {
              name: "x*/y",
              description: `${"w".repeat(120)} short\r\n  indented   spaced  \n   \n${hundred}\n${hundred} c */ end`,
              inputSchema: { type: "object" }
            }
          ]
        }
      ])
      assert.strictEqual(
        byPath.get("aa/x__y.ts"),
        `${top}\n` +
          stub(
            "XY",
            "xY",
            [
              ` * ${"w".repeat(120)}`,
              ` * short`,
              ` * indented spaced`,
              ` *`,
              ` * ${hundred}`,
              ` * ${hundred}`,
              ` * c *\\/ end`,
              ` *`,
              ` * @tool aa__x__y (source "aa", tool "x*\\/y")`
            ].join("\n")
          )
      )
    })
  )
})

describe("TypeScriptExport.write and check: edges", () => {
  it.effect("writing nothing removes every generated file and the emptied instance dirs, never the output dir", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      const { files } = yield* generated([
        { instance: "fs", tools: [{ name: "read", inputSchema: { type: "object" } }] }
      ])
      yield* TypeScriptExport.write(dir, files)
      for (const name of ["b.ts", "a.ts", "zz.ts"])
        Fs.writeFileSync(Path.join(dir, name), `${TypeScriptExport.header}\n`)
      const report = yield* TypeScriptExport.write(dir, [])
      assert.deepStrictEqual(report, {
        written: [],
        unchanged: [],
        removed: ["SourceHealth.ts", "ToolSearch.ts", "a.ts", "b.ts", "fs/index.ts", "fs/read.ts", "index.ts", "zz.ts"]
      })
      assert.isTrue(Fs.existsSync(dir), "the output directory itself stays")
      assert.deepStrictEqual(Fs.readdirSync(dir), [])
    })
  )

  it.effect("a missing output directory: check says every file is missing; write creates it", () =>
    Effect.gen(function* () {
      const dir = Path.join(freshDir(), "not", "yet")
      const { files } = yield* generated([])
      assert.deepStrictEqual(yield* TypeScriptExport.check(dir, files), [
        { path: "SourceHealth.ts", kind: "missing" },
        { path: "ToolSearch.ts", kind: "missing" },
        { path: "index.ts", kind: "missing" }
      ])
      const report = yield* TypeScriptExport.write(dir, files)
      assert.deepStrictEqual(report.written, ["SourceHealth.ts", "ToolSearch.ts", "index.ts"])
      assert.strictEqual(Fs.readFileSync(Path.join(dir, "index.ts"), "utf8"), files[2]!.content)
    })
  )

  it.effect("an output path that is a file, or a stub path that is a directory, is an Io error naming the path", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      const file = Path.join(dir, "plain")
      Fs.writeFileSync(file, "x")
      const notDir = yield* Effect.flip(TypeScriptExport.check(file, []))
      assert.strictEqual(notDir.reason, "Io")
      assert.strictEqual(notDir.path, file)
      assert.strictEqual(notDir.detail, `ENOTDIR: not a directory, scandir '${file}'`)
      assert.strictEqual(notDir.message, `export-typescript: ${file}: ENOTDIR: not a directory, scandir '${file}'`)

      const out = freshDir()
      Fs.mkdirSync(Path.join(out, "index.ts"))
      const stub = { path: "index.ts", content: `${TypeScriptExport.header}\n` }
      for (const run of [TypeScriptExport.check(out, [stub]), TypeScriptExport.write(out, [stub])]) {
        const isDir = yield* Effect.flip<unknown, TypeScriptExport.ExportError, never>(run)
        assert.strictEqual(isDir.reason, "Io")
        assert.strictEqual(isDir.path, Path.join(out, "index.ts"))
        assert.strictEqual(isDir.detail, "EISDIR: illegal operation on a directory, read")
      }
    })
  )

  it.effect("a failing write is an Io error naming the target and the system's reason", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      // A path ending in `/` reads as missing (ENOENT) but cannot be written as a file.
      const error = yield* Effect.flip(TypeScriptExport.write(dir, [{ path: "sub/", content: "x" }]))
      assert.strictEqual(error.reason, "Io")
      assert.strictEqual(error.path, Path.join(dir, "sub/"))
      assert.strictEqual(error.detail, `EISDIR: illegal operation on a directory, open '${Path.join(dir, "sub/")}'`)
    })
  )

  it.effect("refusing a foreign file says why, and writes nothing after it", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      Fs.writeFileSync(Path.join(dir, "b.ts"), "// mine\n")
      const files = [
        { path: "a.ts", content: `${TypeScriptExport.header}\n// a\n` },
        { path: "b.ts", content: `${TypeScriptExport.header}\n// b\n` },
        { path: "c.ts", content: `${TypeScriptExport.header}\n// c\n` }
      ]
      const error = yield* Effect.flip(TypeScriptExport.write(dir, files))
      assert.strictEqual(error.reason, "NotGenerated")
      assert.strictEqual(
        error.message,
        `export-typescript: ${Path.join(dir, "b.ts")}: exists and was not generated by clawtool; move it away or choose another --output`
      )
      assert.deepStrictEqual(Fs.readdirSync(dir).sort(), ["a.ts", "b.ts"])
      assert.strictEqual(Fs.readFileSync(Path.join(dir, "b.ts"), "utf8"), "// mine\n")
    })
  )
})

// Mutation-testing follow-ups (docs/mutation.md): the TypeScript export without tsc or real children (the
// suite in export.test.ts runs those): names, doc comments, write and check.
const manifest = Either.getOrThrow(Manifest.make(registrySpecs))
const tool = (name: string, extra: Partial<Tool> = {}): Tool => ({
  name,
  inputSchema: { type: "object", properties: { path: { type: "string" } } },
  ...extra
})
const longWords = Array.from({ length: 30 }, (_, i) => `word${i}`).join(" ")
const sampleCatalog = () =>
  Catalog.build({
    manifest,
    sources: [
      {
        instance: "my-fs",
        tools: [
          tool("read_file", {
            description: `Reads */ a file.\n\n${longWords}`,
            annotations: { readOnlyHint: true, destructiveHint: false }
          }),
          tool("3d"),
          tool("delete", { annotations: { destructiveHint: true } })
        ]
      },
      { instance: "new", tools: [tool("x", { description: "   " })] }
    ],
    toolConfig: { "my-fs.read_file": new ToolConfig({ usage_hint: "Prefer it to cat." }) },
    budget: 64
  })

describe("TypeScriptExport names", () => {
  it("camelCase", () => {
    assert.strictEqual(TypeScriptExport.camelCase("read_text_file"), "readTextFile")
    assert.strictEqual(TypeScriptExport.camelCase("get-sum"), "getSum")
    assert.strictEqual(TypeScriptExport.camelCase("__"), "tool")
    assert.strictEqual(TypeScriptExport.camelCase("3d_model"), "_3dModel")
    assert.strictEqual(TypeScriptExport.camelCase("Already"), "already")
  })

  it.effect("typeName is the name json-schema-to-typescript declares", () =>
    Effect.gen(function* () {
      for (const name of ["readTextFile", "_3dModel", "getSum_1a2b3c", "delete_", "x$y", "a1b", "ab__cd", "tool"]) {
        const declared = yield* Effect.promise(() => compile({ type: "object" } as never, name, { bannerComment: "" }))
        assert.strictEqual(TypeScriptExport.typeName(name), declared.match(/export interface (\S+)/)?.[1], name)
      }
      assert.strictEqual(TypeScriptExport.typeName(""), "Tool")
    })
  )
})

describe("TypeScriptExport.generate", () => {
  it.effect("doc comments, reserved words, leading digits and namespaces", () =>
    Effect.gen(function* () {
      const catalog = sampleCatalog()
      const files = yield* TypeScriptExport.generate(catalog)
      const byPath = new Map(files.map((file) => [file.path, file.content]))
      assert.deepStrictEqual(
        files.map((file) => file.path),
        [
          "SourceHealth.ts",
          "ToolSearch.ts",
          "index.ts",
          "my-fs/3d.ts",
          "my-fs/delete.ts",
          "my-fs/index.ts",
          "my-fs/read_file.ts",
          "new/index.ts",
          "new/x.ts"
        ]
      )
      const read = byPath.get("my-fs/read_file.ts")!
      assert.include(read, " * Reads *\\/ a file.\n *\n")
      for (const line of read.split("\n").filter((l) => l.startsWith(" * word"))) assert.isAtMost(line.length, 103)
      assert.include(read, ` * word0 word1`)
      assert.include(read, " *\n * Usage: Prefer it to cat.\n *\n * @readonly\n")
      assert.notInclude(read, "@destructive")
      assert.include(read, ` * @tool my-fs__read_file (source "my-fs", tool "read_file")\n */\n`)
      assert.include(read, "/** The tool declares no schema. */\nexport type ReadFileOutput = unknown")
      assert.include(read, "export declare function readFile(input: ReadFileInput): Promise<ReadFileOutput>")
      const del = byPath.get("my-fs/delete.ts")!
      assert.include(del, "/**\n * @destructive\n * @tool my-fs__delete")
      assert.include(del, "export declare function delete_(")
      assert.include(byPath.get("my-fs/3d.ts")!, "export declare function _3d(input: _3DInput)")
      assert.include(byPath.get("new/x.ts")!, `/**\n * @tool new__x (source "new", tool "x")\n */`)
      assert.include(byPath.get("ToolSearch.ts")!, "@tool ToolSearch (clawtool core tool)")
      const index = byPath.get("index.ts")!
      assert.include(index, `export * as myFs from "./my-fs/index.js"`)
      assert.include(index, `export * as new_ from "./new/index.js"`)
      assert.include(
        byPath.get("my-fs/index.ts")!,
        `export { _3d, type _3DInput, type _3DOutput } from "./3d.js"\nexport { delete_, type DeleteInput, type DeleteOutput } from "./delete.js"\n`
      )
    })
  )
})

describe("TypeScriptExport.write and check", () => {
  it.effect("check reports missing, changed and stale files; write fixes them and refuses foreign files", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      const files = yield* TypeScriptExport.generate(sampleCatalog())
      const paths = files.map((file) => file.path)
      assert.deepStrictEqual(
        (yield* TypeScriptExport.check(dir, files)).map((drift) => drift.kind),
        paths.map(() => "missing")
      )
      const first = yield* TypeScriptExport.write(dir, files)
      assert.deepStrictEqual(first, { written: paths, unchanged: [], removed: [] })
      assert.deepStrictEqual(yield* TypeScriptExport.check(dir, files), [])

      Fs.appendFileSync(Path.join(dir, "my-fs/delete.ts"), "// edited\n")
      Fs.mkdirSync(Path.join(dir, "gone"))
      Fs.writeFileSync(Path.join(dir, "gone/old.ts"), `${TypeScriptExport.header}\n`)
      Fs.writeFileSync(Path.join(dir, "notes.ts"), "// mine\n")
      Fs.writeFileSync(Path.join(dir, "readme.txt"), `${TypeScriptExport.header}\n`)
      Fs.mkdirSync(Path.join(dir, "my-fs/deep"))
      Fs.writeFileSync(Path.join(dir, "my-fs/deep/too.ts"), `${TypeScriptExport.header}\n`)
      assert.deepStrictEqual(yield* TypeScriptExport.check(dir, files), [
        { path: "gone/old.ts", kind: "stale" },
        { path: "my-fs/delete.ts", kind: "changed" }
      ])
      const second = yield* TypeScriptExport.write(dir, files)
      assert.deepStrictEqual(second.written, ["my-fs/delete.ts"])
      assert.deepStrictEqual(second.removed, ["gone/old.ts"])
      assert.strictEqual(second.unchanged.length, paths.length - 1)
      assert.isFalse(Fs.existsSync(Path.join(dir, "gone")), "the emptied directory goes too")
      assert.isTrue(Fs.existsSync(Path.join(dir, "notes.ts")), "files it did not generate stay")
      assert.isTrue(Fs.existsSync(Path.join(dir, "my-fs/deep/too.ts")), "never walks deeper than one level")

      Fs.writeFileSync(Path.join(dir, "my-fs/3d.ts"), "// hand-written\n")
      const refused = yield* Effect.flip(TypeScriptExport.write(dir, files))
      assert.strictEqual(refused.reason, "NotGenerated")
      assert.strictEqual(refused.path, Path.join(dir, "my-fs/3d.ts"))
    })
  )
})
