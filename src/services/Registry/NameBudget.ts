import { Option } from "effect"
import { createHash } from "node:crypto"
import type { Collision } from "../../domain/ToolProvider.js"
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

/** `<prefix>__<name>`, or the name itself for the empty prefix (issue 12). */
export const prefixed = (prefix: string, name: string): string => (prefix === "" ? name : WireName.make(prefix, name))

/**
 * Each instance's wire-name prefix (`prefix` in its [sources.<name>] table, default the instance name) and the way
 * back from a prefixed name to the instance. An instance missing from the table is its own prefix.
 */
export interface Prefixes {
  readonly of: (instance: string) => string
  /**
   * `<prefix>__<name>` → the instance owning that prefix and the child's name; a name under no known prefix belongs to
   * the one source with the empty prefix (none when there are several: nothing tells them apart).
   */
  readonly route: (wire: string) => Option.Option<{ readonly instance: string; readonly name: string }>
}

export const makePrefixes = (table: Readonly<Record<string, string>> = {}): Prefixes => {
  const owners = new Map<string, string>()
  const unprefixed: Array<string> = []
  for (const [instance, prefix] of Object.entries(table)) {
    if (prefix === "") unprefixed.push(instance)
    else owners.set(prefix, instance)
  }
  return {
    of: (instance) => table[instance] ?? instance,
    route: (wire) => {
      const split = WireName.split(wire)
      if (Option.isSome(split)) {
        const owner = owners.get(split.value.instance)
        if (owner !== undefined) return Option.some({ instance: owner, name: split.value.tool })
        // An instance the table does not rename keeps its own name as prefix.
        if (unprefixed.length === 0 && !(split.value.instance in table)) {
          return Option.some({ instance: split.value.instance, name: split.value.tool })
        }
      }
      return unprefixed.length === 1 ? Option.some({ instance: unprefixed[0]!, name: wire }) : Option.none()
    }
  }
}

/** Every instance is its own prefix (as before issue 12). */
export const ownPrefixes: Prefixes = makePrefixes()

/**
 * The wire name of one source tool: `<prefix>__<tool>` (prefix: the instance name unless configured) with foreign
 * characters mapped to `_`; when longer than the budget, cut to `budget - 9` characters plus `_<8 hex>` of the original
 * names. A function of (instance, tool, budget, prefix) only, so adding a source never renames another source's tools
 * (agentgateway#495).
 */
export const wireName = (
  instance: string,
  tool: string,
  budget: number = defaultBudget,
  prefix: string = instance
): Mapped => {
  const natural = prefixed(prefix, tool)
  const clean = prefixed(prefix, sanitize(tool))
  if (clean.length <= budget) {
    return { wire: clean, instance, tool, shaping: clean === natural ? "as-is" : "sanitized" }
  }
  const suffix = `_${shortHash(instance, tool)}`
  return { wire: `${clean.slice(0, budget - suffix.length)}${suffix}`, instance, tool, shaping: "shortened" }
}

/** A wire name claimed by more than one tool: the first keeps it, the others are not served (domain/ToolProvider.ts). */
export type { Collision }

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
