import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import type { CallError } from "../src/domain/Errors.js"
import type { CallToolResult, JsonObject } from "../src/domain/Mcp.js"
import { coreSpecs } from "../src/services/CoreTools.js"
import { Ledger } from "../src/services/CoreTools/Ledger.js"
import type { CoreContext } from "../src/services/CoreTools/Manifest.js"
import * as Manifest from "../src/services/CoreTools/Manifest.js"
import { coreContext } from "./lib/coreContext.js"
import { removeWhenDone, tempDir } from "./lib/temp.js"

const manifest = Either.getOrThrow(Manifest.make(coreSpecs))

export const tempRoot = (prefix = "clawtool-files-") => tempDir(prefix)

/** Calls a core tool as the Registry does (arguments decoded, output encoded). */
export const call = (context: CoreContext, name: string, args: JsonObject) =>
  manifest.byName.get(name)!.call(args, context)

const text = (result: CallToolResult) => (result.content[0] as { text: string }).text
const structured = <A = Record<string, unknown>>(result: CallToolResult) => result.structuredContent as A
const refused = (context: CoreContext, name: string, args: JsonObject) =>
  Effect.flip(call(context, name, args)) as Effect.Effect<CallError>

const setup = () => {
  const root = tempRoot()
  const context = coreContext({ roots: [root] })
  const file = (name: string, content: string | Uint8Array) => {
    const full = Path.join(root, name)
    Fs.mkdirSync(Path.dirname(full), { recursive: true })
    Fs.writeFileSync(full, content)
    return full
  }
  return { root, context, file }
}

describe("Read", () => {
  it.effect("numbers lines with their real numbers and says where to continue", () =>
    Effect.gen(function* () {
      const { context, file } = setup()
      file("a.txt", Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n") + "\n")
      const whole = yield* call(context, "Read", { file_path: "a.txt" })
      assert.include(text(whole), "     1\tline 1\n")
      assert.include(text(whole), "(End of file: 10 lines)")
      assert.strictEqual(structured(whole).totalLines, 10)
      assert.strictEqual(structured(whole).nextOffset, null)
      const range = yield* call(context, "Read", { file_path: "a.txt", offset: 4, limit: 2 })
      assert.strictEqual(text(range).split("\n")[0], "     4\tline 4")
      assert.strictEqual(text(range).split("\n")[1], "     5\tline 5")
      assert.include(text(range), "Use offset=6 to continue")
      assert.strictEqual(structured(range).nextOffset, 6)
    })
  )

  it.effect("a 10,000-line file comes in a 2,000-line window; an offset beyond the end names the total", () =>
    Effect.gen(function* () {
      const { context, file } = setup()
      file("big.txt", Array.from({ length: 10_000 }, (_, i) => `${i + 1}`).join("\n"))
      const first = yield* call({ ...context, maxOutput: 1_000_000 }, "Read", { file_path: "big.txt" })
      assert.strictEqual(structured(first).lineEnd, 2000)
      assert.strictEqual(structured(first).nextOffset, 2001)
      assert.strictEqual(structured(first).totalLines, 10_000)
      const error = yield* refused(context, "Read", { file_path: "big.txt", offset: 20_000 })
      assert.strictEqual(error.reason, "InvalidArguments")
      assert.include(error.detail, "10000 lines")
    })
  )

  it.effect("stays within the budget on a huge file, text and structured content together", () =>
    Effect.gen(function* () {
      const { context, file } = setup()
      file("huge.txt", Array.from({ length: 50_000 }, (_, i) => `${i} ${"x".repeat(100)}`).join("\n"))
      file("one-line.txt", "y".repeat(5 * 1024 * 1024))
      for (const name of ["huge.txt", "one-line.txt"]) {
        const result = yield* call(context, "Read", { file_path: name })
        const size = text(result).length + JSON.stringify(result.structuredContent).length
        assert.isAtMost(size, context.maxOutput, name)
      }
      const line = yield* call(context, "Read", { file_path: "one-line.txt" })
      assert.include(text(line), "[line cut: 5,242,880 characters]")
    })
  )

  it.live("a file over 20 MB is refused whole, read in ranges (streamed), and the range allows an Edit", () =>
    Effect.gen(function* () {
      const { root, context } = setup()
      const line = `${"z".repeat(99)}\n`
      Fs.writeFileSync(Path.join(root, "large.log"), `first\n${line.repeat(220_000)}last\n`)
      const whole = yield* refused(context, "Read", { file_path: "large.log" })
      assert.strictEqual(whole.reason, "TooLarge")
      assert.include(whole.detail, "offset and limit")
      const head = yield* call(context, "Read", { file_path: "large.log", limit: 1 })
      assert.strictEqual(text(head).split("\n")[0], "     1\tfirst")
      assert.strictEqual(structured(head).totalLines, 220_002)
      const tail = yield* call(context, "Read", { file_path: "large.log", offset: 220_002 })
      assert.strictEqual(text(tail).split("\n")[0], "220002\tlast")
      yield* call(context, "Edit", { file_path: "large.log", old_string: "first\n", new_string: "1st\n" })
      assert.strictEqual(Fs.readFileSync(Path.join(root, "large.log"), "utf8").slice(0, 4), "1st\n")
    })
  )

  it.effect("empty, no final newline, CRLF and mixed endings, BOM, UTF-16", () =>
    Effect.gen(function* () {
      const { context, file } = setup()
      file("empty.txt", "")
      const empty = yield* call(context, "Read", { file_path: "empty.txt" })
      assert.strictEqual(structured(empty).totalLines, 0)
      file("crlf.txt", "a\r\nb\r\n")
      const crlf = yield* call(context, "Read", { file_path: "crlf.txt" })
      assert.notInclude(text(crlf), "\r")
      assert.strictEqual(structured(crlf).lineEndings, "crlf")
      assert.strictEqual(structured(crlf).totalLines, 2)
      file("mixed.txt", "a\r\nb\nc")
      assert.strictEqual(structured(yield* call(context, "Read", { file_path: "mixed.txt" })).lineEndings, "mixed")
      file("bom.txt", "\uFEFFhello")
      const bom = yield* call(context, "Read", { file_path: "bom.txt" })
      assert.include(text(bom), "     1\thello")
      assert.strictEqual(structured(bom).encoding, "utf-8-bom")
      file("utf16.txt", Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("héllo\n", "utf16le")]))
      assert.include(text(yield* call(context, "Read", { file_path: "utf16.txt" })), "     1\théllo")
    })
  )

  it.effect("refuses directories (pointing at Glob), binaries, /dev/zero and a FIFO without hanging", () =>
    Effect.gen(function* () {
      const { root, context, file } = setup()
      Fs.mkdirSync(Path.join(root, "dir"))
      const dir = yield* refused(context, "Read", { file_path: "dir" })
      assert.strictEqual(dir.reason, "IsDirectory")
      assert.include(dir.detail, "Glob")
      const bytes = Buffer.alloc(6000, 0x41)
      bytes[5000] = 0
      file("data.bin", bytes)
      assert.strictEqual((yield* refused(context, "Read", { file_path: "data.bin" })).reason, "Binary")
      const devRoot = coreContext({ roots: ["/dev"] })
      assert.strictEqual((yield* refused(devRoot, "Read", { file_path: "/dev/zero" })).reason, "NotRegularFile")
      execFileSync("mkfifo", [Path.join(root, "fifo")])
      assert.strictEqual((yield* refused(context, "Read", { file_path: "fifo" })).reason, "NotRegularFile")
      const server = Net.createServer().listen(Path.join(root, "sock"))
      yield* Effect.promise(() => new Promise((resolve) => server.once("listening", resolve)))
      assert.strictEqual((yield* refused(context, "Read", { file_path: "sock" })).reason, "NotRegularFile")
      server.close()
      // /dev/zero is outside this root in the first place.
      assert.strictEqual((yield* refused(context, "Read", { file_path: "/dev/zero" })).reason, "OutsideRoots")
    })
  )

  it.effect("path escapes are refused: .., absolute, symlink out, /proc/self/root, a root-prefix sibling", () =>
    Effect.gen(function* () {
      const { root, context } = setup()
      Fs.symlinkSync("/etc/passwd", Path.join(root, "passwd"))
      Fs.mkdirSync(removeWhenDone(`${root}b`))
      Fs.writeFileSync(`${root}b/x`, "x")
      for (const file_path of [
        "../../../../etc/passwd",
        "/etc/passwd",
        "passwd",
        "/proc/self/root/etc/passwd",
        `${root}b/x`
      ]) {
        const error = yield* refused(context, "Read", { file_path })
        assert.strictEqual(error.reason, "OutsideRoots", file_path)
        assert.include(error.detail, root)
      }
    })
  )

  it.effect("a missing file suggests near names", () =>
    Effect.gen(function* () {
      const { context, file } = setup()
      file("config.toml", "x")
      const error = yield* refused(context, "Read", { file_path: "config.tml" })
      assert.strictEqual(error.reason, "NotFound")
      assert.include(error.detail, "config.toml")
    })
  )

  it.effect("images come back as image content; a PNG named .txt is sniffed", () =>
    Effect.gen(function* () {
      const { context, file } = setup()
      const png = Buffer.from(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000" +
          "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082",
        "hex"
      )
      file("pixel.txt", png)
      const result = yield* call(context, "Read", { file_path: "pixel.txt" })
      assert.deepStrictEqual(result.content[1], { type: "image", data: png.toString("base64"), mimeType: "image/png" })
      assert.strictEqual(structured(result).kind, "image")
    })
  )

  it.effect("notebooks as cells with their outputs", () =>
    Effect.gen(function* () {
      const { context, file } = setup()
      file(
        "nb.ipynb",
        JSON.stringify({
          cells: [
            { cell_type: "markdown", source: ["# Title\n", "text"] },
            {
              cell_type: "code",
              source: "print(1)",
              outputs: [
                { output_type: "stream", text: ["1\n"] },
                { output_type: "display_data", data: { "image/png": "AAAA" } }
              ]
            }
          ]
        })
      )
      const result = yield* call(context, "Read", { file_path: "nb.ipynb" })
      assert.strictEqual(structured(result).kind, "notebook")
      assert.include(text(result), "# --- cell 1 (markdown) ---")
      assert.include(text(result), "\tprint(1)")
      assert.include(text(result), "# --- output (stream) ---")
      assert.notInclude(text(result), "AAAA")
    })
  )

  it.effect("PDFs go through pdftotext when it is on PATH, else a clear error", () =>
    Effect.gen(function* () {
      const { root, context, file } = setup()
      file("doc.pdf", "%PDF-1.4 not really")
      const bin = Path.join(root, "bin")
      Fs.mkdirSync(bin)
      const saved = process.env.PATH
      try {
        process.env.PATH = bin
        const missing = yield* refused(context, "Read", { file_path: "doc.pdf" })
        assert.strictEqual(missing.reason, "BackendMissing")
        assert.include(missing.detail, "pdftotext")
        Fs.writeFileSync(Path.join(bin, "pdftotext"), "#!/bin/sh\nprintf 'page one\\npage two\\n'\n", { mode: 0o755 })
        process.env.PATH = `${bin}:${saved}`
        const result = yield* call(context, "Read", { file_path: "doc.pdf" })
        assert.strictEqual(structured(result).kind, "pdf")
        assert.include(text(result), "     2\tpage two")
      } finally {
        process.env.PATH = saved
      }
    })
  )
})

describe("Edit", () => {
  const readThenEdit = (context: CoreContext, file_path: string, args: Omit<JsonObject, "file_path">) =>
    Effect.zipRight(call(context, "Read", { file_path }), call(context, "Edit", { file_path, ...args }))

  it.effect("replaces a unique string and returns a unified diff", () =>
    Effect.gen(function* () {
      const { root, context, file } = setup()
      file("a.ts", "one\ntwo\nthree\n")
      const result = yield* readThenEdit(context, "a.ts", { old_string: "two", new_string: "2" })
      assert.strictEqual(Fs.readFileSync(Path.join(root, "a.ts"), "utf8"), "one\n2\nthree\n")
      assert.include(text(result), "-two\n+2")
      assert.strictEqual(structured(result).added, 1)
      assert.strictEqual(structured(result).removed, 1)
    })
  )

  it.effect("refuses an edit without a Read, and a file changed since the Read", () =>
    Effect.gen(function* () {
      const { root, context, file } = setup()
      file("a.txt", "alpha beta")
      assert.strictEqual(
        (yield* refused(context, "Edit", { file_path: "a.txt", old_string: "alpha", new_string: "A" })).reason,
        "NotRead"
      )
      yield* call(context, "Read", { file_path: "a.txt" })
      Fs.writeFileSync(Path.join(root, "a.txt"), "alpha beta gamma")
      const stale = yield* refused(context, "Edit", { file_path: "a.txt", old_string: "alpha", new_string: "A" })
      assert.strictEqual(stale.reason, "StaleRead")
      assert.strictEqual(Fs.readFileSync(Path.join(root, "a.txt"), "utf8"), "alpha beta gamma")
    })
  )

  it.effect("two consecutive Edits need no re-Read", () =>
    Effect.gen(function* () {
      const { root, context, file } = setup()
      file("a.txt", "a b c")
      yield* readThenEdit(context, "a.txt", { old_string: "a", new_string: "A" })
      yield* call(context, "Edit", { file_path: "a.txt", old_string: "b", new_string: "B" })
      yield* call(context, "Edit", { file_path: "a.txt", old_string: "c", new_string: "C" })
      assert.strictEqual(Fs.readFileSync(Path.join(root, "a.txt"), "utf8"), "A B C")
    })
  )

  it.effect("ambiguous without replace_all (count and line numbers), all with it; no match and no change", () =>
    Effect.gen(function* () {
      const { root, context, file } = setup()
      file("a.txt", "x = 1\ny = 2\nx = 1\n")
      const ambiguous = yield* Effect.flip(readThenEdit(context, "a.txt", { old_string: "x = 1", new_string: "x = 3" }))
      assert.strictEqual(ambiguous.reason, "Ambiguous")
      assert.include(ambiguous.detail, "2 times")
      assert.include(ambiguous.detail, "lines 1, 3")
      const all = yield* call(context, "Edit", {
        file_path: "a.txt",
        old_string: "x = 1",
        new_string: "x = 3",
        replace_all: true
      })
      assert.strictEqual(structured(all).occurrences, 2)
      assert.strictEqual(Fs.readFileSync(Path.join(root, "a.txt"), "utf8"), "x = 3\ny = 2\nx = 3\n")
      const none = yield* refused(context, "Edit", { file_path: "a.txt", old_string: "y = 9", new_string: "z" })
      assert.strictEqual(none.reason, "NoMatch")
      assert.include(none.detail, "line 2: y = 2")
      const same = yield* refused(context, "Edit", { file_path: "a.txt", old_string: "y", new_string: "y" })
      assert.strictEqual(same.reason, "NoChange")
      const empty = yield* refused(context, "Edit", { file_path: "a.txt", old_string: "", new_string: "z" })
      assert.strictEqual(empty.reason, "InvalidArguments")
    })
  )

  it.effect("$& and $1 in new_string are inserted literally", () =>
    Effect.gen(function* () {
      const { root, context, file } = setup()
      file("a.txt", "price: X\n")
      yield* readThenEdit(context, "a.txt", { old_string: "X", new_string: "$&$1$$'" })
      assert.strictEqual(Fs.readFileSync(Path.join(root, "a.txt"), "utf8"), "price: $&$1$$'\n")
    })
  )

  it.effect(
    "CRLF kept (an LF old_string matches), mixed endings untouched outside the edit, BOM and no final newline kept",
    () =>
      Effect.gen(function* () {
        const { root, context, file } = setup()
        file("crlf.txt", "a\r\nb\r\nc\r\n")
        const crlf = yield* readThenEdit(context, "crlf.txt", { old_string: "a\nb", new_string: "A\nB" })
        assert.strictEqual(structured(crlf).match, "line-ending")
        assert.strictEqual(Fs.readFileSync(Path.join(root, "crlf.txt"), "utf8"), "A\r\nB\r\nc\r\n")
        file("mixed.txt", "one\r\ntwo\nthree\r\nfour")
        yield* readThenEdit(context, "mixed.txt", { old_string: "three", new_string: "3" })
        assert.strictEqual(Fs.readFileSync(Path.join(root, "mixed.txt"), "utf8"), "one\r\ntwo\n3\r\nfour")
        file("bom.txt", "\uFEFFkeep me")
        yield* readThenEdit(context, "bom.txt", { old_string: "keep", new_string: "kept" })
        assert.deepStrictEqual([...Fs.readFileSync(Path.join(root, "bom.txt")).subarray(0, 3)], [0xef, 0xbb, 0xbf])
        assert.strictEqual(Fs.readFileSync(Path.join(root, "bom.txt"), "utf8"), "\uFEFFkept me")
      })
  )

  it.effect("keeps the file's mode; through a symlink inside the root the target changes and the link stays", () =>
    Effect.gen(function* () {
      const { root, context, file } = setup()
      const target = file("t.txt", "v1")
      Fs.chmodSync(target, 0o600)
      Fs.symlinkSync(target, Path.join(root, "link.txt"))
      yield* readThenEdit(context, "link.txt", { old_string: "v1", new_string: "v2" })
      assert.strictEqual(Fs.readFileSync(target, "utf8"), "v2")
      assert.isTrue(Fs.lstatSync(Path.join(root, "link.txt")).isSymbolicLink())
      assert.strictEqual(Fs.statSync(target).mode & 0o777, 0o600)
      assert.deepStrictEqual(
        Fs.readdirSync(root).filter((name) => name.startsWith(".clawtool-write-")),
        []
      )
    })
  )

  it.effect("a symlink leading out is refused and the target is untouched", () =>
    Effect.gen(function* () {
      const { root, context } = setup()
      const outside = tempRoot("clawtool-edit-out-")
      Fs.writeFileSync(Path.join(outside, "t.txt"), "secret")
      Fs.symlinkSync(Path.join(outside, "t.txt"), Path.join(root, "out.txt"))
      const error = yield* refused(context, "Edit", { file_path: "out.txt", old_string: "secret", new_string: "x" })
      assert.strictEqual(error.reason, "OutsideRoots")
      assert.strictEqual(Fs.readFileSync(Path.join(outside, "t.txt"), "utf8"), "secret")
    })
  )

  it.effect("concurrent Edits of one file are serialised: no lost update", () =>
    Effect.gen(function* () {
      const { root, context, file } = setup()
      const names = Array.from({ length: 20 }, (_, i) => `w${i}`)
      file("c.txt", names.join("\n"))
      yield* call(context, "Read", { file_path: "c.txt" })
      yield* Effect.all(
        names.map((name) =>
          call(context, "Edit", { file_path: "c.txt", old_string: `${name}\n`, new_string: `${name}!\n` })
        ),
        // Every Edit runs to its end (the last name has no newline after it, so its Edit finds nothing).
        { concurrency: "unbounded", mode: "either" }
      )
      const edited = Fs.readFileSync(Path.join(root, "c.txt"), "utf8")
      assert.strictEqual(edited, names.map((name, i) => (i < names.length - 1 ? `${name}!` : name)).join("\n"))
    })
  )
})

describe("Write", () => {
  it.effect("creates a file in new nested folders, written as given (CRLF kept)", () =>
    Effect.gen(function* () {
      const { root, context } = setup()
      const result = yield* call(context, "Write", { file_path: "a/b/c.txt", content: "x\r\ny\r\n" })
      assert.strictEqual(structured(result).created, true)
      assert.deepStrictEqual(Fs.readFileSync(Path.join(root, "a/b/c.txt")), Buffer.from("x\r\ny\r\n"))
    })
  )

  it.effect("overwriting needs a Read; after it the diff is shown; then Edit without a re-Read works", () =>
    Effect.gen(function* () {
      const { root, context, file } = setup()
      file("a.txt", "old\n")
      assert.strictEqual((yield* refused(context, "Write", { file_path: "a.txt", content: "new\n" })).reason, "NotRead")
      yield* call(context, "Read", { file_path: "a.txt" })
      const result = yield* call(context, "Write", { file_path: "a.txt", content: "new\n" })
      assert.include(text(result), "-old\n+new")
      yield* call(context, "Edit", { file_path: "a.txt", old_string: "new", new_string: "newer" })
      assert.strictEqual(Fs.readFileSync(Path.join(root, "a.txt"), "utf8"), "newer\n")
      Fs.writeFileSync(Path.join(root, "a.txt"), "changed outside\n")
      assert.strictEqual((yield* refused(context, "Write", { file_path: "a.txt", content: "x" })).reason, "StaleRead")
    })
  )

  it.effect("refuses a directory, a parent that is a file, a symlinked folder or a dangling link leading out", () =>
    Effect.gen(function* () {
      const { root, context, file } = setup()
      const outside = tempRoot("clawtool-out-")
      Fs.mkdirSync(Path.join(root, "dir"))
      assert.strictEqual((yield* refused(context, "Write", { file_path: "dir", content: "x" })).reason, "IsDirectory")
      file("plain", "x")
      assert.strictEqual(
        (yield* refused(context, "Write", { file_path: "plain/x.txt", content: "x" })).reason,
        "Failed"
      )
      Fs.symlinkSync(outside, Path.join(root, "out"))
      assert.strictEqual(
        (yield* refused(context, "Write", { file_path: "out/x.txt", content: "x" })).reason,
        "OutsideRoots"
      )
      Fs.symlinkSync(Path.join(outside, "new.txt"), Path.join(root, "dangling"))
      assert.strictEqual(
        (yield* refused(context, "Write", { file_path: "dangling", content: "x" })).reason,
        "OutsideRoots"
      )
      assert.deepStrictEqual(Fs.readdirSync(outside), [])
      assert.strictEqual(
        (yield* refused(context, "Write", { file_path: "../x.txt", content: "x" })).reason,
        "OutsideRoots"
      )
    })
  )

  it.effect("keeps the mode of the file it replaces; a failed rename leaves the old file and no temp file", () =>
    Effect.gen(function* () {
      const { root, context, file } = setup()
      const target = file("m.txt", "x")
      Fs.chmodSync(target, 0o600)
      yield* call(context, "Read", { file_path: "m.txt" })
      yield* call(context, "Write", { file_path: "m.txt", content: "y" })
      assert.strictEqual(Fs.statSync(target).mode & 0o777, 0o600)
      if (process.getuid?.() !== 0) {
        Fs.chmodSync(root, 0o500)
        const error = yield* refused(context, "Write", { file_path: "m.txt", content: "z" })
        Fs.chmodSync(root, 0o700)
        assert.strictEqual(error.reason, "Failed")
        assert.strictEqual(Fs.readFileSync(target, "utf8"), "y")
      }
      assert.deepStrictEqual(
        Fs.readdirSync(root).filter((name) => name.startsWith(".clawtool-write-")),
        []
      )
    })
  )

  it.effect("a ledger shared by Read and Write: the Read in one context allows the Write in the same only", () =>
    Effect.gen(function* () {
      const { root, file } = setup()
      file("s.txt", "x")
      const one = coreContext({ roots: [root], ledger: new Ledger() })
      const two = coreContext({ roots: [root], ledger: new Ledger() })
      yield* call(one, "Read", { file_path: "s.txt" })
      assert.strictEqual((yield* refused(two, "Write", { file_path: "s.txt", content: "y" })).reason, "NotRead")
      yield* call(one, "Write", { file_path: "s.txt", content: "y" })
    })
  )
})
