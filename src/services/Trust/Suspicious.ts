import type { JsonObject, Tool } from "../../domain/Mcp.js"
import * as Clean from "./Clean.js"

/*
 * The rule set that flags a suspicious tool definition (issue 25, "Clean descriptions"; ADR 029): one documented,
 * tested rule per kind of poisoning seen in the wild (reference: Invariant Labs' `<IMPORTANT>` add tool and WhatsApp
 * shadowing, Trail of Bits' ANSI and line-jumping posts, Rehberger's tag smuggling). `[trust] on_suspicious` decides
 * what a finding does (the pins code applies it: warn, or quarantine). Matching cannot prove a description clean; the
 * rules aim at what poisoning needs to say, and stay quiet on ordinary descriptions (test/Trust/Suspicious.test.ts runs
 * them over every tool of the fixtures, the reference servers and the core tools).
 *
 * What is read: the name, title, description, annotations' title and every string and key of both schemas (CyberArk's
 * "poison everywhere": enums, defaults and parameter names carry text to the model too). The hidden-characters rule
 * reads the raw text; every other rule reads it cleaned (Clean.ts), so a zero-width space cannot split a phrase past
 * it. One finding per rule at most, its detail naming where and quoting a short cleaned excerpt, never the whole text.
 */

/** One rule's finding: which rule and what it saw (quoted short, never the whole description). */
export interface Suspicion {
  readonly rule: string
  readonly detail: string
}

/** What every rule sees besides the tool: the names of other sources' tools (the shadowing rule reads them). */
export interface SuspicionContext {
  readonly instance: string
  readonly otherTools: ReadonlySet<string>
}

/** Descriptions longer than this are flagged: room to bury instructions below what anyone reads (and a token cost). */
export const maxDescription = 4_000

/** One string of the definition: where it is (`description`, `inputSchema.properties.a.description`) and its text. */
interface Field {
  readonly where: string
  readonly raw: string
  readonly text: string
}

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const fieldsOf = (tool: Tool): ReadonlyArray<Field> => {
  const fields: Array<Field> = []
  const add = (where: string, value: unknown) => {
    if (typeof value === "string" && value !== "") fields.push({ where, raw: value, text: Clean.text(value) })
  }
  const walk = (where: string, node: unknown): void => {
    if (Array.isArray(node)) node.forEach((item, i) => walk(`${where}[${i}]`, item))
    else if (isObject(node)) {
      for (const key in node) {
        const at = `${where}.${key}`
        add(`${at} (key)`, key)
        walk(at, node[key])
      }
    } else add(where, node)
  }
  add("name", tool.name)
  add("title", tool.title)
  add("description", tool.description)
  if (isObject(tool.annotations)) add("annotations.title", tool.annotations.title)
  walk("inputSchema", tool.inputSchema)
  walk("outputSchema", tool.outputSchema)
  return fields
}

/** A short, one-line, quoted excerpt of cleaned text around a match. */
const excerpt = (text: string, index: number, length: number): string => {
  const start = Math.max(0, index - 24)
  const end = Math.min(text.length, index + Math.min(length, 60) + 24)
  const cut = text.slice(start, end).replace(/\s+/g, " ").trim()
  return `${start > 0 ? "…" : ""}${JSON.stringify(cut).slice(1, -1)}${end < text.length ? "…" : ""}`
}

/** The first match of `pattern` in any field's cleaned text, as `<where>: "<excerpt>"`. */
const firstMatch = (fields: ReadonlyArray<Field>, pattern: RegExp): string | undefined => {
  for (const field of fields) {
    const match = pattern.exec(field.text)
    if (match !== null) return `${field.where}: "${excerpt(field.text, match.index, match[0].length)}"`
  }
  return undefined
}

interface Rule {
  readonly rule: string
  readonly check: (fields: ReadonlyArray<Field>, tool: Tool, context: SuspicionContext) => string | undefined
}

// --- hidden-characters ----------------------------------------------------------------------------------------------

const kindOf = (match: string): string => {
  const unit = match.charCodeAt(0)
  if (unit === 0xdb40) return match.charCodeAt(1) < 0xdd00 ? "Unicode tags" : "variation selectors"
  if (unit === 0x1b || (unit >= 0x90 && unit <= 0x9f && match.length > 1)) return "ANSI escapes"
  if (unit < 0x20 || (unit >= 0x7f && unit <= 0x9f)) return "control characters"
  if ((unit >= 0x202a && unit <= 0x202e) || (unit >= 0x2066 && unit <= 0x2069) || unit === 0x200e || unit === 0x200f)
    return "bidi controls"
  if (unit === 0x061c) return "bidi controls"
  if (unit >= 0xfe00 && unit <= 0xfe0d) return "variation selectors"
  return "zero-width characters"
}

/**
 * `hidden-characters`: text a person cannot see (Clean.ts's classes) in the raw definition. It is removed before the
 * host reads it, and flagged anyway: a source that hides text meant to hide something. Tag characters are decoded for
 * the reviewer (they mirror ASCII).
 */
const hiddenCharacters: Rule = {
  rule: "hidden-characters",
  check: (fields) => {
    const dirty = fields.filter((field) => field.raw !== field.text)
    if (dirty.length === 0) return undefined
    let count = 0
    let decoded = ""
    const kinds = new Set<string>()
    const places = dirty.map((field) => field.where)
    for (const field of dirty) {
      for (const [match] of Clean.matches(field.raw)) {
        count++
        kinds.add(kindOf(match))
        const low = match.charCodeAt(1)
        if (match.charCodeAt(0) === 0xdb40 && low >= 0xdc20 && low <= 0xdc7e && decoded.length < 61) {
          decoded += String.fromCharCode(low - 0xdc00)
        }
      }
    }
    if (count === 0) return undefined
    const where =
      places.length > 2 ? `${places.slice(0, 2).join(", ")} and ${places.length - 2} more` : places.join(", ")
    const spelled = decoded === "" ? "" : `; the tags spell "${excerpt(decoded, 0, 60)}"`
    return `${count} hidden character${count === 1 ? "" : "s"} (${[...kinds].join(", ")}) in ${where}${spelled}`
  }
}

// --- instruction-override -------------------------------------------------------------------------------------------

/**
 * `instruction-override`: words addressed to the model rather than describing the tool: override what it was told
 * ("ignore previous instructions"), keep the user out ("do not tell the user", "without informing the user"), or
 * threaten failure to force a side request ("otherwise the tool will not work", Invariant's add tool).
 */
const overridePhrases = new RegExp(
  [
    String.raw`\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|above|earlier|preceding|other|your|existing)\s+(?:system\s+)?(?:instructions?|prompts?|rules|directions|guidelines)`,
    String.raw`\b(?:do\s+not|don'?t|never|must\s+not)\s+(?:tell|inform|mention|reveal|show|notify|alert|disclose)\b[^.!?\n]{0,40}?\bthe\s+user`,
    String.raw`\bwithout\s+(?:telling|informing|notifying|alerting|asking|showing)\s+the\s+user`,
    String.raw`\bthe\s+user\s+(?:must|should)\s+(?:not|never)\s+(?:know|see|notice|be\s+told)`,
    String.raw`\b(?:keep|treat)\s+(?:this|it)\s+(?:secret|confidential|hidden)\s+from\s+the\s+user`,
    String.raw`\botherwise\s+(?:the|this)\s+tool\s+(?:will\s+not|won'?t|will\s+fail\s+to|cannot|can'?t)\s+work`,
    String.raw`\b(?:reveal|print|repeat|output|show)\s+(?:me\s+)?(?:your|the)\s+system\s+prompt`,
    String.raw`\byou\s+are\s+now\s+(?:in\s+)?(?:developer|admin|god|jailbreak|unrestricted)\b`
  ].join("|"),
  "i"
)
const instructionOverride: Rule = {
  rule: "instruction-override",
  check: (fields) => firstMatch(fields, overridePhrases)
}

// --- hidden-tag-block -----------------------------------------------------------------------------------------------

/**
 * `hidden-tag-block`: pseudo-system markup that frames text as orders for the model: `<IMPORTANT>`, `<SYSTEM>`,
 * `<instructions>` and kin, chat-template tokens (`<|im_start|>`, `[INST]`), HTML comments (hidden where rendered).
 * No two quantifiers can share a run of spaces (`<` and a megabyte of them is read once).
 */
const tagBlock =
  /<\s*(?:\/\s*)?(?:important|system|instructions?|secret|hidden|admin|critical|assistant|sys)(?:\s[^<>]{0,80})?>|<\|[a-z_]{2,20}\|>|\[\/?(?:INST|SYSTEM|SYS)\]|<!--/i
const hiddenTagBlock: Rule = { rule: "hidden-tag-block", check: (fields) => firstMatch(fields, tagBlock) }

// --- sensitive-file -------------------------------------------------------------------------------------------------

/**
 * `sensitive-file`: credentials and agent configuration no tool description has reason to name: SSH keys and folder,
 * cloud and registry credentials, `.env` files, netrc, shell history, and MCP client configs (mcp.json,
 * claude_desktop_config.json, ~/.cursor), from which a poisoned tool asks the model to read and pass on.
 */
const sensitiveFiles = new RegExp(
  [
    String.raw`~\/\.ssh\b`,
    String.raw`\.ssh\/`,
    String.raw`\bid_(?:rsa|dsa|ecdsa|ed25519)\b`,
    String.raw`\bauthorized_keys\b`,
    String.raw`\.aws\/(?:credentials|config)\b`,
    String.raw`\.config\/gcloud\b`,
    String.raw`\.azure\/`,
    String.raw`\.kube\/config\b`,
    String.raw`\.docker\/config\.json\b`,
    String.raw`\.(?:netrc|npmrc|pypirc|pgpass|git-credentials|gnupg)\b`,
    String.raw`\.(?:bash|zsh)_history\b`,
    String.raw`\/etc\/(?:passwd|shadow|sudoers)\b`,
    String.raw`\bcredentials\.json\b`,
    String.raw`\bmcp\.json\b`,
    String.raw`\bclaude_desktop_config\.json\b`,
    String.raw`~\/\.cursor\b`,
    // `.env` as a file (`~/.env`, `.env.local`), not a property (`process.env`).
    String.raw`(?<![\w.$])\.env(?:\.[a-z]+)?\b`
  ].join("|"),
  "i"
)
const sensitiveFile: Rule = { rule: "sensitive-file", check: (fields) => firstMatch(fields, sensitiveFiles) }

// --- shadowing ------------------------------------------------------------------------------------------------------

/**
 * A tool name distinctive enough that naming it in text means the tool: it has a `_`, `-` or `.`, or an inner
 * capital (`send_email`, `get-sum`, `listRepos`). Plain words (`search`, `echo`, `Read`) are too common in prose.
 */
const isDistinctive = (name: string) => name.length >= 4 && /[_.-]|[a-z][A-Z]/.test(name)
/**
 * The tokens of a text that could be such a name (or hold one): plain words are not even looked up. Anchored at a
 * token's start, so a long word is scanned once, not once per character.
 */
const distinctiveToken = /(?<![A-Za-z0-9_.-])[A-Za-z0-9]*(?:[_.-]|[a-z][A-Z])[A-Za-z0-9_.-]*/g

/**
 * `shadowing`: the description names a tool of another source (Invariant's add tool rewriting `send_email`, the
 * WhatsApp `send_message` redirect): a tool has no reason to instruct the model about another server's tools. Names
 * are matched whole, also inside `<instance>.<tool>` and `<instance>__<tool>`; the tool's own name is not counted.
 */
const shadowing: Rule = {
  rule: "shadowing",
  check: (fields, tool, context) => {
    if (context.otherTools.size === 0) return undefined
    // The set lookup first: most tokens are no tool's name.
    const names = (name: string) => context.otherTools.has(name) && name !== tool.name && isDistinctive(name)
    for (const field of fields) {
      if (field.where.endsWith("(key)") || field.where === "name") continue
      for (const match of field.text.matchAll(distinctiveToken)) {
        const token = match[0].replace(/\.+$/, "")
        const at = token.lastIndexOf("__")
        const named = names(token)
          ? token
          : at > 0 && names(token.slice(at + 2))
            ? token.slice(at + 2)
            : token.includes(".")
              ? token.split(".").find(names)
              : undefined
        if (named !== undefined) {
          return `${field.where} names "${named}", a tool of another source: "${excerpt(field.text, match.index, token.length)}"`
        }
      }
    }
    return undefined
  }
}

// --- long-description -----------------------------------------------------------------------------------------------

/** `long-description`: a description over 4,000 characters (as sent). */
const longDescription: Rule = {
  rule: "long-description",
  check: (_fields, tool) =>
    typeof tool.description === "string" && tool.description.length > maxDescription
      ? `description is ${tool.description.length.toLocaleString("en-US")} characters (over ${maxDescription.toLocaleString("en-US")})`
      : undefined
}

/** In the order their findings are listed. */
const all: ReadonlyArray<Rule> = [
  hiddenCharacters,
  instructionOverride,
  hiddenTagBlock,
  sensitiveFile,
  shadowing,
  longDescription
]

/** The rules' names (the `rule` of a finding). */
export const rules: ReadonlyArray<string> = all.map((rule) => rule.rule)

/** The findings for one tool's definition as the source sent it (before cleaning): empty when nothing is flagged. */
export const suspicions = (tool: Tool, context: SuspicionContext): ReadonlyArray<Suspicion> => {
  const fields = fieldsOf(tool)
  const found: Array<Suspicion> = []
  for (const { rule, check } of all) {
    const detail = check(fields, tool, context)
    if (detail !== undefined) found.push({ rule, detail })
  }
  return found
}
