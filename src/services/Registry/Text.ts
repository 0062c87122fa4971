import type { HealthRow } from "../../domain/Health.js"
import type { Collision } from "./NameBudget.js"

/** Columns padded to the widest cell; the last column is not padded. */
export const renderTable = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((row) => (row[i] ?? "").length)))
  const line = (row: ReadonlyArray<string>) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd()
  return [line(header), ...rows.map(line)].join("\n")
}

export const oneLine = (text: string, max = 80) => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

export const healthTable = (rows: ReadonlyArray<HealthRow>): string =>
  rows.length === 0
    ? "(no sources configured: add [sources.<name>] to the config, see README)"
    : renderTable(
        ["NAME", "STATUS", "TOOLS", "STARTUP", "RESTARTS", "PACKAGE", "REASON"],
        rows.map((row) => [
          row.name,
          row.status,
          String(row.toolCount),
          row.startupMs === null ? "-" : `${row.startupMs}ms`,
          String(row.restarts),
          row.package,
          oneLine(row.reason)
        ])
      )

/** One line per collision: `name collision on "x__y": kept a.y; not served: b.y`. */
export const collisionLines = (collisions: ReadonlyArray<Collision>): ReadonlyArray<string> =>
  collisions.map(
    (collision) =>
      `name collision on "${collision.wire}": kept ${collision.kept}; not served: ${collision.dropped.join(", ")}`
  )

/** The catalog line of `health` and `tools list`. */
export const catalogLine = (hash: string, listed: number): string =>
  `catalog sha256:${hash} (${listed} tool${listed === 1 ? "" : "s"} listed)`
