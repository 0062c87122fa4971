import { type Duration, Effect, Layer, Option } from "effect"
import { Config, type Env, ProcessEnv } from "../services/Config.js"
import { SpanExport } from "../services/Tracing.js"

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
      // The exporter (OTLP serialisation, an HTTP client) loads only when spans are exported.
      const Otlp = yield* Effect.promise(() => import("./Telemetry/Otlp.js"))
      const tracer = Otlp.tracerLayer({
        url: url.value,
        headers: otlpHeaders(env),
        exportInterval: options.exportInterval ?? "1 second",
        shutdownTimeout: options.shutdownTimeout ?? "1 second"
      })
      return Layer.merge(tracer, Layer.succeed(SpanExport, true))
    })
  )
