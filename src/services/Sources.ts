import { Deferred, Effect, FiberMap, Option, Stream, SubscriptionRef } from "effect"
import type { SourceConfig } from "../domain/Config.js"
import { childEnvironment } from "../domain/Environment.js"
import { CallError, SourceError } from "../domain/Errors.js"
import { HealthRow, packageOf, type Status } from "../domain/Health.js"
import type { CallToolRequest, CallToolResult, Tool } from "../domain/Mcp.js"
import { Config } from "./Config.js"
import { Secrets } from "./Secrets.js"
import { type CallOptions, type Connection, SourceClient } from "./SourceClient.js"

/** The tools one running instance serves, as the child sent them. */
export interface InstanceCatalog {
  readonly instance: string
  readonly tools: ReadonlyArray<Tool>
}

interface InstanceState {
  readonly status: Status
  readonly error: Option.Option<SourceError>
  readonly connection: Option.Option<Connection>
  readonly tools: ReadonlyArray<Tool>
  readonly startedAt: Option.Option<Date>
  readonly startupMs: Option.Option<number>
}

const starting: InstanceState = {
  status: "starting",
  error: Option.none(),
  connection: Option.none(),
  tools: [],
  startedAt: Option.none(),
  startupMs: Option.none()
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

export const stderrTailLines = 100

const reasonOf = (error: SourceError) => `${error.reason}: ${error.detail}`

/**
 * The seed's Manager: owns every configured source's lifecycle and routes calls to the right child.
 * Each enabled instance runs in its own fiber (keyed by name in a FiberMap), so one slow or broken child
 * never delays or stops another; closing the layer's scope interrupts them all concurrently, and each
 * child's scope then ends its process group.
 */
export class Sources extends Effect.Service<Sources>()("clawtool/Sources", {
  dependencies: [Config.Default, Secrets.Default, SourceClient.Default],
  scoped: Effect.gen(function* () {
    const { config } = yield* Config
    const secrets = yield* Secrets
    const client = yield* SourceClient

    const configured = Object.entries(config.sources)
      .filter(([, source]) => source.enabled)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    const names = configured.map(([name]) => name)

    const state = yield* SubscriptionRef.make<ReadonlyMap<string, InstanceState>>(
      new Map(names.map((name) => [name, starting]))
    )
    const stderr = new Map(names.map((name) => [name, new StderrTail(stderrTailLines)]))
    const settled = new Map(
      yield* Effect.forEach(names, (name) => Effect.map(Deferred.make<void>(), (d) => [name, d] as const))
    )

    const update = (name: string, f: (current: InstanceState) => InstanceState) =>
      SubscriptionRef.update(state, (all) => new Map(all).set(name, f(all.get(name) ?? starting)))
    const settle = (name: string) => Deferred.succeed(settled.get(name)!, undefined)

    const fail = (name: string, error: SourceError) =>
      update(name, (current) => ({
        ...current,
        status: error.reason === "MissingSecrets" || error.auth ? "unauthenticated" : "down",
        error: Option.some(error),
        connection: Option.none(),
        tools: []
      })).pipe(Effect.zipRight(settle(name)))

    /** One lifetime of one child: start, serve until it exits, record why. */
    const run = (name: string, source: SourceConfig) =>
      Effect.gen(function* () {
        const resolved = secrets.resolve(name, source)
        if (resolved.missing.length > 0) {
          return yield* new SourceError({
            instance: name,
            reason: "MissingSecrets",
            detail: `missing secrets: ${resolved.missing.join(", ")}`
          })
        }
        const tail = stderr.get(name)!
        const startedAt = new Date()
        const connection = yield* client
          .connect({
            instance: name,
            command: resolved.command,
            env: childEnvironment(process.env, source.env_passthrough, resolved.env),
            cwd: source.cwd,
            onStderrLine: (line) => tail.push(line),
            onGarbage: (line) =>
              tail.push(`[stdout, not JSON-RPC] ${line.length > 200 ? `${line.slice(0, 200)}…` : line}`)
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
        yield* update(name, () => ({
          status: "running",
          error: Option.none(),
          connection: Option.some(connection),
          tools: connection.tools,
          startedAt: Option.some(startedAt),
          startupMs: Option.some(Date.now() - startedAt.getTime())
        }))
        yield* settle(name)
        yield* Effect.logDebug(`source ${name}: running, ${connection.tools.length} tools, pid ${connection.pid}`)
        const exit = yield* connection.exited
        return yield* new SourceError({
          instance: name,
          reason: "Exited",
          detail: exit.signal === null ? `exited with code ${exit.code}` : `killed by signal ${exit.signal}`
        })
      }).pipe(
        // Record the failure while the child's scope is still open, so Health is current before the reaping.
        Effect.catchAll((error) => Effect.zipRight(Effect.logWarning(error.message), fail(name, error))),
        Effect.scoped,
        Effect.withSpan("Sources.run", { attributes: { "clawtool.instance": name } })
      )

    const fibers = yield* FiberMap.make<string>()
    for (const [name, source] of configured) yield* FiberMap.run(fibers, name, run(name, source))

    const awaitSettled = Effect.forEach(Array.from(settled.values()), Deferred.await, { discard: true })

    const catalog = Effect.map(SubscriptionRef.get(state), (all) =>
      names.flatMap((instance) => {
        const current = all.get(instance)
        return current?.status === "running" ? [{ instance, tools: current.tools }] : []
      })
    )

    const health = Effect.map(SubscriptionRef.get(state), (all) =>
      names.map((name) => {
        const current = all.get(name) ?? starting
        const source = config.sources[name]!
        return new HealthRow({
          name,
          status: current.status,
          reason: Option.match(current.error, { onNone: () => "", onSome: reasonOf }),
          toolCount: current.tools.length,
          package: packageOf(source.command),
          pid: Option.match(current.connection, { onNone: () => null, onSome: (c) => c.pid }),
          startedAt: Option.match(current.startedAt, { onNone: () => null, onSome: (d) => d.toISOString() }),
          startupMs: Option.getOrNull(current.startupMs),
          stderrTail: stderr.get(name)?.snapshot() ?? []
        })
      })
    )

    const callTool = Effect.fn("Sources.callTool")(function* (
      instance: string,
      request: CallToolRequest,
      options?: CallOptions
    ) {
      const tool = `${instance}.${request.name}`
      const current = (yield* SubscriptionRef.get(state)).get(instance)
      if (current === undefined) {
        return yield* new CallError({
          tool,
          reason: "NoSuchInstance",
          detail: `no source instance named "${instance}"`
        })
      }
      if (current.status !== "running" || Option.isNone(current.connection)) {
        const why = Option.match(current.error, { onNone: () => current.status, onSome: reasonOf })
        return yield* new CallError({
          tool,
          reason: "NotRunning",
          detail: `source "${instance}" is not running (${why})`,
          retryable: current.status !== "unauthenticated"
        })
      }
      if (!current.tools.some((t) => t.name === request.name)) {
        return yield* new CallError({
          tool,
          reason: "NoSuchTool",
          detail: `source "${instance}" has no tool named "${request.name}"`
        })
      }
      return yield* current.connection.value.callTool(request, options)
    }) as (
      instance: string,
      request: CallToolRequest,
      options?: CallOptions
    ) => Effect.Effect<CallToolResult, CallError>

    return {
      /** Configured, enabled instance names, sorted. */
      names,
      /** Completes once every instance has left `starting` (each bounded by its startup_timeout). */
      awaitSettled,
      catalog,
      health,
      callTool,
      /** Emits whenever any instance's state changes (status or catalog). */
      changes: Stream.map(state.changes, () => undefined)
    } as const
  })
}) {}
