import { Duration, Schema } from "effect"
import { DurationString } from "../Duration.js"
import { coreToolNames } from "./CoreTools.js"
import { wholeBetween } from "./Values.js"

/*
 * `[trust]` and `[audit]` (issue 25, docs/decisions/029): what the gate checks on everything that passes through it.
 * Every default is the safe one that needs no setup: pins taken on first use, a changed tool held back, secrets
 * redacted, every call audited without its arguments.
 */

const literal = <const L extends ReadonlyArray<string>>(key: string, ...values: L) =>
  Schema.Literal(...values).annotations({
    message: (issue) =>
      `${key} is ${values
        .map((value) => JSON.stringify(value))
        .join(" or ")
        .replace(/ or (?=.* or )/g, ", ")}, got ${JSON.stringify(issue.actual)}`
  })

/**
 * One `confirm` entry: `"destructive"` (tools annotated `destructiveHint: true`), a core tool's name, or a `[tools]`
 * selector `"<instance>.<tool>"` / `"<instance>.*"`.
 */
export const ConfirmSelector = Schema.String.pipe(
  Schema.filter(
    (selector) =>
      selector === "destructive" ||
      (coreToolNames as ReadonlyArray<string>).includes(selector) ||
      /^[a-z0-9]+(-[a-z0-9]+)*\..+$/.test(selector),
    {
      message: (issue) =>
        `confirm entries are "destructive", a core tool (${coreToolNames.join(", ")}) or "<instance>.<tool>" / "<instance>.*", got ${JSON.stringify(issue.actual)}`
    }
  )
)

/** `[trust]`: pins and quarantine, clean descriptions, redaction, confirmation. */
export class TrustConfig extends Schema.Class<TrustConfig>("TrustConfig")({
  /** The lock file of pinned tool definitions; relative to the config file's folder. Default `clawtool.lock` there. */
  pins: Schema.optional(
    Schema.String.pipe(
      Schema.pattern(/\S/, { message: () => "pins must be a file path; leave the key out for the default" })
    )
  ),
  /** A source never seen before: its tools are pinned as they are (trust on first use), or held until approved. */
  first_use: Schema.optionalWith(literal("first_use", "pin", "quarantine"), {
    exact: true,
    default: () => "pin" as const
  }),
  /** A pinned tool whose definition changed: held back from the host, listed with a warning, or re-pinned silently. */
  on_change: Schema.optionalWith(literal("on_change", "quarantine", "warn", "allow"), {
    exact: true,
    default: () => "quarantine" as const
  }),
  /** A tool a pinned source never had before. */
  new_tools: Schema.optionalWith(literal("new_tools", "allow", "quarantine"), {
    exact: true,
    default: () => "allow" as const
  }),
  /** A description the rule set flags (src/services/Trust/Suspicious.ts). */
  on_suspicious: Schema.optionalWith(literal("on_suspicious", "warn", "quarantine"), {
    exact: true,
    default: () => "warn" as const
  }),
  /** Every known secret value is replaced by `[REDACTED:<NAME>]` in whatever goes to the host. */
  redact_secrets: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  /** Tools that need the user's yes (through the host's elicitation) before each call. */
  confirm: Schema.optionalWith(
    Schema.Array(ConfirmSelector).annotations({
      description: "a list of selectors",
      examples: [["destructive", "Bash", "github.delete_repo", "fs.*"]]
    }),
    { default: () => [] }
  ),
  /** How long a confirmation waits for the user before it counts as declined. */
  confirm_timeout: Schema.optionalWith(DurationString, { default: () => Duration.minutes(2) }),
  /** A call that needs confirming, from a host that cannot ask (no elicitation capability). */
  unconfirmed: Schema.optionalWith(literal("unconfirmed", "deny", "allow"), {
    exact: true,
    default: () => "deny" as const
  })
}) {}

/** `[audit]`: one JSON line per tools/call, written off the call's path. */
export class AuditConfig extends Schema.Class<AuditConfig>("AuditConfig")({
  enabled: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  /** Default `$XDG_STATE_HOME/clawtool/audit.jsonl`. */
  path: Schema.optional(
    Schema.String.pipe(
      Schema.pattern(/\S/, { message: () => "path must be a file path; leave the key out for the default" })
    )
  ),
  /** What is kept of a call's arguments: a SHA-256 of their canonical JSON only, the arguments redacted, or all. */
  args: Schema.optionalWith(literal("args", "none", "redacted", "full"), {
    exact: true,
    default: () => "none" as const
  }),
  /** The file is rotated (audit.jsonl.1, .2, …) once it would grow past this many bytes. */
  max_bytes: Schema.optionalWith(wholeBetween("max_bytes", 1024, 1024 * 1024 * 1024), {
    default: () => 10 * 1024 * 1024
  }),
  /** Rotated files kept. */
  keep: Schema.optionalWith(wholeBetween("keep", 0, 100), { default: () => 3 })
}) {}
