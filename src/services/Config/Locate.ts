/**
 * Best-effort line of a key path in TOML text: the line of the table header or `key =` whose full key path is the
 * longest prefix of `path`. Array indexes are ignored (the line of the array's key is close enough).
 */
export const locateToml = (text: string, path: ReadonlyArray<PropertyKey>): number | undefined => {
  const target = keysBeforeIndex(path)
  let table: ReadonlyArray<string> = []
  let best: { score: number; line: number } | undefined
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim()
    if (line === "" || line.startsWith("#")) return
    let candidate: ReadonlyArray<string> | undefined
    if (line.startsWith("[")) {
      const open = line.startsWith("[[") ? 2 : 1
      const keys = parseKeys(line, open)
      if (keys === undefined || line[keys.end] !== "]") return
      table = keys.keys
      candidate = table
    } else {
      const keys = parseKeys(line, 0)
      if (keys === undefined || line[keys.end] !== "=") return
      candidate = [...table, ...keys.keys]
    }
    const score = prefixScore(candidate, target)
    if (score !== undefined && (best === undefined || score > best.score)) best = { score, line: i + 1 }
  })
  return best?.line
}

const keysBeforeIndex = (path: ReadonlyArray<PropertyKey>): ReadonlyArray<string> => {
  const firstIndex = path.findIndex((key) => typeof key === "number")
  return (firstIndex === -1 ? path : path.slice(0, firstIndex)).map(String)
}

/** A candidate that is a prefix of the target scores by its length; one the target is a prefix of, just below that. */
const prefixScore = (candidate: ReadonlyArray<string>, target: ReadonlyArray<string>): number | undefined => {
  const shared = Math.min(candidate.length, target.length)
  for (let i = 0; i < shared; i++) if (candidate[i] !== target[i]) return undefined
  return candidate.length <= target.length ? candidate.length * 2 : target.length * 2 - 1
}

/** A dotted TOML key (bare, "basic" or 'literal' parts) starting at `start`; `end` points past trailing blanks. */
export const parseKeys = (line: string, start: number): { keys: ReadonlyArray<string>; end: number } | undefined => {
  const keys: Array<string> = []
  let i = start
  const blanks = () => {
    while (line[i] === " " || line[i] === "\t") i++
  }
  for (;;) {
    blanks()
    if (line[i] === '"') {
      const match = /^"(?:[^"\\]|\\.)*"/.exec(line.slice(i))
      if (match === null) return undefined
      try {
        keys.push(JSON.parse(match[0]) as string)
      } catch {
        keys.push(match[0].slice(1, -1))
      }
      i += match[0].length
    } else if (line[i] === "'") {
      const close = line.indexOf("'", i + 1)
      if (close === -1) return undefined
      keys.push(line.slice(i + 1, close))
      i = close + 1
    } else {
      const match = /^[A-Za-z0-9_-]+/.exec(line.slice(i))
      if (match === null) return undefined
      keys.push(match[0])
      i += match[0].length
    }
    blanks()
    if (line[i] !== ".") return { keys, end: i }
    i++
  }
}

export const lineColumn = (text: string, offset: number): { line: number; column: number } => {
  const before = text.slice(0, offset).split("\n")
  return { line: before.length, column: (before.at(-1)?.length ?? 0) + 1 }
}

/** Best-effort line of a key path in JSON text: each `"key":` is searched for after the previous one. */
export const locateJson = (text: string, path: ReadonlyArray<PropertyKey>): number | undefined => {
  let offset: number | undefined
  for (const key of keysBeforeIndex(path)) {
    const escaped = JSON.stringify(key).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
    const match = new RegExp(`${escaped}\\s*:`, "g")
    match.lastIndex = offset ?? 0
    const found = match.exec(text)
    if (found === null) break
    offset = found.index
  }
  return offset === undefined ? undefined : lineColumn(text, offset).line
}
