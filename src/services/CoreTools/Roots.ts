import type * as NodeFs from "node:fs"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { CallError } from "../../domain/Errors.js"

/**
 * The one path check of the file tools (core-tools reference §1.3): a path is used only when it lies under an allowed
 * root, checked twice: lexically (after resolving `..` and `//`), then as its real path after symlinks, so neither
 * `../../etc/passwd`, an absolute path elsewhere, `/proc/self/root/…` nor a symlink pointing out gets through. A path
 * that does not exist yet (Write) is judged by its nearest existing ancestor.
 */

export interface Resolved {
  /** The path as given, made absolute (what the lexical check saw). */
  readonly absolute: string
  /** The real path: symlinks resolved; for a path that does not exist, its real nearest ancestor plus the rest. */
  readonly real: string
  /** The root it lies under (a real path). */
  readonly root: string
  /** What agents see: relative to the first root (forward slashes), else absolute (see `display`). */
  readonly display: string
  /** `stat` of the real path; undefined when nothing exists there yet. */
  readonly stat: NodeFs.Stats | undefined
}

/** `path` is `root` or inside it, on a separator boundary (`/a/bc` is not inside `/a/b`). */
export const isWithin = (root: string, path: string): boolean =>
  path === root || path.startsWith(root.endsWith(Path.sep) ? root : root + Path.sep)

export const rootOf = (roots: ReadonlyArray<string>, path: string): string | undefined =>
  roots.find((root) => isWithin(root, path))

/**
 * Relative to the first root (forward slashes; "." for the root itself), where relative tool paths resolve, so a
 * shown path can be passed back as it is; absolute under the other roots.
 */
export const display = (roots: ReadonlyArray<string>, path: string): string => {
  const first = roots[0]
  if (first === undefined || !isWithin(first, path)) return path
  const relative = Path.relative(first, path).split(Path.sep).join("/")
  return relative === "" ? "." : relative
}

const rootList = (roots: ReadonlyArray<string>) => (roots.length === 0 ? "none" : roots.join(", "))

const outside = (tool: string, input: string, roots: ReadonlyArray<string>, why: string) =>
  new CallError({
    tool,
    reason: "OutsideRoots",
    detail: `${JSON.stringify(input)} ${why}; the allowed roots are: ${rootList(roots)}`
  })

const code = (cause: unknown): string | undefined =>
  typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : undefined

const failed = (tool: string, input: string, cause: unknown) =>
  new CallError({
    tool,
    reason: "Failed",
    detail: `${JSON.stringify(input)}: ${code(cause) === "ENOTDIR" ? "a parent of it is not a directory" : cause instanceof Error ? cause.message : String(cause)}`
  })

/** `~` and `~/x` are the home directory's; everything else is left as it is. */
const expandHome = (path: string) => (path === "~" || path.startsWith("~/") ? Os.homedir() + path.slice(1) : path)

const tryPromise = <A>(tool: string, input: string, run: () => Promise<A>) =>
  Effect.tryPromise({ try: run, catch: (cause) => failed(tool, input, cause) })

/** The real path of an existing path, or undefined when it does not exist (ENOENT). */
const realpathIfAny = (tool: string, input: string, path: string) =>
  Effect.tryPromise({ try: () => Fs.realpath(path), catch: (cause) => cause }).pipe(
    Effect.catchAll((cause) =>
      code(cause) === "ENOENT" ? Effect.succeed(undefined) : Effect.fail(failed(tool, input, cause))
    )
  )

export interface ResolveOptions {
  /** Relative paths resolve against this directory (itself checked by the caller); default the first root. */
  readonly base?: string
  /** A path that may not exist yet is accepted, judged by its nearest existing ancestor (Write). */
  readonly write?: boolean
}

/**
 * Checks `input` against `roots` (real paths) for `tool`, refusing with an OutsideRoots error that names the roots.
 * A missing path is returned with `stat` undefined; a dangling symlink is refused (nothing can be known of its target).
 */
export const resolve = (
  tool: string,
  input: string,
  roots: ReadonlyArray<string>,
  options: ResolveOptions = {}
): Effect.Effect<Resolved, CallError> =>
  Effect.gen(function* () {
    if (input.includes("\0")) return yield* outside(tool, input.replace(/\0/g, "\\0"), roots, "contains a NUL byte")
    if (roots.length === 0) return yield* outside(tool, input, roots, "cannot be used: no allowed root exists")
    const base = options.base ?? roots[0]!
    const absolute = Path.resolve(base, expandHome(input))
    if (rootOf(roots, absolute) === undefined) return yield* outside(tool, input, roots, "is outside the allowed roots")

    const real = yield* realpathIfAny(tool, input, absolute)
    if (real !== undefined) {
      const root = rootOf(roots, real)
      if (root === undefined) {
        return yield* outside(tool, input, roots, `leads outside the allowed roots (its real path is ${real})`)
      }
      const stat = yield* tryPromise(tool, input, () => Fs.stat(real))
      return { absolute, real, root, display: display(roots, absolute), stat }
    }

    // Nothing at the real path: a dangling symlink, or a path to create. The nearest existing ancestor decides.
    const link = yield* Effect.tryPromise({ try: () => Fs.lstat(absolute), catch: (cause) => cause }).pipe(
      Effect.option
    )
    if (link._tag === "Some") {
      return yield* outside(tool, input, roots, "is a symbolic link to nothing; refusing to follow it")
    }
    const rest: Array<string> = [Path.basename(absolute)]
    let ancestor = Path.dirname(absolute)
    let realAncestor = yield* realpathIfAny(tool, input, ancestor)
    while (realAncestor === undefined && ancestor !== Path.dirname(ancestor)) {
      rest.unshift(Path.basename(ancestor))
      ancestor = Path.dirname(ancestor)
      realAncestor = yield* realpathIfAny(tool, input, ancestor)
    }
    const target = Path.join(realAncestor ?? ancestor, ...rest)
    const root = rootOf(roots, target)
    if (root === undefined) {
      return yield* outside(tool, input, roots, `leads outside the allowed roots (its real path would be ${target})`)
    }
    return { absolute, real: target, root, display: display(roots, absolute), stat: undefined }
  })

/**
 * Roots as real directory paths: `file://` URIs (MCP roots) and `~` understood, relative ones against `base`. A root
 * that does not exist or is not a directory is dropped, with the reason returned for a log line.
 */
export const normalize = (
  candidates: ReadonlyArray<string>,
  base: string
): Effect.Effect<{ readonly roots: ReadonlyArray<string>; readonly dropped: ReadonlyArray<string> }> =>
  Effect.gen(function* () {
    const roots: Array<string> = []
    const dropped: Array<string> = []
    for (const candidate of candidates) {
      const path = Effect.try(() =>
        candidate.startsWith("file:") ? fileURLToPath(candidate) : Path.resolve(base, expandHome(candidate))
      )
      const real = yield* path.pipe(
        Effect.flatMap((absolute) => Effect.tryPromise(() => Fs.realpath(absolute))),
        Effect.flatMap((real) =>
          Effect.tryPromise(() => Fs.stat(real)).pipe(
            Effect.flatMap((stat) => (stat.isDirectory() ? Effect.succeed(real) : Effect.fail("not a directory")))
          )
        ),
        Effect.either
      )
      if (real._tag === "Right") {
        if (!roots.includes(real.right)) roots.push(real.right)
      } else {
        dropped.push(`${candidate}: ${real.left instanceof Error ? real.left.message : String(real.left)}`)
      }
    }
    return { roots, dropped }
  })
