import type { AuditCall, Outcome } from "../Trust/AuditLine.js"

/** One call as the dashboard lists it: no arguments, no session, nothing a secret could be in. */
export interface RecentCall {
  readonly at: number
  readonly source: string
  readonly tool: string
  readonly outcome: Outcome
  readonly durationMs: number
  readonly traceId: string | undefined
}

/** The last calls (newest last) and each source's call latency per minute over the last `minutes`. */
export interface Recent {
  readonly add: (call: AuditCall) => void
  readonly calls: () => ReadonlyArray<RecentCall>
  /** Mean latency (ms) of each of the last `minutes` minutes up to `now`, oldest first; null for a minute without calls. */
  readonly latency: (source: string, now: number) => ReadonlyArray<number | null>
  /** Grows with every call: the dashboard's stream sends the calls again only when it moved. */
  readonly version: () => number
}

const minute = 60_000

/** A source's label: the instance, "core" for clawtool's own tools, "unknown" for a name nothing routes to. */
export const sourceOf = (call: AuditCall): string => call.instance ?? "unknown"

/**
 * The dashboard's memory of calls (issue 29): a ring of the last `capacity` calls and, per source, a ring of
 * `minutes` one-minute buckets (count and sum), so the 15-minute sparkline costs two additions per call.
 */
export const make = (capacity = 200, minutes = 15): Recent => {
  const ring: Array<RecentCall | undefined> = new Array(capacity)
  let next = 0
  let count = 0
  const buckets = new Map<string, { minute: Float64Array; count: Float64Array; sum: Float64Array }>()

  const add = (call: AuditCall) => {
    const source = sourceOf(call)
    ring[next] = {
      at: call.at,
      source,
      tool: call.tool,
      outcome: call.outcome,
      durationMs: call.durationMs,
      traceId: call.traceId
    }
    next = (next + 1) % capacity
    count++
    let own = buckets.get(source)
    if (own === undefined) {
      own = {
        minute: new Float64Array(minutes).fill(-1),
        count: new Float64Array(minutes),
        sum: new Float64Array(minutes)
      }
      buckets.set(source, own)
    }
    const at = Math.floor(call.at / minute)
    const slot = at % minutes
    if (own.minute[slot] !== at) {
      own.minute[slot] = at
      own.count[slot] = 0
      own.sum[slot] = 0
    }
    own.count[slot]! += 1
    own.sum[slot]! += call.durationMs
  }

  const calls = () => {
    const kept = Math.min(count, capacity)
    const out: Array<RecentCall> = []
    for (let i = kept; i > 0; i--) out.push(ring[(next - i + capacity) % capacity]!)
    return out
  }

  const latency = (source: string, now: number) => {
    const own = buckets.get(source)
    const last = Math.floor(now / minute)
    return Array.from({ length: minutes }, (_, i) => {
      const at = last - (minutes - 1 - i)
      const slot = at % minutes
      return own === undefined || own.minute[slot] !== at ? null : own.sum[slot]! / own.count[slot]!
    })
  }

  return { add, calls, latency, version: () => count }
}
