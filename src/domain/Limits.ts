import { Context } from "effect"

/**
 * What one peer may send through clawtool, on both edges (`[limits]` in the config, docs/decisions/010). A message
 * past a limit fails the one request it carries, never clawtool: V8's JSON.parse copes with any nesting but
 * JSON.stringify (and every recursive walk after it) overflows the stack at a few thousand levels.
 */
export interface Limits {
  /** Deepest nesting of objects and arrays in one JSON-RPC message (`{}` is 1, `{"a":[]}` is 2). */
  readonly maxDepth: number
  /** Longest line (one message) read from the host or a child; a longer one is consumed and answered with an error. */
  readonly maxLineBytes: number
  /** Host requests read and not yet answered; at the limit clawtool stops reading stdin until one is answered. */
  readonly maxInFlight: number
}

export const defaultLimits: Limits = {
  maxDepth: 512,
  maxLineBytes: 64 * 1024 * 1024,
  maxInFlight: 1024
}

/** The limits in effect: the config's `[limits]` in the app (layers/Main.ts), the defaults anywhere else. */
export class CurrentLimits extends Context.Reference<CurrentLimits>()("clawtool/Limits", {
  defaultValue: (): Limits => defaultLimits
}) {}

/**
 * True when `value` nests objects and arrays deeper than `max`. Iterative (an explicit stack), so it is safe on any
 * value JSON.parse returns; a line shorter than 2 × max characters cannot be too deep (each level needs an opening and
 * a closing bracket), so callers skip the walk for the usual small message.
 */
export const exceedsDepth = (value: unknown, max: number): boolean => {
  if (typeof value !== "object" || value === null) return false
  const values: Array<object> = [value]
  const depths: Array<number> = [1]
  while (values.length > 0) {
    const current = values.pop()!
    const depth = depths.pop()!
    if (depth > max) return true
    if (Array.isArray(current)) {
      for (const item of current) {
        if (typeof item === "object" && item !== null) {
          values.push(item)
          depths.push(depth + 1)
        }
      }
    } else {
      for (const key in current) {
        const item = (current as Record<string, unknown>)[key]
        if (typeof item === "object" && item !== null) {
          values.push(item)
          depths.push(depth + 1)
        }
      }
    }
  }
  return false
}

/** Whether a line of `length` characters needs the depth walk at all. */
export const mayExceedDepth = (length: number, max: number): boolean => length > 2 * max

/** A JSON-RPC id as JSON-RPC allows it (string or number); null/absent/other is not a usable id. */
export const usableId = (message: unknown): string | number | undefined => {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return undefined
  const id = (message as { id?: unknown }).id
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : undefined
}

/**
 * The id of a line that was too long to keep, when it can be read at either end of the line: `{"jsonrpc":"2.0","id":7,`
 * at the start (most hosts), or `,"id":7}` at the end (the MCP SDK writes `result` first and `id` last). Best effort:
 * a line whose id is in the middle is answered with id null.
 */
export const idAtEdges = (head: string, tail: string): string | number | undefined => {
  const match =
    /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,16})\s*[,}]/.exec(head) ??
    /[,{]\s*"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,16})\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$/.exec(tail)
  if (match === null) return undefined
  try {
    return JSON.parse(match[1]!) as string | number
  } catch {
    return undefined
  }
}
