import { createHash } from "node:crypto"
import * as WireName from "../../domain/WireName.js"

/** What hosts accept as a tool name (Claude, OpenAI, Cursor): the limit is the budget, checked separately. */
export const wireCharacters = /^[a-zA-Z0-9_-]+$/

export const defaultBudget = 64

/** Length of the hash suffix of a shortened name: 8 hex digits (32 bits) keeps accidental clashes negligible. */
export const hashLength = 8

/** Every character a host would reject becomes `_` (SEP-986 allows `.` and `/`, which many hosts refuse). */
export const sanitize = (name: string): string => name.replace(/[^a-zA-Z0-9_-]/g, "_")

/** A stable short hash of the ORIGINAL (instance, tool): it never depends on which other tools exist. */
export const shortHash = (instance: string, tool: string): string =>
  createHash("sha256").update(`${instance}\u0000${tool}`).digest("hex").slice(0, hashLength)

export type Shaping = "as-is" | "sanitized" | "shortened"

export interface Mapped {
  readonly wire: string
  readonly instance: string
  readonly tool: string
  readonly shaping: Shaping
}

/**
 * The wire name of one source tool: `<instance>__<tool>` with foreign characters mapped to `_`; when longer than the
 * budget, cut to `budget - 9` characters plus `_<8 hex>` of the original names. A function of (instance, tool, budget)
 * only, so adding a source never renames another source's tools (agentgateway#495).
 */
export const wireName = (instance: string, tool: string, budget: number = defaultBudget): Mapped => {
  const natural = WireName.make(instance, tool)
  const clean = WireName.make(instance, sanitize(tool))
  if (clean.length <= budget) {
    return { wire: clean, instance, tool, shaping: clean === natural ? "as-is" : "sanitized" }
  }
  const suffix = `_${shortHash(instance, tool)}`
  return { wire: `${clean.slice(0, budget - suffix.length)}${suffix}`, instance, tool, shaping: "shortened" }
}

/** A wire name claimed by more than one tool: the first keeps it, the others are not served. */
export interface Collision {
  readonly wire: string
  /** `<instance>.<tool>` for source tools, the bare name for core tools. */
  readonly kept: string
  readonly dropped: ReadonlyArray<string>
}

export interface Claim<A> {
  readonly wire: string
  /** `<instance>.<tool>` or the core tool's name: what a person reads in a collision report. */
  readonly label: string
  /** Lower wins: core tools first, then names that needed no change, then the rest. */
  readonly rank: number
  readonly value: A
}

const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/**
 * Resolves wire-name claims: per wire name the claim with the lowest rank wins, ties by byte order of the label (a
 * deterministic rule, independent of the order children answered in); losers are reported, never overwritten silently.
 */
export const resolveClaims = <A>(
  claims: ReadonlyArray<Claim<A>>
): { readonly kept: ReadonlyArray<Claim<A>>; readonly collisions: ReadonlyArray<Collision> } => {
  // Almost every wire name has one claim: it is stored bare, and only a contested name gets an array and a sort.
  const byWire = new Map<string, Claim<A> | Array<Claim<A>>>()
  for (const claim of claims) {
    const seen = byWire.get(claim.wire)
    if (seen === undefined) byWire.set(claim.wire, claim)
    else if (Array.isArray(seen)) seen.push(claim)
    else byWire.set(claim.wire, [seen, claim])
  }
  const kept: Array<Claim<A>> = []
  const collisions: Array<Collision> = []
  for (const [wire, entry] of byWire) {
    if (!Array.isArray(entry)) {
      kept.push(entry as Claim<A>)
      continue
    }
    const sorted = entry.sort((a, b) => a.rank - b.rank || byteOrder(a.label, b.label))
    kept.push(sorted[0]!)
    collisions.push({ wire, kept: sorted[0]!.label, dropped: sorted.slice(1).map((claim) => claim.label) })
  }
  collisions.sort((a, b) => byteOrder(a.wire, b.wire))
  return { kept, collisions }
}

/** Rank of a source tool's claim: names that needed no change beat sanitized and shortened ones. */
export const sourceRank = (shaping: Shaping): number => (shaping === "as-is" ? 1 : 2)
export const coreRank = 0
