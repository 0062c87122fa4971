import { LoggingLevelSchema } from "@modelcontextprotocol/sdk/types.js"
import { Context, Deferred, Effect, Option, PubSub, Ref, type Queue, type Scope } from "effect"
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
  /**
   * The roots (URIs) of the host a call comes from, for clawtool's own tools: the stdio host, or in the daemon the
   * session whose tools/call this fiber runs (HostSession), never another session's. Asked once per host and again
   * after its roots/list_changed (`forgetRoots`, or the daemon's `rootsChanged`); none when that host declared no roots
   * capability or there is no such host.
   */
  readonly callerRoots: Effect.Effect<Option.Option<ReadonlyArray<string>>, RpcError>
  /** The stdio host's roots changed: asked again on next use. */
  readonly forgetRoots: Effect.Effect<void>
  /**
   * State kept per host for clawtool's own tools (the read-before-edit ledger, background runs): one value per `key` for
   * the stdio host, one per session in the daemon (HostSession), dropped when the session ends, after `release` (the
   * session's background runs are killed); `make` builds it on first use. None when the caller has no session to keep
   * it: a stateless daemon request (it ends with its response), or a call whose session has already left. Never a
   * table shared by several callers.
   */
  readonly perCaller: <A>(
    key: string,
    make: () => A,
    release?: (value: A) => Effect.Effect<void>
  ) => Effect.Effect<Option.Option<A>>
}

/** One perCaller value and what ends it. */
interface Kept {
  readonly value: unknown
  readonly release: Effect.Effect<void>
}

/** A `perCaller` over one store (the stdio host, or a daemon session). */
const storeIn =
  (store: Map<string, Kept>) =>
  <A>(key: string, make: () => A, release?: (value: A) => Effect.Effect<void>): A => {
    let kept = store.get(key)
    if (kept === undefined) {
      const value = make()
      kept = { value, release: release === undefined ? Effect.void : release(value) }
      store.set(key, kept)
    }
    return kept.value as A
  }

/**
 * The daemon session whose request this fiber serves (the Gateway sets it around tools/call): the host whose roots
 * clawtool's own tools use. None over stdio, where there is one host.
 */
export class HostSession extends Context.Reference<HostSession>()("clawtool/HostSession", {
  defaultValue: (): Option.Option<string> => Option.none()
}) {}

/** The URIs of a roots/list answer (entries without a string `uri` are skipped). */
const rootUris = (answer: JsonObject): ReadonlyArray<string> =>
  (Array.isArray(answer.roots) ? (answer.roots as ReadonlyArray<unknown>) : []).flatMap((root) =>
    typeof root === "object" && root !== null && typeof (root as { uri?: unknown }).uri === "string"
      ? [(root as { uri: string }).uri]
      : []
  )

/** Where a host's roots are kept once listed: undefined until asked, and again after its roots/list_changed. */
interface RootsSlot {
  roots: Option.Option<ReadonlyArray<string>> | undefined
}

/** A host's roots: from its slot, else asked (roots/list) when it declared the capability and kept there. */
const rootsOf = (slot: RootsSlot, capabilities: JsonObject | undefined, request: HostLink["request"]) =>
  slot.roots !== undefined
    ? Effect.succeed(slot.roots)
    : capabilities?.roots === undefined
      ? Effect.succeed(Option.none<ReadonlyArray<string>>())
      : Effect.map(request("", "roots/list", undefined), (answer) => (slot.roots = Option.some(rootUris(answer))))

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
  subscriptions: () => Effect.succeed([]),
  callerRoots: Effect.succeed(Option.none()),
  forgetRoots: Effect.void,
  perCaller: (() => {
    const get = storeIn(new Map())
    return ((key, make, release) =>
      Effect.sync(() => Option.some(get(key, make, release)))) satisfies HostPort["perCaller"]
  })()
}

/** A host initializes within milliseconds of starting clawtool; one that never does must not hold children forever. */
export const hostWait = "10 seconds"

/** How long spawning children waits for the host's initialize (a host sends it first thing). */
export const spawnWait = "1 second"

/**
 * Daemon mode (`serve --listen`, ADR 020): many host sessions share the children. Children are told `capabilities`
 * (from `[http] child_capabilities`), not a host's, and spawn at once. Absent: one host over stdio, as before.
 */
export class SharedHosts extends Context.Tag("clawtool/SharedHosts")<
  SharedHosts,
  { readonly childCapabilities: JsonObject }
>() {}

/** `[http] child_capabilities` as ClientCapabilities objects. */
export const declaredCapabilities = (names: ReadonlyArray<"sampling" | "elicitation" | "roots">): JsonObject =>
  Object.fromEntries(names.map((name) => [name, name === "roots" ? { listChanged: true } : {}]))

const levels = LoggingLevelSchema.options as ReadonlyArray<string>

/** One host session of the daemon, as the bridge routes to it; `roots` as last listed (clawtool's own tools). */
interface SessionEntry extends RootsSlot {
  /** One stateless request: it keeps no state for clawtool's own tools (perCaller answers none). */
  readonly stateless: boolean
  /** Its initialize's capabilities; undefined until then (a stateless request never has any). */
  capabilities: JsonObject | undefined
  readonly request: HostLink["request"]
  level: string | undefined
  /** Calls in flight, by instance: a child's reverse request goes to the one session with a call on it. */
  readonly inFlight: Map<string, number>
  /** `instance\nchild URI` keys this session subscribed to. */
  readonly subscriptions: Set<string>
  /** Its own state for clawtool's own tools (perCaller). */
  readonly state: Map<string, Kept>
}

/** The `_meta` key a child's request uses to name the task it belongs to. */
export const relatedTaskKey = "io.modelcontextprotocol/related-task"

const subscriptionKey = (instance: string, uri: string) => `${instance}\n${uri}`

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

    /** perCaller's store for the stdio host. */
    const processState = storeIn(new Map())

    /** The stdio host's roots. */
    const stdioRoots: RootsSlot = { roots: undefined }

    // === daemon mode: N sessions ===================================================================================
    const shared = yield* Effect.serviceOption(SharedHosts)
    const sessions = new Map<string, SessionEntry>()
    /** Sessions subscribed to each `instance\nuri`: the child hears subscribe on the first, unsubscribe on the last. */
    const subscribers = new Map<string, number>()
    const lowestLevel = (): string | undefined => {
      const asked = [...sessions.values()].flatMap((session) => (session.level === undefined ? [] : [session.level]))
      return asked.length === 0 ? undefined : asked.reduce((a, b) => (levels.indexOf(a) <= levels.indexOf(b) ? a : b))
    }
    const refuse = (code: number, detail: string) => Effect.fail(new RpcError({ reason: "Unsupported", code, detail }))

    /** Which session created each child task (`instance\nchild task id`): its reverse requests go there. */
    const taskOwners = new Map<string, string>()
    const relatedTask = (params: JsonObject | undefined): string | undefined => {
      const meta = params?._meta
      const related = typeof meta === "object" && meta !== null ? (meta as JsonObject)[relatedTaskKey] : undefined
      const taskId = typeof related === "object" && related !== null ? (related as JsonObject).taskId : undefined
      return typeof taskId === "string" ? taskId : undefined
    }

    /**
     * A reverse request goes to the session owning its related task (`_meta` related-task) when known, else to the one
     * session with a call in flight on that child; anything else is refused with why.
     */
    const routeReverse = (instance: string, method: string, params: JsonObject | undefined) =>
      Effect.suspend(() => {
        const task = relatedTask(params)
        const taskOwner =
          task === undefined ? undefined : sessions.get(taskOwners.get(subscriptionKey(instance, task)) ?? "")
        const owners =
          taskOwner !== undefined
            ? [taskOwner]
            : [...sessions.values()].filter((session) => (session.inFlight.get(instance) ?? 0) > 0)
        if (owners.length === 0) {
          return refuse(RpcCode.InternalError, `${method}: no host session has a call in flight on "${instance}"`)
        }
        if (owners.length > 1) {
          return refuse(
            RpcCode.InternalError,
            `${method}: ${owners.length} host sessions have calls in flight on "${instance}", so it cannot be routed`
          )
        }
        const owner = owners[0]!
        const capability = reverseCapability[method]
        if (capability !== undefined && owner.capabilities?.[capability] === undefined) {
          return refuse(
            RpcCode.MethodNotFound,
            `${method}: the host session with the call in flight did not declare the ${capability} capability`
          )
        }
        return owner.request(instance, method, params)
      })

    const port: HostPort = Option.isNone(shared)
      ? {
          ready: Deferred.await(initialized),
          clientCapabilities: Deferred.await(declared),
          request,
          notify: (notification) => void notifications.unsafeOffer(notification),
          logLevel: Ref.get(level),
          subscriptions: (instance) => Effect.sync(() => [...(subscribed.get(instance) ?? [])]),
          callerRoots: Effect.flatMap(Ref.get(attached), (host) =>
            host === undefined ? Effect.succeed(Option.none()) : rootsOf(stdioRoots, host.capabilities, host.request)
          ),
          forgetRoots: Effect.sync(() => (stdioRoots.roots = undefined)),
          perCaller: (key, make, release) => Effect.sync(() => Option.some(processState(key, make, release)))
        }
      : {
          ready: Effect.void,
          clientCapabilities: Effect.succeed(shared.value.childCapabilities),
          request: routeReverse,
          notify: (notification) => void notifications.unsafeOffer(notification),
          logLevel: Effect.sync(lowestLevel),
          subscriptions: (instance) =>
            Effect.sync(() =>
              [...subscribers.keys()].flatMap((key) => {
                const [owner, uri] = key.split("\n") as [string, string]
                return owner === instance ? [uri] : []
              })
            ),
          callerRoots: Effect.flatMap(HostSession, (id) => {
            const session = Option.isSome(id) ? sessions.get(id.value) : undefined
            return session === undefined
              ? Effect.succeed(Option.none())
              : rootsOf(session, session.capabilities, session.request)
          }),
          // A session's roots are forgotten by its own roots/list_changed (daemon.rootsChanged).
          forgetRoots: Effect.void,
          // No session (stateless, or gone) keeps nothing: a shared fallback would let one caller see another's state.
          perCaller: (key, make, release) =>
            Effect.map(HostSession, (id) => {
              const session = Option.isSome(id) ? sessions.get(id.value) : undefined
              return session === undefined || session.stateless
                ? Option.none()
                : Option.some(storeIn(session.state)(key, make, release))
            })
        }

    /** Daemon sessions: what the Gateway calls as sessions come, change and go. */
    const daemon = {
      enabled: Option.isSome(shared),
      join: (id: string, request: HostLink["request"], stateless = false) =>
        Effect.sync(() =>
          sessions.set(id, {
            stateless,
            capabilities: undefined,
            request,
            level: undefined,
            inFlight: new Map(),
            subscriptions: new Set(),
            roots: undefined,
            state: new Map()
          })
        ),
      declare: (id: string, capabilities: JsonObject) =>
        Effect.sync(() => {
          const session = sessions.get(id)
          if (session !== undefined) session.capabilities = capabilities
        }),
      /** Sets the session's level; the level children should have now (the lowest any session asked for). */
      setLevel: (id: string, value: string) =>
        Effect.sync(() => {
          const session = sessions.get(id)
          if (session !== undefined) session.level = value
          return lowestLevel()
        }),
      /** Session `id` sent roots/list_changed: its roots are asked again on next use (children are not told). */
      rootsChanged: (id: string) =>
        Effect.sync(() => {
          const session = sessions.get(id)
          if (session !== undefined) session.roots = undefined
        }),
      /** Runs `effect` counted as a call of session `id` in flight on `instance`. */
      inFlight: <A, E, R>(id: string, instance: string, effect: Effect.Effect<A, E, R>) =>
        Effect.acquireUseRelease(
          Effect.sync(() => {
            const counts = sessions.get(id)?.inFlight
            counts?.set(instance, (counts.get(instance) ?? 0) + 1)
          }),
          () => effect,
          () =>
            Effect.sync(() => {
              const counts = sessions.get(id)?.inFlight
              const left = (counts?.get(instance) ?? 1) - 1
              if (left <= 0) counts?.delete(instance)
              else counts?.set(instance, left)
            })
        ),
      /** Records the session's (un)subscription; true when the child must hear it (first in, last out). */
      subscription: (id: string, instance: string, uri: string, on: boolean) =>
        Effect.sync(() => {
          const session = sessions.get(id)
          const key = subscriptionKey(instance, uri)
          if (session === undefined || session.subscriptions.has(key) === on) return false
          if (on) session.subscriptions.add(key)
          else session.subscriptions.delete(key)
          const count = (subscribers.get(key) ?? 0) + (on ? 1 : -1)
          if (count > 0) subscribers.set(key, count)
          else subscribers.delete(key)
          return on ? count === 1 : count === 0
        }),
      /** Whether session `id` created task `taskId` (the child's id) on `instance`. */
      ownsTask: (id: string, instance: string, taskId: string) =>
        Effect.sync(() => taskOwners.get(subscriptionKey(instance, taskId)) === id),
      /** Session `id` created task `taskId` (the child's id) on `instance`. */
      ownTask: (id: string, instance: string, taskId: string) =>
        Effect.sync(() => void taskOwners.set(subscriptionKey(instance, taskId), id)),
      /** The session is gone: the subscriptions nobody holds any more, and the level children should have now. */
      leave: (id: string) =>
        Effect.sync(() => {
          const session = sessions.get(id)
          sessions.delete(id)
          for (const [key, owner] of taskOwners) if (owner === id) taskOwners.delete(key)
          const released: Array<{ readonly instance: string; readonly uri: string }> = []
          for (const key of session?.subscriptions ?? []) {
            const count = (subscribers.get(key) ?? 1) - 1
            if (count > 0) subscribers.set(key, count)
            else {
              subscribers.delete(key)
              const [instance, uri] = key.split("\n") as [string, string]
              released.push({ instance, uri })
            }
          }
          return {
            released,
            level: lowestLevel(),
            hadLevel: session?.level !== undefined,
            /** Ends what clawtool's own tools kept for the session (its background runs are killed). */
            release: Effect.forEach([...(session?.state.values() ?? [])], (kept) => kept.release, { discard: true })
          }
        }),
      size: Effect.sync(() => sessions.size)
    } as const

    // No host to wait for: children spawn at once and declare what the config says.
    if (Option.isSome(shared)) {
      yield* Deferred.succeed(initialized, undefined)
      yield* Deferred.succeed(declared, shared.value.childCapabilities)
    }

    return {
      port,
      daemon,
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
