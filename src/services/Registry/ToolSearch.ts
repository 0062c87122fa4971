import MiniSearch from "minisearch"
import { stemmer } from "stemmer"
import type { JsonObject, Tool } from "../../domain/Mcp.js"
import type { Catalog, SearchHit } from "./CatalogTypes.js"
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
  readonly title: string
  readonly description: string
  readonly hint: string
  readonly params: string
}

export interface Index {
  /** The catalog hash the index was built from: a new hash means a rebuild. */
  readonly hash: string
  readonly search: (query: string, limit: number) => ReadonlyArray<SearchHit>
}

const stopWords = new Set(
  "a an and are as at be by for from how i in into is it its me my of on or that the this to use using with".split(" ")
)

/**
 * Splits on punctuation, `_`, `-`, `.` and camelCase boundaries (`ToolSearch` → tool, search), lower-cased. A word
 * split at camelCase boundaries is also kept whole (`dryRun` → dry, run, dryrun), so an agent quoting a parameter or
 * tool name finds it before the tools that merely share its parts.
 */
export const tokenize = (text: string): Array<string> =>
  text.split(/[^\p{L}\p{N}]+/u).flatMap((word) => {
    const parts = word
      .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
      .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
      .split(" ")
      .map((term) => term.toLowerCase())
      .filter((term) => term !== "" && !stopWords.has(term))
    return parts.length > 1 ? [...parts, word.toLowerCase()] : parts
  })

/** Porter stems, so `folders`, `listing` and `created` meet `folder`, `list` and `create`. */
export const terms = (text: string): Array<string> => tokenize(text).map((term) => stemmer(term))

/**
 * Words agents use for the same thing (and MCP's own names for them). A query term also looks for its group's
 * other words, at a lower weight than the word itself, so an exact match still ranks first.
 */
const synonymGroups: ReadonlyArray<ReadonlyArray<string>> = [
  ["folder", "directory", "dir"],
  ["file", "document"],
  ["create", "make", "new"],
  ["delete", "remove", "forget", "erase", "drop"],
  ["find", "search", "lookup", "query", "locate", "discover"],
  ["show", "list", "display", "view", "print"],
  ["get", "fetch", "retrieve", "return"],
  ["read", "open", "load"],
  ["write", "save", "store", "persist"],
  ["edit", "change", "modify", "update", "patch", "alter"],
  ["move", "rename", "relocate", "transfer", "put"],
  ["image", "picture", "photo", "media"],
  ["size", "big", "large", "bytes"],
  ["info", "information", "metadata", "details", "stat", "attributes"],
  ["time", "date", "timestamp", "modified"],
  ["relation", "relationship", "link", "connect"],
  ["observation", "fact", "note"],
  ["entity", "node", "person", "people"],
  ["compress", "gzip", "zip", "archive"],
  ["echo", "repeat"],
  ["sum", "add", "plus", "total", "calculate"],
  ["environment", "env", "variables"],
  ["long", "slow", "lengthy"],
  ["operation", "job", "task"],
  ["elicitation", "ask", "question", "input"],
  ["sampling", "llm", "model", "generate", "completion"],
  ["log", "logging"],
  ["toggle", "switch", "turn", "enable", "disable"],
  ["research", "investigate"],
  ["tree", "hierarchy", "structure", "recursive", "nested"],
  ["multiple", "several", "many", "batch", "bulk"],
  ["allowed", "permitted", "accessible", "access"],
  ["health", "status", "diagnose", "down"],
  ["server", "source"],
  ["text", "content", "contents"],
  ["shell", "bash", "command", "terminal", "execute", "run"],
  ["web", "url", "page", "website", "http"],
  ["head", "first", "top", "beginning"],
  ["tail", "last", "end"]
]

/** Stemmed term → the stemmed other words of its groups. */
const synonyms: ReadonlyMap<string, ReadonlyArray<string>> = (() => {
  const map = new Map<string, Set<string>>()
  for (const group of synonymGroups) {
    const stems = group.map((word) => stemmer(word))
    for (const stem of stems) {
      const others = map.get(stem) ?? new Set<string>()
      for (const other of stems) if (other !== stem) others.add(other)
      map.set(stem, others)
    }
  }
  return new Map([...map].map(([stem, others]) => [stem, [...others]]))
})()

/** A synonym counts this much of the word the agent wrote. */
const synonymWeight = 0.5

/** A part of a compound word the agent wrote (`run` of `dryRun`) counts this much of the whole. */
const partWeight = 0.1

/**
 * The query as concepts, one per word the agent wrote: each a map from stemmed term to weight — 1 for the word itself
 * (a compound's parts `partWeight`), `synonymWeight` for its synonyms (times the part's weight). A tool scores the best
 * of a concept's terms, summed over concepts: a tool whose keywords list a whole synonym group gains nothing over one
 * that matches the word once, and two words pointing at the same synonym (make, new → create) both count.
 */
export const concepts = (query: string): ReadonlyArray<ReadonlyMap<string, number>> =>
  query.split(/[^\p{L}\p{N}]+/u).flatMap((word) => {
    const parts = tokenize(word)
    if (parts.length === 0) return []
    const whole = parts.length > 1 ? parts[parts.length - 1] : undefined
    const concept = new Map<string, number>()
    const set = (term: string, weight: number) => concept.set(term, Math.max(concept.get(term) ?? 0, weight))
    for (const part of parts) set(stemmer(part), whole === undefined || part === whole ? 1 : partWeight)
    for (const [term, weight] of [...concept]) {
      for (const other of synonyms.get(term) ?? []) set(other, weight * synonymWeight)
    }
    return [concept]
  })

const parameterNames = (schema: JsonObject): Array<string> => {
  const properties = schema.properties
  return typeof properties === "object" && properties !== null ? Object.keys(properties) : []
}

/**
 * The tools that find and call others: an agent searching has them already, so a result slot spent on them is lost
 * (their keywords — find, search, call — would otherwise put them first for half the queries).
 */
export const discoveryTools: ReadonlySet<string> = new Set(["ToolSearch", "CallTool"])

/** The documents of one catalog: listed tools only (what the host could call), the discovery tools excepted. */
export const documents = (catalog: Catalog, manifest: Manifest): ReadonlyArray<SearchDocument> => {
  const byWire = new Map(catalog.entries.filter((entry) => entry.listed).map((entry) => [entry.wire, entry]))
  return catalog.tools
    .filter((tool) => !discoveryTools.has(tool.name))
    .map((tool: Tool) => {
      const entry = byWire.get(tool.name)
      const spec = manifest.byName.get(tool.name)?.spec
      const names = entry === undefined || entry.kind === "core" ? [tool.name] : [tool.name, entry.original]
      const keywords = spec !== undefined ? [...spec.keywords] : []
      return {
        id: tool.name,
        name: names.join(" "),
        title: typeof tool.title === "string" ? tool.title : "",
        description: tool.description ?? "",
        hint: [entry?.hint ?? "", ...keywords].join(" "),
        params: parameterNames(tool.inputSchema).join(" ")
      }
    })
}

/** Where a synonym may match: names, titles and hints say what a tool IS; a description's side words would add noise. */
const synonymFields = ["name", "title", "hint", "params"]

export const build = (catalog: Catalog, manifest: Manifest): Index => {
  const index = new MiniSearch<SearchDocument>({
    fields: ["name", "title", "description", "hint", "params"],
    idField: "id",
    tokenize: terms,
    processTerm: (term) => term,
    searchOptions: {
      // Issue 14: name > title > description > hint; parameter names are identifiers, between title and description.
      boost: { name: 4, title: 3, description: 1.5, hint: 1, params: 2 },
      prefix: (term) => term.length >= 3,
      fuzzy: (term) => (term.length >= 5 ? 0.2 : false),
      combineWith: "OR"
    }
  })
  index.addAll([...documents(catalog, manifest)])
  const tools = new Map(catalog.tools.map((tool) => [tool.name, tool]))
  return {
    hash: catalog.hash,
    search: (query, limit) => {
      // Each term is searched once however many concepts name it.
      const results = new Map<string, ReadonlyMap<string, number>>()
      const scoresOf = (term: string, written: boolean) => {
        const key = `${written ? "w" : "s"}:${term}`
        let found = results.get(key)
        if (found === undefined) {
          const hits = written
            ? index.search(term, { tokenize: () => [term] })
            : index.search(term, { tokenize: () => [term], fields: synonymFields, prefix: false, fuzzy: false })
          found = new Map(hits.map((hit) => [String(hit.id), hit.score]))
          results.set(key, found)
        }
        return found
      }
      const scores = new Map<string, number>()
      const matched = new Map<string, number>()
      for (const concept of concepts(query)) {
        const best = new Map<string, number>()
        for (const [term, weight] of concept) {
          for (const [id, score] of scoresOf(term, weight === 1)) {
            best.set(id, Math.max(best.get(id) ?? 0, score * weight))
          }
        }
        for (const [id, score] of best) {
          scores.set(id, (scores.get(id) ?? 0) + score)
          matched.set(id, (matched.get(id) ?? 0) + 1)
        }
      }
      // Like MiniSearch's own OR: a tool matching more of the agent's words ranks higher (score × concepts matched).
      for (const [id, score] of scores) scores.set(id, score * matched.get(id)!)
      return (
        [...scores]
          // Equal scores come out in wire-name order, so the same query gives the same answer.
          .sort(([a, x], [b, y]) => y - x || byteOrder(a, b))
          .slice(0, limit)
          .flatMap(([name, score]) => {
            const tool = tools.get(name)
            return tool === undefined
              ? []
              : [
                  {
                    name: tool.name,
                    description: tool.description,
                    inputSchema: tool.inputSchema,
                    score: Math.round(score * 1000) / 1000
                  }
                ]
          })
      )
    }
  }
}
