import { Schema } from "effect"

/**
 * Bad configuration: one clear message naming the file, the line (when known) and the key path.
 * The CLI maps it to exit code 2 and nothing is spawned.
 */
export class ConfigError extends Schema.TaggedError<ConfigError>("clawtool/ConfigError")("ConfigError", {
  reason: Schema.Literal("NotFound", "Unreadable", "Syntax", "Invalid"),
  file: Schema.String,
  line: Schema.optional(Schema.Number),
  /** Only for syntax errors, where the parser knows it. */
  column: Schema.optional(Schema.Number),
  keyPath: Schema.optional(Schema.String),
  detail: Schema.String
}) {
  /** `config /x/config.toml:7 at sources.fs.startup_timeout: expected …` (file:line[:column], as compilers print it). */
  override get message() {
    const line = this.line === undefined ? "" : `:${this.line}${this.column === undefined ? "" : `:${this.column}`}`
    const key = this.keyPath === undefined || this.keyPath === "" ? "" : ` at ${this.keyPath}`
    return `config ${this.file}${line}${key}: ${this.detail}`
  }
}

/**
 * Why one source is not running. Recorded in that instance's Health; never stops another instance. `Recursion`: the
 * source started clawtool again with a config a clawtool above it already serves (ADR 013); it is never restarted.
 * Remote sources (ADR 018): `Connect` (no connection: refused, DNS, TLS, dropped), `Http` (an HTTP status the
 * transport cannot use; the code is in the detail), `Unauthenticated` (401/403, a missing header secret, or an OAuth
 * source without a login).
 */
export const SourceFailure = Schema.Literal(
  "Spawn",
  "Initialize",
  "ListTools",
  "Timeout",
  "MissingSecrets",
  "Exited",
  "Recursion",
  /** The child exited on the era probe (ADR 033): it is started again at once as legacy, never probed again. */
  "EraProbe",
  "Connect",
  "Http",
  "Unauthenticated"
)
export type SourceFailure = typeof SourceFailure.Type

export class SourceError extends Schema.TaggedError<SourceError>("clawtool/SourceError")("SourceError", {
  instance: Schema.String,
  reason: SourceFailure,
  detail: Schema.String,
  /** The child answered with an authentication error code (never guessed from message text). */
  auth: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  cause: Schema.optional(Schema.Defect)
}) {
  override get message() {
    return `source "${this.instance}": ${this.reason}: ${this.detail}`
  }
}

/** A tools/call that cannot be routed or delivered. The Gateway turns it into an error result or a JSON-RPC error. */
export class CallError extends Schema.TaggedError<CallError>("clawtool/CallError")("CallError", {
  tool: Schema.String,
  reason: Schema.Literal(
    "NoSuchInstance",
    "NoSuchTool",
    "NotRunning",
    "InvalidArguments",
    "Child",
    "Transport",
    /** No answer within the source's call_timeout; the call was cancelled at the child. */
    "Timeout",
    // Core tools (issue 14): each refusal says what to do instead.
    "OutsideRoots",
    "NotFound",
    "IsDirectory",
    "NotRegularFile",
    "Binary",
    "TooLarge",
    "NotRead",
    "StaleRead",
    "NoMatch",
    "Ambiguous",
    "NoChange",
    "Blocked",
    "BackendMissing",
    "MissingSecret",
    /** The call needs state that outlives it (a background run) and the caller has no session to own it (stateless). */
    "NoSession",
    /** Trust (issue 25): the tool is held back (a changed, new or suspicious definition) until `clawtool trust approve`. */
    "Quarantined",
    /** Trust (issue 25): the user declined, did not answer in time, or could not be asked (confirm, read_only). */
    "Denied",
    /** The operation failed on the machine (permissions, a full disk, a tool that exited badly). */
    "Failed"
  ),
  detail: Schema.String,
  /** JSON-RPC error code the child answered with, when reason is Child. */
  code: Schema.optional(Schema.Number),
  /** The `data` of the child's JSON-RPC error, when reason is Child and it had some. */
  data: Schema.optional(Schema.Unknown),
  /** Retrying later may succeed (the instance is down or restarting). */
  retryable: Schema.optionalWith(Schema.Boolean, { default: () => false })
}) {
  override get message() {
    return `${this.tool}: ${this.detail}`
  }
}

/** A core tool manifest that cannot be served (a programming error, reported at start-up instead of a crash). */
export class ManifestError extends Schema.TaggedError<ManifestError>("clawtool/ManifestError")("ManifestError", {
  reason: Schema.Literal("EmptyName", "InvalidName", "DuplicateName", "InvalidCategory"),
  tool: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `tool manifest: ${this.reason}: ${this.detail}`
  }
}
