import { Either } from "effect"
import * as Fs from "node:fs/promises"
import type { RecentCall } from "../Metrics/Recent.js"
import { rotated } from "./AuditFile.js"
import { isDropped, parse } from "./AuditLine.js"

/** How much of a file's end is read: a few hundred lines, whatever the file's size. */
const tailBytes = 64 * 1024

/** The whole lines among the last `tailBytes` of `file` (a first line cut by the window and an unfinished last line left out). */
const lastLines = async (file: string): Promise<{ readonly lines: ReadonlyArray<string>; readonly whole: boolean }> => {
  const handle = await Fs.open(file, "r")
  try {
    const { size } = await handle.stat()
    const start = Math.max(0, size - tailBytes)
    const buffer = Buffer.alloc(size - start)
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, start)
    const text = buffer.subarray(0, bytesRead).toString("utf8")
    // The writer appends whole lines, but a reader can meet one half written: only what ends in a newline counts.
    const lines = text.slice(0, text.lastIndexOf("\n") + 1).split("\n")
    lines.pop()
    if (start > 0) lines.shift()
    return { lines, whole: start === 0 }
  } finally {
    await handle.close()
  }
}

const recentOf = (line: string): RecentCall | undefined => {
  const parsed = parse(line)
  if (Either.isLeft(parsed) || isDropped(parsed.right)) return undefined
  const entry = parsed.right
  const at = Date.parse(entry.time)
  return Number.isNaN(at)
    ? undefined
    : {
        at,
        source: entry.instance ?? "unknown",
        tool: entry.tool,
        outcome: entry.outcome,
        durationMs: entry.duration_ms,
        traceId: entry.trace_id
      }
}

/**
 * The last `limit` calls of the audit log (issue 29's recent calls; oldest first), read from its end: every clawtool
 * writing the file counts, and so do calls before a restart. When the file holds fewer, the newest rotated file
 * (`<file>.1`) gives the rest. Lines that are not calls (`{"dropped": N}`, a damaged line) are skipped. Undefined when
 * the file cannot be read (not written yet): the caller has its own memory of calls.
 */
export const tail = async (file: string, limit: number): Promise<ReadonlyArray<RecentCall> | undefined> => {
  const newest = await lastLines(file).catch(() => undefined)
  if (newest === undefined) return undefined
  let calls = newest.lines.flatMap((line) => recentOf(line) ?? [])
  if (calls.length < limit && newest.whole) {
    const older = await lastLines(rotated(file, 1)).catch(() => undefined)
    if (older !== undefined) calls = [...older.lines.flatMap((line) => recentOf(line) ?? []), ...calls]
  }
  return calls.slice(-limit)
}

/**
 * `tail` read again only when the file changed (its size or modification time): the dashboard asks every second while
 * a page is open.
 */
export const cachedTail = (file: string, limit: number) => {
  let seen = ""
  let last: ReadonlyArray<RecentCall> | undefined
  return async (): Promise<ReadonlyArray<RecentCall> | undefined> => {
    const stat = await Fs.stat(file).catch(() => undefined)
    const key = stat === undefined ? "" : `${stat.size}:${stat.mtimeMs}:${stat.ino}`
    if (key !== seen) {
      seen = key
      last = key === "" ? undefined : await tail(file, limit)
    }
    return last
  }
}
