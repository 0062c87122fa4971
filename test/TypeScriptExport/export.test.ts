import { afterAll, assert, describe, it, layer } from "@effect/vitest"
import { Effect, Either } from "effect"
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { ToolConfig } from "../../src/domain/Config.js"
import type { Tool } from "../../src/domain/Mcp.js"
import { Registry } from "../../src/services/Registry.js"
import * as Catalog from "../../src/services/Registry/Catalog.js"
import { registrySpecs } from "../../src/services/CoreTools.js"
import * as Manifest from "../../src/services/CoreTools/Manifest.js"
import * as TypeScriptExport from "../../src/cli/TypeScriptExport.js"
import { referenceSources, registryLayer, root } from "../lib/registry.js"
import { outputDirs } from "../lib/sources.js"

const { base, fresh: freshDir } = outputDirs("clawtool-export-")
afterAll(() => Fs.rmSync(base, { recursive: true, force: true }))

const manifest = Either.getOrThrow(Manifest.make(registrySpecs))
const tool = (name: string, extra: Partial<Tool> = {}): Tool => ({
  name,
  description: `does ${name}`,
  inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  ...extra
})
const catalogOf = (sources: ReadonlyArray<Catalog.InstanceTools>, toolConfig: Record<string, ToolConfig> = {}) =>
  Catalog.build({ manifest, sources, toolConfig, budget: 64 })

const read = (dir: string) =>
  Object.fromEntries(
    (Fs.readdirSync(dir, { recursive: true }) as Array<string>)
      .filter((path) => path.endsWith(".ts"))
      .sort()
      .map((path) => [path.split(Path.sep).join("/"), Fs.readFileSync(Path.join(dir, path), "utf8")])
  )

/** `tsc --noEmit` over a directory of stubs, as strict ESM; returns the compiler's output ("" when clean). */
const typeCheck = (dir: string): string => {
  Fs.writeFileSync(Path.join(dir, "package.json"), JSON.stringify({ type: "module" }))
  Fs.writeFileSync(
    Path.join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        isolatedModules: true,
        verbatimModuleSyntax: true,
        types: []
      },
      include: ["**/*.ts"]
    })
  )
  try {
    execFileSync(process.execPath, [Path.join(root, "node_modules/typescript/bin/tsc"), "-p", dir], {
      encoding: "utf8",
      stdio: "pipe"
    })
    return ""
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string }
    return `${failed.stdout ?? ""}${failed.stderr ?? ""}` || String(error)
  }
}

const sample = catalogOf(
  [
    {
      instance: "github-work",
      tools: [
        tool("create_issue", {
          annotations: { destructiveHint: true },
          outputSchema: { type: "object", properties: { url: { type: "string" } }, required: ["url"] }
        }),
        tool("search/code.v2", { annotations: { readOnlyHint: true }, description: "Search */ code" }),
        tool("get-sum"),
        tool("getSum"),
        tool("with_defs", {
          inputSchema: {
            type: "object",
            properties: { item: { $ref: "#/$defs/Item" } },
            $defs: { Item: { type: "object", title: "String", properties: { id: { type: "number" } } } }
          },
          outputSchema: {
            type: "object",
            properties: { items: { type: "array", items: { $ref: "#/$defs/Item" } } },
            $defs: { Item: { type: "object", properties: { name: { type: "string" } } } }
          }
        }),
        tool("remote_ref", {
          inputSchema: { type: "object", properties: { x: { $ref: "https://example.invalid/schema.json" } } }
        }),
        tool("delete", { inputSchema: { type: "object" } })
      ]
    },
    { instance: "fs", tools: [tool("read_file")] }
  ],
  { "github-work.create_issue": ToolConfig.make({ usage_hint: "Search for duplicates before creating one." }) }
)

describe("TypeScript export (synthetic catalog)", () => {
  it.effect("layout: <Name>.ts per core tool, <instance>/<tool>.ts per source tool, barrels", () =>
    Effect.gen(function* () {
      const files = yield* TypeScriptExport.generate(sample)
      assert.deepStrictEqual(
        files.map((file) => file.path),
        [
          "SourceHealth.ts",
          "ToolSearch.ts",
          "fs/index.ts",
          "fs/read_file.ts",
          "github-work/create_issue.ts",
          "github-work/delete.ts",
          "github-work/get-sum.ts",
          "github-work/getSum.ts",
          "github-work/index.ts",
          "github-work/remote_ref.ts",
          "github-work/search_code_v2.ts",
          "github-work/with_defs.ts",
          "index.ts"
        ]
      )
      for (const file of files) {
        assert.isTrue(file.content.startsWith(`${TypeScriptExport.header}\n// Catalog: sha256:${sample.hash}\n`))
      }
      const byPath = new Map(files.map((file) => [file.path, file.content]))
      const index = byPath.get("index.ts")!
      assert.include(index, `export { ToolSearch, type ToolSearchInput, type ToolSearchOutput } from "./ToolSearch.js"`)
      assert.include(index, `export * as githubWork from "./github-work/index.js"`)
      const create = byPath.get("github-work/create_issue.ts")!
      assert.include(create, "export interface CreateIssueInput {")
      assert.match(create, /export interface CreateIssueOutput \{\s+url: string\s+\}/)
      assert.include(create, "Usage: Search for duplicates before creating one.")
      assert.include(create, "@destructive")
      assert.include(create, `@tool github-work__create_issue (source "github-work", tool "create_issue")`)
      assert.include(create, "export declare function createIssue(input: CreateIssueInput): Promise<CreateIssueOutput>")
      const search = byPath.get("github-work/search_code_v2.ts")!
      assert.include(search, "@readonly")
      assert.include(search, `tool "search/code.v2"`)
      assert.include(search, "Search *\\/ code", "a */ in a description cannot end the comment")
      assert.include(byPath.get("github-work/get-sum.ts")!, "export interface GetSumInput")
      assert.include(byPath.get("github-work/get-sum.ts")!, "export type GetSumOutput = unknown")
      assert.match(byPath.get("github-work/getSum.ts")!, /function getSum_[0-9a-f]{6}\(/, "clashing identifiers")
      assert.include(byPath.get("github-work/remote_ref.ts")!, "RemoteRefInput")
      assert.include(byPath.get("github-work/delete.ts")!, "function delete_(")
      assert.notInclude(byPath.get("github-work/with_defs.ts")!, "type String", "titles are stripped")
    })
  )

  it.effect("the stubs type-check (tsc --noEmit, strict, NodeNext)", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      yield* TypeScriptExport.write(dir, yield* TypeScriptExport.generate(sample))
      assert.strictEqual(typeCheck(dir), "")
    })
  )

  it.effect("deterministic: a second run writes nothing and the bytes are identical", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      const first = yield* TypeScriptExport.write(dir, yield* TypeScriptExport.generate(sample))
      assert.strictEqual(first.written.length, 13)
      const before = read(dir)
      const second = yield* TypeScriptExport.write(dir, yield* TypeScriptExport.generate(sample))
      assert.deepStrictEqual(second.written, [])
      assert.deepStrictEqual(second.removed, [])
      assert.strictEqual(second.unchanged.length, 13)
      assert.deepStrictEqual(read(dir), before)
    })
  )

  it.effect(
    "--check: nothing on an up-to-date directory; missing, changed and stale files otherwise; writes nothing",
    () =>
      Effect.gen(function* () {
        const dir = freshDir()
        const files = yield* TypeScriptExport.generate(sample)
        assert.deepStrictEqual(
          (yield* TypeScriptExport.check(dir, files)).filter((d) => d.kind !== "missing"),
          []
        )
        assert.strictEqual((yield* TypeScriptExport.check(dir, files)).length, 13)
        assert.deepStrictEqual(read(dir), {}, "check writes nothing")
        yield* TypeScriptExport.write(dir, files)
        assert.deepStrictEqual(yield* TypeScriptExport.check(dir, files), [])
        Fs.appendFileSync(Path.join(dir, "fs/read_file.ts"), "// edited\n")
        Fs.rmSync(Path.join(dir, "ToolSearch.ts"))
        Fs.writeFileSync(Path.join(dir, "Gone.ts"), `${TypeScriptExport.header}\nexport {}\n`)
        Fs.writeFileSync(Path.join(dir, "mine.ts"), "export const mine = 1\n")
        assert.deepStrictEqual(yield* TypeScriptExport.check(dir, files), [
          { path: "Gone.ts", kind: "stale" },
          { path: "ToolSearch.ts", kind: "missing" },
          { path: "fs/read_file.ts", kind: "changed" }
        ])
      })
  )

  it.effect("files generated for tools that are gone are removed (only those); empty instance dirs too", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      yield* TypeScriptExport.write(dir, yield* TypeScriptExport.generate(sample))
      Fs.writeFileSync(Path.join(dir, "github-work", "notes.ts"), "// my own file\n")
      const smaller = catalogOf([{ instance: "fs", tools: [tool("read_file"), tool("write_file")] }])
      const report = yield* TypeScriptExport.write(dir, yield* TypeScriptExport.generate(smaller))
      assert.includeMembers([...report.removed], ["github-work/create_issue.ts", "github-work/index.ts"])
      assert.notInclude(report.removed, "github-work/notes.ts")
      assert.isTrue(Fs.existsSync(Path.join(dir, "github-work", "notes.ts")), "a file without the header stays")
      assert.include(report.written, "fs/write_file.ts")
      const gone = catalogOf([])
      yield* TypeScriptExport.write(dir, yield* TypeScriptExport.generate(gone))
      assert.isFalse(Fs.existsSync(Path.join(dir, "fs")), "an instance directory left empty is removed")
      assert.deepStrictEqual(Object.keys(read(dir)).sort(), [
        "SourceHealth.ts",
        "ToolSearch.ts",
        "github-work/notes.ts",
        "index.ts"
      ])
    })
  )

  it.effect("refuses to overwrite a file it did not generate", () =>
    Effect.gen(function* () {
      const dir = freshDir()
      Fs.writeFileSync(Path.join(dir, "index.ts"), "export const handwritten = true\n")
      const error = yield* Effect.flip(TypeScriptExport.write(dir, yield* TypeScriptExport.generate(sample)))
      assert.strictEqual(error.reason, "NotGenerated")
      assert.strictEqual(Fs.readFileSync(Path.join(dir, "index.ts"), "utf8"), "export const handwritten = true\n")
    })
  )
})

layer(registryLayer(referenceSources(base, ["everything", "filesystem"])), {
  timeout: "60 seconds",
  excludeTestServices: true
})("TypeScript export of real server-everything and server-filesystem tools", (it) => {
  it.effect("generates typed stubs that pass tsc --noEmit, the same bytes twice", () =>
    Effect.gen(function* () {
      const registry = yield* Registry
      yield* registry.awaitSettled
      const catalog = yield* registry.catalog
      assert.isAbove(catalog.tools.filter((t) => t.name.startsWith("everything__")).length, 10)
      assert.isAbove(catalog.tools.filter((t) => t.name.startsWith("filesystem__")).length, 10)
      const files = yield* TypeScriptExport.generate(catalog)
      assert.deepStrictEqual(yield* TypeScriptExport.generate(catalog), files)
      const dir = freshDir()
      yield* TypeScriptExport.write(dir, files)
      const written = read(dir)
      assert.match(written["everything/get-structured-content.ts"]!, /temperature: number/)
      assert.match(written["filesystem/read_text_file.ts"]!, /path: string/)
      assert.include(written["filesystem/read_text_file.ts"]!, "@readonly")
      assert.include(written["filesystem/write_file.ts"]!, "@destructive")
      // clawtool's own file tools, with their snake_case inputs and camelCase outputs, compile too.
      for (const name of ["Read", "Edit", "Write", "Glob", "Grep"]) assert.isDefined(written[`${name}.ts`], name)
      assert.match(written["Read.ts"]!, /file_path: string/)
      assert.match(written["Read.ts"]!, /nextOffset: number \| null/)
      assert.match(written["Edit.ts"]!, /replace_all\?: boolean/)
      assert.match(written["Grep.ts"]!, /"-i"\?: boolean/)
      assert.strictEqual(typeCheck(dir), "")
    })
  )
})
