import { Clock, Deferred, Duration, Effect, Either, FiberMap, Option, Queue, Ref, Stream } from "effect"
import { type ClawtoolConfig, isRemote, type SkippedEntry, type SourceConfig, targetOf } from "../domain/Config.js"
import * as ConfigDiff from "../domain/ConfigDiff.js"
import type { CallOptions, Connection, LiveSurface } from "../domain/Connection.js"
import type { EraVerdict } from "../domain/Era.js"
import { type CallError, SourceError } from "../domain/Errors.js"
import { type HealthRow, packageOfSource, reloadFailedRow, skippedRow } from "../domain/Health.js"
import type { CallToolRequest, CallToolResult } from "../domain/Mcp.js"
import { CatalogCache } from "./CatalogCache.js"
import { Config, ProcessEnv } from "./Config.js"
import { HostBridge, offlinePort } from "./HostBridge.js"
import { type ResolvedSource, Secrets } from "./Secrets.js"
import { SourceClient } from "./SourceClient/SourceClient.js"
import { RemoteAuth } from "./SourceClient/RemoteAuth.js"
import { counted } from "./Sources/Activity.js"
import * as Instance from "./Sources/Instance.js"
import * as Launch from "./Sources/Launch.js"
import * as Policy from "./Sources/Policy.js"
import * as Slot from "./Sources/Slot.js"
import { connectOnVerdict } from "./Sources/EraStart.js"
import { makeRef, type InstanceCatalog, Snapshot } from "./Sources/Snapshot.js"

export type { InstanceCatalog } from "./Sources/Snapshot.js"

/** What the rest of clawtool asks of the configured sources. */
export interface SourcesApi {
  /** Configured, enabled instance names, sorted. */
  readonly names: ReadonlyArray<string>
  /** Completes once every instance's first start attempt is over (each bounded by its startup_timeout). */
  readonly awaitSettled: Effect.Effect<void>
  /**
   * Completes once every instance's catalog is known: served from the persisted catalog, or its first start attempt
   * is over. What a host's list should wait for (health waits for `awaitSettled`).
   */
  readonly awaitListed: Effect.Effect<void>
  /**
   * The catalog input as of now, synchronously (the call relay's route lookup, per call). Like `catalog`, `running`
   * and `connectionNow`, a read of the one immutable Snapshot the supervisors replace on every state change, where
   * it was derived once.
   */
  readonly catalogNow: () => ReadonlyArray<InstanceCatalog>
  /** The running child of an instance as of now, synchronously (the call relay, per call). */
  readonly connectionNow: (instance: string) => Connection | undefined
  /** The catalog input: running instances', and restarting ones' last, tools in instance order. */
  readonly catalog: Effect.Effect<ReadonlyArray<InstanceCatalog>>
  /** The running children, in instance order. */
  readonly running: Effect.Effect<ReadonlyArray<Connection>>
  /**
   * The persisted resources, templates and prompts of an instance serving its cached catalog, as of now (optional: a
   * Sources without it caches no lists).
   */
  readonly cachedSurface?: (instance: string) => Instance.CachedSurface | undefined
  /** One Health row per instance, in instance order, then one per skipped entry of a JSON config. */
  readonly health: Effect.Effect<ReadonlyArray<HealthRow>>
  /** A tools/call to one instance's tool (its own name), through its running child. */
  readonly callTool: (
    instance: string,
    request: CallToolRequest,
    options?: CallOptions
  ) => Effect.Effect<CallToolResult, CallError>
  /** The running child of an instance: everything beyond tools/call is routed through it. */
  readonly connection: (instance: string) => Effect.Effect<Connection, CallError>
  /**
   * Makes sure an instance is started (spawns a lazy or idle one) and waits until it is past starting: running or down
   * (bounded by its startup_timeout). Never fails; the request that follows is refused as usual if it is not running.
   */
  readonly awaitInstance: (instance: string) => Effect.Effect<void>
  /** Emits at once, then whenever any instance's state changes (status, catalog, restarts, next retry time). */
  readonly changes: Stream.Stream<void>
  /**
   * Applies a new config (ADR 016): added sources start, removed ones stop, ones whose spec (or resolved secrets)
   * changed restart, the others keep their child. One change is emitted for all of it, once the started ones settled
   * (at most `list_wait`), so the host gets at most one list_changed per kind. Returns what was done.
   */
  readonly reconfigure: (
    next: ClawtoolConfig,
    resolve: (instance: string, source: SourceConfig) => ResolvedSource
  ) => Effect.Effect<ConfigDiff.ConfigDiff>
  /** Stops an instance's child (if any), starts a new one under a fresh policy (after a login), as a reload would. */
  readonly restart: (instance: string) => Effect.Effect<void>
  /**
   * The config file's last reload: the entries it skipped once one succeeded, else why it was rejected (a Health row
   * while it lasts; the skipped entries stay those of the config in effect).
   */
  readonly reportReload: (outcome: Either.Either<ReadonlyArray<SkippedEntry>, string>) => Effect.Effect<void>
}

/**
 * How long after the host's initialize an eager source serving its cached catalog waits before spawning its child (a
 * request routed to it ends the wait): the host's first lists, sent right after initialize, are answered from the
 * cache before twenty children compete for the CPU (ADR 014).
 */
const cachedSpawnDelay = Duration.millis(500)

/**
 * The seed's Manager: owns every configured source's lifecycle and routes calls to the right child.
 * Each enabled instance is supervised in its own fiber (keyed by name in a FiberMap): a loop of child lifetimes,
 * each failure judged by the restart Policy (ADR-004), each step an Instance transition. One slow, broken or
 * restarting child never delays or stops another; closing the layer's scope interrupts them all concurrently
 * (a pending restart is simply dropped), and each child's scope then ends its process group.
 */
export class Sources extends Effect.Service<Sources>()("clawtool/Sources", {
  dependencies: [Config.Default, Secrets.Default, SourceClient.Default, CatalogCache.Default],
  scoped: Effect.gen(function* () {
    const { config: initial, path: configPath, live, skipped: skippedAtStart } = yield* Config
    const secrets = yield* Secrets
    const client = yield* SourceClient
    const cache = yield* CatalogCache
    // Children inherit from clawtool's environment as ProcessEnv gives it (default-deny applies on top).
    const parentEnv = yield* ProcessEnv
    const clock = yield* Effect.clock
    // Only serve has a host; the other commands declare a fixed set to children (ADR-005).
    const host = Option.match(yield* Effect.serviceOption(HostBridge), {
      onNone: () => offlinePort,
      onSome: (bridge) => bridge.port
    })

    // Without a host (health, one-shot commands) no list is answered first: cached sources spawn at once.
    const hosted = Option.isSome(yield* Effect.serviceOption(HostBridge))
    // Without it (commands that never authenticate, tests) a source with `oauth` set cannot log in.
    const remoteAuth = yield* Effect.serviceOption(RemoteAuth)

    /** Enabled sources of a config, sorted by name. */
    const enabledOf = (from: ClawtoolConfig) =>
      Object.entries(from.sources)
        .filter(([, source]) => source.enabled)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    // The config and secrets in effect (the start's, then each reload's; ADR 016), and what the last reload reported.
    const loaded = yield* Ref.make({
      config: initial,
      resolve: secrets.resolve,
      skipped: skippedAtStart,
      reloadFailure: Option.none<string>()
    })
    const configured = enabledOf(initial)
    // Updated in place by a reload: the service object copies this member once (Effect.Service), so no getter.
    const names: Array<string> = configured.map(([name]) => name)

    const state = yield* makeRef(Snapshot.initial([...names]))
    // Each configured instance's bookkeeping, changed only in the step that changes the Snapshot's set of instances.
    const slots = new Map<string, Slot.Slot>()
    for (const [name, source] of configured) slots.set(name, yield* Slot.make(source, clock))
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    /** The child's launch: its environment and the persisted catalog's key, with the secrets in effect. */
    const launchOf = (name: string, source: SourceConfig) =>
      Effect.zipWith(host.clientCapabilities, Ref.get(loaded), (capabilities, { resolve }) =>
        Launch.launchOf(source, resolve(name, source), parentEnv, capabilities)
      )

    /**
     * Stores what the current child listed (tools, resources, templates, prompts: its surface, at once and after every
     * re-listing); a failed listing is not stored.
     */
    const persist = (name: string, key: string | undefined, connection: Connection, surface: LiveSurface) =>
      Effect.suspend(() => {
        const { error, tools, ...lists } = surface
        if (key === undefined || error !== undefined) return Effect.void
        if (Instance.connectionOf(state.get().instances.get(name)) !== connection) return Effect.void
        // The era verdict goes with the catalog only where it was found (auto), never where the config chose it.
        const era = slots.get(name)?.source.protocol === "auto" ? { era: connection.era } : {}
        return cache.store(key, {
          tools,
          lists: Option.some({ capabilities: connection.capabilities, ...lists, ...era })
        })
      })

    /** Starts one child and serves until it exits (fails with why it is gone) or, lazy, until it is idle. */
    const serve = (name: string, slot: Slot.Slot) =>
      Effect.gen(function* () {
        const { source } = slot
        const launch = yield* launchOf(name, source)
        const { resolved } = launch
        if (resolved.missing.length > 0) {
          return yield* new SourceError({
            instance: name,
            // A header secret is a credential: its absence makes a remote source unauthenticated (issue 11).
            reason: isRemote(source) ? "Unauthenticated" : "MissingSecrets",
            detail: `missing secrets: ${resolved.missing.join(", ")}`
          })
        }
        const startedAt = yield* now
        yield* state.update(name, (current) => Instance.spawning(current, startedAt))
        const target = targetOf(source)
        const authProvider =
          target._tag === "Remote" ? yield* Launch.authProviderOf(remoteAuth, name, target) : undefined
        const specFor = (knownEra: EraVerdict | undefined) =>
          Launch.specOf(name, source, { launch, target, host, diagnostics: slot.diagnostics, authProvider, knownEra })
        const kept = source.protocol === "auto" ? slot.era : undefined
        const connected = yield* connectOnVerdict((knownEra) => client.connect(specFor(knownEra)), kept).pipe(
          Effect.timeoutFail({
            duration: source.startup_timeout,
            onTimeout: () =>
              new SourceError({
                instance: name,
                reason: "Timeout",
                detail: `no answer to initialize/tools/list within the startup_timeout`
              })
          })
        )
        slot.era = connected.era
        const idleTimeout = source.start === "lazy" ? source.idle_timeout : undefined
        const connection = idleTimeout === undefined ? connected : counted(connected, slot.activity)
        const runningSince = yield* now
        yield* state.update(name, (current) => Instance.running(current, connection, runningSince))
        yield* Slot.settle(slot)
        yield* Effect.logDebug(`source ${name}: running, ${connection.tools.length} tools, pid ${connection.pid}`)
        yield* connection.surfaceChanges.pipe(
          Stream.runForEach((surface) =>
            Effect.zipRight(
              state.update(name, (current) => Instance.surfaceChanged(current, connection, surface)),
              persist(name, launch.key, connection, surface)
            )
          ),
          Effect.forkScoped
        )
        if (idleTimeout !== undefined) {
          const idled = yield* Effect.raceFirst(
            Effect.as(slot.activity.idleFor(idleTimeout), true),
            Effect.as(connection.exited, false)
          )
          if (idled) {
            // Marked before the scope closes, so no request is routed to the child being stopped.
            yield* state.update(name, Instance.idle)
            yield* Effect.logInfo(`source ${name}: idle for ${Duration.format(idleTimeout)}; stopping its child`)
            return "idle" as const
          }
        }
        const exit = yield* connection.exited
        if (exit.lost !== undefined) return yield* exit.lost
        return yield* new SourceError({
          instance: name,
          reason: "Exited",
          detail: exit.signal === null ? `exited with code ${exit.code}` : `killed by signal ${exit.signal}`
        })
      })

    /**
     * One lifetime: serve, then judge the failure and record it. The recording runs while the failed child's scope is
     * still open, so Health is current before the reaping.
     */
    const lifetime = (name: string, slot: Slot.Slot, policy: Policy.State) =>
      serve(name, slot).pipe(
        Effect.as(undefined),
        Effect.catchAll((error) =>
          Effect.gen(function* () {
            const { source } = slot
            const current = state.get().instances.get(name)!
            const runningSince =
              current._tag === "Running" ? Option.some(current.runningSince.getTime()) : Option.none()
            const judged = yield* Policy.decide(source, policy, { error, runningSince })
            const at = yield* now
            yield* state.update(name, (current) => Instance.failed(current, error, judged[0], at))
            yield* judged[0]._tag === "CrashLoop"
              ? Effect.logError(
                  `source ${name}: crash-loop (${source.max_restarts} restarts within ${Duration.format(source.restart_window)}); retrying every ${Duration.format(source.crash_loop_retry)}: ${error.message}`
                )
              : Effect.logWarning(error.message)
            return judged
          })
        ),
        Effect.scoped,
        Effect.withSpan("Sources.run", { attributes: { "clawtool.instance": name } })
      )

    /** Supervises one instance for as long as the layer lives: lifetimes, separated by the policy's waits. */
    const supervise = (name: string, slot: Slot.Slot) =>
      Effect.gen(function* () {
        const { source } = slot
        // The key includes what the child is declared (the host's capabilities): known once the host initialized.
        const { key } = yield* launchOf(name, source)
        let cachedEager = false
        if (key !== undefined) {
          const cached = yield* cache.load(key)
          if (Option.isSome(cached)) {
            // Lazy: known tools, no need to start; the first request routed here spawns it.
            const lazy = source.start === "lazy"
            cachedEager = !lazy
            slot.era = Option.getOrUndefined(cached.value.lists)?.era
            yield* state.update(name, (current) => {
              const withCache = Instance.fromCache(current, cached.value.tools, cached.value.lists)
              return lazy ? Instance.idle(withCache) : withCache
            })
            yield* Deferred.succeed(slot.listed, undefined)
            if (lazy) {
              yield* Slot.settle(slot)
              yield* Queue.take(slot.wake)
            }
          }
        }
        yield* host.ready
        // Its catalog is served already: the child starts after the host's first lists are answered (they would queue
        // behind twenty spawns otherwise), or at once for a request routed to it.
        if (cachedEager && hosted) yield* Effect.raceFirst(Queue.take(slot.wake), Effect.sleep(cachedSpawnDelay))
        let policy = Policy.initial
        for (;;) {
          const judged = yield* lifetime(name, slot, policy)
          if (judged === undefined) {
            yield* Queue.take(slot.wake)
            continue
          }
          const [decision, next] = judged
          policy = next
          // awaitSettled means "the first attempt is over", whatever came of it.
          yield* Slot.settle(slot)
          if (decision._tag === "Stop") return
          yield* Effect.sleep(decision.delay)
          yield* state.update(name, Instance.restarting)
          const restarts = state.get().instances.get(name)!.restarts
          yield* Effect.logInfo(`source ${name}: restarting (restart ${restarts})`)
        }
      })

    const fibers = yield* FiberMap.make<string>()
    for (const [name, slot] of slots) yield* FiberMap.run(fibers, name, supervise(name, slot))

    const reconfigure = (next: ClawtoolConfig, resolve: (instance: string, source: SourceConfig) => ResolvedSource) =>
      Effect.gen(function* () {
        const previous = yield* Ref.get(loaded)
        const changes = ConfigDiff.diff(previous.config, next, { old: previous.resolve, next: resolve })
        // Nothing changed: nothing restarted, nothing announced.
        if (ConfigDiff.isEmpty(changes)) return changes
        return yield* apply(changes, next, resolve)
      }).pipe(Effect.withSpan("Sources.reconfigure"))

    /** Stops, starts and restarts what `changes` says, in one change of the state. */
    const apply = (
      changes: ConfigDiff.ConfigDiff,
      next: ClawtoolConfig,
      resolve: (instance: string, source: SourceConfig) => ResolvedSource
    ) =>
      Effect.gen(function* () {
        const begun = [...changes.start, ...changes.restart]
        yield* state.batch(
          Effect.gen(function* () {
            // Stopped first (each child's process group, as at shutdown), so a restarted child never meets its old self.
            yield* Effect.forEach([...changes.stop, ...changes.restart], (name) => FiberMap.remove(fibers, name), {
              concurrency: "unbounded",
              discard: true
            })
            const made = yield* Effect.forEach(begun, (name) =>
              Effect.map(Slot.make(next.sources[name]!, clock), (slot) => [name, slot] as const)
            )
            const restarted = new Set(changes.restart)
            const nextNames = enabledOf(next).map(([name]) => name)
            // Inside the batch: new tool rules and name_budget reach the catalog in the same one change.
            yield* live.set(next)
            // Before any new supervisor reads the secrets; kept children resolve the same under both (ConfigDiff).
            yield* Ref.update(loaded, (current) => ({ ...current, config: next, resolve }))
            // One synchronous step: no reader sees an instance without its slot, or a slot of another spec.
            yield* state.replace((current) => {
              for (const name of [...changes.stop, ...changes.restart]) slots.delete(name)
              for (const [name, slot] of made) slots.set(name, slot)
              names.splice(0, names.length, ...nextNames)
              return current.reconfigured(nextNames, (name, instance) =>
                instance === undefined
                  ? Instance.make(name)
                  : restarted.has(name)
                    ? Instance.respecified(instance)
                    : instance
              )
            })
            for (const [name, slot] of made) yield* FiberMap.run(fibers, name, supervise(name, slot))
            // The one change waits for the new children's first attempts (as a first list does), at most list_wait.
            yield* Effect.timeoutOption(
              Effect.forEach(made, ([, slot]) => Deferred.await(slot.settled), { discard: true }),
              next.list_wait
            )
          })
        )
        return changes
      })

    const restart = (instance: string) =>
      Effect.flatMap(Ref.get(loaded), ({ config, resolve }) =>
        slots.has(instance) ? apply({ ...ConfigDiff.nothing, restart: [instance] }, config, resolve) : Effect.void
      ).pipe(Effect.withSpan("Sources.restart", { attributes: { "clawtool.instance": instance } }))

    const pastStarting = (instance: string) => {
      const current = state.get().instances.get(instance)
      return current === undefined || current._tag === "Running" || current._tag === "Down"
    }

    const awaitInstance = (instance: string): Effect.Effect<void> =>
      Effect.suspend(() => {
        const current = state.get().instances.get(instance)
        const slot = slots.get(instance)
        if (current === undefined || slot === undefined || pastStarting(instance)) return Effect.void
        slot.activity.touch()
        // Checked on every change, not once: an instance may turn idle while this waits (a lazy one loading its cache).
        // So is an eager one serving its cached catalog that has not spawned its child yet.
        const wakeIfIdle = Effect.suspend(() => {
          const now = state.get().instances.get(instance)
          return now?._tag === "Idle" || (now?._tag === "Starting" && now.cached && Option.isNone(now.startedAt))
            ? Queue.offer(slot.wake, undefined)
            : Effect.void
        })
        return state.changes.pipe(
          Stream.tap(() => wakeIfIdle),
          Stream.filter(() => pastStarting(instance)),
          Stream.take(1),
          Stream.runDrain,
          // Past the startup_timeout the supervisor records the failure itself; the margin lets it.
          Effect.timeout(Duration.sum(slot.source.startup_timeout, Duration.seconds(1))),
          Effect.ignore
        )
      })

    /** The per-call hot path: no span of its own (Tracing's cover the call) and a name lookup, not a scan. */
    const callTool = (
      instance: string,
      request: CallToolRequest,
      options?: CallOptions
    ): Effect.Effect<CallToolResult, CallError> =>
      Effect.suspend(() => {
        const current = state.get().instances.get(instance)
        const tool = `${instance}.${request.name}`
        if (current === undefined) return Effect.fail(Instance.noSuchInstance(instance, tool))
        if (current._tag === "Idle" || (current._tag === "Starting" && Option.isNone(current.error))) {
          // An idle source, or one starting for the first time (its cached tools are listed) or after idle: started
          // if need be, then called once it is up. A restart after a failure still fails fast and retryable.
          return Effect.zipRight(
            awaitInstance(instance),
            Effect.suspend(() => {
              const after = state.get().instances.get(instance)!
              return after._tag === "Starting" || after._tag === "Idle"
                ? Effect.fail(Instance.notRunning(after, tool))
                : callTool(instance, request, options)
            })
          )
        }
        if (current._tag !== "Running") return Effect.fail(Instance.notRunning(current, tool))
        if (!current.toolNames.has(request.name)) return Effect.fail(Instance.noSuchTool(current, request.name, tool))
        return current.connection.callTool(request, options)
      })

    const api: SourcesApi = {
      names,
      awaitSettled: Effect.suspend(() =>
        Effect.forEach(
          Array.from(slots.values(), (slot) => slot.settled),
          Deferred.await,
          { discard: true }
        )
      ),
      awaitListed: Effect.suspend(() =>
        Effect.forEach(
          Array.from(slots.values(), (slot) => slot.listed),
          Deferred.await,
          { discard: true }
        )
      ),
      catalogNow: () => state.get().catalog,
      connectionNow: (instance) => state.get().connection(instance),
      catalog: Effect.sync(() => state.get().catalog),
      running: Effect.sync(() => state.get().running),
      cachedSurface: (instance) => state.get().instances.get(instance)?.cachedSurface,
      health: Effect.zipWith(Clock.currentTimeMillis, Ref.get(loaded), (at, { reloadFailure, skipped }) => {
        const { instances, names } = state.get()
        const rows = [
          ...names.map((name) => {
            const slot = slots.get(name)!
            return Instance.healthRow(instances.get(name)!, {
              package: packageOfSource(slot.source),
              diagnostics: slot.diagnostics,
              now: at
            })
          }),
          ...skipped.map(skippedRow)
        ]
        return Option.match(reloadFailure, {
          onNone: () => rows,
          onSome: (why) => [reloadFailedRow(configPath, why), ...rows]
        })
      }),
      reconfigure,
      restart,
      reportReload: (outcome) =>
        Ref.update(loaded, (current) => ({
          ...current,
          reloadFailure: Either.getLeft(outcome),
          skipped: Either.isRight(outcome) ? outcome.right : current.skipped
        })),
      callTool,
      awaitInstance,
      connection: (instance) =>
        Effect.suspend(() => {
          const current = state.get().instances.get(instance)
          if (current === undefined) return Effect.fail(Instance.noSuchInstance(instance, instance))
          return current._tag === "Running"
            ? Effect.succeed(current.connection)
            : Effect.fail(Instance.notRunning(current, instance))
        }),
      changes: state.changes
    }
    return api
  })
}) {}
