import { type Clock, Deferred, Effect, Queue } from "effect"
import type { SourceConfig } from "../../domain/Config.js"
import type { EraVerdict } from "../../domain/Era.js"
import { Activity } from "./Activity.js"
import { Diagnostics } from "./Diagnostics.js"

/**
 * One configured instance's bookkeeping beside its state in the Snapshot: made when the instance is configured (at
 * start or by a reload), dropped when it is removed or respecified. Its `source` is the spec its supervisor runs; a
 * reload keeps a slot only for an unchanged spec (ConfigDiff compares every key), so it never goes stale.
 */
export interface Slot {
  readonly source: SourceConfig
  readonly diagnostics: Diagnostics
  /** The first start attempt is over (awaitSettled). */
  readonly settled: Deferred.Deferred<void>
  /** The catalog is known: from the persisted catalog, or the first start attempt is over (awaitListed). */
  readonly listed: Deferred.Deferred<void>
  /** A request to an idle lazy source wakes its supervisor (a stale wake costs at most one early start). */
  readonly wake: Queue.Queue<void>
  readonly activity: Activity
  /**
   * The era verdict the next start adopts (ADR 033): the persisted catalog's, then each running child's; dropped when a
   * start on it fails, so the start after that probes again. Only for `protocol = "auto"`.
   */
  era: EraVerdict | undefined
}

export const make = (source: SourceConfig, clock: Clock.Clock): Effect.Effect<Slot> =>
  Effect.all({
    source: Effect.succeed(source),
    diagnostics: Effect.sync(() => new Diagnostics()),
    settled: Deferred.make<void>(),
    listed: Deferred.make<void>(),
    wake: Queue.sliding<void>(1),
    activity: Effect.sync(() => new Activity(clock)),
    era: Effect.succeed<EraVerdict | undefined>(undefined)
  })

/** The first start attempt is over: the catalog is known too. */
export const settle = (slot: Slot): Effect.Effect<void> =>
  Effect.zipRight(Deferred.succeed(slot.listed, undefined), Deferred.succeed(slot.settled, undefined))
