import type { JsonObject } from "../../domain/Mcp.js"
import type { CodeNames } from "../../domain/ToolProvider.js"
import type { CatalogEntry } from "./CatalogTypes.js"
import { sanitize, shortHash } from "./NameBudget.js"
import { byteOrder } from "./Pipeline.js"

/**
 * The names code calls tools by (ADR 035): `clawtool tools export-typescript`'s modules and RunCode's `tools` object
 * share them. A core tool is `Read`; a source tool is `<namespace>.<function>`, the instance in camelCase and the
 * tool's name sanitized then camelCased, with a hash of the original name when two clash.
 */

/** One listed tool's code name: `namespace` undefined for a core tool. */
export interface CodeName {
  readonly entry: CatalogEntry
  readonly namespace: string | undefined
  /** The function's name (a module's file name is `file`). */
  readonly fn: string
  readonly file: string
  readonly base: string
}

/** Every listed tool's code name, core tools first, then by instance and wire name. */
export const codeNamesOf = (entries: ReadonlyArray<CatalogEntry>): ReadonlyArray<CodeName> => {
  const listed = entries.filter((entry) => entry.listed)
  const names: Array<CodeName> = listed
    .filter((entry) => entry.kind === "core")
    .map((entry) => ({ entry, namespace: undefined, fn: entry.original, file: entry.original, base: entry.original }))
  const instances = [...new Set(listed.filter((entry) => entry.kind === "source").map((entry) => entry.instance))]
  for (const instance of instances.sort(byteOrder)) {
    const usedFiles = new Set<string>()
    const used = new Set<string>()
    // Names that clash after mapping (`a.b` and `a_b`, `get-sum` and `getSum`) get a hash of the original name.
    const distinct = (name: string, taken: Set<string>, entry: CatalogEntry) => {
      const unique = taken.has(name) ? `${name}_${shortHash(entry.instance, entry.original).slice(0, 6)}` : name
      taken.add(unique)
      return unique
    }
    const tools = listed
      .filter((entry) => entry.kind === "source" && entry.instance === instance)
      .sort((a, b) => byteOrder(a.wire, b.wire))
    for (const entry of tools) {
      const file = distinct(sanitize(entry.original) || "tool", usedFiles, entry)
      const base = distinct(camelCase(file), used, entry)
      names.push({ entry, namespace: namespaceName(instance), fn: reserved.has(base) ? `${base}_` : base, file, base })
    }
  }
  return names
}

/**
 * RunCode's `tools` object: core tools at the top, each namespace's functions; a source tool is reachable by its
 * original name too (`tools.fs.read_text_file` beside `tools.fs.readTextFile`) when no other function has that name.
 */
export const codeNamesObject = (names: ReadonlyArray<CodeName>): CodeNames => {
  const top: Record<string, string | Record<string, string>> = {}
  for (const { entry, namespace, fn } of names) {
    if (namespace === undefined) top[fn] = entry.wire
    else ((top[namespace] ??= {}) as Record<string, string>)[fn] = entry.wire
  }
  for (const { entry, namespace } of names) {
    if (namespace === undefined) continue
    const space = top[namespace] as Record<string, string>
    space[entry.original] ??= entry.wire
  }
  return top
}

/** codeNamesOf, once per catalog (compared by identity). */
export const memoized = <C extends { readonly entries: ReadonlyArray<CatalogEntry> }>() => {
  const made = new WeakMap<C, ReadonlyArray<CodeName>>()
  return (catalog: C): ReadonlyArray<CodeName> => {
    let names = made.get(catalog)
    if (names === undefined) {
      names = codeNamesOf(catalog.entries)
      made.set(catalog, names)
    }
    return names
  }
}

/** Search hits with each tool's signature (code mode on: an agent finds a tool, then writes the call). */
export const withSignatures = <H extends { readonly name: string }>(
  hits: ReadonlyArray<H>,
  names: ReadonlyArray<CodeName>
): ReadonlyArray<H & { readonly signature?: string }> => {
  const byWire = new Map(names.map((name) => [name.entry.wire, name]))
  return hits.map((hit) => {
    const name = byWire.get(hit.name)
    return name === undefined ? hit : { ...hit, signature: signature(name) }
  })
}

/** `tools.fs.readTextFile(input: { path: string; head?: number }): Promise<unknown>`: how code calls the tool. */
export const signature = (name: CodeName): string => {
  const path = name.namespace === undefined ? `tools.${name.fn}` : `tools.${name.namespace}.${name.fn}`
  const input = name.entry.tool.inputSchema as JsonObject | undefined
  const output = name.entry.tool.outputSchema as JsonObject | undefined
  return `${path}(input: ${typeOf(input, 0)}): Promise<${output === undefined ? "unknown" : typeOf(output, 0)}>`
}

/** `read_text_file` → `readTextFile`, `get-sum` → `getSum`; a leading digit gets `_`. */
export const camelCase = (name: string): string => {
  const parts = name.split(/[_-]+/).filter((part) => part !== "")
  if (parts.length === 0) return "tool"
  const joined = parts
    .map((part, i) => (i === 0 ? part[0]!.toLowerCase() + part.slice(1) : part[0]!.toUpperCase() + part.slice(1)))
    .join("")
  return /^[0-9]/.test(joined) ? `_${joined}` : joined
}

/** `github-work` → `githubWork` (injective on kebab-case names). */
export const namespaceName = (instance: string): string => {
  const name = camelCase(instance)
  return reserved.has(name) ? `${name}_` : name
}

const reserved = new Set(
  (
    "break case catch class const continue debugger default delete do else enum export extends false finally for " +
    "function if import in instanceof new null return super switch this throw true try typeof var void while with " +
    "yield let static implements interface package private protected public await arguments eval"
  ).split(" ")
)

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/** A compact TypeScript type for a JSON Schema: enough to call the tool right, not a full translation. */
const typeOf = (schema: unknown, depth: number): string => {
  if (!isObject(schema) || depth > 3) return "unknown"
  if (Array.isArray(schema.enum)) return schema.enum.map((value) => JSON.stringify(value)).join(" | ") || "never"
  if (schema.const !== undefined) return JSON.stringify(schema.const)
  const union = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined
  if (union !== undefined) return union.map((part) => typeOf(part, depth + 1)).join(" | ") || "unknown"
  const type = Array.isArray(schema.type) ? schema.type : [schema.type]
  const parts = type.map((one) => {
    switch (one) {
      case "string":
        return "string"
      case "number":
      case "integer":
        return "number"
      case "boolean":
        return "boolean"
      case "null":
        return "null"
      case "array":
        return `Array<${typeOf(schema.items, depth + 1)}>`
      case "object":
        return objectType(schema, depth)
      default:
        return isObject(schema.properties) ? objectType(schema, depth) : "unknown"
    }
  })
  return parts.join(" | ")
}

const objectType = (schema: JsonObject, depth: number): string => {
  const properties = isObject(schema.properties) ? schema.properties : {}
  const required = new Set(Array.isArray(schema.required) ? schema.required : [])
  const fields = Object.entries(properties).map(([key, value]) => {
    const name = identifier.test(key) ? key : JSON.stringify(key)
    return `${name}${required.has(key) ? "" : "?"}: ${typeOf(value, depth + 1)}`
  })
  if (fields.length === 0) return "{}"
  return `{ ${fields.join("; ")} }`
}
