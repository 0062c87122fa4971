/**
 * Surgical edits of TOML text for the management commands (`source add`, `tools disable`, `source set-secret`, …).
 * smol-toml's stringify drops comments and reformats everything, so these functions change only the lines they must
 * and leave every other byte of the user's file as it was. They do not validate: the caller re-parses the whole
 * result with the config loader before writing it.
 */
import { Either } from "effect"
import { parseKeys } from "../services/Config.js"

/** Why an edit cannot be made as text (the file is left as it was). */
export interface EditProblem {
  readonly detail: string
}

/** A TOML string literal: JSON's escapes (\" \\ \n \t \uXXXX …) are all valid in a TOML basic string. */
export const tomlString = (value: string): string => JSON.stringify(value)

/** A bare key when it can be one, else a quoted key. */
export const tomlKey = (key: string): string => (/^[A-Za-z0-9_-]+$/.test(key) ? key : tomlString(key))

export const tomlArray = (values: ReadonlyArray<string>): string => `[${values.map(tomlString).join(", ")}]`

export const tomlInlineTable = (entries: ReadonlyArray<readonly [string, string]>): string =>
  entries.length === 0
    ? "{}"
    : `{ ${entries.map(([key, value]) => `${tomlKey(key)} = ${tomlString(value)}`).join(", ")} }`

/** `[a.b."c.d"]` → ["a", "b", "c.d"]; undefined for a line that is not a table header (`[[…]]` counts as one). */
export const headerKeys = (raw: string): ReadonlyArray<string> | undefined => {
  const line = raw.trim()
  if (!line.startsWith("[")) return undefined
  const open = line.startsWith("[[") ? 2 : 1
  const parsed = parseKeys(line, open)
  if (parsed === undefined || line[parsed.end] !== "]") return undefined
  return parsed.keys
}

/** The dotted key at the start of a `key = value` line, or undefined. */
export const assignmentKeys = (raw: string): ReadonlyArray<string> | undefined => {
  const line = raw.trim()
  if (line === "" || line.startsWith("#") || line.startsWith("[")) return undefined
  const parsed = parseKeys(line, 0)
  return parsed !== undefined && line[parsed.end] === "=" ? parsed.keys : undefined
}

const samePath = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) =>
  a.length === b.length && a.every((key, i) => key === b[i])

const startsWith = (a: ReadonlyArray<string>, prefix: ReadonlyArray<string>) =>
  a.length >= prefix.length && prefix.every((key, i) => key === a[i])

/** Lines and the line ending the file uses, so an edit keeps CRLF files CRLF. */
const split = (text: string) => {
  const eol = text.includes("\r\n") ? "\r\n" : "\n"
  return { lines: text.split(/\r?\n/), eol }
}

/**
 * The lines of table `path` and of its sub-tables (`[sources.x]`, `[sources.x.env]`): [start, end) where start is the
 * header and end is the next header of another table (or the end of the file), with the blank and comment lines just
 * before that next header left out (they usually introduce it). Header lines inside multi-line strings are not told
 * apart: a table whose body holds a line like `[x]` in a ''' string is out of scope.
 */
export interface TableRange {
  readonly start: number
  readonly end: number
}

export const tableRanges = (lines: ReadonlyArray<string>, path: ReadonlyArray<string>): ReadonlyArray<TableRange> => {
  const ranges: Array<TableRange> = []
  let open: number | undefined
  const close = (next: number) => {
    if (open === undefined) return
    let end = next
    while (end > open + 1 && (lines[end - 1]!.trim() === "" || lines[end - 1]!.trim().startsWith("#"))) end--
    ranges.push({ start: open, end })
    open = undefined
  }
  lines.forEach((line, i) => {
    const keys = headerKeys(line)
    if (keys === undefined) return
    if (startsWith(keys, path)) {
      if (open === undefined) open = i
    } else {
      close(i)
    }
  })
  close(lines.length)
  return ranges
}

/** Whether `[path]` itself is a header in the text. */
export const hasTable = (text: string, path: ReadonlyArray<string>): boolean =>
  split(text).lines.some((line) => {
    const keys = headerKeys(line)
    return keys !== undefined && samePath(keys, path)
  })

/** Appends a new table at the end of the file, after one blank line. */
export const appendTable = (text: string, path: ReadonlyArray<string>, body: ReadonlyArray<string>): string => {
  const { eol } = split(text)
  const trimmed = text.replace(/(\r?\n)*$/, "")
  const header = `[${path.map(tomlKey).join(".")}]`
  return `${trimmed === "" ? "" : `${trimmed}${eol}${eol}`}${[header, ...body].join(eol)}${eol}`
}

/** Removes `[path]`, its sub-tables and the comment lines right above its header. Left when there is no such table header. */
export const removeTable = (text: string, path: ReadonlyArray<string>): Either.Either<string, EditProblem> => {
  const { lines, eol } = split(text)
  const ranges = tableRanges(lines, path)
  if (!hasTable(text, path)) {
    return Either.left({ detail: `there is no [${path.map(tomlKey).join(".")}] table to remove` })
  }
  const drop = new Set<number>()
  for (const range of ranges) {
    // Comment lines right above the header (no blank line between) describe the table: they go with it.
    let start = range.start
    while (start > 0 && lines[start - 1]!.trim().startsWith("#")) start--
    for (let i = start; i < range.end; i++) drop.add(i)
    // One blank line after the removed table goes with it, so no double gap is left behind.
    if (lines[range.end]?.trim() === "" && (start === 0 || lines[start - 1]?.trim() === "")) {
      drop.add(range.end)
    }
  }
  return Either.right(lines.filter((_, i) => !drop.has(i)).join(eol))
}

/**
 * Sets `key = value` in table `[path]` (the header must exist): replaces the value of an existing single-line
 * assignment (keeping a trailing comment when the old value is a plain true/false/number/string), or inserts the line
 * right after the header.
 */
export const setKey = (
  text: string,
  path: ReadonlyArray<string>,
  key: string,
  value: string
): Either.Either<string, EditProblem> => {
  const { lines, eol } = split(text)
  const header = lines.findIndex((line) => {
    const keys = headerKeys(line)
    return keys !== undefined && samePath(keys, path)
  })
  if (header === -1) return Either.left({ detail: `there is no [${path.map(tomlKey).join(".")}] table` })
  let end = lines.length
  for (let i = header + 1; i < lines.length; i++) {
    if (headerKeys(lines[i]!) !== undefined) {
      end = i
      break
    }
  }
  for (let i = header + 1; i < end; i++) {
    const keys = assignmentKeys(lines[i]!)
    if (keys === undefined || !samePath(keys, [key])) continue
    const line = lines[i]!
    const simple = /^(\s*[^=]*=\s*)("(?:[^"\\]|\\.)*"|'[^']*'|true|false|[0-9][0-9_.]*)(\s*(#.*)?)$/.exec(line)
    if (simple === null) {
      // A multi-line or unusual value: replace the whole line only when it is complete on its own.
      if (/[[{]\s*(#.*)?$/.test(line) || /"""|'''/.test(line)) {
        return Either.left({
          detail: `${key} in [${path.map(tomlKey).join(".")}] spans several lines; edit it by hand`
        })
      }
      const indent = /^\s*/.exec(line)![0]
      return Either.right(
        [...lines.slice(0, i), `${indent}${tomlKey(key)} = ${value}`, ...lines.slice(i + 1)].join(eol)
      )
    }
    return Either.right([...lines.slice(0, i), `${simple[1]}${value}${simple[3]}`, ...lines.slice(i + 1)].join(eol))
  }
  return Either.right(
    [...lines.slice(0, header + 1), `${tomlKey(key)} = ${value}`, ...lines.slice(header + 1)].join(eol)
  )
}
