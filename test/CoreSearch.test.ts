import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Fiber } from "effect"
import type { CallError } from "../src/domain/Errors.js"
import type { CallToolResult, JsonObject } from "../src/domain/Mcp.js"
import { coreSpecs } from "../src/services/CoreTools.js"
import * as Ripgrep from "../src/services/CoreTools/Ripgrep.js"
import type { CoreContext } from "../src/services/CoreTools/Manifest.js"
import * as Manifest from "../src/services/CoreTools/Manifest.js"
import { coreContext } from "./lib/coreContext.js"
import { tempDir } from "./lib/temp.js"

const manifest = Either.getOrThrow(Manifest.make(coreSpecs))
const call = (context: CoreContext, name: string, args: JsonObject) => manifest.byName.get(name)!.call(args, context)
const text = (result: CallToolResult) => (result.content[0] as { text: string }).text
const structured = <A = Record<string, unknown>>(result: CallToolResult) => result.structuredContent as A
const refused = (context: CoreContext, name: string, args: JsonObject) =>
  Effect.flip(call(context, name, args)) as Effect.Effect<CallError>

/** A tree with nested folders, a .gitignore, hidden files, a symlink out, and known mtimes (a.ts newest). */
const tree = () => {
  const root = tempDir("clawtool-search-")
  const outside = tempDir("clawtool-search-out-")
  const files: Record<string, string> = {
    "a.ts": "export const needle = 1\n",
    "b.ts": "const other = 2\n",
    "src/c.ts": "needle\nline two\nline three\nneedle again\n",
    "src/d.tsx": "<Needle />\n",
    "src/[weird].ts": "weird\n",
    "docs/readme.md": "a needle in docs\n",
    "ignored/skip.ts": "needle\n",
    ".env": "SECRET=needle\n",
    ".gitignore": "ignored/\n",
    "-foo.txt": "-foo starts with a dash\n"
  }
  let time = 1_700_000_000
  for (const [name, content] of Object.entries(files).reverse()) {
    const full = Path.join(root, name)
    Fs.mkdirSync(Path.dirname(full), { recursive: true })
    Fs.writeFileSync(full, content)
    Fs.utimesSync(full, time, time)
    time += 10
  }
  Fs.writeFileSync(Path.join(outside, "leak.ts"), "needle outside\n")
  Fs.symlinkSync(outside, Path.join(root, "out"))
  Fs.symlinkSync(Path.join(outside, "leak.ts"), Path.join(root, "leak-link.ts"))
  return { root, outside, context: coreContext({ roots: [root] }) }
}

describe("ripgrep", () => {
  it("the binary resolves from @vscode/ripgrep (no system rg needed)", () => {
    const path = Ripgrep.rgPath()
    assert.isDefined(path)
    assert.include(path!, "@vscode/ripgrep")
  })
})

describe("Glob", () => {
  it.live("depth semantics: **/*.ts at any depth, *.ts at the top only; braces and literal brackets", () =>
    Effect.gen(function* () {
      const { context } = tree()
      const deep = structured<{ files: Array<string> }>(yield* call(context, "Glob", { pattern: "**/*.ts" })).files
      assert.sameMembers(deep, ["a.ts", "b.ts", "src/c.ts", "src/[weird].ts"])
      const top = structured<{ files: Array<string> }>(yield* call(context, "Glob", { pattern: "*.ts" })).files
      assert.sameMembers(top, ["a.ts", "b.ts"])
      const braces = yield* call(context, "Glob", { pattern: "src/*.{ts,tsx}" })
      assert.sameMembers(structured<{ files: Array<string> }>(braces).files, [
        "src/c.ts",
        "src/d.tsx",
        "src/[weird].ts"
      ])
      const literal = yield* call(context, "Glob", { pattern: "src/\\[weird\\].ts" })
      assert.deepStrictEqual(structured<{ files: Array<string> }>(literal).files, ["src/[weird].ts"])
    })
  )

  it.live("newest first; .gitignore honoured; hidden only when named; symlinks out absent", () =>
    Effect.gen(function* () {
      const { context } = tree()
      const all = structured<{ files: Array<string> }>(yield* call(context, "Glob", { pattern: "**/*" })).files
      assert.strictEqual(all[0], "a.ts", "the newest file comes first")
      assert.isBelow(all.indexOf("b.ts"), all.indexOf("src/c.ts"))
      assert.notInclude(all, "ignored/skip.ts")
      assert.notInclude(all, ".env")
      assert.isFalse(
        all.some((file) => file.startsWith("out/") || file === "leak-link.ts"),
        all.join(",")
      )
      const env = structured<{ files: Array<string> }>(yield* call(context, "Glob", { pattern: "**/.env" })).files
      assert.deepStrictEqual(env, [".env"])
    })
  )

  it.live("limit truncates with the count; a path narrows; escapes refused", () =>
    Effect.gen(function* () {
      const { context } = tree()
      const capped = yield* call(context, "Glob", { pattern: "**/*", limit: 2 })
      const { files, count, truncated } = structured<{ files: Array<string>; count: number; truncated: boolean }>(
        capped
      )
      assert.strictEqual(files.length, 2)
      assert.isAbove(count, 2)
      assert.isTrue(truncated)
      assert.include(text(capped), `(2 of ${count} files`)
      const inSrc = yield* call(context, "Glob", { pattern: "*.ts", path: "src" })
      assert.sameMembers(structured<{ files: Array<string> }>(inSrc).files, ["src/c.ts", "src/[weird].ts"])
      assert.strictEqual((yield* refused(context, "Glob", { pattern: "/etc/*" })).reason, "InvalidArguments")
      assert.strictEqual((yield* refused(context, "Glob", { pattern: "../*" })).reason, "InvalidArguments")
      assert.strictEqual((yield* refused(context, "Glob", { pattern: "*", path: "/etc" })).reason, "OutsideRoots")
      assert.strictEqual((yield* refused(context, "Glob", { pattern: "*", path: "out" })).reason, "OutsideRoots")
    })
  )

  it.live("a non-git folder with no matches says so", () =>
    Effect.gen(function* () {
      const { context } = tree()
      const none = yield* call(context, "Glob", { pattern: "**/*.rs" })
      assert.strictEqual(text(none), "(no files match)")
      assert.strictEqual(structured(none).count, 0)
    })
  )
})

describe("Grep", () => {
  it.live("files_with_matches (default): newest first, ignored and hidden skipped, symlinks not followed", () =>
    Effect.gen(function* () {
      const { context } = tree()
      const result = yield* call(context, "Grep", { pattern: "needle" })
      const files = structured<{ files: Array<string> }>(result).files
      assert.deepStrictEqual(files, ["a.ts", "src/c.ts", "docs/readme.md"])
      assert.strictEqual(text(result), files.join("\n"))
    })
  )

  it.live("content: line numbers, context without duplicated lines, -i, glob and type filters", () =>
    Effect.gen(function* () {
      const { context } = tree()
      const content = yield* call(context, "Grep", { pattern: "needle", path: "src/c.ts", output_mode: "content" })
      assert.strictEqual(text(content), "src/c.ts:1:needle\n--\nsrc/c.ts:4:needle again")
      const withContext = yield* call(context, "Grep", {
        pattern: "needle",
        path: "src/c.ts",
        output_mode: "content",
        "-C": 2
      })
      assert.strictEqual(
        text(withContext),
        ["src/c.ts:1:needle", "src/c.ts-2-line two", "src/c.ts-3-line three", "src/c.ts:4:needle again"].join("\n")
      )
      const insensitive = yield* call(context, "Grep", { pattern: "NEEDLE", "-i": true, glob: "*.tsx" })
      assert.deepStrictEqual(structured<{ files: Array<string> }>(insensitive).files, ["src/d.tsx"])
      const typed = yield* call(context, "Grep", { pattern: "needle", type: "md" })
      assert.deepStrictEqual(structured<{ files: Array<string> }>(typed).files, ["docs/readme.md"])
      const counted = yield* call(context, "Grep", { pattern: "needle", output_mode: "count", path: "src" })
      assert.strictEqual(text(counted), "src/c.ts:2")
      assert.strictEqual(structured(counted).count, 2)
    })
  )

  it.live("a pattern starting with - is a pattern; flag injection through path, glob or type goes nowhere", () =>
    Effect.gen(function* () {
      const { root, context } = tree()
      const dashed = yield* call(context, "Grep", { pattern: "-foo", output_mode: "content" })
      assert.include(text(dashed), "-foo.txt:1:-foo starts with a dash")
      const marker = Path.join(root, "pwned")
      const script = Path.join(root, "evil.sh")
      Fs.writeFileSync(script, `#!/bin/sh\ntouch ${marker}\ncat "$1"\n`, { mode: 0o755 })
      const viaPath = yield* Effect.either(call(context, "Grep", { pattern: "needle", path: `--pre=${script}` }))
      assert.isTrue(Either.isLeft(viaPath))
      if (Either.isLeft(viaPath)) assert.strictEqual(viaPath.left.reason, "NotFound")
      yield* Effect.either(call(context, "Grep", { pattern: "needle", glob: `--pre=${script}` }))
      assert.strictEqual((yield* refused(context, "Grep", { pattern: "x", type: "x;rm" })).reason, "InvalidArguments")
      assert.strictEqual(
        (yield* refused(context, "Grep", { pattern: "x", type: "--pre=/bin/sh" })).reason,
        "InvalidArguments"
      )
      assert.isFalse(Fs.existsSync(marker), "no program ran")
      assert.strictEqual((yield* refused(context, "Grep", { pattern: "x", path: "/etc" })).reason, "OutsideRoots")
    })
  )

  it.live("an invalid regex is a clean error quoting ripgrep", () =>
    Effect.gen(function* () {
      const { context } = tree()
      const error = yield* refused(context, "Grep", { pattern: "(" })
      assert.strictEqual(error.reason, "Failed")
      assert.include(error.detail, "regex")
    })
  )

  it.live("head_limit stops ripgrep early and says so; huge lines are cut; results stay within the budget", () =>
    Effect.gen(function* () {
      const { root, context } = tree()
      Fs.writeFileSync(Path.join(root, "many.txt"), Array.from({ length: 5000 }, (_, i) => `hit ${i}`).join("\n"))
      Fs.writeFileSync(Path.join(root, "wide.txt"), `hit ${"w".repeat(1_000_000)}\n`)
      const limited = yield* call(context, "Grep", {
        pattern: "hit",
        path: "many.txt",
        output_mode: "content",
        head_limit: 5
      })
      assert.strictEqual(text(limited).split("\n").length, 6)
      assert.include(text(limited), "stopped at head_limit=5")
      assert.isTrue(structured(limited).truncated)
      const wide = yield* call(context, "Grep", { pattern: "hit", path: "wide.txt", output_mode: "content" })
      assert.isBelow(text(wide).length, 1000)
      const big = yield* call(context, "Grep", { pattern: "hit", output_mode: "content", head_limit: 10_000 })
      assert.isAtMost(text(big).length + JSON.stringify(big.structuredContent).length, context.maxOutput)
      assert.include(text(big), "omitted")
    })
  )

  it.live("a FIFO as path is refused; rg is killed when a search is interrupted (the host's cancellation)", () =>
    Effect.gen(function* () {
      const { root, context } = tree()
      const fifo = Path.join(root, "block")
      execFileSync("mkfifo", [fifo])
      assert.strictEqual((yield* refused(context, "Grep", { pattern: "x", path: "block" })).reason, "NotRegularFile")
      // rg reading a FIFO nobody writes to blocks until it is killed.
      const running = () => {
        try {
          return execFileSync("pgrep", ["-f", "--", fifo]).toString().trim()
        } catch {
          return "" // pgrep exits 1 when nothing matches
        }
      }
      const fiber = yield* Effect.fork(
        Ripgrep.run("Grep", ["--regexp", "x", "--", fifo], {
          cwd: root,
          separator: "\n",
          timeout: "1 minute",
          onRecord: () => true
        })
      )
      let before = ""
      for (let i = 0; i < 50 && before === ""; i++) {
        yield* Effect.sleep("100 millis")
        before = running()
      }
      assert.notStrictEqual(before, "", "rg was running")
      yield* Fiber.interrupt(fiber)
      let after = running()
      for (let i = 0; i < 50 && after !== ""; i++) {
        yield* Effect.sleep("100 millis")
        after = running()
      }
      assert.strictEqual(after, "", "rg was killed")
    })
  )
})
