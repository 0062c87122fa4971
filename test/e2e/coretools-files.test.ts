// The file tools end to end: a host (the SDK Client) → `clawtool serve` (dist/main.js, the bundle: ripgrep must
// resolve from there) with roots from the config, then from the host's MCP roots (re-read on list_changed).
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { ensureBuilt, freshCacheDir, main, runCli, tempDirEnv } from "../lib/cli.js"

const work = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "clawtool-files-e2e-")))
afterAll(() => Fs.rmSync(work, { recursive: true, force: true }))
beforeAll(ensureBuilt, 120_000)

interface Result {
  readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }>
  readonly structuredContent?: Record<string, unknown>
  readonly isError?: boolean
}

/** A host connected to serve in `cwd`; with `roots`, it declares the roots capability and answers roots/list. */
const host = (config: string, cwd: string, roots?: { current: ReadonlyArray<string> }) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [main, "serve", "--config", config],
        cwd,
        env: { ...getDefaultEnvironment(), ...tempDirEnv, CLAWTOOL_CACHE_DIR: freshCacheDir() },
        stderr: "pipe"
      })
      const client = new Client(
        { name: "files-e2e", version: "1.0.0" },
        { capabilities: roots === undefined ? {} : { roots: { listChanged: true } } }
      )
      if (roots !== undefined) {
        client.setRequestHandler(ListRootsRequestSchema, () => ({
          roots: roots.current.map((dir) => ({ uri: pathToFileURL(dir).href, name: Path.basename(dir) }))
        }))
      }
      await client.connect(transport)
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.promise(() => client.callTool({ name, arguments: args }) as Promise<Result>)
const text = (result: Result) => result.content[0]?.text ?? ""

const setup = (configLines: ReadonlyArray<string>) => {
  const dir = Fs.mkdtempSync(Path.join(work, "case-"))
  const project = Path.join(dir, "project")
  const other = Path.join(dir, "other")
  Fs.mkdirSync(project)
  Fs.mkdirSync(other)
  Fs.writeFileSync(Path.join(project, "notes.md"), "first line\nsecond line\n")
  Fs.writeFileSync(Path.join(other, "elsewhere.txt"), "other root\n")
  const config = Path.join(dir, "config.toml")
  Fs.writeFileSync(config, configLines.join("\n"))
  return { dir, project, other, config }
}

describe("core file tools through serve", () => {
  it.scopedLive(
    "listed with honest hints; Write, Read, Edit, Glob, Grep work under the config's roots and refuse outside",
    () =>
      Effect.gen(function* () {
        // A relative root is taken from the config's folder, not from the cwd.
        const { dir, project } = setup([`roots = ["project"]`])
        const client = yield* host(Path.join(dir, "config.toml"), Os.tmpdir())
        const { tools } = yield* Effect.promise(() => client.listTools())
        const byName = new Map(tools.map((tool) => [tool.name, tool]))
        for (const name of ["Read", "Edit", "Write", "Glob", "Grep", "ToolSearch", "SourceHealth"]) {
          assert.isTrue(byName.has(name), name)
        }
        const alwaysLoad = (name: string) => byName.get(name)?._meta?.["anthropic/alwaysLoad"] === true
        assert.deepStrictEqual(["Read", "Edit", "Write", "Glob", "Grep"].filter(alwaysLoad), [
          "Read",
          "Edit",
          "Glob",
          "Grep"
        ])
        assert.strictEqual(byName.get("Read")?.annotations?.readOnlyHint, true)
        assert.strictEqual(byName.get("Edit")?.annotations?.destructiveHint, true)

        const written = yield* call(client, "Write", { file_path: "src/app.ts", content: "export const x = 1\n" })
        assert.isNotTrue(written.isError, text(written))
        assert.strictEqual(Fs.readFileSync(Path.join(project, "src/app.ts"), "utf8"), "export const x = 1\n")
        const read = yield* call(client, "Read", { file_path: "notes.md" })
        assert.include(text(read), "     2\tsecond line")
        const edited = yield* call(client, "Edit", { file_path: "notes.md", old_string: "second", new_string: "2nd" })
        assert.isNotTrue(edited.isError, text(edited))
        assert.include(text(edited), "+2nd line")
        const globbed = yield* call(client, "Glob", { pattern: "**/*.ts" })
        assert.deepStrictEqual(globbed.structuredContent?.files, ["src/app.ts"])
        const grepped = yield* call(client, "Grep", { pattern: "2nd", output_mode: "content" })
        assert.strictEqual(text(grepped), "notes.md:2:2nd line")

        const outside = yield* call(client, "Read", { file_path: "../config.toml" })
        assert.isTrue(outside.isError)
        assert.include(text(outside), project)
        const injected = yield* call(client, "Grep", { pattern: "x", path: "--pre=/bin/sh" })
        assert.isTrue(injected.isError)
      })
  )

  it.scopedLive("the host's roots replace the config's, and are read again after roots/list_changed", () =>
    Effect.gen(function* () {
      const { project, other, config } = setup([`roots = ["project"]`])
      const roots = { current: [other] as ReadonlyArray<string> }
      const client = yield* host(config, Os.tmpdir(), roots)
      const there = yield* call(client, "Read", { file_path: "elsewhere.txt" })
      assert.isNotTrue(there.isError, text(there))
      const configured = yield* call(client, "Read", { file_path: Path.join(project, "notes.md") })
      assert.isTrue(configured.isError, "the config's root is replaced by the host's")
      roots.current = [project]
      yield* Effect.promise(() => client.sendRootsListChanged())
      // The notification is handled asynchronously: the next calls see the new roots.
      let now: Result = configured
      for (let i = 0; i < 50 && now.isError === true; i++) {
        yield* Effect.sleep("100 millis")
        now = yield* call(client, "Read", { file_path: "notes.md" })
      }
      assert.isNotTrue(now.isError, text(now))
      const old = yield* call(client, "Read", { file_path: Path.join(other, "elsewhere.txt") })
      assert.isTrue(old.isError)
    })
  )

  it.scopedLive("without config roots or host roots, the folder clawtool started in is the root", () =>
    Effect.gen(function* () {
      const { project, config } = setup([])
      const client = yield* host(config, project)
      const read = yield* call(client, "Read", { file_path: "notes.md" })
      assert.isNotTrue(read.isError, text(read))
    })
  )

  it.scopedLive("[core_tools] switches tools off: not listed, not callable, shown with the rule in tools list", () =>
    Effect.gen(function* () {
      const { config, project } = setup([`[core_tools.Write]`, `enabled = false`])
      const client = yield* host(config, project)
      const names = (yield* Effect.promise(() => client.listTools())).tools.map((tool) => tool.name)
      assert.notInclude(names, "Write")
      assert.include(names, "Read")
      const refused = yield* call(client, "Write", { file_path: "x.txt", content: "x" })
      assert.isTrue(refused.isError)
      assert.include(text(refused), "core_tools.Write.enabled")
      assert.isFalse(Fs.existsSync(Path.join(project, "x.txt")))

      const all = setup([`[core_tools]`, `enabled = false`])
      const listed = runCli(["tools", "list", "--config", all.config, "--json"])
      assert.strictEqual(listed.code, 0, listed.stderr)
      const rows = JSON.parse(listed.stdout) as {
        tools: ReadonlyArray<{ wire: string; enabled: boolean; rule: string }>
      }
      const row = (wire: string) => rows.tools.find((entry) => entry.wire === wire)
      assert.deepStrictEqual(
        { enabled: row("Grep")?.enabled, rule: row("Grep")?.rule },
        { enabled: false, rule: "core_tools.enabled" }
      )
      assert.strictEqual(row("ToolSearch")?.enabled, true)
      const table = runCli(["tools", "list", "--config", config])
      assert.match(table.stdout, /Write\s+core\s+-\s+no \(core_tools\.Write\.enabled\)/)
    })
  )
})
