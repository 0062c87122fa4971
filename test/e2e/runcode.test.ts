// Code mode end to end (issue 30, ADR 035): a host (the SDK Client) → `clawtool serve` (the bundle: the worker and the
// wasm from dist/bin) → RunCode, whose code calls the filesystem server, the core tools and a stub child on the host's
// own call path (audit lines marked via RunCode, one progress notification per inner call, a profile's view), and each
// hostile program ends its own run with a clear error while clawtool keeps answering.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { ensureBuilt, freshCacheDir, main, tempDirEnv } from "../lib/cli.js"
import { stubCommand } from "../lib/sources.js"

const work = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "clawtool-runcode-e2e-")))
afterAll(() => Fs.rmSync(work, { recursive: true, force: true }))
beforeAll(ensureBuilt, 120_000)

const filesystem = Path.resolve(
  import.meta.dirname,
  "../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
)

interface Result {
  readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }>
  readonly structuredContent?: Record<string, unknown>
  readonly isError?: boolean
}

const project = Path.join(work, "project")
Fs.mkdirSync(project)
for (let i = 0; i < 6; i++)
  Fs.writeFileSync(Path.join(project, `note-${i}.md`), `# note ${i}\n${"line\n".repeat(i + 1)}`)
Fs.writeFileSync(Path.join(project, "skip.txt"), "not markdown\n")
const audit = Path.join(work, "audit.jsonl")
const config = Path.join(work, "config.toml")
Fs.writeFileSync(
  config,
  [
    `roots = [${JSON.stringify(project)}]`,
    `[sources.fs]`,
    `command = ${JSON.stringify([process.execPath, filesystem, project])}`,
    `[sources.stub]`,
    `command = ${stubCommand()}`,
    // Records how each tools/call reached it: the line relay's ids are strings ("clawtool-…"), the SDK client's numbers.
    `[sources.wire]`,
    `command = ${JSON.stringify([process.execPath, Path.resolve(import.meta.dirname, "../fixtures/wire-server.mjs")])}`,
    `[audit]`,
    `path = ${JSON.stringify(audit)}`,
    // The SDK host here cannot be asked (no elicitation): a call to stub.add is refused, from the code as from the host.
    `[trust]`,
    `confirm = ["stub.add"]`,
    `[core_tools.RunCode]`,
    `timeout = "5s"`,
    `max_calls = 50`,
    // A serve with --profile stub sees the stub source and RunCode only.
    `[profiles.stub]`,
    `sources = ["stub"]`,
    `core_tools = ["RunCode"]`
  ].join("\n")
)

const serve = (...args: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [main, "serve", "--config", config, ...args],
        cwd: project,
        env: { ...getDefaultEnvironment(), ...tempDirEnv, CLAWTOOL_CACHE_DIR: freshCacheDir() },
        stderr: "pipe"
      })
      const client = new Client({ name: "runcode-e2e", version: "1.0.0" })
      await client.connect(transport)
      // The sources up before anything is timed (a profile's session calls only its own).
      await client.callTool({ name: "stub__echo", arguments: { text: "up" } })
      if (!args.includes("--profile")) await client.callTool({ name: "fs__list_allowed_directories", arguments: {} })
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )
const host = serve()

const run = (client: Client, code: string, options: { signal?: AbortSignal; onprogress?: () => void } = {}) =>
  Effect.promise(
    () =>
      client.callTool({ name: "RunCode", arguments: { code } }, undefined, {
        timeout: 60_000,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        ...(options.onprogress === undefined ? {} : { onprogress: options.onprogress })
      }) as Promise<Result>
  )
const text = (result: Result) => result.content[0]?.text ?? ""

describe("RunCode through serve", () => {
  it.scopedLive(
    "reads several files through the filesystem server and Read, filters, and returns only the answer; audit lines say via RunCode; one progress per inner call",
    () =>
      Effect.gen(function* () {
        const client = yield* host
        const { tools } = yield* Effect.promise(() => client.listTools())
        const runCode = tools.find((tool) => tool.name === "RunCode")
        assert.strictEqual(runCode?._meta?.["anthropic/alwaysLoad"], true)
        let progress = 0
        const result = yield* run(
          client,
          `
          const listing: string = (await tools.fs.listDirectory({ path: ${JSON.stringify(project)} })).content
          const names = listing.split("\\n").filter((line) => line.endsWith(".md")).map((line) => line.replace("[FILE] ", ""))
          const texts = await Promise.all(names.map((name) => tools.fs.read_text_file({ path: ${JSON.stringify(project)} + "/" + name })))
          const viaRead = await tools.Read({ file_path: "note-5.md" })
          console.log("read", names.length, "files")
          return { files: names.length, lines: texts.reduce((sum, t: any) => sum + t.content.split("\\n").length - 1, 0), read: typeof viaRead }
          `,
          { onprogress: () => (progress += 1) }
        )
        assert.isUndefined(result.isError, text(result))
        assert.deepStrictEqual(result.structuredContent?.result, { files: 6, lines: 6 * 1 + 21, read: "object" })
        assert.strictEqual(result.structuredContent?.console, "read 6 files")
        assert.strictEqual(result.structuredContent?.calls, 8)
        assert.strictEqual(progress, 8)
        // The audit writer appends what queued at most every 100 ms: polled until RunCode's own line is there.
        const read = () =>
          Fs.existsSync(audit)
            ? Fs.readFileSync(audit, "utf8")
                .trim()
                .split("\n")
                .map((line) => JSON.parse(line) as Record<string, unknown>)
            : []
        let lines = read()
        for (let i = 0; i < 150 && !lines.some((line) => line.tool === "RunCode"); i++) {
          yield* Effect.sleep("100 millis")
          lines = read()
        }
        const inner = lines.filter((line) => line.via === "RunCode")
        assert.strictEqual(inner.length, 8)
        assert.deepStrictEqual([...new Set(inner.map((line) => `${line.instance}.${line.tool}`))].sort(), [
          "core.Read",
          "fs.list_directory",
          "fs.read_text_file"
        ])
        assert.isTrue(lines.some((line) => line.tool === "RunCode" && line.via === undefined))
      }),
    60_000
  )

  it.scopedLive("an untraced RunCode's inner calls take the line relay (ADR 009's string ids at the child)", () =>
    Effect.gen(function* () {
      const client = yield* host
      const result = yield* run(
        client,
        `const seen = await Promise.all([1, 2, 3].map((n) => tools.wire.request({ n })))
         return seen.map((answer: string) => JSON.parse(answer).id)`
      )
      assert.isUndefined(result.isError, text(result))
      const ids = result.structuredContent?.result as ReadonlyArray<unknown>
      assert.strictEqual(ids.length, 3)
      for (const id of ids) assert.match(String(id), /^clawtool-/, `the child saw id ${JSON.stringify(id)}`)
      // The host's own call of the same tool, on the SDK path (it asks for progress), is numbered by the SDK client.
      const direct = (yield* Effect.promise(() =>
        client.callTool({ name: "wire__request", arguments: {} }, undefined, { onprogress: () => {} })
      )) as Result
      assert.isNumber((JSON.parse(text(direct)) as { id: unknown }).id)
    })
  )

  it.scopedLive("with code mode on, ToolSearch's results carry each tool's signature", () =>
    Effect.gen(function* () {
      const client = yield* host
      const found = (yield* Effect.promise(
        () =>
          client.callTool({ name: "ToolSearch", arguments: { query: "read text file", limit: 10 } }) as Promise<Result>
      )).structuredContent as { results: ReadonlyArray<{ name: string; signature?: string }> }
      const read = found.results.find((hit) => hit.name === "fs__read_text_file")
      assert.match(
        read?.signature ?? "",
        /^tools\.fs\.readTextFile\(input: \{ [^}]*\bpath: string;[^}]*\}\): Promise<\{ content: string \}>$/
      )
      assert.isTrue(found.results.every((hit) => hit.signature?.startsWith("tools.")))
    })
  )

  it.scopedLive(
    "an inner call joins the host's trace under RunCode's span: its child gets the trace, not the host's span; untraced, none",
    () =>
      Effect.gen(function* () {
        const client = yield* host
        const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
        const hostSpan = "00f067aa0ba902b7"
        const result = (yield* Effect.promise(() =>
          client.callTool({
            name: "RunCode",
            arguments: { code: "return await tools.stub.meta({})" },
            _meta: { traceparent: `00-${traceId}-${hostSpan}-01` }
          })
        )) as Result
        const childMeta = (result.structuredContent?.result as { meta: { traceparent?: string } }).meta
        const [, trace, parent] = (childMeta.traceparent ?? "").split("-")
        assert.strictEqual(trace, traceId)
        assert.notStrictEqual(parent, hostSpan)
        // An untraced RunCode's inner call is untraced too, as a host's would be: no traceparent reaches its child.
        const untraced = yield* run(client, "return await tools.stub.meta({})")
        const plain = (untraced.structuredContent?.result as { meta?: { traceparent?: string } }).meta
        assert.isUndefined(plain?.traceparent)
      })
  )

  it.scopedLive("an inner tool error is an error the code catches; call() by wire name", () =>
    Effect.gen(function* () {
      const client = yield* host
      const result = yield* run(
        client,
        `try { await tools.stub.echo({}) } catch (error) { return { caught: error.name + ": " + error.message, again: await call("stub__echo", { text: "hi" }) } }`
      )
      assert.deepStrictEqual(result.structuredContent?.result, { caught: "ToolError: missing text", again: "echo:hi" })
    })
  )

  it.scopedLive(
    "[trust] confirm holds for the code's calls: refused as the host's call is, never relayed around it",
    () =>
      Effect.gen(function* () {
        const client = yield* host
        const result = yield* run(
          client,
          `try { return await tools.stub.add({ a: 1, b: 2 }) } catch (error) { return error.name + ": " + error.message }`
        )
        assert.match(
          String(result.structuredContent?.result),
          /^ToolError: stub__add was not run: \[trust\] confirm \("stub\.add"\) needs the user's yes/
        )
        // The same refusal the host gets.
        const hostCall = (yield* Effect.promise(
          () => client.callTool({ name: "stub__add", arguments: { a: 1, b: 2 } }) as Promise<Result>
        )) as Result
        assert.isTrue(hostCall.isError)
        assert.strictEqual(result.structuredContent?.result, `ToolError: ${text(hostCall)}`)
      })
  )

  it.scopedLive("cancelling RunCode cancels its inner call at the child", () =>
    Effect.gen(function* () {
      const client = yield* host
      const controller = new AbortController()
      const started = run(client, `await tools.stub.slow({ ms: 20000 }); return "done"`, { signal: controller.signal })
      const outcome = yield* Effect.fork(Effect.either(Effect.tryPromise(() => Effect.runPromise(started))))
      yield* Effect.sleep("1 second")
      controller.abort()
      yield* outcome.await
      // The child saw the cancel: its own count goes up (polled, the notice is asynchronous).
      let count = 0
      for (let i = 0; i < 50 && count === 0; i++) {
        const probe = yield* Effect.promise(
          () => client.callTool({ name: "stub__cancelled", arguments: {} }) as Promise<Result>
        )
        count = Number(text(probe))
        if (count === 0) yield* Effect.sleep("100 millis")
      }
      assert.strictEqual(count, 1)
    })
  )

  const hostile: ReadonlyArray<readonly [string, string, RegExp]> = [
    ["an infinite loop", "while (true) {}", /timed out/],
    ["a memory bomb", 'const a = []; while (true) a.push("x".repeat(1 << 20) + a.length)', /out of memory/],
    ["deep recursion", "const f = (n: number): number => f(n + 1) + 1; return f(0)", /stack overflow/],
    ["a huge string", 'return "x".repeat(2 ** 29)', /out of memory/],
    ["constructor.constructor", 'return constructor.constructor("return process")().pid', /process.*not defined/],
    [
      "10,000 inner calls",
      "for (let i = 0; i < 10000; i++) await tools.stub.echo({ text: String(i) })",
      /too many tool calls.*more than 50/
    ],
    ["a promise that never settles", "await new Promise(() => {}); return 1", /never finishes/]
  ]
  for (const [name, code, expected] of hostile) {
    it.scopedLive(
      `${name} ends its own run with a clear error; another call is answered meanwhile`,
      () =>
        Effect.gen(function* () {
          const client = yield* host
          const running = yield* Effect.fork(run(client, code))
          // While the guest runs on its thread, the main thread answers at once.
          const echo = yield* Effect.promise(
            () => client.callTool({ name: "stub__echo", arguments: { text: "alive" } }) as Promise<Result>
          ).pipe(Effect.timeout("1 second"))
          assert.strictEqual(text(echo), "echo:alive")
          const result = yield* running.await.pipe(Effect.flatten)
          assert.isTrue(result.isError, text(result))
          assert.match(text(result), expected)
          // And the next run starts clean.
          const next = yield* run(client, "return 1 + 1")
          assert.strictEqual(next.structuredContent?.result, 2)
        }),
      30_000
    )
  }

  it.scopedLive(
    "in a profile, the code's tools are the profile's: one outside it is an unknown tool, thrown as the host's call is answered",
    () =>
      Effect.gen(function* () {
        const client = yield* serve("--profile", "stub")
        const listed = (yield* Effect.promise(() => client.listTools())).tools.map((tool) => tool.name)
        // The profile's own tools: the stub's and the core tools it serves (RunCode and the registry's).
        const core = listed.filter((name) => !name.includes("__")).sort()
        assert.deepStrictEqual(core, ["RunCode", "SourceHealth", "ToolSearch"])
        assert.isTrue(listed.filter((name) => name.includes("__")).every((name) => name.startsWith("stub__")))
        const result = yield* run(
          client,
          `
          const outside = async (f: () => Promise<unknown>) => {
            try { return await f() } catch (error) { return error.name + ": " + error.message }
          }
          return {
            namespaces: Object.keys(tools).sort(),
            echo: await tools.stub.echo({ text: "in" }),
            byWire: await outside(() => call("fs__list_allowed_directories", {})),
            byName: await outside(() => (tools as any).fs.listAllowedDirectories({})),
            core: await outside(() => call("Read", { file_path: "note-1.md" }))
          }
          `
        )
        assert.isUndefined(result.isError, text(result))
        const value = result.structuredContent?.result as Record<string, unknown>
        assert.deepStrictEqual(value, {
          namespaces: [...core, "stub"],
          echo: "echo:in",
          byWire: 'ToolError: unknown tool "fs__list_allowed_directories"',
          byName: "TypeError: cannot read property 'listAllowedDirectories' of undefined",
          core: 'ToolError: unknown tool "Read"'
        })
        // The same text the host gets calling it outside its profile.
        const hostCall = (yield* Effect.promise(
          () => client.callTool({ name: "fs__list_allowed_directories", arguments: {} }) as Promise<Result>
        )) as Result
        assert.isTrue(hostCall.isError)
        assert.strictEqual(`ToolError: ${text(hostCall)}`, value.byWire)
      }),
    60_000
  )

  it.scopedLive("prototype pollution stays in its own run: host objects and later runs are untouched", () =>
    Effect.gen(function* () {
      const client = yield* host
      const polluted = yield* run(
        client,
        `Object.prototype.polluted = "yes"; (tools as any).__proto__.x = 1; Array.prototype.push = null; return await call("stub__echo", JSON.parse('{"text": "p", "__proto__": {"polluted": "yes"}}'))`
      )
      assert.strictEqual(polluted.structuredContent?.result, "echo:p")
      const clean = yield* run(client, "return [({} as any).polluted ?? null, typeof [].push]")
      assert.deepStrictEqual(clean.structuredContent?.result, [null, "function"])
      assert.strictEqual(({} as Record<string, unknown>).polluted, undefined)
    })
  )
})
