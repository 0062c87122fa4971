import * as Fs from "node:fs/promises"
import { Effect, Schema } from "effect"
import { CallError } from "../../domain/Errors.js"
import { defineTool } from "./Manifest.js"
import * as Budget from "./Budget.js"
import * as Files from "./Files.js"
import { stampOf } from "./Ledger.js"
import * as Roots from "./Roots.js"

const EditInput = Schema.Struct({
  file_path: Schema.String.annotations({ description: "The file to change: absolute, or relative to the first root" }),
  old_string: Schema.String.pipe(Schema.minLength(1, { message: () => "old_string must not be empty" })).annotations({
    description: "The exact text to replace, whitespace and indentation included"
  }),
  new_string: Schema.String.annotations({ description: "The text to put in its place (may be empty)" }),
  replace_all: Schema.optionalWith(
    Schema.Boolean.annotations({ description: "Replace every occurrence; default false (old_string must be unique)" }),
    { default: () => false }
  )
})

const EditOutput = Schema.Struct({
  path: Schema.String,
  occurrences: Schema.Number,
  /** How old_string was found: as given, or with its line endings turned into the file's CRLF. */
  match: Schema.Literal("exact", "line-ending"),
  added: Schema.Number,
  removed: Schema.Number,
  sizeBefore: Schema.Number,
  sizeAfter: Schema.Number,
  sha256After: Schema.String,
  lineEndings: Schema.String
})

/** Start offsets of the non-overlapping occurrences of `needle`. */
const occurrencesOf = (haystack: string, needle: string): ReadonlyArray<number> => {
  const found: Array<number> = []
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) found.push(at)
  return found
}

const lineAt = (text: string, offset: number) => {
  let line = 1
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) line++
  return line
}

/** The file's line with the most of old_string's first line (trimmed), to point at a near miss. */
const nearest = (text: string, old: string): string | undefined => {
  const first = old
    .split(/\r?\n/)
    .find((line) => line.trim() !== "")
    ?.trim()
  if (first === undefined) return undefined
  const lines = text.split(/\r\n|\n|\r/)
  // The longest prefix of it, down to half of it (at least 3 characters), that some line contains.
  for (let length = first.length; length >= Math.max(3, Math.ceil(first.length / 2)); length--) {
    const probe = first.slice(0, length)
    const index = lines.findIndex((line) => line.includes(probe))
    if (index !== -1) return `line ${index + 1}: ${lines[index]!.trim().slice(0, 200)}`
  }
  return undefined
}

/** `\n` not preceded by `\r` becomes `\r\n`. */
const toCrlf = (text: string) => text.replace(/\r?\n/g, "\r\n")

export const Edit = defineTool({
  name: "Edit",
  description:
    "Replace an exact string in a file under the allowed roots: old_string must occur exactly once unless replace_all is true. Keeps the file's line endings and BOM, writes atomically, and returns a unified diff. The file must have been read (Read) in this session and not changed since.",
  keywords: [
    "edit",
    "change",
    "modify",
    "replace",
    "update",
    "fix",
    "patch",
    "file",
    "string",
    "typo",
    "line",
    "code",
    "insert",
    "text"
  ],
  category: "file",
  usageHint:
    "Read the file first. Copy old_string byte for byte from the Read output (without the line-number prefix), with enough surrounding lines to be unique; set replace_all only to change every occurrence. Use Write for new files. Consecutive Edits need no re-Read.",
  alwaysLoad: true,
  annotations: {
    title: "Edit file",
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: false
  },
  input: EditInput,
  output: EditOutput,
  handler: (input, context) =>
    Effect.gen(function* () {
      const roots = yield* context.roots
      const resolved = yield* Roots.resolve("Edit", input.file_path, roots)
      const path = resolved.display
      if (input.old_string === input.new_string) {
        return yield* new CallError({
          tool: "Edit",
          reason: "NoChange",
          detail: "old_string and new_string are the same; nothing would change"
        })
      }
      return yield* context.ledger.withLock(
        resolved.real,
        Effect.gen(function* () {
          // Judged again under the lock: an Edit just before may have replaced the file (a new inode).
          const now = yield* Roots.resolve("Edit", input.file_path, roots)
          const stat = yield* Files.requireFile("Edit", now)
          const bytes = yield* Files.readChecked("Edit", now, stat)
          if (Files.looksBinary(bytes)) return yield* Files.binaryError("Edit", path)
          if (Files.utf16Bom(bytes) !== undefined) {
            return yield* new CallError({
              tool: "Edit",
              reason: "Failed",
              detail: `${path} is UTF-16; only UTF-8 files are edited (use Write to replace it whole)`
            })
          }
          yield* context.ledger.check("Edit", resolved.real, path, stat, bytes)
          const bom = Files.hasUtf8Bom(bytes)
          const before = new TextDecoder("utf-8").decode(bom ? bytes.subarray(3) : bytes)

          let match: "exact" | "line-ending" = "exact"
          let oldString = input.old_string
          let newString = input.new_string
          let found = occurrencesOf(before, oldString)
          // An LF old_string against a CRLF file: the file's own endings, inside the replaced span only.
          if (found.length === 0 && before.includes("\r\n") && /(?<!\r)\n/.test(oldString)) {
            const converted = occurrencesOf(before, toCrlf(oldString))
            if (converted.length > 0) {
              match = "line-ending"
              found = converted
              oldString = toCrlf(oldString)
              newString = toCrlf(newString)
            }
          }
          if (found.length === 0) {
            const near = nearest(before, input.old_string)
            return yield* new CallError({
              tool: "Edit",
              reason: "NoMatch",
              detail: `old_string was not found in ${path}${near === undefined ? "" : `; the closest line is ${near}`}. Read the file again and copy the text exactly`
            })
          }
          if (found.length > 1 && !input.replace_all) {
            const lines = found.slice(0, 20).map((at) => lineAt(before, at))
            return yield* new CallError({
              tool: "Edit",
              reason: "Ambiguous",
              detail: `old_string occurs ${found.length} times in ${path} (lines ${lines.join(", ")}${found.length > 20 ? ", …" : ""}): include more surrounding text to make it unique, or set replace_all to change them all`
            })
          }
          // split/join: no `$&`/`$1` expansion as String.replace would do.
          const after = input.replace_all
            ? before.split(oldString).join(newString)
            : before.slice(0, found[0]) + newString + before.slice(found[0]! + oldString.length)
          const encoded = new TextEncoder().encode(after)
          const out = bom ? Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), encoded]) : Buffer.from(encoded)
          // The diff library loads with the first write (not at start-up), and before the file changes.
          const { structuredPatch } = yield* Effect.promise(() => import("diff"))
          yield* Files.writeAtomic("Edit", path, resolved.real, out, stat.mode & 0o7777)
          const written = yield* Effect.tryPromise({
            try: () => Fs.stat(resolved.real),
            catch: (cause) => Files.failure("Edit", path, cause)
          })
          const stamp = stampOf(written, out)
          context.ledger.record(resolved.real, stamp)

          const patch = structuredPatch(path, path, before, after, "", "", { context: 3 })
          let added = 0
          let removed = 0
          const body: Array<string> = []
          for (const hunk of patch.hunks) {
            body.push(`@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`)
            for (const line of hunk.lines) {
              if (line.startsWith("+")) added++
              else if (line.startsWith("-")) removed++
              body.push(line.replace(/\r$/, ""))
            }
          }
          const structured = {
            path,
            occurrences: input.replace_all ? found.length : 1,
            match,
            added,
            removed,
            sizeBefore: bytes.length,
            sizeAfter: out.length,
            sha256After: stamp.sha256,
            lineEndings: Files.lineEndingsOf(after)
          }
          const text = [
            `Edited ${path}: ${structured.occurrences} replacement${structured.occurrences === 1 ? "" : "s"}, +${added} −${removed} lines`,
            `--- ${path}`,
            `+++ ${path}`,
            ...body
          ].join("\n")
          return Budget.fitResult(
            { text, structured },
            context.maxOutput,
            "Read the file to see the rest of the change"
          )
        })
      )
    })
})
