import * as Crypto from "node:crypto"
import { Either, Schema } from "effect"
import type { CallError } from "../../domain/Errors.js"
import type { JsonObject } from "../../domain/Mcp.js"

/*
 * One line of the audit log (issue 25, `[audit]`, docs/decisions/029): what a call path hands over (references and
 * numbers, nothing serialised) and the JSON line the writer makes of it, off the call's path; and the line read back
 * by `clawtool audit`.
 */

export const outcomes = ["ok", "error", "denied", "quarantined", "cancelled", "timeout"] as const
export type Outcome = (typeof outcomes)[number]

/** A call that ended with a CallError: trust's refusals and call_timeout by their reason, everything else an error. */
export const outcomeOfError = (error: CallError): Outcome =>
  error.reason === "Denied"
    ? "denied"
    : error.reason === "Quarantined"
      ? "quarantined"
      : error.reason === "Timeout"
        ? "timeout"
        : "error"

/** A call that was answered with a result: an `isError` result is an error. */
export const outcomeOfResult = (result: unknown): Outcome =>
  (result as { readonly isError?: unknown } | null)?.isError === true ? "error" : "ok"

/** What a call path records: cheap to make (the line is built later, by the writer). */
export interface AuditCall {
  /** When the call started (epoch ms). */
  readonly at: number
  readonly durationMs: number
  /** The daemon's session id; absent on stdio. */
  readonly session: string | undefined
  /** The host's clientInfo.name from its initialize. */
  readonly client: string | undefined
  /** The profile the session sees (issue 26); absent: the whole catalog. */
  readonly profile?: string | undefined
  /** The name of the daemon token the session came with (never the token). */
  readonly token?: string | undefined
  /** The source instance, "core" for clawtool's own tools, absent for a name nothing routes to. */
  readonly instance: string | undefined
  /** The tool's own name (the wire name when nothing routes it). */
  readonly tool: string
  readonly outcome: Outcome
  /** The call's arguments as the host sent them (kept by reference; hashed or written by the writer). */
  readonly arguments: JsonObject | undefined
  /** UTF-8 bytes of the result's JSON as answered. */
  readonly bytesOut: number
  readonly traceId: string | undefined
  /** The core tool whose code made the call (`RunCode`, ADR 035); absent for a host's own call. */
  readonly via?: string | undefined
}

export type ArgsMode = "none" | "redacted" | "full"

/** Replaces known secrets in a text (the redaction service's; `args = "redacted"` needs one). */
export type Redactor = (text: string) => string

/** SHA-256 in hex: Node's one-shot `crypto.hash` (20.12+; no Hash object per line), else a Hash. */
const sha256: (text: string) => string =
  typeof Crypto.hash === "function"
    ? (text) => Crypto.hash("sha256", text, "hex")
    : (text) => Crypto.createHash("sha256").update(text).digest("hex")

// The ISO time's date and second, kept while the lines of a batch fall in the same second (toISOString per line is a
// third of the line's cost).
let isoSecond = Number.NaN
let isoPrefix = ""
const isoTime = (at: number): string => {
  const ms = Math.floor(at)
  const second = Math.floor(ms / 1000)
  if (second !== isoSecond) {
    isoSecond = second
    isoPrefix = new Date(second * 1000).toISOString().slice(0, -4) // "2026-01-02T03:04:05." (".000Z" cut)
  }
  return `${isoPrefix}${String(ms - second * 1000).padStart(3, "0")}Z`
}

// The JSON of the names a line repeats (session, client, instance, tool, …), made once per name, not per line.
const quotedNames = new Map<string, string>()
const quoted = (name: string): string => {
  let json = quotedNames.get(name)
  if (json === undefined) {
    if (quotedNames.size >= 1024) quotedNames.clear()
    json = JSON.stringify(name)
    quotedNames.set(name, json)
  }
  return json
}

const finite = (value: number) => (Number.isFinite(value) ? value : 0)

/**
 * The line (without its newline), written as text: no object is built for it. The arguments are their JSON as the host
 * sent them (JSON.stringify of what its request parsed to: the host's key order, no whitespace; absent arguments are
 * `{}`). `none`: that JSON's SHA-256 (hex) only; `redacted`: the arguments with every secret `redact` knows replaced;
 * `full`: as sent. Every string goes through JSON.stringify, which escapes control characters, so nothing a source or
 * host named can forge or hide a line (CWE-117).
 */
export const format = (call: AuditCall, mode: ArgsMode, redact: Redactor | undefined): string => {
  const args = JSON.stringify(call.arguments ?? {})
  const argsField =
    mode === "full"
      ? `"args":${args}`
      : mode === "redacted" && redact !== undefined
        ? `"args":${redactedArgs(args, redact)}`
        : `"args_sha256":"${sha256(args)}"`
  return (
    `{"time":"${isoTime(call.at)}"` +
    (call.session === undefined ? "" : `,"session":${quoted(call.session)}`) +
    (call.client === undefined ? "" : `,"client":${quoted(call.client)}`) +
    (call.profile === undefined ? "" : `,"profile":${quoted(call.profile)}`) +
    (call.token === undefined ? "" : `,"token":${quoted(call.token)}`) +
    (call.instance === undefined ? "" : `,"instance":${quoted(call.instance)}`) +
    `,"tool":${quoted(call.tool)},"outcome":"${call.outcome}"` +
    `,"duration_ms":${finite(Math.round(call.durationMs * 100) / 100)}` +
    `,"bytes_in":${Buffer.byteLength(args)},"bytes_out":${finite(call.bytesOut)}` +
    (call.traceId === undefined ? "" : `,"trace_id":${JSON.stringify(call.traceId)}`) +
    (call.via === undefined ? "" : `,"via":${quoted(call.via)}`) +
    `,${argsField}}`
  )
}

/** The redacted JSON when it is still JSON; a redactor that broke it leaves the redacted text as a JSON string. */
const redactedArgs = (args: string, redact: Redactor): string => {
  const text = redact(args)
  try {
    JSON.parse(text)
    return text
  } catch {
    return JSON.stringify(text)
  }
}

/** The line written when the queue had dropped lines and has room again. */
export const droppedLine = (at: number, dropped: number): string =>
  JSON.stringify({ time: new Date(at).toISOString(), dropped })

// =============================================================================
// Reading (clawtool audit)
// =============================================================================

export const Entry = Schema.Struct({
  time: Schema.String,
  session: Schema.optional(Schema.String),
  client: Schema.optional(Schema.String),
  profile: Schema.optional(Schema.String),
  token: Schema.optional(Schema.String),
  instance: Schema.optional(Schema.String),
  tool: Schema.String,
  outcome: Schema.Literal(...outcomes),
  duration_ms: Schema.Number,
  bytes_in: Schema.Number,
  bytes_out: Schema.Number,
  trace_id: Schema.optional(Schema.String),
  via: Schema.optional(Schema.String),
  args_sha256: Schema.optional(Schema.String),
  args: Schema.optional(Schema.Unknown)
})
export type Entry = typeof Entry.Type

export const Dropped = Schema.Struct({ time: Schema.String, dropped: Schema.Number })
export type Dropped = typeof Dropped.Type

const decodeLine = Schema.decodeUnknownEither(Schema.parseJson(Schema.Union(Entry, Dropped)))

/** A line of the file, or why it cannot be read (the caller names the file and line). */
export const parse = (text: string): Either.Either<Entry | Dropped, string> =>
  Either.mapLeft(decodeLine(text), () => "not an audit line")

export const isDropped = (line: Entry | Dropped): line is Dropped => "dropped" in line

/**
 * `--tool`: `<instance>.<tool>`, `<instance>.*`, or a core tool's name (`Bash`), as `[tools]` and `[trust] confirm`
 * name tools.
 */
export const matches = (selector: string, entry: Entry): boolean => {
  if (entry.instance === undefined || entry.instance === "core") return selector === entry.tool
  const dot = selector.indexOf(".")
  if (dot === -1 || selector.slice(0, dot) !== entry.instance) return false
  const tool = selector.slice(dot + 1)
  return tool === "*" || tool === entry.tool
}
