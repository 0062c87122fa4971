import { Context, Data, Effect, Option, Tracer } from "effect"
import type { CallToolResult, JsonObject } from "../domain/Mcp.js"
import { type Env, ProcessEnv } from "./Config.js"

/**
 * W3C Trace Context over MCP `_meta` (SEP-414). The pure functions below parse and format the two keys;
 * the Tracing service wraps a tools/call in a server span (parented on the caller's span) and a client
 * span (the proxied request), and puts their ids on the response and on the child's request.
 */

// =============================================================================
// W3C traceparent / tracestate (pure)
// =============================================================================

export interface TraceParent {
  readonly version: string
  readonly traceId: string
  readonly spanId: string
  /** The whole flags byte; only the sampled bit (0x01) is propagated. */
  readonly flags: number
}

/** A validated remote context: what the caller (or the spawning host, via the env) says the current span is. */
export interface TraceContext {
  readonly traceId: string
  readonly spanId: string
  readonly sampled: boolean
  /** Normalised tracestate, or undefined when absent, empty or invalid. */
  readonly traceState: string | undefined
  readonly source: "meta" | "env"
}

const lowerHex = /^[0-9a-f]+$/
const allZeros = /^0+$/

/**
 * Strict W3C traceparent: `vv-<32 hex>-<16 hex>-<2 hex>`, lowercase only, version `ff` invalid, version `00`
 * with nothing after the flags, a future version possibly followed by `-<more>`, trace and span id not all zeros.
 * Unknown flag bits are accepted (W3C: ignore them; level 2 defines 0x02), only 0x01 is ever propagated.
 */
export const parseTraceparent = (value: string): Option.Option<TraceParent> => {
  if (value.length < 55) return Option.none()
  const version = value.slice(0, 2)
  const traceId = value.slice(3, 35)
  const spanId = value.slice(36, 52)
  const flags = value.slice(53, 55)
  if (value[2] !== "-" || value[35] !== "-" || value[52] !== "-") return Option.none()
  if (![version, traceId, spanId, flags].every((part) => lowerHex.test(part))) return Option.none()
  if (version === "ff") return Option.none()
  if (value.length > 55 && (version === "00" || value[55] !== "-")) return Option.none()
  if (allZeros.test(traceId) || allZeros.test(spanId)) return Option.none()
  return Option.some({ version, traceId, spanId, flags: parseInt(flags, 16) })
}

const tracestateKey = /^(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})$/
const tracestateValue = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/

/**
 * W3C tracestate: up to 32 `key=value` members separated by commas (optional spaces and tabs around them,
 * empty members skipped), no duplicate keys. Returns the members joined by "," or None when the header is
 * invalid or holds no member, so a bad tracestate is dropped on its own.
 */
export const parseTracestate = (value: string): Option.Option<string> => {
  const members = value
    .split(",")
    .map((member) => member.replace(/^[ \t]+|[ \t]+$/g, ""))
    .filter((member) => member !== "")
  if (members.length === 0 || members.length > 32) return Option.none()
  const keys = new Set<string>()
  for (const member of members) {
    const at = member.indexOf("=")
    if (at <= 0) return Option.none()
    const key = member.slice(0, at)
    if (!tracestateKey.test(key) || !tracestateValue.test(member.slice(at + 1)) || keys.has(key)) return Option.none()
    keys.add(key)
  }
  return Option.some(members.join(","))
}

const nonEmptyString = (value: unknown): value is string => typeof value === "string" && value !== ""

/**
 * The caller's trace context. `_meta.traceparent` wins; only when it is absent (or not a non-empty string)
 * does the `TRACEPARENT`/`TRACESTATE` pair of the environment apply (hosts that set it when they spawn
 * clawtool). An invalid `_meta.traceparent` gives None and does not fall back. The tracestate always comes
 * from the same place as the traceparent it belongs to.
 */
export const extractTraceContext = (meta: JsonObject | undefined, env: Env): Option.Option<TraceContext> => {
  const fromMeta = nonEmptyString(meta?.traceparent)
  const source = fromMeta ? "meta" : "env"
  const traceparent = fromMeta ? meta?.traceparent : env.TRACEPARENT
  const tracestate = fromMeta ? meta?.tracestate : env.TRACESTATE
  if (!nonEmptyString(traceparent)) return Option.none()
  return Option.map(parseTraceparent(traceparent), (parent) => ({
    traceId: parent.traceId,
    spanId: parent.spanId,
    sampled: (parent.flags & 0x01) === 0x01,
    traceState: nonEmptyString(tracestate) ? Option.getOrUndefined(parseTracestate(tracestate)) : undefined,
    source
  }))
}

/** Always version 00; flags carry only the sampled bit. */
export const formatTraceparent = (span: { readonly traceId: string; readonly spanId: string }, sampled: boolean) =>
  `00-${span.traceId}-${span.spanId}-${sampled ? "01" : "00"}`

/** True for ids a traceparent can carry (a disabled tracer's spans have the id "noop"). */
const isPropagatable = (span: { readonly traceId: string; readonly spanId: string }) =>
  Option.isSome(parseTraceparent(formatTraceparent(span, false)))

/**
 * `meta` with `traceparent` set to `span` (same trace, that span's id) and `tracestate` set to the caller's,
 * or removed when the caller sent none (a stale one would describe another trace). Other keys are kept.
 */
export const injectTraceContext = (
  meta: JsonObject | undefined,
  span: { readonly traceId: string; readonly spanId: string },
  context: TraceContext
): JsonObject => {
  const { traceparent: _parent, tracestate: _state, ...rest } = meta ?? {}
  return {
    ...rest,
    traceparent: formatTraceparent(span, context.sampled),
    ...(context.traceState === undefined ? {} : { tracestate: context.traceState })
  }
}

// =============================================================================
// Service
// =============================================================================

export interface ToolCall<E, R> {
  /** The name the host called (`<instance>__<tool>`). */
  readonly wire: string
  /** The host's JSON-RPC request id. */
  readonly requestId?: string | number | undefined
  /**
   * The instance and the tool's own name the wire name routes to (Registry.routeOf: prefixes and shortened names
   * resolved); none for clawtool's own tools and unknown names. Span attributes only.
   */
  readonly route?: Option.Option<{ readonly instance: string; readonly tool: string }> | undefined
  /** The caller's context, from `extract`; None leaves both `_meta`s exactly as they were. */
  readonly context: Option.Option<TraceContext>
  /** The `_meta` to forward to the child before trace keys are added (progressToken already removed). */
  readonly meta: JsonObject | undefined
  /** The proxied request, given the `_meta` to send (the host's keys plus the client span's traceparent). */
  readonly call: (meta: JsonObject | undefined) => Effect.Effect<CallToolResult, E, R>
  /** A failed call as the result the host gets, so it still carries the trace context. */
  readonly recover: (error: E) => CallToolResult
  /** Made by a core tool's code (RunCode, ADR 035): without the caller's context, its span is the current span's child. */
  readonly nested?: boolean | undefined
}

/**
 * True when finished spans are exported (TelemetryLive sets it). Without an exporter a span is worth only its
 * ids, which a call without trace context never propagates, so such a call gets no span at all.
 */
export class SpanExport extends Context.Reference<SpanExport>()("clawtool/SpanExport", {
  defaultValue: (): boolean => false
}) {}

export class Tracing extends Effect.Service<Tracing>()("clawtool/Tracing", {
  effect: Effect.gen(function* () {
    // The environment of the process, read once: TRACEPARENT is what the host set when it spawned clawtool.
    const env = yield* ProcessEnv
    const exporting = yield* SpanExport

    const extract = (meta: JsonObject | undefined): Option.Option<TraceContext> => extractTraceContext(meta, env)

    /**
     * One tools/call: a server span `tools/call <wire>` (child of the caller's span) around a client span
     * `tools/call <tool>` (the request to the child). The result's `_meta.traceparent` names the server span;
     * the child's request `_meta.traceparent` names the client span. Without a context and without an exporter
     * no span is made (the hot path: spans cost a stack trace and allocations per call, for nothing).
     */
    const toolCall = <E, R>(request: ToolCall<E, R>): Effect.Effect<CallToolResult, never, R> => {
      if (!exporting && Option.isNone(request.context)) {
        return Effect.catchAll(request.call(request.meta), (error) => Effect.succeed(request.recover(error)))
      }
      const target = request.route === undefined ? undefined : Option.getOrUndefined(request.route)
      const common = {
        "mcp.method.name": "tools/call",
        "gen_ai.operation.name": "execute_tool",
        "network.transport": "pipe",
        ...(target === undefined ? {} : { "clawtool.instance": target.instance })
      }

      const client = Effect.gen(function* () {
        const span = yield* Effect.currentSpan.pipe(Effect.option)
        const meta = Option.match(Option.all({ context: request.context, span }), {
          onNone: () => request.meta,
          onSome: ({ context, span }) =>
            isPropagatable(span) ? injectTraceContext(request.meta, span, context) : request.meta
        })
        return yield* request.call(meta)
      }).pipe(
        failOnToolError,
        Effect.withSpan(`tools/call ${target?.tool ?? request.wire}`, {
          kind: "client",
          captureStackTrace: false,
          attributes: { ...common, "gen_ai.tool.name": target?.tool ?? request.wire }
        }),
        Effect.catchIf(isToolErrorResult, (error) => Effect.succeed(error.result))
      )

      const server = Effect.gen(function* () {
        const span = yield* Effect.currentSpan.pipe(Effect.option)
        const result = yield* client.pipe(Effect.catchAll((error) => Effect.succeed(request.recover(error))))
        return Option.match(Option.all({ context: request.context, span }), {
          onNone: () => result,
          onSome: ({ context, span }): CallToolResult =>
            isPropagatable(span) ? { ...result, _meta: injectTraceContext(result._meta, span, context) } : result
        })
      }).pipe(
        failOnToolError,
        Effect.withSpan(`tools/call ${request.wire}`, {
          kind: "server",
          captureStackTrace: false,
          attributes: {
            ...common,
            "gen_ai.tool.name": request.wire,
            ...(request.requestId === undefined ? {} : { "jsonrpc.request.id": String(request.requestId) }),
            ...(target === undefined ? {} : { "clawtool.tool.original_name": target.tool })
          },
          ...Option.match(request.context, {
            onNone: () => (request.nested === true ? {} : { root: true }),
            onSome: (context) => ({
              parent: Tracer.externalSpan({
                traceId: context.traceId,
                spanId: context.spanId,
                sampled: context.sampled
              })
            })
          })
        }),
        Effect.catchIf(isToolErrorResult, (error) => Effect.succeed(error.result))
      )
      return server
    }

    /** True when a call whose `_meta` has no traceparent gets no span and no trace context (the call relay's case). */
    const untraced = !exporting && Option.isNone(extractTraceContext(undefined, env))

    return { extract, toolCall, untraced } as const
  })
}) {}

// =============================================================================
// Internal
// =============================================================================

/**
 * An `isError` result travelling as a failure so the span around it ends with error status; it is turned back
 * into the result right outside the span, so callers never see it.
 */
class ToolErrorResult extends Data.TaggedError("ToolErrorResult")<{ readonly result: CallToolResult }> {
  override get message() {
    const text = this.result.content.find(
      (item): item is { readonly type: "text"; readonly text: string } =>
        typeof item === "object" &&
        item !== null &&
        (item as { type?: unknown }).type === "text" &&
        typeof (item as { text?: unknown }).text === "string"
    )
    return text === undefined ? "the tool returned isError" : text.text.slice(0, 200)
  }
}

const isToolErrorResult = (error: unknown): error is ToolErrorResult => error instanceof ToolErrorResult

/** Marks the current span per the MCP semantic conventions (`error.type = tool_error`) and fails it. */
const failOnToolError = <E, R>(
  effect: Effect.Effect<CallToolResult, E, R>
): Effect.Effect<CallToolResult, E | ToolErrorResult, R> =>
  Effect.flatMap(effect, (result) =>
    result.isError === true
      ? Effect.zipRight(
          Effect.annotateCurrentSpan("error.type", "tool_error"),
          Effect.fail(new ToolErrorResult({ result }))
        )
      : Effect.succeed(result)
  )
