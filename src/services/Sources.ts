import { Clock, Deferred, Duration, Effect, FiberMap, Option, Stream } from "effect"
import type { SourceConfig } from "../domain/Config.js"
import { childEnvironment } from "../domain/Environment.js"
import { type CallError, SourceError } from "../domain/Errors.js"
import { type HealthRow, packageOf } from "../domain/Health.js"
import type { CallToolRequest, CallToolResult } from "../domain/Mcp.js"
import { Config } from "./Config.js"
import { HostBridge, offlinePort } from "./HostBridge.js"
import { Secrets } from "./Secrets.js"
import { type CallOptions, type Connection, SourceClient } from "./SourceClient.js"
import { Diagnostics } from "./Sources/Diagnostics.js"
import * as Instance from "./Sources/Instance.js"
import * as Policy from "./Sources/Policy.js"
import { makeRef, type InstanceCatalog, Snapshot } from "./Sources/Snapshot.js"

export type { InstanceCatalog } from "./Sources/Snapshot.js"

/** What the rest of clawtool asks of the configured sources. */
export interface SourcesApi {
  /** Configured, enabled instance names, sorted. */
  readonly names: ReadonlyArray<string>
  /** Completes once every instance's first start attempt is over (each bounded by its startup_timeout). */
  readonly awaitSettled: Effect.Effect<void>
  /** Completes once `instance` is past `starting` (running, down, or not configured): bounded by its startup_timeout. */
  readonly awaitInstance: (instance: string) => Effect.Effect<void>
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
  /** One Health row per instance, in instance order. */
  readonly health: Effect.Effect<ReadonlyArray<HealthRow>>
  /** A tools/call to one instance's tool (its own name), through its running child. */
  readonly callTool: (
    instance: string,
    request: CallToolRequest,
    options?: CallOptions
  ) => Effect.Effect<CallToolResult, CallError>
  /** The running child of an instance: everything beyond tools/call is routed through it. */
  readonly connection: (instance: string) => Effect.Effect<Connection, CallError>
  /** Emits at once, then whenever any instance's state changes (status, catalog, restarts, next retry time). */
  readonly changes: Stream.Stream<void>
}

/**
 * The seed's Manager: owns every configured source's lifecycle and routes calls to the right child.
 * Each enabled instance is supervised in its own fiber (keyed by name in a FiberMap): a loop of child lifetimes,
 * each failure judged by the restart Policy (ADR-004), each step an Instance transition. One slow, broken or
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

    const state = yield* makeRef(Snapshot.initial(names))
    const diagnostics = new Map(names.map((name) => [name, new Diagnostics()]))
    const settled = new Map(
      yield* Effect.forEach(names, (name) => Effect.map(Deferred.make<void>(), (d) => [name, d] as const))
    )
    const settle = (name: string) => Deferred.succeed(settled.get(name)!, undefined)
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    /** Starts one child and serves until it exits; fails with why it is gone. */
    const serve = (name: string, source: SourceConfig) =>
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
        const startedAt = yield* now
        yield* state.update(name, (current) => Instance.spawning(current, startedAt))
        const connection = yield* client
          .connect({
            instance: name,
            command: resolved.command,
            env: childEnvironment(process.env, source.env_passthrough, resolved.env),
            cwd: source.cwd,
            callTimeout: source.call_timeout,
            host,
            onStderrLine: (line) => diag.stderr(line),
            onGarbage: (line) => diag.garbage(line),
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
        const runningSince = yield* now
        yield* state.update(name, (current) => Instance.running(current, connection, runningSince))
        yield* settle(name)
        yield* Effect.logDebug(`source ${name}: running, ${connection.tools.length} tools, pid ${connection.pid}`)
        yield* connection.surfaceChanges.pipe(
          Stream.runForEach((surface) =>
            state.update(name, (current) => Instance.surfaceChanged(current, connection, surface))
          ),
          Effect.forkScoped
        )
        const exit = yield* connection.exited
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
    const lifetime = (name: string, source: SourceConfig, policy: Policy.State) =>
      serve(name, source).pipe(
        Effect.catchAll((error) =>
          Effect.gen(function* () {
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
    const supervise = (name: string, source: SourceConfig) =>
      Effect.gen(function* () {
        yield* host.ready
        let policy = Policy.initial
        for (;;) {
          const [decision, next] = yield* lifetime(name, source, policy)
          policy = next
          // awaitSettled means "the first attempt is over", whatever came of it.
          yield* settle(name)
          if (decision._tag === "Stop") return
          yield* Effect.sleep(decision.delay)
          yield* state.update(name, Instance.restarting)
          const restarts = state.get().instances.get(name)!.restarts
          yield* Effect.logInfo(`source ${name}: restarting (restart ${restarts})`)
        }
      })

    const fibers = yield* FiberMap.make<string>()
    for (const [name, source] of configured) yield* FiberMap.run(fibers, name, supervise(name, source))

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
        if (current._tag !== "Running") return Effect.fail(Instance.notRunning(current, tool))
        if (!current.toolNames.has(request.name)) return Effect.fail(Instance.noSuchTool(current, request.name, tool))
        return current.connection.callTool(request, options)
      })

    const api: SourcesApi = {
      names,
      awaitSettled: Effect.forEach(Array.from(settled.values()), Deferred.await, { discard: true }),
      awaitInstance: (instance) =>
        state.changes.pipe(
          Stream.filter(() => state.get().instances.get(instance)?._tag !== "Starting"),
          Stream.take(1),
          Stream.runDrain
        ),
      catalogNow: () => state.get().catalog,
      connectionNow: (instance) => state.get().connection(instance),
      catalog: Effect.sync(() => state.get().catalog),
      running: Effect.sync(() => state.get().running),
      health: Effect.map(Clock.currentTimeMillis, (at) => {
        const { instances } = state.get()
        return names.map((name) =>
          Instance.healthRow(instances.get(name)!, {
            package: packageOf(config.sources[name]!.command),
            diagnostics: diagnostics.get(name)!,
            now: at
          })
        )
      }),
      callTool,
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
