import type { JsonObject, Tool } from "../../domain/Mcp.js"
import type { Prompt, Resource, ResourceTemplate } from "../../domain/Surface.js"

/*
 * What a person cannot see, removed from every title, description and schema text before it reaches the host (issue
 * 25, "Clean descriptions"; ADR 029). A reviewer reads what a terminal or a UI draws; the model reads every code point.
 * Text in between is tool poisoning: Unicode tags that mirror ASCII, bidi controls that reorder what is drawn,
 * zero-width characters that split words past a filter, ANSI sequences that hide or overwrite text in a terminal.
 *
 * One regex over each string; a string, and an object, with nothing to remove comes back as the same value (no copy),
 * so the 10,000-tool catalog rebuilt on a change costs one scan per string. The pins hash what the source sent, not
 * this: a change in hidden characters alone is a change.
 */

/** The characters removed one by one (BMP code units). */
const hiddenClass =
  // C0 controls but tab and newline (CR too: a lone one overwrites the line; CRLF becomes LF), DEL, C1 controls.
  String.raw`\x00-\x08\x0b-\x1f\x7f-\x9f` +
  // Soft hyphen, combining grapheme joiner, Arabic letter mark, Hangul fillers, Khmer inherent vowels, Mongolian free
  // variation selectors and vowel separator.
  String.raw`\xad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f` +
  // Zero-width space, non-joiner and joiner, LRM and RLM, bidi embeddings and overrides, word joiner and invisible
  // operators, bidi isolates, deprecated format characters.
  String.raw`\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f` +
  // Hangul filler, variation selectors 1-14 (15 and 16, text and emoji presentation, are kept), BOM (zero-width
  // no-break space), halfwidth Hangul filler, interlinear annotation.
  String.raw`\u3164\ufe00-\ufe0d\ufeff\uffa0\ufff9-\ufffb`

/**
 * Everything removed, one alternative per kind. Each is linear: a run of parameter or body characters ends at a class
 * the next part cannot match, so a failed sequence gives back only its own run, once (no nested quantifiers).
 */
const alternatives = [
  // ANSI CSI (`ESC [` or 8-bit U+009B): parameters, intermediates, a final byte.
  String.raw`(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]`,
  // OSC (`ESC ]` or U+009D) to BEL or ST; unterminated, to the next control character or the end (a terminal hides it).
  String.raw`(?:\x1b\]|\x9d)[^\x00-\x1f\x7f-\x9f]*(?:\x07|\x1b\\|\x9c)?`,
  // DCS, SOS, PM and APC strings, the same way.
  String.raw`(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x00-\x1f\x7f-\x9f]*(?:\x1b\\|\x9c)?`,
  // Any other escape: ESC, intermediates, a final byte (`ESC ( B`, `ESC 7`, `ESC c`), or ESC alone.
  String.raw`\x1b[ -/]*[0-~]?`,
  `[${hiddenClass}]`,
  // Tags U+E0000-E007F and variation selectors 17-256 U+E0100-E01EF: in UTF-16 one high surrogate, then a low one.
  String.raw`\udb40[\udc00-\udc7f\udd00-\uddef]`
].join("|")

// Without the `u` flag: V8 scans code units, faster, and the astral ranges are written as surrogate pairs above. The
// test is one character class (every removed sequence starts with one of these; U+DB40 is the high surrogate of both
// astral ranges), about four times faster than the alternation: clean text, the common case, is scanned by it alone.
const mayHide = new RegExp(`[${hiddenClass}\\udb40]`)
const hiddenAll = new RegExp(alternatives, "g")

/** Whether `text` holds anything `text` would remove. */
export const hasHidden = (value: string): boolean => mayHide.test(value) && value.search(hiddenAll) !== -1

/** `text` without what a person cannot see; the same string when there is nothing to remove. */
export const text = (value: string): string => (mayHide.test(value) ? value.replace(hiddenAll, "") : value)

/** Every match of the removed characters in `value` (the hidden-characters rule reads them). */
export const matches = (value: string): IterableIterator<RegExpMatchArray> => value.matchAll(hiddenAll)

/** A string field cleaned: undefined when unchanged (or absent, or not a string). */
const changed = (value: unknown): string | undefined => {
  if (typeof value !== "string") return undefined
  const cleaned = text(value)
  return cleaned === value ? undefined : cleaned
}

/** `object` with its string `fields` cleaned, the same object when none changes. */
const fields = <A extends JsonObject>(object: A, names: ReadonlyArray<string>): A => {
  let out: Record<string, unknown> | undefined
  for (const name of names) {
    const cleaned = changed(object[name])
    if (cleaned !== undefined) (out ??= { ...object })[name] = cleaned
  }
  return (out ?? object) as A
}

/** The prose of a schema: what a model reads as words. */
const proseKeys = new Set(["title", "description", "$comment"])
/**
 * Values a call carries back to the source (`enum`, `const`, `default`, `examples`): kept as sent, since a value the
 * model cannot send as listed would fail the call. Hidden characters there are flagged (Suspicious.ts), not removed.
 */
const valueKeys = new Set(["enum", "const", "default", "examples"])
/** Keys whose members are named schemas, walked by value: a property NAMED "description" or "enum" is still a schema. */
const schemaMaps = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"])

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A JSON Schema with every `title`, `description` and `$comment` cleaned at any depth; the same value when clean. */
export const schema = (node: unknown): unknown => {
  if (Array.isArray(node)) {
    let out: Array<unknown> | undefined
    for (let i = 0; i < node.length; i++) {
      const inner = schema(node[i])
      if (inner !== node[i]) (out ??= [...node])[i] = inner
    }
    return out ?? node
  }
  if (!isObject(node)) return node
  let out: Record<string, unknown> | undefined
  for (const key in node) {
    const value = node[key]
    const cleaned = proseKeys.has(key)
      ? (changed(value) ?? value)
      : valueKeys.has(key)
        ? value
        : schemaMaps.has(key) && isObject(value)
          ? members(value)
          : schema(value)
    if (cleaned !== value) (out ??= { ...node })[key] = cleaned
  }
  return out ?? node
}

const members = (map: JsonObject): JsonObject => {
  let out: Record<string, unknown> | undefined
  for (const name in map) {
    const value = map[name]
    const cleaned = schema(value)
    if (cleaned !== value) (out ??= { ...map })[name] = cleaned
  }
  return out ?? map
}

/**
 * A tool as the host sees it: `title`, `description`, `annotations.title` and the prose of both schemas cleaned. The
 * name is made a wire name elsewhere (only `[A-Za-z0-9_-]`); `_meta` is not text a model is shown.
 */
export const tool = (source: Tool): Tool => {
  const named = fields(source, ["title", "description"])
  const annotations = isObject(source.annotations) ? fields(source.annotations, ["title"]) : source.annotations
  const inputSchema = schema(source.inputSchema) as JsonObject
  const outputSchema = schema(source.outputSchema) as JsonObject | undefined
  if (
    named === source &&
    annotations === source.annotations &&
    inputSchema === source.inputSchema &&
    outputSchema === source.outputSchema
  ) {
    return source
  }
  return {
    ...named,
    ...(annotations === source.annotations ? {} : { annotations }),
    inputSchema,
    ...(outputSchema === source.outputSchema ? {} : { outputSchema })
  }
}

/** A resource: `name`, `title`, `description` (resources are routed by URI, never by name; the URI is kept). */
export const resource = <A extends Resource | ResourceTemplate>(source: A): A =>
  fields(source, ["name", "title", "description"])

/**
 * A prompt: `title`, `description`, and each argument's `title` and `description`. Names are kept: a prompt and its
 * arguments are called by them (the listed name is cleaned where it is made, Surface.ts, and routes to the original).
 */
export const prompt = (source: Prompt): Prompt => {
  const named = fields(source, ["title", "description"])
  const args = source.arguments
  if (!Array.isArray(args)) return named
  let cleanedArgs: Array<unknown> | undefined
  for (let i = 0; i < args.length; i++) {
    const arg: unknown = args[i]
    const cleaned = isObject(arg) ? fields(arg, ["title", "description"]) : arg
    if (cleaned !== arg) (cleanedArgs ??= [...args])[i] = cleaned
  }
  return cleanedArgs === undefined ? named : { ...named, arguments: cleanedArgs }
}
