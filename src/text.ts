import type { HealthRow } from "./domain/Health.js"
import type { Collision } from "./domain/ToolProvider.js"

/** Columns padded to the widest cell; no blanks at the end of a line (so the last column is not padded). */
export const renderTable = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((row) => (row[i] ?? "").length)))
  const line = (row: ReadonlyArray<string>) =>
    row
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd()
  return [line(header), ...rows.map(line)].join("\n")
}

export const oneLine = (text: string, max = 80) => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

/** Node's last line after an uncaught error: its version, never the reason. */
const nodeTrailer = /^Node\.js v\d/

/**
 * The stderr line that says why a child is not running: the last one that is not blank, not indented (a stack frame,
 * an error's properties) and not a lone `}` or Node's `Node.js vNN` trailer, so an uncaught Node error shows its
 * `Error: …` line and a Python traceback its last line; else the last non-blank line. None for an empty tail.
 */
export const stderrHint = (tail: ReadonlyArray<string>): string | undefined => {
  const lines = tail.filter((line) => line.trim() !== "" && !nodeTrailer.test(line))
  const said = lines.filter((line) => !/^\s/.test(line) && line.trim() !== "}")
  return said.at(-1) ?? lines.at(-1)
}

/** Lines wider than a terminal are cut there; a pipe or a file gets them whole. */
const terminalWidth = (): number | undefined =>
  process.stdout.isTTY === true && process.stdout.columns > 0 ? process.stdout.columns : undefined

const cut = (line: string, width: number | undefined) =>
  width === undefined || line.length <= width ? line : `${line.slice(0, Math.max(width - 1, 0))}…`

/**
 * The reason of a row and, for a source that is not running, its child's last stderr line beside it (what a missing
 * module or a bad flag printed), on one line.
 */
const reasonCell = (row: HealthRow): string => {
  const hint = row.status === "running" ? undefined : stderrHint(row.stderrTail)
  const held =
    row.quarantined === 0
      ? ""
      : `${row.quarantined} tool${row.quarantined === 1 ? "" : "s"} quarantined (clawtool trust status)`
  return [row.reason, held, hint ?? ""]
    .map((text) => oneLine(text, Infinity))
    .filter((text) => text !== "")
    .join(" — ")
}

/** `width`: the terminal's when stdout is one (lines are cut to it), else none (whole lines). */
export const healthTable = (rows: ReadonlyArray<HealthRow>, width: number | undefined = terminalWidth()): string =>
  rows.length === 0
    ? "(no sources configured: add [sources.<name>] to the config, see README)"
    : renderTable(
        ["NAME", "STATUS", "ERA", "TOOLS", "STARTUP", "RESTARTS", "PACKAGE", "REASON"],
        rows.map((row) => [
          row.name,
          row.status,
          row.era ?? "-",
          String(row.toolCount),
          row.startupMs === null ? "-" : `${row.startupMs}ms`,
          String(row.restarts),
          row.package === "" ? "-" : row.package,
          reasonCell(row)
        ])
      )
        .split("\n")
        .map((line) => cut(line, width))
        .join("\n")

/** One line per collision: `name collision on "x__y": kept a.y; not served: b.y`. */
export const collisionLines = (collisions: ReadonlyArray<Collision>): ReadonlyArray<string> =>
  collisions.map(
    (collision) =>
      `name collision on "${collision.wire}": kept ${collision.kept}; not served: ${collision.dropped.join(", ")}`
  )

/** The catalog line of `health` and `tools list`. */
export const catalogLine = (hash: string, listed: number): string =>
  `catalog sha256:${hash} (${listed} tool${listed === 1 ? "" : "s"} listed)`
