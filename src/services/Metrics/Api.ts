import type { Effect } from "effect"
import type { AuditCall } from "../Trust/AuditLine.js"
import type { Recent } from "./Recent.js"

/**
 * What the call paths tell the daemon's metrics and dashboard (issue 29): plain synchronous calls on the hot path,
 * nothing serialised; the counting is Metrics/Prometheus' and Metrics/Recent's, loaded only by a daemon.
 */
export interface CallMeter {
  /** A tools/call began (the in-flight gauge). */
  readonly begin: () => void
  /** A tools/call ended: the audit line's facts (never its arguments: metrics and the dashboard do not read them). */
  readonly end: (call: AuditCall) => void
  /** A host session opened under `profile`; the returned function closes it. */
  readonly session: (profile: string) => () => void
}

/** The metrics as the daemon serves them. */
export interface MetricsApi extends CallMeter {
  /** `GET /metrics`: the Prometheus text exposition and its content type. */
  readonly exposition: Effect.Effect<{ readonly contentType: string; readonly text: string }>
  /** The dashboard's recent calls and per-source latency (Metrics/Recent). */
  readonly recent: Recent
}
