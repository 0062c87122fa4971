import type { CoreResult } from "./Manifest.js"

/**
 * The output budget of core tools (`[core_tools] max_output`): no result carries more characters than that, text and
 * structured content counted together, since hosts may forward either channel or both. Too much text keeps its head
 * and its tail (errors and summaries tend to be at the end) around a marker saying what was cut and how to get it.
 */

export interface Fitted {
  readonly text: string
  readonly truncated: boolean
  /** Characters left out (0 when the text fits). */
  readonly omitted: number
}

const number = (n: number) => n.toLocaleString("en-US")

/** `[… 41,220 characters (812 lines) omitted; <how to get them> …]` on a line of its own. */
export const marker = (omitted: number, lines: number, hint: string) =>
  `\n[… ${number(omitted)} characters (${number(lines)} lines) omitted; ${hint} …]\n`

const countLines = (text: string) => {
  let lines = text.length === 0 ? 0 : 1
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) lines++
  return lines
}

/** A cut never splits a UTF-16 surrogate pair. */
const headOf = (text: string, length: number) => {
  const end = length > 0 && /[\uD800-\uDBFF]/.test(text[length - 1] ?? "") ? length - 1 : length
  return text.slice(0, end)
}
const tailOf = (text: string, length: number) => {
  const start = text.length - length
  return text.slice(length > 0 && /[\uDC00-\uDFFF]/.test(text[start] ?? "") ? start + 1 : start)
}

/** Snaps a cut to a line boundary when one is near (within a quarter of the kept part), so lines stay whole. */
const snapHead = (head: string) => {
  const newline = head.lastIndexOf("\n")
  return newline >= head.length * 0.75 ? head.slice(0, newline) : head
}
const snapTail = (tail: string) => {
  const newline = tail.indexOf("\n")
  return newline !== -1 && newline < tail.length * 0.25 ? tail.slice(newline + 1) : tail
}

/**
 * `text` within `budget` characters: unchanged when it fits, else head + marker + tail. `hint` says how to get the
 * rest ("pass offset=2001", "narrow the pattern"). Below the marker's own size only the head is kept.
 */
export const fit = (text: string, budget: number, hint: string): Fitted => {
  if (text.length <= budget) return { text, truncated: false, omitted: 0 }
  const limit = Math.max(0, Math.floor(budget))
  // The marker's length depends on the numbers in it; the widest numbers bound it.
  const reserve = marker(text.length, countLines(text), hint).length
  if (reserve >= limit) {
    const head = headOf(text, limit)
    return { text: head, truncated: true, omitted: text.length - head.length }
  }
  const room = limit - reserve
  const head = snapHead(headOf(text, Math.ceil(room / 2)))
  const tail = snapTail(tailOf(text, Math.floor(room / 2)))
  const omitted = text.length - head.length - tail.length
  // The marker stands on its own line between the kept lines; the newlines around it are part of the cut.
  const lines = Math.max(1, countLines(text) - countLines(head) - countLines(tail))
  return { text: head + marker(omitted, lines, hint) + tail, truncated: true, omitted }
}

/** Characters the structured content takes on the wire (its JSON). */
export const sizeOf = (structured: unknown): number => JSON.stringify(structured)?.length ?? 0

/**
 * A result within `maxOutput`: the text gets what the structured content and extra blocks leave. Handlers keep their
 * structured content small (metadata, capped lists); the text carries the payload.
 */
export const fitResult = <O>(result: CoreResult<O>, maxOutput: number, hint: string): CoreResult<O> => {
  const extra = (result.content ?? []).reduce(
    (sum, block) => sum + (block.type === "text" ? block.text.length : block.data.length),
    0
  )
  const fitted = fit(result.text, maxOutput - sizeOf(result.structured) - extra, hint)
  return fitted.truncated ? { ...result, text: fitted.text } : result
}
