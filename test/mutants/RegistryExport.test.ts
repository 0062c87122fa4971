// Mutation-testing follow-ups (docs/mutation.md): the TypeScript export without tsc or real children (the
// suite in test/RegistryExport.test.ts runs those): names, doc comments, write and check.
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { compile } from "json-schema-to-typescript"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { ToolConfig } from "../../src/domain/Config.js"
import type { Tool } from "../../src/domain/Mcp.js"
import * as Catalog from "../../src/services/Registry/Catalog.js"
import { registrySpecs } from "../../src/services/CoreTools.js"
import * as Manifest from "../../src/services/CoreTools/Manifest.js"
import * as TypeScriptExport from "../../src/cli/TypeScriptExport.js"
import { outputDirs } from "../lib/sources.js"

const { base, fresh: freshDir } = outputDirs("clawtool-mutants-export-")
afterAll(() => Fs.rmSync(base, { recursive: true, force: true }))

const manifest = Either.getOrThrow(Manifest.make(registrySpecs))
const tool = (name: string, extra: Partial<Tool> = {}): Tool => ({
  name,
  inputSchema: { type: "object", properties: { path: { type: "string" } } },
  ...extra
})
const longWords = Array.from({ length: 30 }, (_, i) => `word${i}`).join(" ")
const catalogOf = () =>
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
      const catalog = catalogOf()
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
      const files = yield* TypeScriptExport.generate(catalogOf())
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
