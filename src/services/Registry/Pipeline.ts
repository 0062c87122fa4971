import { createHash } from "node:crypto"
import type { JsonObject, Tool } from "../../domain/Mcp.js"
import * as Clean from "../Trust/Clean.js"

/**
 * The tools/list pipeline, as in the Go seed: hidden characters removed (Trust/Clean.ts), usage hints, then alwaysLoad,
 * then a deterministic sort LAST (so nothing after it can disturb the order). Each step is pure, returns new objects and leaves tools it does not
 * touch exactly as they were, without adding an empty `_meta`.
 */

export const alwaysLoadKey = "anthropic/alwaysLoad"

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** `_meta.clawtool.usage_hint = hint`: extends an existing `_meta.clawtool` object, replaces a non-object one. */
export const withUsageHint = (tool: Tool, hint: string): Tool => {
  const meta = tool._meta ?? {}
  const clawtool = isObject(meta.clawtool) ? meta.clawtool : {}
  return { ...tool, _meta: { ...meta, clawtool: { ...clawtool, usage_hint: hint } } }
}

export const applyUsageHints = (
  tools: ReadonlyArray<Tool>,
  hints: ReadonlyMap<string, string>
): ReadonlyArray<Tool> => {
  if (hints.size === 0) return tools
  return tools.map((tool) => {
    const hint = hints.get(tool.name)
    return hint === undefined || hint.trim() === "" ? tool : withUsageHint(tool, hint)
  })
}

/** `_meta["anthropic/alwaysLoad"] = true` (a flat key with a slash, as Claude Code reads it). */
export const withAlwaysLoad = (tool: Tool): Tool => ({ ...tool, _meta: { ...tool._meta, [alwaysLoadKey]: true } })

/** `withAlwaysLoad` on the hot set. */
export const applyAlwaysLoad = (tools: ReadonlyArray<Tool>, hot: ReadonlySet<string>): ReadonlyArray<Tool> => {
  if (hot.size === 0) return tools
  return tools.map((tool) => (hot.has(tool.name) ? withAlwaysLoad(tool) : tool))
}

/** One tool through the pipeline's per-tool steps (the usage hint, then alwaysLoad), as `pipeline` does it. */
export const shapeTool = (tool: Tool, hint: string | undefined, alwaysLoad: boolean): Tool => {
  const hinted = hint === undefined || hint.trim() === "" ? tool : withUsageHint(tool, hint)
  return alwaysLoad ? withAlwaysLoad(hinted) : hinted
}

/** Byte-wise (code unit) order; wire names are ASCII, so this is byte order. */
export const byteOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** Stable sort by wire name; fields untouched. */
export const sortByName = (tools: ReadonlyArray<Tool>): ReadonlyArray<Tool> =>
  [...tools].sort((a, b) => byteOrder(a.name, b.name))

/** The whole pipeline; the sort is the last step. */
export const pipeline = (
  tools: ReadonlyArray<Tool>,
  options: { readonly hints: ReadonlyMap<string, string>; readonly alwaysLoad: ReadonlySet<string> }
): ReadonlyArray<Tool> =>
  sortByName(applyAlwaysLoad(applyUsageHints(tools.map(Clean.tool), options.hints), options.alwaysLoad))

// --- Catalog stability ---------------------------------------------------------------------------------------------

/**
 * A copy with every object's keys in byte order, recursively (arrays keep their order): the same catalog then
 * serialises to the same bytes however a child or a schema library ordered its keys (prompt-cache stability).
 */
export const canonical = <A>(value: A): A => {
  if (Array.isArray(value)) return value.map(canonical) as A
  if (!isObject(value)) return value
  const out: Record<string, unknown> = {}
  // The default sort compares UTF-16 code units: byte order for these keys, and faster than a comparator.
  for (const key of Object.keys(value).sort()) {
    const inner = value[key]
    if (inner !== undefined) out[key] = canonical(inner)
  }
  return out as A
}

/** JSON with canonical key order. */
export const canonicalJson = (value: unknown): string => JSON.stringify(canonical(value))

/**
 * The catalog hash: sha256 (hex) over the sha256 of each listed tool's canonical JSON, in list order. Any change to a
 * tool's definition, a name or the order changes it; each tool's digest is computed once per shape (Catalog keeps
 * it), so a rebuild hashes 32 bytes per tool instead of the whole catalog's JSON.
 */
export const catalogHash = (tools: ReadonlyArray<Tool>): string =>
  hashOfDigests(tools.map((tool) => toolDigest(canonicalJson(tool))))

/** sha256 of one tool's canonical JSON. */
export const toolDigest = (json: string): Buffer => createHash("sha256").update(json).digest()

export const hashOfDigests = (digests: ReadonlyArray<Buffer>): string =>
  createHash("sha256")
    .update(Buffer.concat(digests as Array<Buffer>))
    .digest("hex")

/** A rough token count of one tool's definition as the host receives it (~4 characters per token). */
export const estimateTokens = (tool: Tool): number => tokensOfJson(canonicalJson(tool))

/** `estimateTokens` from the tool's canonical JSON. */
export const tokensOfJson = (json: string): number => Math.ceil(json.length / 4)
