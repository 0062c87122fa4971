/**
 * `clawtool call`'s pure parts: which wire name the user means, the arguments from JSON and `--arg key=value`, and
 * what of the result is printed.
 */
import { Either } from "effect"
import type { CallToolResult, JsonObject } from "../domain/Mcp.js"
import { isJsonObject } from "../domain/Surface.js"
import { suggest } from "../domain/Suggest.js"
import type { CatalogEntry } from "../services/Registry.js"

/**
 * The wire name `name` means: a wire name (`notes__add_note`, `Read`), or `<instance>.<tool>` as `tools list` shows the
 * origin. A name the catalog does not know is an error with the close names (or the names to choose from).
 */
export const resolveTool = (name: string, entries: ReadonlyArray<CatalogEntry>): Either.Either<string, string> => {
  if (entries.some((entry) => entry.wire === name)) return Either.right(name)
  const origin = entries.find((entry) => entry.kind === "source" && `${entry.instance}.${entry.original}` === name)
  if (origin !== undefined) return Either.right(origin.wire)
  const listed = entries.filter((entry) => entry.listed)
  const known = [...listed.map((entry) => entry.wire)]
  return Either.left(
    `unknown tool ${JSON.stringify(name)}${suggest(name, known, { label: "tools", none: "no tool is listed" })} (clawtool tools list shows them all)`
  )
}

/** Whether the tool's input schema says this property is a string (then `--arg k=v` keeps `v` as text). */
const takesString = (schema: JsonObject | undefined, key: string): boolean => {
  const properties = schema?.properties
  const property = isJsonObject(properties) ? properties[key] : undefined
  if (!isJsonObject(property)) return false
  const type = property.type
  return type === "string" || (Array.isArray(type) && type.includes("string") && type.length === 1)
}

/** `--arg key=value`'s value: text for a string property, else JSON when it parses (`3`, `true`, `[1]`), else text. */
const argValue = (schema: JsonObject | undefined, key: string, value: string): unknown => {
  if (takesString(schema, key)) return value
  try {
    return JSON.parse(value)
  } catch {
    return value
  }
}

/**
 * The call's arguments: the JSON object given (if any), then each `--arg key=value` over it. A JSON text that does
 * not parse, or is not an object, and an `--arg` without `=`, are usage errors naming what is wrong.
 */
export const callArguments = (
  json: string | undefined,
  args: ReadonlyArray<string>,
  schema: JsonObject | undefined
): Either.Either<JsonObject, string> => {
  let base: JsonObject = {}
  if (json !== undefined) {
    let parsed: unknown
    try {
      parsed = JSON.parse(json)
    } catch (cause) {
      return Either.left(`the arguments are not valid JSON: ${(cause as Error).message}`)
    }
    if (!isJsonObject(parsed)) return Either.left('the arguments must be a JSON object, like \'{"path": "README.md"}\'')
    base = parsed
  }
  const out: Record<string, unknown> = { ...base }
  for (const arg of args) {
    const eq = arg.indexOf("=")
    if (eq <= 0) return Either.left(`--arg ${JSON.stringify(arg)} is not key=value`)
    const key = arg.slice(0, eq)
    out[key] = argValue(schema, key, arg.slice(eq + 1))
  }
  return Either.right(out)
}

/**
 * What `call` prints of a result: the text of its text content (one item per line), else its structuredContent as
 * JSON; and a note per content item that is not text (an image, a resource), which --json prints whole.
 */
export const resultText = (
  result: CallToolResult
): { readonly text: string; readonly notes: ReadonlyArray<string> } => {
  const texts: Array<string> = []
  const others = new Map<string, number>()
  for (const item of result.content ?? []) {
    if (isJsonObject(item) && item.type === "text" && typeof item.text === "string") texts.push(item.text)
    else {
      const kind = isJsonObject(item) && typeof item.type === "string" ? item.type : "unknown"
      others.set(kind, (others.get(kind) ?? 0) + 1)
    }
  }
  const text =
    texts.length === 0 && result.structuredContent !== undefined
      ? JSON.stringify(result.structuredContent, null, 2)
      : texts.join("\n")
  const notes = [...others].map(([kind, count]) => `${count} ${kind} content item(s) not shown (--json prints them)`)
  return { text, notes }
}
