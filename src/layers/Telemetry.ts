import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpBody from "@effect/platform/HttpBody"
import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import { type Duration, Effect, Fiber, FiberSet, Layer, Option } from "effect"
import { Config, type Env, ProcessEnv } from "../services/Config.js"
import { SpanExport } from "../services/Tracing.js"
import * as Version from "../version.js"

/**
 * Where spans are exported: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the full URL), else
 * `OTEL_EXPORTER_OTLP_ENDPOINT`, else `[observability] otlp_endpoint` (base URLs, `/v1/traces` appended).
 * The environment wins, as it does for every OpenTelemetry SDK. None: no exporter.
 */
export const tracesUrl = (env: Env, configured: string | undefined): Option.Option<string> => {
  const set = (value: string | undefined) => (value === undefined || value.trim() === "" ? undefined : value.trim())
  const full = set(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
  if (full !== undefined) return Option.some(full)
  const base = set(env.OTEL_EXPORTER_OTLP_ENDPOINT) ?? set(configured)
  if (base === undefined) return Option.none()
  return Option.some(/\/v1\/traces\/?$/.test(base) ? base : `${base.replace(/\/+$/, "")}/v1/traces`)
}

/** `OTEL_EXPORTER_OTLP_HEADERS` (or `…_TRACES_HEADERS`): `key=value,key2=value2`, values URL-encoded. */
export const otlpHeaders = (env: Env): Record<string, string> => {
  const raw = env.OTEL_EXPORTER_OTLP_TRACES_HEADERS ?? env.OTEL_EXPORTER_OTLP_HEADERS ?? ""
  const headers: Record<string, string> = {}
  for (const pair of raw.split(",")) {
    const at = pair.indexOf("=")
    if (at <= 0) continue
    const key = pair.slice(0, at).trim()
    try {
      if (key !== "") headers[key] = decodeURIComponent(pair.slice(at + 1).trim())
    } catch {
      // A malformed escape drops that one header, not the exporter.
    }
  }
  return headers
}

export interface TelemetryOptions {
  /** How often finished spans are sent; short so a host that kills clawtool soon after stdin EOF loses little. */
  readonly exportInterval?: Duration.DurationInput
  /**
   * The most the final flush may delay shutdown, and again the most clawtool waits for exports already in flight
   * (hosts SIGTERM 2 s after closing stdin, SIGKILL 2 s later).
   */
  readonly shutdownTimeout?: Duration.DurationInput
}

/**
 * The tracer for `clawtool serve`: Effect's OTLP/HTTP (JSON) exporter when an endpoint is configured, with
 * `service.name = clawtool` and its version; otherwise Effect's native tracer, whose spans still carry the
 * ids that trace propagation needs. Export failures are logged once and never reach a call. `SpanExport` says
 * which of the two it is, so Tracing can skip spans nobody would see.
 */
export const TelemetryLive = (options: TelemetryOptions = {}): Layer.Layer<SpanExport, never, Config> =>
  Layer.unwrapEffect(
    Effect.gen(function* () {
      const { config } = yield* Config
      const env = yield* ProcessEnv
      const url = tracesUrl(env, config.observability.otlp_endpoint)
      if (Option.isNone(url)) return Layer.succeed(SpanExport, false)
      yield* Effect.logDebug(`exporting spans to ${url.value}`)
      const shutdownTimeout = options.shutdownTimeout ?? "1 second"
      const tracer = OtlpTracer.layer({
        url: url.value,
        headers: otlpHeaders(env),
        resource: { serviceName: Version.name, serviceVersion: Version.version },
        exportInterval: options.exportInterval ?? "1 second",
        shutdownTimeout
      }).pipe(Layer.provide(SerializationLive), Layer.provide(exportHttpClient(url.value, shutdownTimeout)))
      return Layer.merge(tracer, Layer.succeed(SpanExport, true))
    })
  )

/**
 * The HTTP client the exporter sends through. Two fixes to @effect/opentelemetry 0.64's exporter:
 * - it logs its own failures at debug level and then pauses for a minute; this says it once at warning level
 *   (stderr), for transport errors and non-2xx answers alike;
 * - at shutdown it interrupts a periodic export in flight, and that batch (already taken from its buffer) is lost.
 *   Each request here runs detached in this layer's scope, which closes after the exporter's and waits for the
 *   requests still in flight, at most `drain`.
 */
const exportHttpClient = (url: string, drain: Duration.DurationInput) =>
  Layer.scoped(
    HttpClient.HttpClient,
    Effect.gen(function* () {
      const client = yield* HttpClient.HttpClient
      const inFlight = yield* FiberSet.make<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError>()
      yield* Effect.addFinalizer(() => FiberSet.awaitEmpty(inFlight).pipe(Effect.timeoutOption(drain)))
      let warned = false
      const warn = (why: string) =>
        Effect.suspend(() => {
          if (warned) return Effect.void
          warned = true
          return Effect.logWarning(`span export to ${url} failed (${why}); tracing continues, spans may be lost`)
        })
      return client.pipe(
        HttpClient.transform((send) => Effect.flatMap(FiberSet.run(inFlight, send), Fiber.join)),
        HttpClient.tap((response) => (response.status >= 300 ? warn(`HTTP ${response.status}`) : Effect.void)),
        HttpClient.tapError((error) => warn(error.message))
      )
    })
  ).pipe(Layer.provide(FetchHttpClient.layer))

/**
 * OTLP JSON, minus a mislabel of @effect/opentelemetry 0.64's OtlpTracer: it tags every failed span with
 * `status.interrupted = true` and `span.label = "⚠︎ Interrupted"` (fixed upstream in v4). Interrupted spans have
 * status OK there, so on an ERROR span the two attributes are always false and are dropped.
 */
export const fixTraceData = (data: unknown): unknown => {
  const spans = (data as { resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: Array<OtlpSpanShape> }> }> })
    .resourceSpans
  for (const resource of spans ?? []) {
    for (const scope of resource.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        if (span.status?.code !== 2 || !Array.isArray(span.attributes)) continue
        span.attributes = span.attributes.filter(
          (attribute) => attribute.key !== "status.interrupted" && attribute.key !== "span.label"
        )
      }
    }
  }
  return data
}

interface OtlpSpanShape {
  status?: { code?: number }
  attributes?: Array<{ key: string }>
}

const SerializationLive = Layer.succeed(OtlpSerialization.OtlpSerialization, {
  traces: (data) => HttpBody.unsafeJson(fixTraceData(data)),
  metrics: (data) => HttpBody.unsafeJson(data),
  logs: (data) => HttpBody.unsafeJson(data)
})
