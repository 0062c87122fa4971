/*
 * Redaction of known secrets (issue 25, "Secrets never reach the host"; docs/decisions/029): every value clawtool
 * knows as a secret, in its raw, JSON-escaped and percent-encoded forms, becomes `[REDACTED:<NAME>]` in what goes to
 * the host. One scan per string over all forms at once (Wu–Manber: a shift table over 3-character blocks, so most of
 * a text is skipped 6 or more characters at a time), built once per set of secrets; nothing is allocated when no
 * secret appears, which is the common case.
 */

/** One known secret: the variable it came from names it in the replacement. */
export interface Secret {
  readonly name: string
  readonly value: string
}

/** Shorter values are ignored: they would mask ordinary words and numbers (GitLab masks 8 and over too). */
export const minimumLength = 8

export interface Redactor {
  /** False when no secret is known: every method is then the identity. */
  readonly active: boolean
  /** Whether any form of any secret occurs in `text`. */
  readonly occursIn: (text: string) => boolean
  /** `text` with every occurrence replaced, leftmost first and longest first; the same string when none occurs. */
  readonly text: (text: string) => string
  /**
   * A JSON value with every string, object key and number that holds a secret redacted; the same reference when none
   * does (a number holding one becomes the replacement string, so the JSON stays valid).
   */
  readonly value: <A>(value: A) => A
  /**
   * One serialised JSON message (a line, a trailing newline kept): scanned whole; only when a secret occurs is it
   * parsed, redacted as a value and serialised again, so a replacement can never break the JSON around it.
   */
  readonly line: (json: string) => string
}

const block = 3
const tableBits = 18
const tableMask = (1 << tableBits) - 1
const hashAt = (text: string, end: number) =>
  ((text.charCodeAt(end - 2) << 12) ^ (text.charCodeAt(end - 1) << 6) ^ text.charCodeAt(end)) & tableMask

interface Pattern {
  readonly text: string
  readonly replacement: string
}

/** The forms a secret takes in text: as is, inside a JSON string, and percent-encoded (in a URL or a form). */
const formsOf = (value: string): ReadonlyArray<string> => {
  const forms = new Set([value, JSON.stringify(value).slice(1, -1)])
  try {
    forms.add(encodeURIComponent(value))
  } catch {
    // A lone surrogate cannot be percent-encoded, so that form cannot occur either.
  }
  return [...forms]
}

const identity: Redactor = {
  active: false,
  occursIn: () => false,
  text: (text) => text,
  value: (value) => value,
  line: (json) => json
}

/** The redactor of `secrets` (values under `minimumLength` are skipped; a repeated value keeps its first name). */
export const make = (secrets: Iterable<Secret>): Redactor => {
  const byText = new Map<string, Pattern>()
  for (const { name, value } of secrets) {
    if (value.length < minimumLength) continue
    const replacement = `[REDACTED:${name}]`
    for (const form of formsOf(value)) if (!byText.has(form)) byText.set(form, { text: form, replacement })
  }
  if (byText.size === 0) return identity
  // Longest first: at one position the longest pattern that matches wins (a secret that extends another).
  const patterns = [...byText.values()].sort((a, b) => b.text.length - a.text.length)
  const window = patterns.reduce((shortest, pattern) => Math.min(shortest, pattern.text.length), Infinity)
  const longestShift = window - block + 1
  const shifts = new Uint8Array(tableMask + 1).fill(Math.min(longestShift, 255))
  const candidates = new Map<number, Array<Pattern>>()
  for (const pattern of patterns) {
    for (let end = block - 1; end < window; end++) {
      const hash = hashAt(pattern.text, end)
      shifts[hash] = Math.min(shifts[hash]!, window - 1 - end)
    }
    const last = hashAt(pattern.text, window - 1)
    const list = candidates.get(last)
    if (list === undefined) candidates.set(last, [pattern])
    else list.push(pattern)
  }

  /** The leftmost occurrence at or after `from` (the longest one there), or undefined. */
  const find = (text: string, from: number): { readonly at: number; readonly pattern: Pattern } | undefined => {
    const last = text.length - window
    let at = from
    while (at <= last) {
      const end = at + window - 1
      const shift = shifts[hashAt(text, end)]!
      if (shift !== 0) {
        at += shift
        continue
      }
      for (const pattern of candidates.get(hashAt(text, end))!) {
        if (text.startsWith(pattern.text, at)) return { at, pattern }
      }
      at += 1
    }
    return undefined
  }

  const occursIn = (text: string) => text.length >= window && find(text, 0) !== undefined

  const redactText = (text: string): string => {
    if (text.length < window) return text
    let found = find(text, 0)
    if (found === undefined) return text
    let out = ""
    let done = 0
    while (found !== undefined) {
      out += text.slice(done, found.at) + found.pattern.replacement
      done = found.at + found.pattern.text.length
      found = find(text, done)
    }
    return out + text.slice(done)
  }

  const redactValue = (value: unknown): unknown => {
    if (typeof value === "string") return redactText(value)
    if (typeof value === "number") {
      const digits = String(value)
      const redacted = redactText(digits)
      return redacted === digits ? value : redacted
    }
    if (typeof value !== "object" || value === null) return value
    if (Array.isArray(value)) {
      let copy: Array<unknown> | undefined
      for (let index = 0; index < value.length; index++) {
        const item = value[index]
        const redacted = redactValue(item)
        if (redacted !== item) (copy ??= value.slice())[index] = redacted
      }
      return copy ?? value
    }
    let copy: Record<string, unknown> | undefined
    const record = value as Record<string, unknown>
    for (const key in record) {
      const item = record[key]
      const redacted = redactValue(item)
      const redactedKey = redactText(key)
      if (redacted === item && redactedKey === key) continue
      copy ??= { ...record }
      if (redactedKey !== key) delete copy[key]
      copy[redactedKey] = redacted
    }
    return copy ?? value
  }

  const line = (json: string): string => {
    if (!occursIn(json)) return json
    const newline = json.endsWith("\n") ? "\n" : ""
    let parsed: unknown
    try {
      parsed = JSON.parse(json)
    } catch {
      // Not JSON after all: plain text replacement still keeps the secret out.
      return redactText(json)
    }
    return JSON.stringify(redactValue(parsed)) + newline
  }

  return { active: true, occursIn, text: redactText, value: redactValue as <A>(value: A) => A, line }
}

/** No secrets known (or `[trust] redact_secrets = false`). */
export const none: Redactor = identity
