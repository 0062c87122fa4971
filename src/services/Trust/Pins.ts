import { Either, Schema } from "effect"
import { createHash } from "node:crypto"
import { canonical } from "../../domain/ConfigDiff.js"
import type { TrustConfig } from "../../domain/Config/Trust.js"
import { ConfigError } from "../../domain/Errors.js"
import type { JsonObject, Tool } from "../../domain/Mcp.js"
import { lineColumn } from "../Config/Locate.js"
import { decodeStrict } from "../Config/Wording.js"
import type { InstanceTools } from "../Registry/CatalogTypes.js"
import { type Suspicion, suspicions } from "./Suspicious.js"

/*
 * Pins and quarantine (issue 25, ADR 029), the pure core: a tool's pinned definition and its hash, the lock file's
 * text both ways, and the verdict on every tool a source lists against what was pinned. The Pins service holds the
 * state and the file; this file does no I/O.
 */

/** The parts of a tool that make its contract; everything else (`_meta`, icons) may change freely. */
const contractKeys = ["name", "title", "description", "inputSchema", "outputSchema", "annotations"] as const

/** A tool's contract as the source sent it (before any cleaning), with its sha256 over canonical JSON. */
export interface Definition {
  readonly hash: string
  /** The contract's members present, keys sorted at every depth (what the lock file keeps). */
  readonly definition: JsonObject
}

const definitions = new WeakMap<Tool, Definition>()

/** A tool's pinned form; memoised per tool object (a source keeps its objects until it lists again). */
export const definitionOf = (tool: Tool): Definition => {
  const cached = definitions.get(tool)
  if (cached !== undefined) return cached
  const picked: Record<string, unknown> = {}
  for (const key of contractKeys) if (tool[key] !== undefined) picked[key] = tool[key]
  const text = canonical(picked)
  const made = { hash: createHash("sha256").update(text).digest("hex"), definition: JSON.parse(text) as JsonObject }
  definitions.set(tool, made)
  return made
}

/** Which of the contract's parts differ between two definitions (`description`, `inputSchema`…). */
export const changedParts = (before: JsonObject, after: JsonObject): ReadonlyArray<string> =>
  contractKeys.filter((key) => canonical(before[key]) !== canonical(after[key]))

// --- The lock file ----------------------------------------------------------------------------------------------

/** One pinned tool. `approved`: pinned by `clawtool trust approve` (a person looked), not on first use or `allow`. */
export interface Pin {
  readonly hash: string
  readonly definition: JsonObject
  readonly approved?: boolean | undefined
}

/** Why a tool waits for approval (or was let through with a warning). */
export type Why = "changed" | "new" | "first use" | "suspicious"

/** A definition the pins do not cover, recorded so `trust diff` and `trust approve` need no running source. */
export interface Pending {
  readonly hash: string
  readonly definition: JsonObject
  readonly why: Why
  /** Held from the host (else listed with a warning). */
  readonly held: boolean
  readonly suspicions?: ReadonlyArray<Suspicion> | undefined
}

/** The lock file's content: per instance, per tool. An instance present in `pins` (even empty) has been seen. */
export interface Lock {
  readonly pins: ReadonlyMap<string, ReadonlyMap<string, Pin>>
  readonly pending: ReadonlyMap<string, ReadonlyMap<string, Pending>>
}

export const emptyLock: Lock = { pins: new Map(), pending: new Map() }

const WhySchema = Schema.Literal("changed", "new", "first use", "suspicious")
const Hash = Schema.String.pipe(
  Schema.pattern(/^[0-9a-f]{64}$/, { message: () => "hash must be a sha256 in hex (64 characters)" })
)
const Definition = Schema.Record({ key: Schema.String, value: Schema.Unknown })
const LockFile = Schema.Struct({
  version: Schema.Literal(1),
  pins: Schema.Record({
    key: Schema.String,
    value: Schema.Record({
      key: Schema.String,
      value: Schema.Struct({ hash: Hash, definition: Definition, approved: Schema.optional(Schema.Boolean) })
    })
  }),
  pending: Schema.optionalWith(
    Schema.Record({
      key: Schema.String,
      value: Schema.Record({
        key: Schema.String,
        value: Schema.Struct({
          hash: Hash,
          definition: Definition,
          why: WhySchema,
          held: Schema.Boolean,
          suspicions: Schema.optional(Schema.Array(Schema.Struct({ rule: Schema.String, detail: Schema.String })))
        })
      })
    }),
    { default: () => ({}) }
  )
})

const nested = <A>(record: Readonly<Record<string, Readonly<Record<string, A>>>>) =>
  new Map(Object.entries(record).map(([instance, tools]) => [instance, new Map(Object.entries(tools))]))

/** The lock file's text to a Lock; a syntax or shape error is a ConfigError at its line (`file:line at key: …`). */
export const parseLock = (text: string, file: string): Either.Either<Lock, ConfigError> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (cause) {
    const message = cause instanceof Error ? cause.message : String(cause)
    const position = /position (\d+)/.exec(message)?.[1]
    const at = position === undefined ? undefined : lineColumn(text, Number(position))
    return Either.left(
      new ConfigError({
        reason: "Syntax",
        file,
        line: at?.line,
        column: at?.column,
        detail: `invalid JSON in the lock file: ${message.replace(/ in JSON at position \d+.*$/, "")}`
      })
    )
  }
  return Either.map(decodeStrict(LockFile, json, { file, text, format: "json" }), (decoded): Lock => ({
    pins: nested(decoded.pins),
    pending: nested(decoded.pending)
  }))
}

const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** A nested map as an object with its keys in byte order (one sort per level: n log n for any size). */
const sortedRecord = <A>(map: ReadonlyMap<string, ReadonlyMap<string, A>>, each: (value: A) => unknown) =>
  Object.fromEntries(
    [...map.keys()].sort(byteOrder).map((instance) => {
      const tools = map.get(instance)!
      return [
        instance,
        Object.fromEntries([...tools.keys()].sort(byteOrder).map((tool) => [tool, each(tools.get(tool)!)]))
      ]
    })
  )

/** The lock file's text: stable order, two-space indents, one member per line, so a change reads as a diff. */
export const formatLock = (lock: Lock): string =>
  JSON.stringify(
    {
      version: 1,
      pins: sortedRecord(lock.pins, (pin) => ({
        hash: pin.hash,
        ...(pin.approved === true ? { approved: true } : {}),
        definition: pin.definition
      })),
      pending: sortedRecord(lock.pending, (pending) => ({
        hash: pending.hash,
        why: pending.why,
        held: pending.held,
        ...(pending.suspicions === undefined || pending.suspicions.length === 0
          ? {}
          : { suspicions: pending.suspicions }),
        definition: pending.definition
      }))
    },
    null,
    2
  ) + "\n"

// --- Verdicts ---------------------------------------------------------------------------------------------------

export type Policy = Pick<TrustConfig, "first_use" | "on_change" | "new_tools" | "on_suspicious">

/** What `tools list` shows in its TRUST column. */
export type Mark = "pinned" | "changed" | "new" | "suspicious"

/** One instance's verdicts: the tools held back (tool → why, as a sentence) and every tool's mark. */
export interface InstanceVerdicts {
  readonly held: ReadonlyMap<string, string>
  readonly marks: ReadonlyMap<string, Mark>
}

export interface Judgement {
  readonly byInstance: ReadonlyMap<string, InstanceVerdicts>
  /** The lock with this listing's pins and pending entries; the same object when nothing changed. */
  readonly lock: Lock
  /** Tools let through with a warning (`warn`), each with its sentence. */
  readonly warnings: ReadonlyArray<{ readonly key: string; readonly text: string }>
}

export const selectorOf = (instance: string, tool: string) => `${instance}.${tool}`

const commands = (instance: string, tool: string) =>
  `see it with \`clawtool trust diff ${selectorOf(instance, tool)}\`, allow it with \`clawtool trust approve ${selectorOf(instance, tool)}\``

/** The sentence a held or warned tool gets (the CallError's detail, `tools list`'s rule, `trust status`). */
export const reasonOf = (instance: string, tool: string, pending: Pending, pinned: Pin | undefined): string => {
  const who = selectorOf(instance, tool)
  const what =
    pending.why === "changed" && pinned !== undefined
      ? `${who} changed since it was pinned (${changedParts(pinned.definition, pending.definition).join(", ")})`
      : pending.why === "new"
        ? `${who} is a new tool of a pinned source`
        : pending.why === "first use"
          ? `${who} is from a source never pinned before`
          : `${who}'s definition looks suspicious`
  const flagged =
    pending.suspicions === undefined || pending.suspicions.length === 0
      ? ""
      : ` (${pending.suspicions.map((suspicion) => `${suspicion.rule}: ${suspicion.detail}`).join("; ")})`
  return `${what}${flagged}; ${commands(instance, tool)}`
}

const sameEntries = <A>(
  a: ReadonlyMap<string, A> | undefined,
  b: ReadonlyMap<string, A>,
  same: (x: A, y: A) => boolean
) => a !== undefined && a.size === b.size && [...b].every(([key, value]) => a.has(key) && same(a.get(key)!, value))

const samePending = (a: Pending, b: Pending) => a.hash === b.hash && a.why === b.why && a.held === b.held

/**
 * Pure: every listed tool against the lock. Per instance, per tool: pinned and the same, changed (on_change), new to a
 * pinned source (new_tools), of a source never pinned (first_use), suspicious (on_suspicious). Returns the verdicts and
 * the next lock: new pins taken (first use, new tools allowed, changes allowed) and the pending entries of this listing
 * (an instance's pending entries are replaced by its current ones; instances not listed keep theirs). O(tools).
 * `previous`: the last judgement, whose per-instance verdicts are reused when equal (the catalog keeps its parts by
 * identity).
 */
export const judge = (
  input: ReadonlyArray<InstanceTools>,
  lock: Lock,
  policy: Policy,
  previous?: Judgement
): Judgement => {
  const pins = new Map(lock.pins)
  const pending = new Map(lock.pending)
  let lockChanged = false
  const byInstance = new Map<string, InstanceVerdicts>()
  const warnings: Array<{ key: string; text: string }> = []

  for (const { instance, tools } of input) {
    const otherTools = new Set<string>()
    if (input.length > 1) {
      for (const other of input)
        if (other.instance !== instance) for (const tool of other.tools) otherTools.add(tool.name)
    }
    const pinned = lock.pins.get(instance)
    const firstUse = pinned === undefined
    const nextPins = new Map(pinned ?? [])
    let pinsChanged = firstUse && policy.first_use === "pin"
    const nextPending = new Map<string, Pending>()
    const held = new Map<string, string>()
    const marks = new Map<string, Mark>()
    for (const tool of tools) {
      const { hash, definition } = definitionOf(tool)
      const flagged = suspicions(tool, { instance, otherTools })
      const pin = pinned?.get(tool.name)
      const holdSuspicious =
        flagged.length > 0 && policy.on_suspicious === "quarantine" && !(pin?.hash === hash && pin.approved === true)
      const seen: Why | undefined =
        pin === undefined ? (firstUse ? "first use" : "new") : pin.hash !== hash ? "changed" : undefined
      const holdBySeen =
        (seen === "first use" && policy.first_use === "quarantine") ||
        (seen === "new" && policy.new_tools === "quarantine") ||
        (seen === "changed" && policy.on_change === "quarantine")
      const hold = holdBySeen || holdSuspicious
      const why: Why | undefined = holdSuspicious && !holdBySeen ? "suspicious" : seen
      const warn = !hold && why === "changed" && policy.on_change === "warn"
      marks.set(
        tool.name,
        seen === "changed"
          ? "changed"
          : seen === "new" || (seen === "first use" && hold)
            ? "new"
            : flagged.length > 0
              ? "suspicious"
              : "pinned"
      )
      if (hold || warn) {
        const entry: Pending = {
          hash,
          definition,
          why: why ?? "suspicious",
          held: hold,
          suspicions: flagged.length > 0 ? flagged : undefined
        }
        nextPending.set(tool.name, entry)
        const reason = reasonOf(instance, tool.name, entry, pin)
        if (hold) held.set(tool.name, reason)
        else warnings.push({ key: `${selectorOf(instance, tool.name)}@${hash}`, text: reason })
      } else if (pin?.hash !== hash) {
        // Trust on first use, a new tool allowed, a change allowed: pinned as it is now.
        nextPins.set(tool.name, { hash, definition })
        pinsChanged = true
      }
      if (!hold && flagged.length > 0) {
        warnings.push({
          key: `${selectorOf(instance, tool.name)}@${hash}:suspicious`,
          text: `${selectorOf(instance, tool.name)}'s definition looks suspicious (${flagged.map((s) => `${s.rule}: ${s.detail}`).join("; ")})`
        })
      }
    }
    // A pinned tool the source no longer lists keeps its pin: should it come back changed, that is a change.
    if (pinsChanged) {
      pins.set(instance, nextPins)
      lockChanged = true
    }
    const oldPending = lock.pending.get(instance)
    if (
      !(nextPending.size === 0
        ? oldPending === undefined || oldPending.size === 0
        : sameEntries(oldPending, nextPending, samePending))
    ) {
      if (nextPending.size === 0) pending.delete(instance)
      else pending.set(instance, nextPending)
      lockChanged = true
    }
    const kept = previous?.byInstance.get(instance)
    const same =
      kept !== undefined &&
      sameEntries(kept.held, held, (a, b) => a === b) &&
      sameEntries(kept.marks, marks, (a, b) => a === b)
    byInstance.set(instance, same ? kept : { held, marks })
  }
  return { byInstance, lock: lockChanged ? { pins, pending } : lock, warnings }
}

/** The instance and tool a selector names: `<instance>` or `<instance>.<tool>` (instance names have no dot). */
export const parseSelector = (selector: string): { readonly instance: string; readonly tool: string | undefined } => {
  const dot = selector.indexOf(".")
  return dot === -1
    ? { instance: selector, tool: undefined }
    : { instance: selector.slice(0, dot), tool: selector.slice(dot + 1) }
}

/**
 * Pure: the lock with the pending entries a selector names pinned as they are (`approved`: a person looked), and
 * which were. `undefined` selector: every pending entry (`--all`).
 */
export const approve = (
  lock: Lock,
  selector: string | undefined
): { readonly lock: Lock; readonly approved: ReadonlyArray<string> } => {
  const wanted = selector === undefined ? undefined : parseSelector(selector)
  const pins = new Map(lock.pins)
  const pending = new Map(lock.pending)
  const approved: Array<string> = []
  for (const [instance, entries] of lock.pending) {
    if (wanted !== undefined && wanted.instance !== instance) continue
    const nextPins = new Map(lock.pins.get(instance) ?? [])
    const left = new Map(entries)
    for (const [tool, entry] of entries) {
      if (wanted?.tool !== undefined && wanted.tool !== tool) continue
      nextPins.set(tool, { hash: entry.hash, definition: entry.definition, approved: true })
      left.delete(tool)
      approved.push(selectorOf(instance, tool))
    }
    if (left.size === entries.size) continue
    pins.set(instance, nextPins)
    if (left.size === 0) pending.delete(instance)
    else pending.set(instance, left)
  }
  return approved.length === 0 ? { lock, approved } : { lock: { pins, pending }, approved: approved.sort(byteOrder) }
}
