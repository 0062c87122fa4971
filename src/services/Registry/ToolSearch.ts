import MiniSearch from "minisearch"
import type { JsonObject, Tool } from "../../domain/Mcp.js"
import type { Catalog } from "./Catalog.js"
import type { Manifest } from "./Manifest.js"
import { byteOrder } from "./Pipeline.js"

/**
 * BM25 (MiniSearch's BM25+) over the live catalog, so an agent can find and load tools on demand instead of
 * carrying every schema in its context. Indexed per tool: names (wire and original), description, keywords and
 * parameter names.
 */

export interface SearchDocument {
  readonly id: string
  readonly name: string
  readonly description: string
  readonly keywords: string
  readonly params: string
}

export interface SearchHit {
  readonly name: string
  readonly description: string | undefined
  readonly inputSchema: JsonObject
  readonly score: number
}

export interface Index {
  /** The catalog hash the index was built from: a new hash means a rebuild. */
  readonly hash: string
  readonly search: (query: string, limit: number) => ReadonlyArray<SearchHit>
}

const stopWords = new Set(
  "a an and are as at be by for from how i in into is it me my of on or that the this to use with".split(" ")
)

/** Splits on punctuation, `_`, `-` and camelCase boundaries (`ToolSearch` → tool, search), lower-cased. */
export const tokenize = (text: string): Array<string> =>
  text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .split(/[^\p{L}\p{N}]+/u)
    .map((term) => term.toLowerCase())
    .filter((term) => term !== "" && !stopWords.has(term))

const parameterNames = (schema: JsonObject): Array<string> => {
  const properties = schema.properties
  return typeof properties === "object" && properties !== null ? Object.keys(properties) : []
}

/** The documents of one catalog: listed tools only (what the host could call). */
export const documents = (catalog: Catalog, manifest: Manifest): ReadonlyArray<SearchDocument> => {
  const byWire = new Map(catalog.entries.filter((entry) => entry.listed).map((entry) => [entry.wire, entry]))
  return catalog.tools.map((tool: Tool) => {
    const entry = byWire.get(tool.name)
    const spec = manifest.byName.get(tool.name)?.spec
    const names = entry === undefined || entry.kind === "core" ? [tool.name] : [tool.name, entry.original]
    const title = typeof tool.title === "string" ? tool.title : ""
    const keywords = spec !== undefined ? [...spec.keywords] : entry === undefined ? [] : [entry.instance]
    return {
      id: tool.name,
      name: names.join(" "),
      description: [title, tool.description ?? ""].join(" "),
      keywords: keywords.join(" "),
      params: parameterNames(tool.inputSchema).join(" ")
    }
  })
}

export const build = (catalog: Catalog, manifest: Manifest): Index => {
  const index = new MiniSearch<SearchDocument>({
    fields: ["name", "description", "keywords", "params"],
    idField: "id",
    tokenize: (text) => tokenize(text),
    processTerm: (term) => term,
    searchOptions: {
      boost: { name: 3, keywords: 2, params: 1.5, description: 1 },
      prefix: (term) => term.length >= 3,
      fuzzy: (term) => (term.length >= 5 ? 0.2 : false),
      combineWith: "OR"
    }
  })
  index.addAll([...documents(catalog, manifest)])
  const tools = new Map(catalog.tools.map((tool) => [tool.name, tool]))
  return {
    hash: catalog.hash,
    search: (query, limit) =>
      index
        .search(query)
        // Equal scores come out in wire-name order, so the same query gives the same answer.
        .sort((a, b) => b.score - a.score || byteOrder(String(a.id), String(b.id)))
        .slice(0, limit)
        .flatMap((result) => {
          const tool = tools.get(String(result.id))
          return tool === undefined
            ? []
            : [
                {
                  name: tool.name,
                  description: tool.description,
                  inputSchema: tool.inputSchema,
                  score: Math.round(result.score * 1000) / 1000
                }
              ]
        })
  }
}
