import { Effect, MutableRef, PubSub, Stream } from "effect"
import type { Connection } from "../../domain/Connection.js"
import type { Tool } from "../../domain/Mcp.js"
import * as Instance from "./Instance.js"

/** The tools one running instance serves, as the child sent them. */
export interface InstanceCatalog {
  readonly instance: string
  readonly tools: ReadonlyArray<Tool>
}

/**
 * Every instance's state at one moment, immutable, with what the call path derives from it computed once here
 * (states change a few times per child's life; calls read the same snapshot thousands of times).
 */
export class Snapshot {
  /**
   * The catalog input: a restarting instance keeps its tools listed (calls fail fast and retryable until it is back);
   * one serving its persisted catalog is listed even with no tools, so its cached resources and prompts are served.
   */
  readonly catalog: ReadonlyArray<InstanceCatalog>
  /** The running children, in instance order. */
  readonly running: ReadonlyArray<Connection>

  constructor(
    /** Configured, enabled instance names, sorted. */
    readonly names: ReadonlyArray<string>,
    readonly instances: ReadonlyMap<string, Instance.Instance>
  ) {
    const ordered = names.flatMap((name) => {
      const instance = instances.get(name)
      return instance === undefined ? [] : [instance]
    })
    this.catalog = ordered.flatMap((instance) =>
      instance._tag === "Running" || instance.tools.length > 0 || instance.cachedSurface !== undefined
        ? [{ instance: instance.name, tools: instance.tools }]
        : []
    )
    this.running = ordered.flatMap((instance) => (instance._tag === "Running" ? [instance.connection] : []))
  }

  /** The running child of an instance (undefined when it is not running or not configured). */
  connection(instance: string): Connection | undefined {
    return Instance.connectionOf(this.instances.get(instance))
  }

  static initial(names: ReadonlyArray<string>): Snapshot {
    return new Snapshot(names, new Map(names.map((name) => [name, Instance.make(name)])))
  }

  /**
   * The instances of a new config (ADR 016): kept ones keep their state, new ones and `fresh` ones (restarted with a
   * new spec) start over as `fresh` says, removed ones are gone.
   */
  reconfigured(
    names: ReadonlyArray<string>,
    fresh: (name: string, current: Instance.Instance | undefined) => Instance.Instance
  ): Snapshot {
    return new Snapshot(names, new Map(names.map((name) => [name, fresh(name, this.instances.get(name))])))
  }

  /** The same snapshot when `f` changes nothing. */
  update(name: string, f: (current: Instance.Instance) => Instance.Instance): Snapshot {
    const current = this.instances.get(name)
    if (current === undefined) return this
    const next = f(current)
    return next === current ? this : new Snapshot(this.names, new Map(this.instances).set(name, next))
  }
}

/**
 * Holds the current Snapshot, readable synchronously (the call relay reads it per call) and as a stream of changes.
 * Updates are synchronous too, so no reader ever sees a half-applied one.
 */
export interface SnapshotRef {
  readonly get: () => Snapshot
  readonly update: (name: string, f: (current: Instance.Instance) => Instance.Instance) => Effect.Effect<void>
  /** Replaces the whole snapshot (a reload's new set of instances). */
  readonly replace: (f: (current: Snapshot) => Snapshot) => Effect.Effect<void>
  /**
   * Runs `effect` with change notices held back, then emits ONE change: a reload is one settled change, so the host
   * gets at most one list_changed per list kind for it (ADR 016). Readers still see every state at once.
   */
  readonly batch: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Emits once at once, then after every change. */
  readonly changes: Stream.Stream<void>
}

export const makeRef = (initial: Snapshot): Effect.Effect<SnapshotRef> =>
  Effect.map(PubSub.unbounded<void>(), (changed): SnapshotRef => {
    const current = MutableRef.make(initial)
    let held = 0
    const set = (before: Snapshot, after: Snapshot) => {
      if (after === before) return Effect.void
      MutableRef.set(current, after)
      return held > 0 ? Effect.void : PubSub.publish(changed, undefined)
    }
    return {
      get: () => current.current,
      update: (name, f) => Effect.suspend(() => set(current.current, current.current.update(name, f))),
      replace: (f) => Effect.suspend(() => set(current.current, f(current.current))),
      batch: (effect) =>
        Effect.acquireUseRelease(
          Effect.sync(() => held++),
          () => effect,
          () => Effect.suspend(() => (--held > 0 ? Effect.void : PubSub.publish(changed, undefined)))
        ),
      // Subscribed before the first emission, so no change between the two is lost.
      changes: Stream.unwrapScoped(
        Effect.map(PubSub.subscribe(changed), (queue) =>
          Stream.concat(Stream.succeed(undefined), Stream.fromQueue(queue))
        )
      )
    }
  })
