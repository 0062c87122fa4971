import { createHash } from "node:crypto"
import { Either, Schema } from "effect"
import { canonical } from "../../domain/ConfigDiff.js"
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

const optional = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: V }

/**
 * The line (without its newline). `none`: the SHA-256 (hex) of the arguments' canonical JSON only; `redacted`: the
 * arguments with every secret `redact` knows replaced; `full`: as sent. Absent arguments count as `{}`. JSON escapes
 * control characters, so nothing a source or host named can forge or hide a line (CWE-117).
 */
export const format = (call: AuditCall, mode: ArgsMode, redact: Redactor | undefined): string => {
  const args = canonical(call.arguments ?? {})
  const argsField =
    mode === "full"
      ? { args: JSON.parse(args) as unknown }
      : mode === "redacted" && redact !== undefined
        ? { args: redactedArgs(args, redact) }
        : { args_sha256: createHash("sha256").update(args).digest("hex") }
  return JSON.stringify({
    time: new Date(call.at).toISOString(),
    ...optional("session", call.session),
    ...optional("client", call.client),
    ...optional("instance", call.instance),
    tool: call.tool,
    outcome: call.outcome,
    duration_ms: Math.round(call.durationMs * 100) / 100,
    bytes_in: Buffer.byteLength(args),
    bytes_out: call.bytesOut,
    ...optional("trace_id", call.traceId),
    ...optional("via", call.via),
    ...argsField
  })
}

/** The redacted JSON as JSON again; a redactor that broke it leaves the redacted text as a string. */
const redactedArgs = (args: string, redact: Redactor): unknown => {
  const text = redact(args)
  try {
    return JSON.parse(text) as unknown
  } catch {
    return text
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
