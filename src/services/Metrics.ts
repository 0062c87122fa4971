import { Context, Effect, Layer } from "effect"
import type { AuditRecorder } from "./Audit.js"
import type { CallMeter, MetricsApi } from "./Metrics/Api.js"
import { Registry } from "./Registry.js"

export type { CallMeter, MetricsApi } from "./Metrics/Api.js"

/**
 * The daemon's metrics: provided only when serve has a listen address (layers/Main.ts), so stdio serve never loads
 * prom-client (test/StartPath.test.ts keeps it off the start path). The Gateway and the Daemon read it with
 * serviceOption.
 */
export class Metrics extends Context.Tag("clawtool/Metrics")<Metrics, MetricsApi>() {
  static readonly Live = Layer.scoped(
    Metrics,
    Effect.gen(function* () {
      const registry = yield* Registry
      const { make } = yield* Effect.promise(() => import("./Metrics/Prometheus.js"))
      return yield* make(registry)
    })
  ).pipe(Layer.provide(Registry.Default))
}

/**
 * One session's recorder with the meter beside the audit log's: each call's end goes to both (the audit's queue offer
 * and the meter's counters), its start to the meter. Undefined when neither is on: the call paths then do nothing.
 */
export const metered = (
  recorder: AuditRecorder | undefined,
  meter: CallMeter | undefined,
  session: string | undefined,
  client: () => string | undefined
): AuditRecorder | undefined => {
  if (meter === undefined) return recorder
  if (recorder === undefined) return { session, client, record: meter.end, begin: meter.begin }
  const audit = recorder.record
  const end = meter.end
  // The recorder's profile and token stay: its audit lines name them (issue 26).
  return {
    ...recorder,
    session,
    client,
    begin: meter.begin,
    record: (call) => {
      audit(call)
      end(call)
    }
  }
}
