import { Command, Options } from "@effect/cli"
import { Clock, Console, Duration, Effect, Either, Option, Schema } from "effect"
import * as Fs from "node:fs"
import { DurationString } from "../../domain/Duration.js"
import { StaticLive } from "../../layers/Main.js"
import { auditPath } from "../../services/Audit.js"
import { Config, ProcessEnv } from "../../services/Config.js"
import { rotated } from "../../services/Trust/AuditFile.js"
import * as AuditLine from "../../services/Trust/AuditLine.js"
import { renderTable } from "../../text.js"
import { config, ExitStatus, json } from "../Shared.js"

const follow = Options.boolean("follow").pipe(
  Options.withAlias("f"),
  Options.withDescription("Keep printing lines as they are written (across a rotation) until interrupted")
)
const since = Options.text("since").pipe(
  Options.withPseudoName("DURATION"),
  Options.optional,
  Options.withDescription(`Only calls from this long ago on: "90s", "10m", "2h"`)
)
const tool = Options.text("tool").pipe(
  Options.withPseudoName("SELECTOR"),
  Options.optional,
  Options.withDescription(`Only calls of "<instance>.<tool>", of "<instance>.*", or of a core tool ("Bash")`)
)

type Line = AuditLine.Entry | AuditLine.Dropped

/** What a terminal must not interpret: a tool name is the source's text (CWE-117). */
const printable = (text: string) => text.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, "?")

const header = ["TIME", "CLIENT", "SESSION", "TOOL", "OUTCOME", "MS", "IN", "OUT"]

const row = (line: Line): ReadonlyArray<string> =>
  AuditLine.isDropped(line)
    ? [line.time, "", "", `(${line.dropped} lines dropped: the queue was full)`, "", "", "", ""]
    : [
        line.time,
        printable(line.client ?? "-"),
        printable(line.session ?? "-"),
        printable(
          line.instance === undefined || line.instance === "core" ? line.tool : `${line.instance}.${line.tool}`
        ),
        line.outcome,
        String(line.duration_ms),
        String(line.bytes_in),
        String(line.bytes_out)
      ]

/** The lines of `text` that pass the filters; a line that is not an audit line is skipped with a note naming file:line. */
const readText = (text: string, file: string, firstLine: number, keep: (line: Line) => boolean) =>
  Effect.gen(function* () {
    const lines: Array<Line> = []
    const parts = text.split("\n")
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!
      if (part.trim() === "") continue
      const parsed = AuditLine.parse(part)
      if (Either.isLeft(parsed)) {
        yield* Console.error(`note: ${file}:${firstLine + i}: skipped (${parsed.left})`)
        continue
      }
      if (keep(parsed.right)) lines.push(parsed.right)
    }
    return lines
  })

const readFile = (file: string) => {
  try {
    return Fs.readFileSync(file, "utf8")
  } catch {
    return undefined
  }
}

const print = (lines: ReadonlyArray<Line>, asJson: boolean, withHeader: boolean) => {
  if (lines.length === 0) return Effect.void
  if (asJson) return Console.log(lines.map((line) => JSON.stringify(line)).join("\n"))
  const table = renderTable(header, lines.map(row))
  return Console.log(withHeader ? table : table.slice(table.indexOf("\n") + 1))
}

/**
 * Follows the file: new complete lines as they are appended; a rotation (the file replaced) first finishes the old one
 * (now `<file>.1`), then reads the new one from its start.
 */
const followFile = (file: string, read: string, keep: (line: Line) => boolean, asJson: boolean) =>
  Effect.gen(function* () {
    let inode = Fs.statSync(file, { throwIfNoEntry: false })?.ino
    // From the end of the last whole line already printed.
    let offset = read.lastIndexOf("\n") + 1
    let lineNo = read.slice(0, offset).split("\n").length
    const readFrom = (path: string, from: number) => {
      const text = readFile(path) ?? ""
      const end = text.lastIndexOf("\n") + 1
      return end <= from ? { text: "", end: Math.min(from, end) } : { text: text.slice(from, end), end }
    }
    for (;;) {
      yield* Effect.sleep("250 millis")
      const stat = Fs.statSync(file, { throwIfNoEntry: false })
      if (stat !== undefined && inode !== undefined && stat.ino !== inode) {
        const old = rotated(file, 1)
        if (Fs.statSync(old, { throwIfNoEntry: false })?.ino === inode) {
          const rest = readFrom(old, offset)
          yield* print(yield* readText(rest.text, old, lineNo, keep), asJson, false)
        }
        offset = 0
        lineNo = 1
      }
      // Between a rotation's rename and the new file: the old inode is kept, so the rotation is seen once it appears.
      if (stat === undefined) continue
      inode = stat.ino
      const next = readFrom(file, offset)
      // Emptied in place (truncated): from its start.
      if (next.end < offset) {
        offset = 0
        lineNo = 1
        continue
      }
      if (next.text === "") continue
      yield* print(yield* readText(next.text, file, lineNo, keep), asJson, false)
      lineNo += next.text.split("\n").length - 1
      offset = next.end
    }
  })

export const audit = Command.make("audit", { config, json, follow, since, tool }, (options) =>
  Effect.gen(function* () {
    const loaded = yield* Config
    const file = auditPath(loaded.config.audit, loaded.path, yield* ProcessEnv)
    const window = Option.map(options.since, (text) => Schema.decodeUnknownEither(DurationString)(text))
    if (Option.isSome(window) && Either.isLeft(window.value)) {
      yield* Console.error(
        `clawtool: --since is a duration like "90s", "10m" or "2h", got ${JSON.stringify(Option.getOrUndefined(options.since))}`
      )
      return yield* new ExitStatus({ code: 2 })
    }
    const now = yield* Clock.currentTimeMillis
    const from = Option.map(Option.flatMap(window, Either.getRight), (duration) => now - Duration.toMillis(duration))
    const keep = (line: Line) =>
      (Option.isNone(from) || Date.parse(line.time) >= from.value) &&
      (Option.isNone(options.tool) || (!AuditLine.isDropped(line) && AuditLine.matches(options.tool.value, line)))
    // Rotated files first, the oldest (highest number) first, then the file being written.
    const files = [
      ...Array.from({ length: loaded.config.audit.keep }, (_, i) => rotated(file, loaded.config.audit.keep - i)),
      file
    ]
    const lines: Array<Line> = []
    let current = ""
    for (const each of files) {
      const text = readFile(each)
      if (text !== undefined) lines.push(...(yield* readText(text.slice(0, text.lastIndexOf("\n") + 1), each, 1, keep)))
      if (each === file) current = text ?? ""
    }
    if (lines.length === 0 && !options.follow) {
      return yield* Console.error(`no audit lines${Fs.existsSync(file) ? "" : ` (${file} does not exist yet)`}`)
    }
    yield* print(lines, options.json, true)
    if (options.follow) yield* followFile(file, current, keep, options.json)
  }).pipe(Effect.provide(StaticLive({ config: options.config, secrets: Option.none() })))
).pipe(
  Command.withDescription(
    "Print the audit log: one line per tools/call (time, host client, session, tool, outcome, duration, bytes in and out), rotated files included, oldest first. The file is [audit] path, default $XDG_STATE_HOME/clawtool/audit.jsonl ($CLAWTOOL_STATE_DIR/audit.jsonl when set). A line that cannot be read is skipped with a note naming file:line."
  )
)
