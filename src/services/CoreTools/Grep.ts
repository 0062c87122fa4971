import * as Fs from "node:fs/promises"
import { Effect, Schema } from "effect"
import { CallError } from "../../domain/Errors.js"
import { defineTool } from "./Manifest.js"
import * as Budget from "./Budget.js"
import * as Ripgrep from "./Ripgrep.js"
import * as Roots from "./Roots.js"

export const defaultHeadLimit = 100
/** Longest line shown; longer ones are cut with a marker. */
export const maxColumns = 500

const Context = Schema.Number.pipe(Schema.int(), Schema.between(0, 20))

const GrepInput = Schema.Struct({
  pattern: Schema.String.pipe(Schema.minLength(1)).annotations({
    description: "A regular expression (ripgrep syntax): escape . ( [ to match them literally"
  }),
  path: Schema.optional(
    Schema.String.annotations({ description: "A file or folder to search (default: the first root)" })
  ),
  glob: Schema.optional(
    Schema.String.annotations({ description: 'Only files matching this glob, e.g. "*.ts" or "!**/test/**"' })
  ),
  type: Schema.optional(
    Schema.String.pipe(
      Schema.pattern(/^[A-Za-z0-9_+-]+$/, { message: () => "type is a ripgrep file type name, like ts, py or rust" })
    ).annotations({ description: "Only files of this ripgrep type: ts, js, py, rust, go, java, md, …" })
  ),
  output_mode: Schema.optionalWith(
    Schema.Literal("content", "files_with_matches", "count").annotations({
      description: "files_with_matches (default): the files, newest first; content: the matching lines; count: per file"
    }),
    { default: () => "files_with_matches" as const }
  ),
  "-i": Schema.optional(Schema.Boolean.annotations({ description: "Case-insensitive" })),
  "-n": Schema.optional(Schema.Boolean.annotations({ description: "Line numbers in content mode (default true)" })),
  "-A": Schema.optional(Context.annotations({ description: "Lines after each match (content mode)" })),
  "-B": Schema.optional(Context.annotations({ description: "Lines before each match (content mode)" })),
  "-C": Schema.optional(Context.annotations({ description: "Lines before and after each match (content mode)" })),
  head_limit: Schema.optional(
    Schema.Number.pipe(Schema.int(), Schema.between(1, 10_000)).annotations({
      description: `At most this many lines, files or counts (default ${defaultHeadLimit})`
    })
  )
})

const GrepOutput = Schema.Struct({
  mode: Schema.Literal("content", "files_with_matches", "count"),
  /** Files (files_with_matches: newest first), or files with a match in the other modes. */
  files: Schema.Array(Schema.String),
  /** Matching lines (content), files (files_with_matches) or the sum of the counts (count), as far as read. */
  count: Schema.Number,
  truncated: Schema.Boolean
})
type GrepOutput = typeof GrepOutput.Type

interface JsonLine {
  readonly type: string
  readonly data?: {
    readonly path?: unknown
    readonly lines?: unknown
    readonly line_number?: number
  }
}

export const Grep = defineTool({
  name: "Grep",
  description:
    "Search file contents under the allowed roots with ripgrep (regular expressions; .gitignore honoured, binary files skipped). Output modes: files_with_matches (default, newest first), content (matching lines with line numbers and optional context), count.",
  keywords: [
    "grep",
    "search",
    "find",
    "contents",
    "regex",
    "text",
    "code",
    "ripgrep",
    "rg",
    "occurrences",
    "contain",
    "mention",
    "match",
    "usage",
    "references",
    "word",
    "count"
  ],
  category: "file",
  usageHint:
    'Start with files_with_matches, then output_mode "content" with -C 2 on the files that matter. Narrow with glob ("*.ts") or type ("py"). The pattern is a regex: escape . ( [ { for literal text. Use Glob to find files by name.',
  alwaysLoad: true,
  annotations: {
    title: "Search contents",
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false
  },
  input: GrepInput,
  output: GrepOutput,
  handler: (input, context) =>
    Effect.gen(function* () {
      const roots = yield* context.roots
      const target = yield* Roots.resolve("Grep", input.path ?? ".", roots)
      if (target.stat === undefined) {
        return yield* new CallError({
          tool: "Grep",
          reason: "NotFound",
          detail: `no such file or folder: ${target.display}`
        })
      }
      if (!target.stat.isFile() && !target.stat.isDirectory()) {
        return yield* new CallError({
          tool: "Grep",
          reason: "NotRegularFile",
          detail: `${target.display} is not a regular file or folder (a device, FIFO or socket)`
        })
      }
      const mode = input.output_mode
      const limit = input.head_limit ?? defaultHeadLimit
      const numbers = input["-n"] ?? true
      const args = [
        "--no-config",
        // .gitignore and .ignore apply in any folder, as in Glob (rg alone honours .gitignore only inside git).
        "--no-require-git",
        "--color=never",
        "--max-filesize=10M",
        ...(input["-i"] === true ? ["--ignore-case"] : []),
        ...(input.type === undefined ? [] : [`--type=${input.type}`]),
        // One argument each: a glob or type can never become a flag of its own.
        ...(input.glob === undefined ? [] : [`--glob=${input.glob}`]),
        ...(mode === "files_with_matches" ? ["--files-with-matches", "--null"] : []),
        ...(mode === "count" ? ["--count", "--null", "--with-filename"] : []),
        ...(mode === "content"
          ? [
              "--json",
              ...(input["-C"] === undefined ? [] : [`--context=${input["-C"]}`]),
              ...(input["-A"] === undefined ? [] : [`--after-context=${input["-A"]}`]),
              ...(input["-B"] === undefined ? [] : [`--before-context=${input["-B"]}`])
            ]
          : []),
        "--regexp",
        input.pattern,
        // The path is absolute and after `--`: never a flag (`--pre=…` would run a program on every file).
        "--",
        target.real
      ]

      // files_with_matches and count: absolute paths as rg prints them; content: shown paths.
      const files: Array<string> = []
      const counts: Array<number> = []
      const lines: Array<string> = []
      let matches = 0
      let lastFile: string | undefined
      let lastLine = -1
      const onRecord = (record: string): boolean => {
        if (mode === "files_with_matches") {
          if (record !== "") files.push(record)
          return files.length < limit
        }
        if (mode === "count") {
          const nul = record.indexOf("\0")
          if (nul === -1) return true
          files.push(record.slice(0, nul))
          counts.push(Number(record.slice(nul + 1)))
          return files.length < limit
        }
        if (record === "") return true
        const line = JSON.parse(record) as JsonLine
        if (line.type !== "match" && line.type !== "context") return true
        const path = Roots.display(roots, Ripgrep.textOf(line.data?.path))
        const number = line.data?.line_number ?? 0
        const whole = Ripgrep.textOf(line.data?.lines).replace(/\r?\n$/, "")
        // --max-columns does not apply to --json output.
        const body =
          whole.length <= maxColumns
            ? whole
            : `${whole.slice(0, maxColumns)}… [line cut: ${whole.length.toLocaleString("en-US")} characters]`
        if (lastFile !== path) {
          if (lastFile !== undefined) lines.push("--")
          files.push(path)
        } else if (number > lastLine + 1) lines.push("--")
        lastFile = path
        lastLine = number
        const separator = line.type === "match" ? ":" : "-"
        lines.push(numbers ? `${path}${separator}${number}${separator}${body}` : `${path}${separator}${body}`)
        if (line.type === "match") matches++
        return lines.length < limit
      }
      const cwd = target.stat.isDirectory() ? target.real : roots[0]!
      const separator = mode === "files_with_matches" ? "\0" : "\n"
      const result = yield* Ripgrep.run("Grep", args, { cwd, separator, timeout: "30 seconds", onRecord })
      if (result.exitCode === 2 && files.length === 0 && !result.stopped) {
        return yield* new CallError({
          tool: "Grep",
          reason: "Failed",
          detail: `ripgrep failed: ${result.stderr.slice(0, 1000) || "exit code 2"}`
        })
      }

      let shown: ReadonlyArray<string>
      let listed: ReadonlyArray<string>
      let count: number
      if (mode === "files_with_matches") {
        // Newest first, as Glob.
        const stamped = yield* Effect.forEach(
          files,
          (path) =>
            Effect.promise(() =>
              Fs.stat(path).then(
                (stat) => ({ path, mtimeMs: stat.mtimeMs }),
                () => ({ path, mtimeMs: 0 })
              )
            ),
          { concurrency: 32 }
        )
        stamped.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.path < b.path ? -1 : 1))
        shown = listed = stamped.map((entry) => Roots.display(roots, entry.path))
        count = shown.length
      } else if (mode === "count") {
        listed = files.map((path) => Roots.display(roots, path))
        shown = listed.map((path, i) => `${path}:${counts[i]}`)
        count = counts.reduce((sum, n) => sum + n, 0)
      } else {
        shown = lines
        listed = files
        count = matches
      }
      const truncated = result.stopped || result.timedOut
      const notes = [
        ...(result.timedOut ? ["(ripgrep timed out after 30 s: narrow path, glob or pattern)"] : []),
        ...(result.stopped && !result.timedOut
          ? [`(stopped at head_limit=${limit}: raise it, or narrow path, glob or pattern)`]
          : []),
        ...(result.exitCode === 2 ? [`(some files could not be searched: ${result.stderr.split("\n")[0]})`] : [])
      ]
      const text = shown.length === 0 ? "(no matches)" : [...shown, ...notes].join("\n")
      // The file list is in both channels: the structured one keeps what leaves the text at least half the budget.
      let structured: GrepOutput = { mode, files: listed, count, truncated }
      while (Budget.sizeOf(structured) > context.maxOutput / 2 && structured.files.length > 0) {
        structured = {
          ...structured,
          files: structured.files.slice(0, Math.floor(structured.files.length / 2)),
          truncated: true
        }
      }
      return Budget.fitResult(
        { text, structured },
        context.maxOutput,
        "narrow path, glob or pattern, or lower head_limit"
      )
    })
})
