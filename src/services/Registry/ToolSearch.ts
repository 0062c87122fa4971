import MiniSearch from "minisearch"
import { stemmer } from "stemmer"
import type { JsonObject, Tool } from "../../domain/Mcp.js"
import type { ToolListing } from "../../domain/ToolProvider.js"
import * as Clean from "../Trust/Clean.js"
import type { Catalog, SearchHit } from "./CatalogTypes.js"
import { byteOrder } from "./Pipeline.js"
import { objectGroups, phrases, stopWords, synonymGroups } from "./ToolSearchWords.js"

/**
 * BM25 (MiniSearch's BM25+) over the live catalog, so an agent can find and load tools on demand instead of
 * carrying every schema in its context. Indexed per tool: names (wire and original), title, description, a core
 * tool's keywords and usage hint, parameter names. The words it knows (stop words, synonyms) are in ToolSearchWords.ts.
 */

export interface SearchDocument {
  readonly id: string
  readonly name: string
  readonly title: string
  readonly description: string
  readonly hint: string
  readonly keywords: string
  readonly params: string
}

export interface Index {
  /** The catalog hash the index was built from: a new hash means a rebuild. */
  readonly hash: string
  readonly search: (query: string, limit: number) => ReadonlyArray<SearchHit>
}

/** English contractions and possessives (`what's`, `doesn't`, `Carol's`): the word is what is left. */
const contraction = /n['’]t\b|['’](?:s|re|ve|ll|d|m)\b/giu

/**
 * Splits on punctuation, `_`, `-`, `.` and camelCase boundaries (`ToolSearch` → tool, search), lower-cased; numbers
 * alone are values, not words. A word split at camelCase boundaries is also kept whole (`dryRun` → dry, run, dryrun),
 * so an agent quoting a parameter or tool name finds it before the tools that merely share its parts.
 */
export const tokenize = (text: string): Array<string> =>
  text
    .replace(contraction, "")
    .split(/[^\p{L}\p{N}]+/u)
    .flatMap((word) => {
      const parts = word
        .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
        .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
        .split(" ")
        .map((term) => term.toLowerCase())
        .filter((term) => term !== "" && !stopWords.has(term) && !/^\d+$/.test(term))
      return parts.length > 1 ? [...parts, word.toLowerCase()] : parts
    })

/** Porter stems, so `folders`, `listing` and `created` meet `folder`, `list` and `create`. */
export const terms = (text: string): Array<string> => tokenize(text).map((term) => stemmer(term))

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

/** Stemmed word → the kinds of thing (`file`, `entity`) it names. */
const objectsOfWord: ReadonlyMap<string, ReadonlyArray<string>> = (() => {
  const map = new Map<string, Array<string>>()
  for (const [kind, words] of Object.entries(objectGroups)) {
    for (const word of words) {
      const stem = stemmer(word)
      map.set(stem, [...(map.get(stem) ?? []), kind])
    }
  }
  return map
})()

/** The kinds of thing some text names; `seen` keeps each word's answer (a catalog repeats its words). */
export const objectsNamed = (text: string, seen: Map<string, ReadonlyArray<string>> = new Map()): ReadonlySet<string> =>
  new Set(
    // Object words are plain ASCII: a split on everything else and on camelCase is enough, and cheaper than tokenize
    // over a 10,000-tool catalog.
    (text.match(/[A-Z]?[a-z]+|[A-Z]+(?![a-z])/g) ?? []).flatMap((word) => {
      let kinds = seen.get(word)
      if (kinds === undefined) seen.set(word, (kinds = objectsOfWord.get(stemmer(word.toLowerCase())) ?? []))
      return kinds
    })
  )

/**
 * What a tool gains per kind of thing the query names that its own name or title names too (`remove the relationship`:
 * delete_relations over delete_entities). Chosen by 5-fold cross-validation over test/search/tasks.ts (0, 0.25, 0.5, 1:
 * 0.5 in four folds of five).
 */
const objectWeight = 0.5

/**
 * A word naming a kind of thing (`manages`: a relation, `news`: the web) also looks for the kind's own name at this
 * weight, so a tool named for that kind (`create_relations`, WebSearch's "Search the web") matches it. Chosen by 5-fold
 * cross-validation over test/search/tasks.ts with `objectWeight` (0, 0.35, 0.5, 0.7: 0.35 in five folds of five).
 */
const kindWeight = 0.35

/** A synonym counts this much of the word the agent wrote. */
const synonymWeight = 0.7

/** A part of a compound word the agent wrote (`run` of `dryRun`) counts this much of the whole. */
const partWeight = 0.1

/** A link: its words are a site's, the task is fetching it. */
const urlPattern = /^(?:[a-z][a-z0-9+.-]*:\/\/|www\.)/i
/** A file name's extension: a dot, then up to five letters or digits, at least one a letter (`.md`, `.mp3`). */
const extensionPattern = /^[^.]+.*\.([a-z0-9]{0,4}[a-z][a-z0-9]{0,4})$/i

/**
 * What a word of the query stands for when it is not a word: a link is a URL, a glob pattern (`*.md`) finds files, a
 * file name (`notes.txt`, `src/app.ts`) is a file of its kind, a path without one (`src/ui`, `/tmp`) a folder. Their
 * own words (`notes`, `src`) name nothing a tool does: they count as a compound's parts.
 */
const standsFor = (
  token: string
): { readonly kind: string; readonly words: string; readonly extension?: string } | undefined => {
  if (urlPattern.test(token)) return { kind: "url", words: "" }
  const extension = extensionPattern.exec(token.split(/[\\/]/).pop() ?? "")?.[1]
  if (/[*?]/.test(token) && /[\p{L}\p{N}.]/u.test(token))
    return { kind: "glob", words: "", ...(extension === undefined ? {} : { extension }) }
  if (extension !== undefined)
    return { kind: "file", words: token.slice(0, token.length - extension.length - 1), extension }
  // Files named by what they are for, without an extension: Dockerfile, Makefile, Gemfile, Procfile.
  if (/^[A-Z][a-z]+file$/.test(token)) return { kind: "file", words: token.slice(0, -4) }
  if (/[\\/]/.test(token) && /[\p{L}\p{N}]/u.test(token)) return { kind: "folder", words: token }
  return undefined
}

/** The phrases of ToolSearchWords.ts, each as a pattern over whole words and the word it means. */
const phrasePatterns = phrases.map(
  ([phrase, meaning]) =>
    [new RegExp(`(?<![\\p{L}\\p{N}])${phrase.replace(/ /g, "\\s+")}(?![\\p{L}\\p{N}])`, "giu"), meaning] as const
)

/** The query with each phrase that means one word (`look up`, `reports to`) replaced by that word. */
export const rephrase = (query: string): string =>
  phrasePatterns.reduce((text, [pattern, meaning]) => text.replace(pattern, meaning), query)

/**
 * A name (`Bob`, `Acme`): a capitalised word that is not the first of the query, nor a file's name (`Dockerfile`). It
 * names a thing of the user's world, which is what a knowledge graph's entities are.
 */
export const namesSomeone = (query: string): boolean =>
  query
    .split(/\s+/)
    .slice(1)
    .some((token) => {
      const word = token.replace(contraction, "").replace(/[^\p{L}]+$/u, "")
      return /^[A-Z][a-z]+$/.test(word) && standsFor(word) === undefined
    })

/** A phrase in quotes (straight, curly or backticks), from a word's start to a word's end. */
const quotedPhrase = /(?<=^|\s)['"`‘“]([^'"`‘’“”]+)['"`’”](?=[\s,.;:!?)]|$)/gu

/**
 * The query as concepts, one per word the agent wrote: each a map from stemmed term to weight — 1 for the word itself
 * (a compound's parts `partWeight`), `synonymWeight` for its synonyms (times the part's weight). A tool scores the best
 * of a concept's terms, summed over concepts: a tool whose keywords list a whole synonym group gains nothing over one
 * that matches the word once, and two words pointing at the same synonym (make, new → create) both count.
 */
export const concepts = (written: string): ReadonlyArray<ReadonlyMap<string, number>> => {
  const query = rephrase(written)
  const result: Array<Map<string, number>> = []
  const add = (whole: ReadonlyArray<string>, parts: ReadonlyArray<string>) => {
    if (whole.length === 0 && parts.length === 0) return
    const concept = new Map<string, number>()
    const set = (term: string, weight: number) => concept.set(term, Math.max(concept.get(term) ?? 0, weight))
    for (const part of parts) set(stemmer(part), partWeight)
    for (const term of whole) set(stemmer(term), 1)
    for (const [term, weight] of [...concept]) {
      for (const other of synonyms.get(term) ?? []) set(other, weight * synonymWeight)
      for (const kind of objectsOfWord.get(term) ?? []) set(stemmer(kind), weight * kindWeight)
    }
    result.push(concept)
  }
  // A quoted phrase is a value (text to look for, a message to send): its words name no tool, they count as parts, and
  // the phrase stands for text.
  const unquoted = query.replace(quotedPhrase, (_, phrase: string) => {
    add(["text"], tokenize(phrase))
    return " "
  })
  // The words since the last file name, once there is one.
  let between: Array<string> | undefined
  let listed = false
  for (const token of unquoted.split(/\s+/)) {
    const trimmed = token.replace(/^[\s"'`(\[{<]+|[\s"'`)\]}>,;:!?]+$/gu, "").replace(/\.$/, "")
    const typed = standsFor(trimmed)
    // Files listed (`a.txt and b.txt`, `a.txt, b.txt`), not a source and a destination (`a.txt to b.txt`), make the
    // task one over several files.
    if (typed?.kind === "file") {
      if (!listed && between !== undefined && /^(?:,|,?and|&)?$/.test(between.join(""))) {
        listed = true
        add(["multiple"], [])
      }
      between = token.endsWith(",") ? [","] : []
    } else between?.push(trimmed.toLowerCase())
    if (typed !== undefined) {
      add([typed.kind], tokenize(typed.words))
      if (typed.kind === "glob") add(["file"], [])
      if (typed.extension !== undefined) add(tokenize(typed.extension), [])
      continue
    }
    for (const word of trimmed.replace(contraction, "").split(/[^\p{L}\p{N}]+/u)) {
      const parts = tokenize(word)
      if (parts.length > 1) add([parts[parts.length - 1]!], parts.slice(0, -1))
      else add(parts, [])
    }
  }
  return result
}

const parameterNames = (schema: JsonObject): Array<string> => {
  const properties = schema.properties
  return typeof properties === "object" && properties !== null ? Object.keys(properties) : []
}

/** The name a host shows: the tool's title, or its annotations' (the older place for it). */
const titleOf = (tool: Tool): string => {
  const annotations = tool.annotations
  const annotated =
    typeof annotations === "object" && annotations !== null ? (annotations as JsonObject).title : undefined
  return [tool.title, annotated].filter((title): title is string => typeof title === "string").join(" ")
}

/**
 * The tools that find and call others: an agent searching has them already, so a result slot spent on them is lost
 * (their keywords — find, search, call — would otherwise put them first for half the queries). RunCode (always
 * listed) too: its name and `code` parameter would match every task about code.
 */
export const discoveryTools: ReadonlySet<string> = new Set(["ToolSearch", "CallTool", "RunCode"])

/** The documents of one catalog: listed tools only (what the host could call), the discovery tools excepted. */
export const documents = (catalog: Catalog, manifest: ToolListing): ReadonlyArray<SearchDocument> => {
  const byWire = new Map(catalog.entries.filter((entry) => entry.listed).map((entry) => [entry.wire, entry]))
  return catalog.tools
    .filter((tool) => !discoveryTools.has(tool.name))
    .map((tool: Tool) => {
      const entry = byWire.get(tool.name)
      const spec = manifest.byName.get(tool.name)?.spec
      // The child's own name, cleaned like the rest of the text (the tool's fields are: Catalog, Trust/Clean.ts).
      const names = entry === undefined || entry.kind === "core" ? [tool.name] : [tool.name, Clean.text(entry.original)]
      const keywords = spec !== undefined ? [...spec.keywords] : []
      return {
        id: tool.name,
        name: names.join(" "),
        title: titleOf(tool),
        description: tool.description ?? "",
        hint: entry?.hint ?? "",
        keywords: keywords.join(" "),
        params: parameterNames(tool.inputSchema).join(" ")
      }
    })
}

/**
 * Where a synonym may match: names, titles, keywords and hints say what a tool IS; a description's side words would add
 * noise.
 */
const synonymFields = ["name", "title", "keywords", "hint", "params"]

/**
 * A question (`what…`, `which…`, `is…`, or a `?` at the end) asks to be told something: a tool that changes things
 * is rarely the answer. `How do I…`, `can you…` are requests, not questions.
 */
export const isQuestion = (query: string): boolean => {
  const words = query
    .toLowerCase()
    .replace(contraction, "")
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== "")
  if (query.trim().endsWith("?")) return true
  const [first, second] = words
  if (first === "how") return second === undefined || !howTo.has(second)
  return first !== undefined && interrogatives.has(first)
}
const interrogatives = new Set(
  "what which who whom whose where when why is are was were do does did has have".split(" ")
)
const howTo = new Set("do does can could should would to".split(" "))

/** What a question's score is multiplied by for a tool that says it changes things. */
const questionToChanger = 0.5

/** The tool's annotations say it changes things (readOnlyHint is not true); a tool without annotations says nothing. */
const changesThings = (tool: Tool): boolean => {
  const annotations = tool.annotations
  return typeof annotations === "object" && annotations !== null && (annotations as JsonObject).readOnlyHint !== true
}

export const build = (catalog: Catalog, manifest: ToolListing): Index => {
  const index = new MiniSearch<SearchDocument>({
    fields: ["name", "title", "keywords", "description", "hint", "params"],
    idField: "id",
    tokenize: terms,
    processTerm: (term) => term,
    searchOptions: {
      // Issue 14: name > title > description; a core tool's keywords are chosen words, as telling as its title; its
      // usage hint is instructions that name other tools. Parameter names are identifiers.
      boost: { name: 4, title: 3, keywords: 3, description: 1.5, hint: 0.5, params: 2 },
      prefix: (term) => term.length >= 3,
      fuzzy: (term) => (term.length >= 5 ? 0.2 : false),
      combineWith: "OR"
    }
  })
  index.addAll([...documents(catalog, manifest)])
  const tools = new Map(catalog.tools.map((tool) => [tool.name, tool]))
  const changers = new Set(catalog.tools.filter(changesThings).map((tool) => tool.name))
  // What each tool acts on, by its own name (not the instance's: `memory__…` names no memory) and its title; read when
  // a query first scores the tool, so indexing a large catalog pays nothing for it.
  const byWire = new Map(catalog.entries.map((entry) => [entry.wire, entry]))
  const seen = new Map<string, ReadonlyArray<string>>()
  const actsOn = new Map<string, ReadonlySet<string>>()
  const objectsOf = (name: string): ReadonlySet<string> => {
    let objects = actsOn.get(name)
    if (objects === undefined) {
      const entry = byWire.get(name)
      const tool = tools.get(name)
      const own = entry === undefined || entry.kind === "core" ? name : entry.original
      actsOn.set(name, (objects = objectsNamed(`${own} ${tool === undefined ? "" : titleOf(tool)}`, seen)))
    }
    return objects
  }
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
      // Like MiniSearch's own OR: a tool matching more of the agent's words ranks higher (score × concepts matched); a
      // question demotes the tools that change things; a tool whose name names what the query acts on gains.
      const asking = isQuestion(query)
      const unquoted = rephrase(query).replace(quotedPhrase, " ")
      const named = [...objectsNamed(unquoted)]
      if (namesSomeone(unquoted) && !named.includes("entity")) named.push("entity")
      for (const [id, score] of scores) {
        const objects = named.length === 0 ? undefined : objectsOf(id)
        const same = objects === undefined ? 0 : named.filter((kind) => objects.has(kind)).length
        scores.set(
          id,
          score * matched.get(id)! * (asking && changers.has(id) ? questionToChanger : 1) * (1 + objectWeight * same)
        )
      }
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
