import { Effect } from "effect"
import * as Prom from "prom-client"
import type { HealthRow } from "../../domain/Health.js"
import type { MetricsApi } from "./Api.js"
import type { Registry } from "../Registry.js"
import type { AuditCall } from "../Trust/AuditLine.js"
import * as Recent from "./Recent.js"

/** Distinct `{source,tool}` pairs labelled by name; later ones count under tool="other" (bounded series). */
export const maxToolLabels = 500
/** The only profile until `[profiles]` (issue 26) names the session's. */
export const defaultProfile = "default"

/** Seconds: a quick core tool (1 ms) to a slow remote call (a minute). */
const durationBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

type CallLabels = { readonly source: string; readonly tool: string; readonly outcome: string }

/** What a scrape reads of the Registry (health rows, the catalog, list_wait's timeouts). */
type Source = Pick<Registry, "health" | "catalog" | "listWaitTimeouts">

/**
 * The daemon's Prometheus metrics (prom-client, its own registry: nothing global). Call counts are kept on the call's
 * path through cached label children (no label hashing per call); what the Registry already knows (sources up,
 * restarts, catalog size) is read at scrape time. Label values are instance names, listed tools' own names (at most
 * `maxToolLabels` pairs, then "other") and outcomes: never an argument, a session id or a secret.
 */
export const make = (registry: Source) =>
  Effect.gen(function* () {
    const prom = new Prom.Registry()
    const registers = [prom]
    Prom.collectDefaultMetrics({ register: prom })
    const run = <A>(effect: Effect.Effect<A>) => Effect.runPromise(effect)
    let rows: ReadonlyArray<HealthRow> = []
    const sources = () => rows.filter((row) => row.kind === "source" && row.status !== "skipped")

    // Calls are counted in plain numbers on the call's path (a Map lookup, an increment, a bucket): prom-client's
    // labelled children validate and hash their labels on every inc and observe. A scrape copies the numbers out.
    const counted = new Map<string, { readonly labels: CallLabels; count: number }>()
    /** Each series once (a capped pair's keys share the "other" one). */
    const series = new Set<{ readonly labels: CallLabels; count: number }>()
    const timed = new Map<string, { readonly buckets: Float64Array; sum: number; count: number }>()
    new Prom.Counter({
      name: "clawtool_tool_calls_total",
      help: "tools/call requests answered, by source instance (core: clawtool's own tools), tool and outcome",
      labelNames: ["source", "tool", "outcome"] as const,
      registers,
      collect() {
        this.reset()
        for (const { labels, count } of series) this.inc(labels, count)
      }
    })
    const durationName = "clawtool_tool_call_duration_seconds"
    const durationHelp = "tools/call duration as the host saw it, by source instance"
    const durationValues = () =>
      Array.from(timed, ([source, { buckets, sum, count }]) => {
        let below = 0
        return [
          ...durationBuckets.map((le, i) => ({
            metricName: `${durationName}_bucket`,
            labels: { source, le },
            value: (below += buckets[i]!)
          })),
          { metricName: `${durationName}_bucket`, labels: { source, le: "+Inf" }, value: count },
          { metricName: `${durationName}_sum`, labels: { source }, value: sum },
          { metricName: `${durationName}_count`, labels: { source }, value: count }
        ]
      }).flat()
    // A histogram as the registry reads one (its name, type and `get`), over the plain buckets above.
    prom.registerMetric({
      name: durationName,
      help: durationHelp,
      type: "histogram",
      aggregator: "sum",
      get: async () => ({
        name: durationName,
        help: durationHelp,
        type: "histogram",
        aggregator: "sum",
        values: durationValues()
      })
    } as unknown as Prom.Metric)
    const inFlight = new Prom.Gauge({
      name: "clawtool_calls_in_flight",
      help: "tools/call requests begun and not yet answered",
      registers
    })
    const sessions = new Prom.Gauge({
      name: "clawtool_sessions",
      help: "open host sessions, by profile",
      labelNames: ["profile"] as const,
      registers
    })
    new Prom.Gauge({
      name: "clawtool_source_up",
      help: "1 while a source is running or idle (lazy, not needed), 0 while starting, down, unauthenticated or in a crash-loop",
      labelNames: ["source"] as const,
      registers,
      collect() {
        this.reset()
        for (const row of sources())
          this.set({ source: row.name }, row.status === "running" || row.status === "idle" ? 1 : 0)
      }
    })
    new Prom.Counter({
      name: "clawtool_source_restarts_total",
      help: "restarts of a source's child since clawtool started",
      labelNames: ["source"] as const,
      registers,
      collect() {
        this.reset()
        for (const row of sources()) this.inc({ source: row.name }, row.restarts)
      }
    })
    new Prom.Gauge({
      name: "clawtool_catalog_tools",
      help: "tools listed to hosts, by profile",
      labelNames: ["profile"] as const,
      registers,
      async collect() {
        const catalog = await run(registry.catalog)
        this.set({ profile: defaultProfile }, catalog.tools.length)
      }
    })
    new Prom.Counter({
      name: "clawtool_list_wait_timeouts_total",
      help: "list requests that stopped waiting for sources still starting after list_wait",
      registers,
      collect() {
        this.reset()
        this.inc(registry.listWaitTimeouts())
      }
    })

    const recent = Recent.make()
    const pairs = new Set<string>()
    let open = 0

    const end = (call: AuditCall) => {
      open--
      const source = Recent.sourceOf(call)
      // A name nothing routes to is not a tool anyone listed: its label would be the host's to choose.
      let tool = call.instance === undefined ? "other" : call.tool
      const key = `${source}\u0000${tool}\u0000${call.outcome}`
      let entry = counted.get(key)
      if (entry === undefined) {
        const pair = `${source}\u0000${tool}`
        if (!pairs.has(pair)) {
          if (pairs.size >= maxToolLabels) tool = "other"
          else pairs.add(pair)
        }
        const bucketKey = `${source}\u0000${tool}\u0000${call.outcome}`
        entry = counted.get(bucketKey) ?? { labels: { source, tool, outcome: call.outcome }, count: 0 }
        counted.set(bucketKey, entry)
        counted.set(key, entry)
        series.add(entry)
      }
      entry.count++
      let time = timed.get(source)
      if (time === undefined) {
        time = { buckets: new Float64Array(durationBuckets.length), sum: 0, count: 0 }
        timed.set(source, time)
      }
      const seconds = call.durationMs / 1000
      time.sum += seconds
      time.count++
      const bucket = durationBuckets.findIndex((le) => seconds <= le)
      if (bucket !== -1) time.buckets[bucket]! += 1
      recent.add(call)
    }

    const session = (profile: string) => {
      sessions.inc({ profile })
      let closed = false
      return () => {
        if (closed) return
        closed = true
        sessions.dec({ profile })
      }
    }
    sessions.set({ profile: defaultProfile }, 0)

    const exposition = Effect.gen(function* () {
      rows = yield* registry.health
      inFlight.set(open)
      const text = yield* Effect.promise(() => prom.metrics())
      return { contentType: prom.contentType, text }
    })

    return {
      begin: () => {
        open++
      },
      end,
      session,
      exposition,
      recent
    } satisfies MetricsApi
  })
