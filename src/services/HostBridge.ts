import { Deferred, Effect, PubSub, Ref, type Queue, type Scope } from "effect"
import type { JsonObject } from "../domain/Mcp.js"
import { RpcCode, RpcError } from "../domain/Surface.js"

/** A notification a child sent that is meant for the host (logging, resources/updated, tasks/status, …). */
export interface ChildNotification {
  readonly instance: string
  readonly method: string
  readonly params: JsonObject | undefined
}

/**
 * What one child's connection needs from the host side. Sources puts it into every LaunchSpec, so a restarted
 * child gets the same capabilities, log level and subscriptions as the first one.
 */
export interface HostPort {
  /**
   * Completes when the host's initialize has been answered (at most `spawnWait` after start), at once without a host:
   * children are spawned after it, so the host's first request is not queued behind twenty process spawns.
   */
  readonly ready: Effect.Effect<void>
  /** The client capabilities to declare to children: the host's sampling/elicitation/roots, nothing else. */
  readonly clientCapabilities: Effect.Effect<JsonObject>
  /** A reverse request (sampling, elicitation, roots) from `instance`, forwarded to the host; interrupting it cancels it there. */
  readonly request: (
    instance: string,
    method: string,
    params: JsonObject | undefined
  ) => Effect.Effect<JsonObject, RpcError>
  /** Hands a child's notification to the Gateway (dropped when no host is attached). */
  readonly notify: (notification: ChildNotification) => void
  /** The level the host last set with logging/setLevel, re-applied to children that start later. */
  readonly logLevel: Effect.Effect<string | undefined>
  /** The child-side URIs the host subscribed to on this instance, re-subscribed when the child restarts. */
  readonly subscriptions: (instance: string) => Effect.Effect<ReadonlyArray<string>>
}

/** The host as the Gateway attaches it once the host has initialized. */
export interface HostLink {
  /** The host's ClientCapabilities from its initialize request. */
  readonly capabilities: JsonObject
  readonly request: (
    instance: string,
    method: string,
    params: JsonObject | undefined
  ) => Effect.Effect<JsonObject, RpcError>
}

/** The client capability each reverse request needs. */
export const reverseCapability: Readonly<Record<string, "sampling" | "elicitation" | "roots">> = {
  "sampling/createMessage": "sampling",
  "elicitation/create": "elicitation",
  "roots/list": "roots"
}

/**
 * What clawtool declares to each child: exactly the host's `sampling`, `elicitation` and `roots` objects (ADR-005).
 * Never `tasks` (clawtool does not relay task-augmented reverse requests) nor `experimental`.
 */
export const childCapabilities = (host: JsonObject): JsonObject =>
  Object.fromEntries(
    (["sampling", "elicitation", "roots"] as const).flatMap((key) =>
      host[key] === undefined ? [] : [[key, host[key]]]
    )
  )

/**
 * Commands without a host (`health`, `tools list`, `tools export-typescript`) declare what a fully capable host
 * would, so they list the largest catalog a `serve` can show (server-everything adds tools for these); a
 * reverse request there gets -32601.
 */
export const offlineCapabilities: JsonObject = { sampling: {}, elicitation: {}, roots: { listChanged: true } }

export const offlinePort: HostPort = {
  ready: Effect.void,
  clientCapabilities: Effect.succeed(offlineCapabilities),
  request: (_instance, method) =>
    Effect.fail(
      new RpcError({
        reason: "Unsupported",
        code: RpcCode.MethodNotFound,
        detail: `${method}: no MCP host is connected (only clawtool serve forwards requests to a host)`
      })
    ),
  notify: () => {},
  logLevel: Effect.succeed(undefined),
  subscriptions: () => Effect.succeed([])
}

/** A host initializes within milliseconds of starting clawtool; one that never does must not hold children forever. */
export const hostWait = "10 seconds"

/** How long spawning children waits for the host's initialize (a host sends it first thing). */
export const spawnWait = "1 second"

/**
 * The host side of the gateway as the lower layers see it, without the SDK: the Gateway attaches the host after
 * its initialize, children wait for that to learn what to declare, send reverse requests and notifications through
 * it, and the Gateway drains the notifications. Present only in `serve`; Sources falls back to `offlinePort`.
 */
export class HostBridge extends Effect.Service<HostBridge>()("clawtool/HostBridge", {
  scoped: Effect.gen(function* () {
    const declared = yield* Deferred.make<JsonObject>()
    const initialized = yield* Deferred.make<void>()
    yield* Deferred.await(initialized).pipe(
      Effect.timeout(spawnWait),
      Effect.ignore,
      Effect.zipRight(Deferred.succeed(initialized, undefined)),
      Effect.forkScoped
    )
    const attached = yield* Ref.make<HostLink | undefined>(undefined)
    const notifications = yield* PubSub.unbounded<ChildNotification>()
    const level = yield* Ref.make<string | undefined>(undefined)
    const subscribed = new Map<string, Set<string>>()

    // Without a host by then, children declare nothing: never more than the host has.
    yield* Deferred.await(declared).pipe(
      Effect.timeout(hostWait),
      Effect.catchAll(() =>
        Effect.zipRight(
          Effect.logWarning(`the host did not initialize within ${hostWait}: children declare no client capabilities`),
          Deferred.succeed(declared, {})
        )
      ),
      Effect.forkScoped
    )

    const request = (instance: string, method: string, params: JsonObject | undefined) =>
      Effect.gen(function* () {
        const host = yield* Ref.get(attached)
        const capability = reverseCapability[method]
        if (host === undefined) {
          return yield* new RpcError({
            reason: "Unsupported",
            code: RpcCode.MethodNotFound,
            detail: `${method}: the host has not initialized`
          })
        }
        if (capability !== undefined && host.capabilities[capability] === undefined) {
          return yield* new RpcError({
            reason: "Unsupported",
            code: RpcCode.MethodNotFound,
            detail: `${method}: the host did not declare the ${capability} capability`
          })
        }
        return yield* host.request(instance, method, params)
      })

    const port: HostPort = {
      ready: Deferred.await(initialized),
      clientCapabilities: Deferred.await(declared),
      request,
      notify: (notification) => void notifications.unsafeOffer(notification),
      logLevel: Ref.get(level),
      subscriptions: (instance) => Effect.sync(() => [...(subscribed.get(instance) ?? [])])
    }

    return {
      port,
      /** Called by the Gateway once its answer to the host's initialize is out: children may spawn. */
      answered: Deferred.succeed(initialized, undefined),
      /** Called by the Gateway when the host has initialized: children declare its capabilities from now on. */
      attach: (host: HostLink) =>
        Effect.zipRight(Ref.set(attached, host), Deferred.succeed(declared, childCapabilities(host.capabilities))),
      /** The Gateway's feed of child notifications (subscribe before the host can receive any). */
      subscribe: PubSub.subscribe(notifications) as Effect.Effect<Queue.Dequeue<ChildNotification>, never, Scope.Scope>,
      setLogLevel: (value: string) => Ref.set(level, value),
      logLevel: Ref.get(level),
      /** Records a host subscription (child-side URI) so a restarted child gets it again. */
      remember: (instance: string, uri: string, on: boolean) =>
        Effect.sync(() => {
          const set = subscribed.get(instance) ?? new Set<string>()
          if (on) set.add(uri)
          else set.delete(uri)
          subscribed.set(instance, set)
        })
    } as const
  })
}) {}
