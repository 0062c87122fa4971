import { execFile } from "node:child_process"
import * as Crypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as Readline from "node:readline"
import { Effect, Schema } from "effect"
import { CallError } from "../../domain/Errors.js"
import { defineTool } from "./Manifest.js"
import * as Budget from "./Budget.js"
import * as Files from "./Files.js"
import { stampOf } from "./Ledger.js"
import * as Roots from "./Roots.js"

/** Lines returned when no limit is given, and the longest line shown whole (as Claude Code and opencode). */
export const defaultLimit = 2000
export const maxLineLength = 2000
/** A text file above this is read only in ranges (offset/limit), streamed. */
export const maxWholeBytes = 20 * 1024 * 1024
/** Images are returned whole or not at all. */
export const maxImageBytes = 5 * 1024 * 1024
/** Each notebook output is cut at this many characters. */
const maxCellOutput = 2000

const ReadInput = Schema.Struct({
  file_path: Schema.String.annotations({
    description: "The file to read: absolute, or relative to the first root"
  }),
  offset: Schema.optional(
    Schema.Number.pipe(Schema.int(), Schema.greaterThanOrEqualTo(1)).annotations({
      description: "The line number to start at (1-based); default 1"
    })
  ),
  limit: Schema.optional(
    Schema.Number.pipe(Schema.int(), Schema.greaterThanOrEqualTo(1)).annotations({
      description: `How many lines to read; default ${defaultLimit}`
    })
  )
})

const ReadOutput = Schema.Struct({
  path: Schema.String,
  kind: Schema.Literal("text", "image", "notebook", "pdf"),
  sizeBytes: Schema.Number,
  sha256: Schema.String,
  /** Lines of the whole (rendered) file; 0 for images. */
  totalLines: Schema.Number,
  lineStart: Schema.Number,
  lineEnd: Schema.Number,
  /** Where the next Read starts when lines were left out, else null. */
  nextOffset: Schema.NullOr(Schema.Number),
  truncated: Schema.Boolean,
  encoding: Schema.optional(Schema.String),
  lineEndings: Schema.optional(Schema.String),
  mimeType: Schema.optional(Schema.String)
})
type ReadOutput = typeof ReadOutput.Type

const imageType = (bytes: Uint8Array): string | undefined => {
  const ascii = (from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to))
  if (bytes[0] === 0x89 && ascii(1, 4) === "PNG") return "image/png"
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "image/jpeg"
  if (ascii(0, 6) === "GIF87a" || ascii(0, 6) === "GIF89a") return "image/gif"
  if (ascii(0, 4) === "RIFF" && ascii(8, 12) === "WEBP") return "image/webp"
  return undefined
}
const isPdf = (bytes: Uint8Array) => String.fromCharCode(...bytes.subarray(0, 5)) === "%PDF-"

const decode = (bytes: Uint8Array): { readonly text: string; readonly encoding: string } => {
  const utf16 = Files.utf16Bom(bytes)
  if (utf16 !== undefined) return { text: new TextDecoder(utf16).decode(bytes.subarray(2)), encoding: utf16 }
  const bom = Files.hasUtf8Bom(bytes)
  return {
    text: new TextDecoder("utf-8").decode(bom ? bytes.subarray(3) : bytes),
    encoding: bom ? "utf-8-bom" : "utf-8"
  }
}

/** Lines without their endings; a final newline ends the last line rather than starting an empty one. */
const splitLines = (text: string): ReadonlyArray<string> => {
  if (text === "") return []
  const lines = text.split(/\r\n|\n|\r/)
  if (lines.at(-1) === "") lines.pop()
  return lines
}

const cutLine = (line: string) =>
  line.length <= maxLineLength
    ? line
    : `${line.slice(0, maxLineLength)}… [line cut: ${line.length.toLocaleString("en-US")} characters]`

/** `cat -n`: the real line number, a tab, the line. */
const numbered = (n: number, line: string) => `${String(n).padStart(6)}\t${cutLine(line)}`

interface Window {
  readonly text: string
  readonly lineStart: number
  readonly lineEnd: number
  readonly nextOffset: number | null
}

/** The requested lines, numbered, as many as the text budget holds; says where to continue. */
const windowOf = (
  lines: ReadonlyArray<string>,
  totalLines: number,
  offset: number,
  limit: number,
  room: number
): Window => {
  const out: Array<string> = []
  let used = 0
  let n = offset
  const last = Math.min(totalLines, offset + limit - 1)
  for (; n <= last; n++) {
    const line = numbered(n, lines[n - offset] ?? "")
    if (used + line.length + 1 > room && out.length > 0) break
    out.push(line)
    used += line.length + 1
  }
  const lineEnd = n - 1
  const nextOffset = lineEnd < totalLines ? lineEnd + 1 : null
  const footer =
    nextOffset === null
      ? `(End of file: ${totalLines} lines)`
      : `(Lines ${offset}–${lineEnd} of ${totalLines}. Use offset=${nextOffset} to continue.)`
  return { text: [...out, footer].join("\n"), lineStart: offset, lineEnd, nextOffset }
}

const beyondEnd = (display: string, offset: number, totalLines: number) =>
  new CallError({
    tool: "Read",
    reason: "InvalidArguments",
    detail: `offset ${offset} is beyond the end of ${display}, which has ${totalLines} lines`
  })

/** `.ipynb` as text: each cell's source under a header, then its text outputs (cut), images left out. */
const renderNotebook = (display: string, text: string): Effect.Effect<string, CallError> =>
  Effect.try({
    try: () => {
      const notebook = JSON.parse(text) as { cells?: ReadonlyArray<Record<string, unknown>> }
      const joined = (value: unknown) =>
        Array.isArray(value) ? value.join("") : typeof value === "string" ? value : ""
      const parts: Array<string> = []
      ;(notebook.cells ?? []).forEach((cell, i) => {
        parts.push(
          `# --- cell ${i + 1} (${String(cell.cell_type ?? "unknown")}) ---`,
          joined(cell.source).replace(/\n$/, "")
        )
        for (const output of (cell.outputs as ReadonlyArray<Record<string, unknown>> | undefined) ?? []) {
          const data = output.data as Record<string, unknown> | undefined
          const body = joined(output.text ?? data?.["text/plain"] ?? output.evalue)
          if (body === "") continue
          const cut = body.length > maxCellOutput ? `${body.slice(0, maxCellOutput)}… [output cut]` : body
          parts.push(`# --- output (${String(output.output_type ?? "")}) ---`, cut.replace(/\n$/, ""))
        }
      })
      return parts.join("\n")
    },
    catch: () =>
      new CallError({ tool: "Read", reason: "Failed", detail: `${display} is not a valid notebook (JSON expected)` })
  })

const pdfText = (real: string, display: string): Effect.Effect<string, CallError> =>
  Effect.async<string, CallError>((resume) => {
    const child = execFile(
      "pdftotext",
      ["-layout", "--", real, "-"],
      { timeout: 30_000, maxBuffer: 64 * 1024 * 1024, encoding: "utf8" },
      (error, stdout) => {
        if (error === null) return resume(Effect.succeed(stdout))
        resume(
          Effect.fail(
            (error as NodeJS.ErrnoException).code === "ENOENT"
              ? new CallError({
                  tool: "Read",
                  reason: "BackendMissing",
                  detail: `${display} is a PDF: reading PDFs needs pdftotext (poppler-utils) on PATH, and it is not there`
                })
              : new CallError({
                  tool: "Read",
                  reason: "Failed",
                  detail: `pdftotext failed on ${display}: ${error.message}`
                })
          )
        )
      }
    )
    return Effect.sync(() => child.kill("SIGKILL"))
  })

/** A text file too big to hold: streamed, keeping only the requested lines, hashing everything. */
const streamRange = (
  resolved: Roots.Resolved,
  offset: number,
  limit: number
): Effect.Effect<
  { readonly lines: ReadonlyArray<string>; readonly total: number; readonly sha256: string },
  CallError
> =>
  Effect.async((resume) => {
    // Only reached for a regular file (checked just before).
    const stream = NodeFs.createReadStream(resolved.real)
    const hash = Crypto.createHash("sha256")
    stream.on("data", (chunk) => hash.update(chunk as Buffer))
    const lines: Array<string> = []
    let total = 0
    const reader = Readline.createInterface({ input: stream, crlfDelay: Infinity })
    reader.on("line", (line) => {
      total++
      if (total >= offset && total < offset + limit)
        lines.push(line.length > maxLineLength * 2 ? line.slice(0, maxLineLength * 2) : line)
    })
    reader.on("close", () => resume(Effect.succeed({ lines, total, sha256: hash.digest("hex") })))
    stream.on("error", (cause) => resume(Effect.fail(Files.failure("Read", resolved.display, cause))))
    return Effect.sync(() => stream.destroy())
  })

export const Read = defineTool({
  name: "Read",
  description:
    "Read a file under the allowed roots: text with real line numbers (cat -n style), a range with offset/limit; images (PNG, JPEG, GIF, WebP) as image content; Jupyter notebooks as cells with their outputs; PDFs as text when pdftotext is installed. Refuses directories (use Glob), devices, FIFOs and binary files.",
  keywords: [
    "read",
    "file",
    "open",
    "view",
    "show",
    "cat",
    "contents",
    "lines",
    "image",
    "notebook",
    "pdf",
    "print",
    "look"
  ],
  category: "file",
  usageHint:
    "Pass file_path (absolute or relative to the first root). Long files come in windows of 2000 lines: follow the footer's offset= to continue, or pass offset/limit for a range. Read a file before Edit or Write changes it. Numbers before the tab are line numbers, not file content.",
  alwaysLoad: true,
  annotations: {
    title: "Read file",
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false
  },
  input: ReadInput,
  output: ReadOutput,
  handler: (input, context) =>
    Effect.gen(function* () {
      const roots = yield* context.roots
      const resolved = yield* Roots.resolve("Read", input.file_path, roots)
      const stat = yield* Files.requireFile("Read", resolved)
      const offset = input.offset ?? 1
      const limit = input.limit ?? defaultLimit
      const ranged = input.offset !== undefined || input.limit !== undefined
      // Room for the text once the structured content (a few hundred characters) is counted.
      const room = context.maxOutput - 600
      const path = resolved.display

      if (stat.size > maxWholeBytes) {
        if (!ranged) {
          return yield* new CallError({
            tool: "Read",
            reason: "TooLarge",
            detail: `${path} is ${stat.size.toLocaleString("en-US")} bytes (over ${maxWholeBytes.toLocaleString("en-US")}): read a range with offset and limit, or search it with Grep`
          })
        }
        const streamed = yield* streamRange(resolved, offset, limit)
        if (offset > Math.max(streamed.total, 1)) return yield* beyondEnd(path, offset, streamed.total)
        context.ledger.record(resolved.real, { mtimeMs: stat.mtimeMs, size: stat.size, sha256: streamed.sha256 })
        const window = windowOf(streamed.lines, streamed.total, offset, limit, room)
        const structured: ReadOutput = {
          path,
          kind: "text",
          sizeBytes: stat.size,
          sha256: streamed.sha256,
          totalLines: streamed.total,
          lineStart: window.lineStart,
          lineEnd: window.lineEnd,
          nextOffset: window.nextOffset,
          truncated: window.nextOffset !== null
        }
        return Budget.fitResult({ text: window.text, structured }, context.maxOutput, `pass offset=${window.lineStart}`)
      }

      const bytes = yield* Files.readChecked("Read", resolved, stat)
      const stamp = stampOf(stat, bytes)
      context.ledger.record(resolved.real, stamp)
      const base = { path, sizeBytes: bytes.length, sha256: stamp.sha256 }

      const mimeType = imageType(bytes)
      if (mimeType !== undefined) {
        if (bytes.length > maxImageBytes) {
          return yield* new CallError({
            tool: "Read",
            reason: "TooLarge",
            detail: `${path} is an image of ${bytes.length.toLocaleString("en-US")} bytes (over ${maxImageBytes.toLocaleString("en-US")}); resize it first (e.g. with Bash)`
          })
        }
        const structured: ReadOutput = {
          ...base,
          kind: "image",
          totalLines: 0,
          lineStart: 0,
          lineEnd: 0,
          nextOffset: null,
          truncated: false,
          mimeType
        }
        return {
          text: `${path}: ${mimeType}, ${bytes.length.toLocaleString("en-US")} bytes (the image follows)`,
          structured,
          content: [{ type: "image" as const, data: bytes.toString("base64"), mimeType }]
        }
      }

      let kind: ReadOutput["kind"] = "text"
      let text: string
      let encoding: string | undefined
      if (isPdf(bytes)) {
        kind = "pdf"
        text = yield* pdfText(resolved.real, path)
      } else {
        if (Files.looksBinary(bytes)) return yield* Files.binaryError("Read", path)
        const decoded = decode(bytes)
        encoding = decoded.encoding
        text = decoded.text
        if (resolved.real.toLowerCase().endsWith(".ipynb")) {
          kind = "notebook"
          text = yield* renderNotebook(path, text)
        }
      }
      const lines = splitLines(text)
      if (lines.length === 0 && offset === 1) {
        const structured: ReadOutput = {
          ...base,
          kind,
          totalLines: 0,
          lineStart: 1,
          lineEnd: 0,
          nextOffset: null,
          truncated: false,
          ...(encoding === undefined ? {} : { encoding, lineEndings: "none" })
        }
        return { text: `(${path} is empty)`, structured }
      }
      if (offset > lines.length) return yield* beyondEnd(path, offset, lines.length)
      const window = windowOf(lines.slice(offset - 1, offset - 1 + limit), lines.length, offset, limit, room)
      const structured: ReadOutput = {
        ...base,
        kind,
        totalLines: lines.length,
        lineStart: window.lineStart,
        lineEnd: window.lineEnd,
        nextOffset: window.nextOffset,
        truncated: window.nextOffset !== null,
        ...(encoding === undefined ? {} : { encoding, lineEndings: Files.lineEndingsOf(text) })
      }
      return Budget.fitResult({ text: window.text, structured }, context.maxOutput, `pass offset=${window.lineStart}`)
    })
})
