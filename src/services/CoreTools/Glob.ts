import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { Effect, Schema } from "effect"
import { CallError } from "../../domain/Errors.js"
import { defineTool } from "./Manifest.js"
import * as Budget from "./Budget.js"
import * as Ripgrep from "./Ripgrep.js"
import * as Roots from "./Roots.js"

export const defaultLimit = 100
export const maxLimit = 1000
/** The listing stops after this many files (a home directory, a monorepo with its dependencies). */
export const maxCandidates = 100_000

const GlobInput = Schema.Struct({
  pattern: Schema.String.pipe(Schema.minLength(1)).annotations({
    description: 'A glob relative to path, e.g. "**/*.ts" (any depth), "*.json" (top level only), "src/**/*.{ts,tsx}"'
  }),
  path: Schema.optional(
    Schema.String.annotations({ description: "The folder to search in (default: the first root)" })
  ),
  limit: Schema.optional(
    Schema.Number.pipe(Schema.int(), Schema.between(1, maxLimit)).annotations({
      description: `How many files to return, newest first (default ${defaultLimit})`
    })
  )
})

const GlobOutput = Schema.Struct({
  /** Newest first; relative to the first root (as Read takes them). */
  files: Schema.Array(Schema.String),
  /** How many files matched in all. */
  count: Schema.Number,
  truncated: Schema.Boolean
})

/** A pattern that names a dot segment (`**\/.env`, `.github/**`) matches hidden files; others do not. */
const namesDot = (pattern: string) => pattern.split("/").some((segment) => /^\.[^./]/.test(segment))

export const Glob = defineTool({
  name: "Glob",
  description:
    "Find files by name pattern under the allowed roots (glob syntax: **, *, ?, {a,b}, [abc]), newest first. Honours .gitignore, .ignore and git excludes; hidden files only when the pattern names them. Returns paths that Read, Edit and Grep take as they are.",
  keywords: [
    "glob",
    "find",
    "files",
    "list",
    "search",
    "names",
    "pattern",
    "directory",
    "folder",
    "ls",
    "locate",
    "where",
    "extension",
    "recursive"
  ],
  category: "file",
  usageHint:
    'Use to find files by name: "**/*.ts" for every TypeScript file, "src/**/test*" under src. A bare word matches only that exact name at the top: use "**/*config*" for a substring. Use Grep to search file contents.',
  alwaysLoad: true,
  annotations: {
    title: "Find files",
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false
  },
  input: GlobInput,
  output: GlobOutput,
  handler: (input, context) =>
    Effect.gen(function* () {
      const { pattern } = input
      if (Path.isAbsolute(pattern) || pattern.split(/[\\/]/).includes("..")) {
        return yield* new CallError({
          tool: "Glob",
          reason: "InvalidArguments",
          detail: `the pattern ${JSON.stringify(pattern)} must be relative and without "..": pass the folder as path instead`
        })
      }
      const roots = yield* context.roots
      const folder = yield* Roots.resolve("Glob", input.path ?? ".", roots)
      if (folder.stat === undefined || !folder.stat.isDirectory()) {
        return yield* new CallError({
          tool: "Glob",
          reason: folder.stat === undefined ? "NotFound" : "InvalidArguments",
          detail: `${folder.display} is not a folder${folder.stat === undefined ? " (it does not exist)" : ""}`
        })
      }
      const hidden = namesDot(pattern)
      // Loaded with the first Glob, not at start-up.
      const { default: picomatch } = yield* Effect.promise(() => import("picomatch"))
      // picomatch's second argument is not an index: never hand the matcher to Array.filter directly.
      const isMatch = picomatch(pattern, { dot: hidden })
      const matched: Array<string> = []
      let candidates = 0
      const listing = yield* Ripgrep.run(
        "Glob",
        // No path argument (rg lists its cwd), so nothing here can be read as a flag.
        ["--files", "--no-config", "--no-require-git", "--null", ...(hidden ? ["--hidden", "--glob=!.git"] : [])],
        {
          cwd: folder.real,
          separator: "\0",
          timeout: "20 seconds",
          onRecord: (record) => {
            candidates++
            if (isMatch(record)) matched.push(record)
            return candidates < maxCandidates
          }
        }
      )
      if (listing.exitCode === 2 && matched.length === 0 && !listing.stopped) {
        return yield* new CallError({ tool: "Glob", reason: "Failed", detail: `listing failed: ${listing.stderr}` })
      }
      // Newest first; a file that vanished meanwhile or leads out of the roots is dropped.
      const stamped = yield* Effect.forEach(
        matched,
        (relative) =>
          Effect.promise(async () => {
            const absolute = Path.join(folder.real, relative)
            try {
              const link = await Fs.lstat(absolute)
              if (link.isSymbolicLink() && Roots.rootOf(roots, await Fs.realpath(absolute)) === undefined) return []
              return [{ path: Roots.display(roots, absolute), mtimeMs: link.mtimeMs }]
            } catch {
              return []
            }
          }),
        { concurrency: 32 }
      ).pipe(Effect.map((lists) => lists.flat()))
      stamped.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
      const limit = input.limit ?? defaultLimit
      let files = stamped.slice(0, limit).map((entry) => entry.path)
      const stoppedEarly = listing.stopped || listing.timedOut
      const render = () => {
        const truncated = files.length < stamped.length || stoppedEarly
        const notes = [
          ...(files.length < stamped.length
            ? [`(${files.length} of ${stamped.length} files, newest first; narrow the pattern or raise limit)`]
            : []),
          ...(stoppedEarly
            ? [`(the listing stopped after ${candidates.toLocaleString("en-US")} files; search a narrower path)`]
            : [])
        ]
        const text = files.length === 0 ? "(no files match)" : [...files, ...notes].join("\n")
        return { text, structured: { files, count: stamped.length, truncated } }
      }
      let result = render()
      // Paths are in both channels: fewer of them until both fit the budget.
      while (result.text.length + Budget.sizeOf(result.structured) > context.maxOutput && files.length > 1) {
        files = files.slice(0, Math.floor(files.length / 2))
        result = render()
      }
      return result
    })
})
