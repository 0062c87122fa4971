/**
 * A host file with its imported servers replaced by one `clawtool` entry (pure). Only the server section changes:
 * JSON/JSONC through jsonc-parser's `modify` (one key path at a time, on the fresh text, so every other key, comment and
 * the layout outside the edited entries stay byte for byte), Codex's TOML through TomlEdit (whole `[mcp_servers.x]`
 * tables removed and one appended). The result is read back and checked before it is offered for writing.
 */
import { Either } from "effect"
import * as Jsonc from "jsonc-parser"
import { appendTable, removeTable, tomlArray, tomlString } from "../TomlEdit.js"
import { type FileReading, type ReadContext, readHostFile } from "./Read.js"

/** How a host starts clawtool: the running bin under this node, with `serve` (or `connect <url>` for a daemon). */
export interface ClawtoolEntry {
  readonly command: string
  readonly args: ReadonlyArray<string>
}

/** The indentation and line ending the file already uses, for the lines jsonc-parser writes. */
const formattingOf = (text: string): Jsonc.FormattingOptions => {
  const indent = /\n([ \t]+)\S/.exec(text)?.[1]
  return {
    insertSpaces: indent === undefined || !indent.startsWith("\t"),
    tabSize: indent === undefined || indent.startsWith("\t") ? 2 : indent.length,
    eol: text.includes("\r\n") ? "\r\n" : "\n"
  }
}

/**
 * The file's new text: the entries named in `remove` (each `{section, name}` of this file) gone and, unless the file
 * has one already, a `clawtool` entry in its first server section. Left with why when the edit cannot be made safely.
 */
export const rewriteHostFile = (
  reading: FileReading,
  remove: ReadonlyArray<{ readonly section: ReadonlyArray<string>; readonly name: string }>,
  entry: ClawtoolEntry,
  context: ReadContext
): Either.Either<string, string> => {
  const { hostFile } = reading
  const addEntry = reading.clawtool.length === 0
  let text = reading.text
  if (hostFile.format === "toml") {
    for (const { section, name } of remove) {
      const next = removeTable(text, [...section, name])
      if (Either.isLeft(next)) return Either.left(`${next.left.detail} (written inline? edit the file by hand)`)
      text = next.right
    }
    if (addEntry) {
      text = appendTable(
        text,
        [...hostFile.sections[0]!, "clawtool"],
        [`command = ${tomlString(entry.command)}`, `args = ${tomlArray(entry.args)}`]
      )
    }
  } else {
    const options: Jsonc.ModificationOptions = { formattingOptions: formattingOf(text) }
    const value = { ...(hostFile.typedEntries ? { type: "stdio" } : {}), command: entry.command, args: entry.args }
    const document: unknown = Jsonc.parse(text, [], { allowTrailingComma: true })
    hostFile.sections.forEach((section, i) => {
      const names = remove.filter((item) => item.section.join("\0") === section.join("\0")).map((item) => item.name)
      if (names.length === 0 && !(i === 0 && addEntry)) return
      const entries = section.reduce<unknown>(
        (node, key) => (typeof node === "object" && node !== null ? (node as Record<string, unknown>)[key] : undefined),
        document
      )
      const keys = typeof entries === "object" && entries !== null ? Object.keys(entries) : []
      const put = i === 0 && addEntry
      if (keys.every((key) => names.includes(key))) {
        // Every entry goes: one edit of the whole section reads better than entries removed one by one.
        text = Jsonc.applyEdits(text, Jsonc.modify(text, [...section], put ? { clawtool: value } : {}, options))
        return
      }
      for (const name of names)
        text = Jsonc.applyEdits(text, Jsonc.modify(text, [...section, name], undefined, options))
      if (put) text = Jsonc.applyEdits(text, Jsonc.modify(text, [...section, "clawtool"], value, options))
    })
  }
  // Read back: the file must still parse, keep every entry not imported, and hold no imported one.
  const check = readHostFile(hostFile, text, context)
  if (Either.isLeft(check)) return Either.left(`the rewritten file would not parse (${check.left.detail})`)
  const left = new Set(check.right.servers.map((server) => `${server.section.join(".")}\0${server.name}`))
  const gone = remove.filter(({ section, name }) => left.has(`${section.join(".")}\0${name}`))
  const kept = reading.servers.length - remove.length
  if (gone.length > 0 || check.right.servers.length !== kept || check.right.clawtool.length === 0) {
    return Either.left("the rewritten file did not come out as planned; it is left as it is")
  }
  return Either.right(text)
}
