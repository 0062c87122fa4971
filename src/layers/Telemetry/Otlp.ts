import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpBody from "@effect/platform/HttpBody"
import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import { type Duration, Effect, Fiber, FiberSet, Layer } from "effect"
import * as Version from "../../version.js"

/** The OTLP/HTTP (JSON) span exporter of `TelemetryLive`, loaded only when an endpoint is configured. */
export const tracerLayer = (options: {
  readonly url: string
  readonly headers: Record<string, string>
  readonly exportInterval: Duration.DurationInput
  readonly shutdownTimeout: Duration.DurationInput
}) =>
  OtlpTracer.layer({
    url: options.url,
    headers: options.headers,
    resource: { serviceName: Version.name, serviceVersion: Version.version },
    exportInterval: options.exportInterval,
    shutdownTimeout: options.shutdownTimeout
  }).pipe(Layer.provide(SerializationLive), Layer.provide(exportHttpClient(options.url, options.shutdownTimeout)))

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
