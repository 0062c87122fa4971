import { Deferred, Duration, Effect, FiberMap, Option, Schedule, Stream, SubscriptionRef } from "effect"
import type { SourceConfig } from "../domain/Config.js"
import { childEnvironment } from "../domain/Environment.js"
import { CallError, SourceError } from "../domain/Errors.js"
import { HealthRow, packageOf, type Status } from "../domain/Health.js"
import type { CallToolRequest, CallToolResult, Tool } from "../domain/Mcp.js"
import { Config } from "./Config.js"
import { HostBridge, offlinePort } from "./HostBridge.js"
import { Secrets } from "./Secrets.js"
import { type CallOptions, type Connection, type ExitInfo, SourceClient } from "./SourceClient.js"

/** The tools one running instance serves, as the child sent them. */
export interface InstanceCatalog {
  readonly instance: string
  readonly tools: ReadonlyArray<Tool>
}

interface InstanceState {
  readonly status: Status
  /** Why the instance is not running (kept while a restart is under way, so Health says why it restarts). */
  readonly error: Option.Option<SourceError>
  readonly connection: Option.Option<Connection>
  /**
   * The tools this instance contributes to the catalog. Kept while a restart is pending, so a child that comes back
   * with the same tools changes nothing the host sees; emptied when the instance stops for good or crash-loops.
   */
  readonly tools: ReadonlyArray<Tool>
  /** Spawn time of the current (or last) child. */
  readonly startedAt: Option.Option<Date>
  readonly startupMs: Option.Option<number>
  /** When the current child finished initialize and tools/list. */
  readonly runningSince: Option.Option<Date>
  readonly restarts: number
  readonly nextRetryAt: Option.Option<Date>
}

const starting: InstanceState = {
  status: "starting",
  error: Option.none(),
  connection: Option.none(),
  tools: [],
  startedAt: Option.none(),
  startupMs: Option.none(),
  runningSince: Option.none(),
  restarts: 0,
  nextRetryAt: Option.none()
}

/** Bounded per-instance stderr: the last lines a child wrote, kept across restarts for Health. */
class StderrTail {
  private readonly lines: Array<string> = []
  constructor(private readonly capacity: number) {}
  push(line: string) {
    this.lines.push(line)
    if (this.lines.length > this.capacity) this.lines.splice(0, this.lines.length - this.capacity)
  }
  snapshot(): ReadonlyArray<string> {
    return [...this.lines]
  }
}

/** What the children of one instance left behind, across restarts; read by Health, never a reason to notify. */
class Diagnostics {
  readonly stderr = new StderrTail(stderrTailLines)
  stdoutGarbage = 0
  lastExit: ExitInfo | undefined
}

export const stderrTailLines = 100

const reasonOf = (error: SourceError) => `${error.reason}: ${error.detail}`

/** The names of one tool list, built once per list (an instance's array is kept until its tools change). */
const namesOf = new WeakMap<ReadonlyArray<Tool>, ReadonlySet<string>>()
const toolNames = (tools: ReadonlyArray<Tool>): ReadonlySet<string> => {
  let names = namesOf.get(tools)
  if (names === undefined) {
    names = new Set(tools.map((tool) => tool.name))
    namesOf.set(tools, names)
  }
  return names
}

/** Same tools, field for field: a restart that lists them again keeps the old array, so nothing downstream rebuilds. */
const sameTools = (a: ReadonlyArray<Tool>, b: ReadonlyArray<Tool>) =>
  a.length === b.length && JSON.stringify(a) === JSON.stringify(b)

/**
 * Restart delays (ADR-004): `restart_backoff`, doubling, capped at `restart_backoff_max`, each jittered by ±20 %
 * (never above the cap) so children that died together do not restart in lockstep.
 */
export const restartBackoff = (source: SourceConfig): Schedule.Schedule<Duration.Duration> => {
  const cap = (_: unknown, delay: Duration.Duration) => Duration.min(delay, source.restart_backoff_max)
  return Schedule.exponential(source.restart_backoff, 2).pipe(
    Schedule.modifyDelay(cap),
    Schedule.jitteredWith({ min: 0.8, max: 1.2 }),
    Schedule.modifyDelay(cap),
    Schedule.delays
  )
}

/**
 * Restart intensity of one instance, as in an OTP supervisor: at most `max_restarts` restarts within
 * `restart_window`; past that the instance is in crash-loop, retried every `crash_loop_retry`, until one of its
 * children runs for a whole `restart_window` (a stable run), which also resets the backoff.
 */
class Intensity {
  private restarts: Array<number> = []
  private crashLoop = false
  constructor(private readonly source: SourceConfig) {}

  /** Called once per failure, before the next restart; `uptimeMs` is how long the child ran (undefined: never ran). */
  next(now: number, uptimeMs: number | undefined): { readonly crashLoop: boolean; readonly stable: boolean } {
    const window = Duration.toMillis(this.source.restart_window)
    const stable = uptimeMs !== undefined && uptimeMs >= window
    if (stable) {
      this.restarts = []
      this.crashLoop = false
    }
    this.restarts = this.restarts.filter((at) => now - at < window)
    if (this.crashLoop || this.restarts.length >= this.source.max_restarts) {
      this.crashLoop = true
      return { crashLoop: true, stable }
    }
    this.restarts.push(now)
    return { crashLoop: false, stable }
  }
}

/**
 * The seed's Manager: owns every configured source's lifecycle and routes calls to the right child.
 * Each enabled instance is supervised in its own fiber (keyed by name in a FiberMap), so one slow, broken or
 * restarting child never delays or stops another; closing the layer's scope interrupts them all concurrently
 * (a pending restart is simply dropped), and each child's scope then ends its process group.
 */
export class Sources extends Effect.Service<Sources>()("clawtool/Sources", {
  dependencies: [Config.Default, Secrets.Default, SourceClient.Default],
  scoped: Effect.gen(function* () {
    const { config } = yield* Config
    const secrets = yield* Secrets
    const client = yield* SourceClient
    // Only serve has a host; the other commands declare a fixed set to children (ADR-005).
    const host = Option.match(yield* Effect.serviceOption(HostBridge), {
      onNone: () => offlinePort,
      onSome: (bridge) => bridge.port
    })

    const configured = Object.entries(config.sources)
      .filter(([, source]) => source.enabled)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    const names = configured.map(([name]) => name)

    const state = yield* SubscriptionRef.make<ReadonlyMap<string, InstanceState>>(
      new Map(names.map((name) => [name, starting]))
    )
    const diagnostics = new Map(names.map((name) => [name, new Diagnostics()]))
    const settled = new Map(
      yield* Effect.forEach(names, (name) => Effect.map(Deferred.make<void>(), (d) => [name, d] as const))
    )

    // A plain mirror of `state` for the synchronous reads of the call relay (catalogNow, connectionNow).
    let now: ReadonlyMap<string, InstanceState> = yield* SubscriptionRef.get(state)
    const update = (name: string, f: (current: InstanceState) => InstanceState) =>
      SubscriptionRef.update(state, (all) => (now = new Map(all).set(name, f(all.get(name) ?? starting))))
    const stateOf = (name: string) => Effect.map(SubscriptionRef.get(state), (all) => all.get(name) ?? starting)
    const settle = (name: string) => Deferred.succeed(settled.get(name)!, undefined)

    /** What a failure leaves: a pending restart (backoff or crash-loop retry), or nothing more to do. */
    type Next = "restart" | "crash-loop" | "stop"

    /**
     * Records a failure and decides what comes next. Runs while the failed child's scope is still open, so Health is
     * current before the reaping.
     */
    const recordFailure = (
      name: string,
      source: SourceConfig,
      intensity: Intensity,
      error: SourceError
    ): Effect.Effect<{ readonly next: Next; readonly stable: boolean }> =>
      Effect.gen(function* () {
        const current = yield* stateOf(name)
        const uptimeMs = Option.match(current.runningSince, {
          onNone: () => undefined,
          onSome: (since) => Date.now() - since.getTime()
        })
        // A restart cannot fix missing secrets or rejected credentials; restart = "never" asks for none.
        const unauthenticated = error.reason === "MissingSecrets" || error.auth
        const decision = ((): { readonly next: Next; readonly stable: boolean } => {
          if (unauthenticated || source.restart === "never") return { next: "stop", stable: false }
          const { crashLoop, stable } = intensity.next(Date.now(), uptimeMs)
          return { next: crashLoop ? "crash-loop" : "restart", stable }
        })()
        const status: Status =
          decision.next === "crash-loop" ? "crash-loop" : unauthenticated ? "unauthenticated" : "down"
        yield* update(name, (current) => ({
          ...current,
          status,
          error: Option.some(error),
          connection: Option.none(),
          runningSince: Option.none(),
          nextRetryAt: Option.none(),
          tools: decision.next === "restart" ? current.tools : []
        }))
        yield* decision.next === "crash-loop"
          ? Effect.logError(
              `source ${name}: crash-loop (${source.max_restarts} restarts within ${Duration.format(source.restart_window)}); retrying every ${Duration.format(source.crash_loop_retry)}: ${error.message}`
            )
          : Effect.logWarning(error.message)
        return decision
      })

    /** One child of one instance: start, serve until it exits, record why and what comes next. */
    const lifetime = (name: string, source: SourceConfig, intensity: Intensity) =>
      Effect.gen(function* () {
        const resolved = secrets.resolve(name, source)
        if (resolved.missing.length > 0) {
          return yield* new SourceError({
            instance: name,
            reason: "MissingSecrets",
            detail: `missing secrets: ${resolved.missing.join(", ")}`
          })
        }
        const diag = diagnostics.get(name)!
        const startedAt = new Date()
        yield* update(name, (current) => ({
          ...current,
          status: "starting",
          connection: Option.none(),
          startedAt: Option.some(startedAt),
          startupMs: Option.none(),
          nextRetryAt: Option.none()
        }))
        const connection = yield* client
          .connect({
            instance: name,
            command: resolved.command,
            env: childEnvironment(process.env, source.env_passthrough, resolved.env),
            cwd: source.cwd,
            callTimeout: source.call_timeout,
            host,
            onStderrLine: (line) => diag.stderr.push(line),
            onGarbage: (line) => {
              diag.stdoutGarbage++
              diag.stderr.push(`[stdout, not JSON-RPC] ${line.length > 200 ? `${line.slice(0, 200)}…` : line}`)
            },
            onExit: (exit) => {
              diag.lastExit = exit
            }
          })
          .pipe(
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
        const now = new Date()
        // The catalog is swapped in one update, together with the new connection: never a running instance with
        // the old child's tools, nor one with none.
        yield* update(name, (current) => ({
          ...current,
          status: "running",
          error: Option.none(),
          connection: Option.some(connection),
          tools: sameTools(current.tools, connection.tools) ? current.tools : connection.tools,
          startupMs: Option.some(now.getTime() - startedAt.getTime()),
          runningSince: Option.some(now)
        }))
        yield* settle(name)
        yield* Effect.logDebug(`source ${name}: running, ${connection.tools.length} tools, pid ${connection.pid}`)
        // Re-listings after a list_changed swap this child's tools here (a failed one keeps them and shows in
        // Health); only while this connection is the current one, so a recorded failure is never overwritten.
        yield* connection.surfaceChanges.pipe(
          Stream.runForEach((surface) =>
            update(name, (current) =>
              Option.isSome(current.connection) && current.connection.value === connection
                ? {
                    ...current,
                    tools: sameTools(current.tools, surface.tools) ? current.tools : surface.tools,
                    error: Option.fromNullable(surface.error)
                  }
                : current
            )
          ),
          Effect.forkScoped
        )
        const exit = yield* connection.exited
        return yield* new SourceError({
          instance: name,
          reason: "Exited",
          detail: exit.signal === null ? `exited with code ${exit.code}` : `killed by signal ${exit.signal}`
        })
      }).pipe(
        Effect.catchAll((error) => recordFailure(name, source, intensity, error)),
        Effect.scoped,
        Effect.withSpan("Sources.run", { attributes: { "clawtool.instance": name } })
      )

    /** Supervises one instance for as long as the layer lives: lifetimes, separated by backoff or crash-loop waits. */
    const supervise = (name: string, source: SourceConfig) =>
      Effect.gen(function* () {
        yield* host.ready
        const intensity = new Intensity(source)
        const announce = (delay: Duration.Duration) =>
          update(name, (current) => ({
            ...current,
            nextRetryAt: Option.some(new Date(Date.now() + Duration.toMillis(delay)))
          }))
        // The schedule announces each delay (Health's next retry time) before its driver sleeps it.
        const backoff = yield* Schedule.driver(restartBackoff(source).pipe(Schedule.tapOutput(announce)))
        for (;;) {
          const { next, stable } = yield* lifetime(name, source, intensity)
          // awaitSettled means "the first attempt is over", whatever came of it.
          yield* settle(name)
          if (next === "stop") return
          if (stable) yield* backoff.reset
          if (next === "crash-loop") {
            yield* announce(source.crash_loop_retry)
            yield* Effect.sleep(source.crash_loop_retry)
          } else {
            yield* Effect.ignore(backoff.next(undefined))
          }
          const restarts = (yield* stateOf(name)).restarts + 1
          yield* update(name, (current) => ({ ...current, restarts }))
          yield* Effect.logInfo(`source ${name}: restarting (restart ${restarts})`)
        }
      })

    const fibers = yield* FiberMap.make<string>()
    for (const [name, source] of configured) yield* FiberMap.run(fibers, name, supervise(name, source))

    const awaitSettled = Effect.forEach(Array.from(settled.values()), Deferred.await, { discard: true })

    /** Derived per state snapshot, once: Registry reads the catalog and the running children on every call. */
    const perState = <A>(f: (all: ReadonlyMap<string, InstanceState>) => A): (() => A) => {
      let last: { readonly all: ReadonlyMap<string, InstanceState>; readonly value: A } | undefined
      return () => {
        if (last === undefined || last.all !== now) last = { all: now, value: f(now) }
        return last.value
      }
    }

    const catalogNow = perState((all) =>
      names.flatMap((instance): Array<InstanceCatalog> => {
        const current = all.get(instance)
        if (current === undefined) return []
        // A restarting instance keeps its tools listed (calls fail fast and retryable until it is back).
        return current.status === "running" || current.tools.length > 0 ? [{ instance, tools: current.tools }] : []
      })
    )

    const iso = (date: Date) => date.toISOString()

    const health = Effect.map(SubscriptionRef.get(state), (all) =>
      names.map((name) => {
        const current = all.get(name) ?? starting
        const source = config.sources[name]!
        const diag = diagnostics.get(name)!
        const lastExit = diag.lastExit
        return new HealthRow({
          name,
          status: current.status,
          reason: Option.match(current.error, { onNone: () => "", onSome: reasonOf }),
          toolCount: current.tools.length,
          package: packageOf(source.command),
          pid: Option.match(current.connection, { onNone: () => null, onSome: (c) => c.pid }),
          startedAt: Option.match(current.startedAt, { onNone: () => null, onSome: iso }),
          startupMs: Option.getOrNull(current.startupMs),
          stderrTail: diag.stderr.snapshot(),
          restarts: current.restarts,
          lastExit:
            lastExit === undefined ? null : { code: lastExit.code, signal: lastExit.signal, at: iso(lastExit.at) },
          nextRetryAt: Option.match(current.nextRetryAt, { onNone: () => null, onSome: iso }),
          uptimeMs:
            current.status === "running"
              ? Option.match(current.runningSince, { onNone: () => null, onSome: (d) => Date.now() - d.getTime() })
              : null,
          stdoutGarbage: diag.stdoutGarbage
        })
      })
    )

    /** The per-call hot path: no span of its own (Tracing's cover the call) and a name lookup, not a scan. */
    const callTool = (
      instance: string,
      request: CallToolRequest,
      options?: CallOptions
    ): Effect.Effect<CallToolResult, CallError> =>
      Effect.flatMap(SubscriptionRef.get(state), (all) => {
        const current = all.get(instance)
        const tool = `${instance}.${request.name}`
        if (current === undefined) {
          return Effect.fail(
            new CallError({
              tool,
              reason: "NoSuchInstance",
              detail: `no source instance named "${instance}"`
            })
          )
        }
        if (current.status !== "running" || Option.isNone(current.connection)) {
          const why = Option.match(current.error, { onNone: () => current.status, onSome: reasonOf })
          const retry = Option.match(current.nextRetryAt, {
            onNone: () => "",
            onSome: (at) => `; next restart at ${iso(at)}`
          })
          return Effect.fail(
            new CallError({
              tool,
              reason: "NotRunning",
              detail: `source "${instance}" is not running (${why})${retry}`,
              retryable: current.status !== "unauthenticated"
            })
          )
        }
        if (!toolNames(current.tools).has(request.name)) {
          return Effect.fail(
            new CallError({
              tool,
              reason: "NoSuchTool",
              detail: `source "${instance}" has no tool named "${request.name}"`
            })
          )
        }
        return current.connection.value.callTool(request, options)
      })

    return {
      /** Configured, enabled instance names, sorted. */
      names,
      /** Completes once every instance's first start attempt is over (each bounded by its startup_timeout). */
      awaitSettled,
      catalog: Effect.sync(catalogNow),
      /** The catalog input as of now, synchronously (the call relay's route lookup). */
      catalogNow,
      /** The running child of an instance as of now, synchronously (the call relay). */
      connectionNow: (instance: string): Connection | undefined => {
        const current = now.get(instance)
        return current?.status === "running" && Option.isSome(current.connection) ? current.connection.value : undefined
      },
      health,
      callTool,
      /** Emits whenever any instance's state changes (status, catalog, restarts, next retry time). */
      changes: Stream.map(state.changes, () => undefined),
      /** The running child of an instance: everything beyond tools/call is routed through it. */
      connection: (instance: string): Effect.Effect<Connection, CallError> =>
        Effect.flatMap(stateOf(instance), (current) =>
          current.status === "running" && Option.isSome(current.connection)
            ? Effect.succeed(current.connection.value)
            : Effect.fail(
                new CallError({
                  tool: instance,
                  reason: names.includes(instance) ? "NotRunning" : "NoSuchInstance",
                  detail: names.includes(instance)
                    ? `source "${instance}" is not running (${Option.match(current.error, { onNone: () => current.status, onSome: reasonOf })})`
                    : `no source instance named "${instance}"`,
                  retryable: names.includes(instance) && current.status !== "unauthenticated"
                })
              )
        ),
      /** The running children, in instance order. */
      running: Effect.sync(
        perState((all) =>
          names.flatMap((name) => {
            const current = all.get(name)
            return current?.status === "running" && current.connection._tag === "Some" ? [current.connection.value] : []
          })
        )
      )
    } as const
  })
}) {}
