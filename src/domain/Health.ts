import { Schema } from "effect"
import { type SkippedEntry, type SourceConfig, targetOf } from "./Config.js"

/**
 * `crash-loop`: restarted `max_restarts` times within `restart_window`; now retried only every `crash_loop_retry`.
 * `idle`: a lazy source with no child (not needed yet, or stopped after `idle_timeout`); its tools stay listed.
 * `skipped`: an entry of a host's JSON config clawtool cannot use; never started, its reason says why.
 */
export const Status = Schema.Literal("starting", "running", "down", "unauthenticated", "crash-loop", "idle", "skipped")
export type Status = typeof Status.Type

/** A child's exit: its code, or the signal that killed it, and when (ISO time). */
export const ExitSummary = Schema.Struct({
  code: Schema.NullOr(Schema.Number),
  signal: Schema.NullOr(Schema.String),
  at: Schema.String
})

/** One instance's health snapshot. The JSON form (`clawtool health --json`) uses exactly these keys. */
export class HealthRow extends Schema.Class<HealthRow>("HealthRow")({
  name: Schema.String,
  status: Status,
  reason: Schema.String,
  toolCount: Schema.Number,
  package: Schema.String,
  pid: Schema.NullOr(Schema.Number),
  startedAt: Schema.NullOr(Schema.String),
  startupMs: Schema.NullOr(Schema.Number),
  stderrTail: Schema.Array(Schema.String),
  // Supervision (ADR-004). Optional with defaults, so rows built without them stay valid.
  /** Restarts performed since clawtool started. */
  restarts: Schema.optionalWith(Schema.Number, { default: () => 0 }),
  /** How the last child process of this instance ended. */
  lastExit: Schema.optionalWith(Schema.NullOr(ExitSummary), { default: () => null }),
  /** When the next restart attempt is due (ISO time), while one is pending. */
  nextRetryAt: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  /** Milliseconds since the running child finished initialize; null unless running. */
  uptimeMs: Schema.optionalWith(Schema.NullOr(Schema.Number), { default: () => null }),
  /** Lines the child wrote to stdout that were not JSON-RPC (dropped; the first 200 characters go to stderrTail). */
  stdoutGarbage: Schema.optionalWith(Schema.Number, { default: () => 0 }),
  /** Tools of this source held back by their pins until `clawtool trust approve` (issue 25). */
  quarantined: Schema.optionalWith(Schema.Number, { default: () => 0 }),
  /** The MCP era the running child is spoken to in (ADR 033): "legacy" (initialize) or "modern" (2026-07-28). */
  era: Schema.optionalWith(Schema.NullOr(Schema.Literal("legacy", "modern")), { default: () => null }),
  /**
   * "config": the row of the config itself, shown only while the last reload failed (ADR 016); "audit": the audit
   * log's, shown only while it is not written or has dropped lines (issue 25); a source otherwise.
   */
  kind: Schema.optionalWith(Schema.Literal("source", "config", "audit"), { default: () => "source" as const })
}) {}

/**
 * The row `serve` adds while its last reload was rejected: the running set is the one before it, and this says why
 * the file's changes are not applied (`config … last reload failed: <file>:<line>: <key>: …`).
 */
export const reloadFailedRow = (file: string, detail: string): HealthRow =>
  new HealthRow({
    kind: "config",
    name: "config",
    status: "down",
    reason: `last reload failed: ${detail}`,
    toolCount: 0,
    package: file,
    pid: null,
    startedAt: null,
    startupMs: null,
    stderrTail: []
  })

/**
 * The row a stdio serve's profile view adds once a reload removed its profile (ADR 031): the session keeps the profile's
 * last definition until serve restarts (its host cannot reconnect elsewhere), and this says so.
 */
export const profileRemovedRow = (profile: string): HealthRow =>
  new HealthRow({
    kind: "config",
    name: "profile",
    status: "down",
    reason: `profile "${profile}" was removed from the config by a reload: a stdio serve of it keeps its last definition until it restarts (the daemon ends its sessions)`,
    toolCount: 0,
    package: profile,
    pid: null,
    startedAt: null,
    startupMs: null,
    stderrTail: []
  })

/** The audit log's row (`[audit]`): down while its file cannot be written, running with a note when lines were dropped. */
export const auditRow = (file: string, status: "running" | "down", reason: string): HealthRow =>
  new HealthRow({
    kind: "audit",
    name: "audit",
    status,
    reason,
    toolCount: 0,
    package: file,
    pid: null,
    startedAt: null,
    startupMs: null,
    stderrTail: []
  })

/** The row of an entry a JSON config gives but clawtool skipped (no package: it names nothing clawtool can run). */
export const skippedRow = (entry: SkippedEntry): HealthRow =>
  new HealthRow({
    name: entry.name,
    status: "skipped",
    reason: entry.reason,
    toolCount: 0,
    package: "",
    pid: null,
    startedAt: null,
    startupMs: null,
    stderrTail: []
  })

/** A row that needs someone's attention: not running, not an idle lazy source, and not a skipped entry (warned). */
export const isDown = (row: HealthRow): boolean =>
  row.status !== "running" && row.status !== "idle" && row.status !== "skipped"

const runners = new Set(["npx", "bunx", "pnpx", "uvx", "pipx", "docker", "podman", "uv", "pnpm", "yarn", "deno", "bun"])
const runnerVerbs = new Set(["run", "exec", "dlx", "x", "tool", "--rm", "-i", "-y", "--yes"])
const basename = (path: string) => path.split(/[\\/]/).pop() ?? path

/** `…/node_modules/@scope/pkg/dist/index.js` → `@scope/pkg`. */
const installedPackage = (script: string): string | undefined => {
  const parts = script.split(/[\\/]/)
  const at = parts.lastIndexOf("node_modules")
  if (at === -1 || at + 1 >= parts.length) return undefined
  const first = parts[at + 1]!
  return first.startsWith("@") && at + 2 < parts.length ? `${first}/${parts[at + 2]}` : first
}

/**
 * What a source runs, for humans: the package a runner (npx, uvx, docker…) starts, skipping flags and
 * verbs (`npx -y @scope/pkg` → `@scope/pkg`, not the Go original's `-y`); a script for `node x.js`;
 * otherwise the binary's name.
 */
export const packageOf = (command: ReadonlyArray<string>): string => {
  const [bin = "", ...args] = command
  const name = basename(bin)
  if (runners.has(name)) return args.find((arg) => !arg.startsWith("-") && !runnerVerbs.has(arg)) ?? name
  if (name === "node" || name === "python" || name === "python3") {
    const script = args.find((arg) => !arg.startsWith("-"))
    if (script !== undefined) return installedPackage(script) ?? basename(script)
  }
  return name
}

/** A remote server's address for humans: origin and path, never its query string or credentials. */
export const urlLabel = (url: string): string => {
  if (!URL.canParse(url)) return "(invalid url)"
  const parsed = new URL(url)
  return `${parsed.origin}${parsed.pathname}`
}

/** The package column of a source: what its command runs, or where its remote server is. */
export const packageOfSource = (source: SourceConfig): string => {
  const target = targetOf(source)
  return target._tag === "Remote" ? urlLabel(target.url) : packageOf(target.command)
}
