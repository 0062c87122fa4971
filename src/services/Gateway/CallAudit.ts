import { Clock, Effect, Exit, Option, Tracer } from "effect"
import type { CallError } from "../../domain/Errors.js"
import type { JsonObject } from "../../domain/Mcp.js"
import type { AuditRecorder } from "../Audit.js"
import type { RegistryView as Registry } from "../Registry.js"
import type { TraceContext } from "../Tracing.js"
import { type Outcome, outcomeOfError, outcomeOfResult } from "../Trust/AuditLine.js"

/** A tools/call's audit line (ADR 029), on the relay and on the SDK path alike. */

/**
 * One relayed call's audit line (stdio: no session id; untraced: no trace id); `via`: the core tool whose code made it.
 * The relay runs no Effect per call (ADR 009), so no Clock here: the wall clock, as the line's time only.
 */
export const auditRelayed = (
  recorder: AuditRecorder,
  registry: Registry,
  call: { readonly name: string; readonly arguments: JsonObject | undefined },
  started: number,
  outcome: Outcome,
  json: string,
  via?: string
) => {
  const route = registry.routeNow(call.name)
  const ended = performance.now()
  recorder.record({
    at: Date.now() - (ended - started),
    durationMs: ended - started,
    session: recorder.session,
    client: recorder.client(),
    profile: recorder.profile,
    token: recorder.token,
    instance: route === "core" ? "core" : route?.instance,
    tool: route === undefined || route === "core" ? call.name : route.tool,
    outcome,
    arguments: call.arguments,
    bytesOut: json === "" ? 0 : Buffer.byteLength(json),
    traceId: undefined,
    via
  })
}

/** What one SDK-path call tells its audit line besides its exit. */
export interface Seen {
  /** The CallError the answered result stands for (its reason is the outcome: denied, quarantined, timeout, error). */
  failure: CallError | undefined
  traceId: string | undefined
  /** The answered result and its JSON. */
  result: unknown
  json: string
}

export const traceIdPattern = /^[0-9a-f]{32}$/

/**
 * The current span, if any: `Effect.option(Effect.currentSpan)` without its failure, whose NoSuchElementException (an
 * Error, its stack captured, per untraced call) was most of what a daemon with metrics on did more than one without
 * (ADR 034).
 */
const currentSpan = Effect.map(
  Effect.serviceOption(Tracer.ParentSpan),
  Option.filter((span): span is Tracer.Span => span._tag === "Span")
)

/** The call's trace id: the host's trace context's, else the span tracing made (none: a call without spans). */
export const traceOf = (seen: Seen, context: Option.Option<TraceContext>) =>
  Option.isSome(context)
    ? Effect.sync(() => void (seen.traceId = context.value.traceId))
    : Effect.map(currentSpan, (span) => {
        if (Option.isSome(span) && traceIdPattern.test(span.value.traceId)) seen.traceId = span.value.traceId
      })

/** Records the call's audit line when it ends: answered (its result or CallError), failed, or cancelled by the host. */
export const auditCall = <A, E>(
  audit: AuditRecorder,
  registry: Registry,
  wire: string,
  args: JsonObject | undefined,
  seen: Seen,
  effect: Effect.Effect<A, E>,
  via: string | undefined
) => {
  const started = performance.now()
  audit.begin?.()
  return Effect.flatMap(Clock.currentTimeMillis, (at) =>
    Effect.onExit(effect, (exit) =>
      Effect.sync(() => {
        const route = registry.routeNow(wire)
        audit.record({
          at,
          durationMs: performance.now() - started,
          session: audit.session,
          client: audit.client(),
          profile: audit.profile,
          token: audit.token,
          instance: route === "core" ? "core" : route?.instance,
          tool: route === undefined || route === "core" ? wire : route.tool,
          outcome: Exit.isSuccess(exit)
            ? seen.failure === undefined
              ? outcomeOfResult(seen.result)
              : outcomeOfError(seen.failure)
            : Exit.isInterrupted(exit)
              ? "cancelled"
              : "error",
          arguments: args,
          bytesOut: Exit.isSuccess(exit) ? Buffer.byteLength(seen.json) : 0,
          traceId: seen.traceId,
          via
        })
      })
    )
  )
}
