import * as NodeFs from "node:fs"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { Effect } from "effect"
import { writeFileAtomic } from "../../atomicWrite.js"
import { CallError } from "../../domain/Errors.js"
import type { Resolved } from "./Roots.js"

/** What Read, Edit and Write share: refusing what is not a regular file, reading it safely, writing atomically. */

const code = (cause: unknown): string | undefined =>
  typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : undefined

export const failure = (tool: string, display: string, cause: unknown) =>
  new CallError({
    tool,
    reason: "Failed",
    detail: `${display}: ${
      code(cause) === "EACCES" || code(cause) === "EPERM"
        ? "permission denied"
        : code(cause) === "ENOTDIR"
          ? "a parent of it is not a directory"
          : cause instanceof Error
            ? cause.message
            : String(cause)
    }`
  })

/** Up to three names in the same folder that look like `name` (same stem or extension, or sharing a prefix). */
const nearNames = (absolute: string): Promise<ReadonlyArray<string>> => {
  const folder = Path.dirname(absolute)
  const name = Path.basename(absolute).toLowerCase()
  const stem = name.replace(/\.[^.]*$/, "")
  return Fs.readdir(folder).then(
    (names) =>
      names
        .filter((other) => {
          const lower = other.toLowerCase()
          return lower !== name && (lower.startsWith(stem) || stem.startsWith(lower.replace(/\.[^.]*$/, "")))
        })
        .slice(0, 3),
    () => []
  )
}

/** A path that must exist as a regular file: NotFound (with near names), IsDirectory, NotRegularFile otherwise. */
export const requireFile = (tool: string, resolved: Resolved): Effect.Effect<NodeFs.Stats, CallError> =>
  Effect.gen(function* () {
    const { stat, display } = resolved
    if (stat === undefined) {
      const near = yield* Effect.promise(() => nearNames(resolved.absolute))
      return yield* new CallError({
        tool,
        reason: "NotFound",
        detail: `no such file: ${display}${near.length === 0 ? "" : `; did you mean ${near.join(", ")}?`}`
      })
    }
    if (stat.isDirectory()) {
      return yield* new CallError({
        tool,
        reason: "IsDirectory",
        detail: `${display} is a directory; use Glob to list its files`
      })
    }
    if (!stat.isFile()) {
      return yield* new CallError({
        tool,
        reason: "NotRegularFile",
        detail: `${display} is not a regular file (a device, FIFO or socket); only regular files are read or written`
      })
    }
    return stat
  })

/**
 * Opens the checked real path without blocking (a FIFO swapped in after the check cannot hang the open) and makes
 * sure it is still the file that was checked (same device and inode), then reads it whole.
 */
export const readChecked = (tool: string, resolved: Resolved, stat: NodeFs.Stats): Effect.Effect<Buffer, CallError> =>
  Effect.acquireUseRelease(
    Effect.tryPromise({
      try: () => Fs.open(resolved.real, NodeFs.constants.O_RDONLY | NodeFs.constants.O_NONBLOCK),
      catch: (cause) => failure(tool, resolved.display, cause)
    }),
    (handle) =>
      Effect.gen(function* () {
        const now = yield* Effect.tryPromise({
          try: () => handle.stat(),
          catch: (cause) => failure(tool, resolved.display, cause)
        })
        if (now.dev !== stat.dev || now.ino !== stat.ino || !now.isFile()) {
          return yield* new CallError({
            tool,
            reason: "NotRegularFile",
            detail: `${resolved.display} changed while it was being opened; try again`
          })
        }
        return yield* Effect.tryPromise({
          try: () => handle.readFile(),
          catch: (cause) => failure(tool, resolved.display, cause)
        })
      }),
    (handle) => Effect.promise(() => handle.close().catch(() => undefined))
  )

/**
 * Writes `bytes` to `real` atomically (src/atomicWrite.ts: a temp file in the same real folder, fsync, rename over the
 * target, which replaces a symlink there rather than writing through it; the real path was checked), with the old
 * file's mode.
 */
export const writeAtomic = (
  tool: string,
  display: string,
  real: string,
  bytes: Uint8Array,
  mode: number | undefined
): Effect.Effect<void, CallError> =>
  Effect.tryPromise({
    try: () => writeFileAtomic(real, bytes, { mode }),
    catch: (cause) => failure(tool, display, cause)
  })

export type LineEndings = "lf" | "crlf" | "cr" | "mixed" | "none"

export const lineEndingsOf = (text: string): LineEndings => {
  const crlf = (text.match(/\r\n/g) ?? []).length
  const lf = (text.match(/\n/g) ?? []).length - crlf
  const cr = (text.match(/\r/g) ?? []).length - crlf
  const kinds = [crlf > 0, lf > 0, cr > 0].filter(Boolean).length
  return kinds === 0 ? "none" : kinds > 1 ? "mixed" : crlf > 0 ? "crlf" : lf > 0 ? "lf" : "cr"
}

const utf8Bom = [0xef, 0xbb, 0xbf]
export const hasUtf8Bom = (bytes: Uint8Array) => utf8Bom.every((byte, i) => bytes[i] === byte)
export const utf16Bom = (bytes: Uint8Array): "utf-16le" | "utf-16be" | undefined =>
  bytes[0] === 0xff && bytes[1] === 0xfe ? "utf-16le" : bytes[0] === 0xfe && bytes[1] === 0xff ? "utf-16be" : undefined

/** NUL in the first 8 KB, or more than 30 % control bytes there (UTF-16 with a BOM is text). */
export const looksBinary = (bytes: Uint8Array): boolean => {
  if (utf16Bom(bytes) !== undefined) return false
  const head = bytes.subarray(0, 8192)
  if (head.length === 0) return false
  let control = 0
  for (const byte of head) {
    if (byte === 0) return true
    if (byte < 32 && byte !== 9 && byte !== 10 && byte !== 13 && byte !== 12 && byte !== 27) control++
  }
  return control / head.length > 0.3
}

export const binaryError = (tool: string, display: string) =>
  new CallError({
    tool,
    reason: "Binary",
    detail: `${display} is a binary file; ${tool === "Read" ? "use Bash with xxd or file to inspect it" : "refusing to edit it"}`
  })
