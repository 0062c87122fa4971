import { Clock, Context, Deferred, Effect, Option, type PubSub, type Queue, type Scope } from "effect"
import type { JsonObject } from "../../domain/Mcp.js"
import type { RpcError } from "../../domain/Surface.js"
import type { ChildNotification, HostPort, HostRequest } from "../HostBridge.js"
import { type Left, logLevels, type Route, type Seen, type Session, type Table } from "./Table.js"

/**
 * The session whose request this fiber serves (the Gateway sets it around tools/call): the host whose roots and state
 * clawtool's own tools use. None outside a host's request.
 */
export class HostSession extends Context.Reference<HostSession>()("clawtool/HostSession", {
  defaultValue: (): Option.Option<string> => Option.none()
}) {}

/** One host session as the Gateway handles its requests: its state, and what its requests do to the shared children. */
export interface SessionView {
  readonly id: string
  /** One stateless HTTP request: no notifications, no list_changed, no state kept (it ends with its response). */
  readonly stateless: boolean
  /** What the host last saw of each list kind (list_changed compares against it). */
  readonly seen: Seen
  /** The profile it sees (issue 26); undefined: the whole catalog. Fixed for its life: never set by a request. */
  readonly profile: string | undefined
  /** The name of the `[http.tokens]` token it came with (never the token itself). */
  readonly token: string | undefined
  /** The client capabilities it initialized with (undefined before that, and always for a stateless request). */
  readonly capabilities: () => JsonObject | undefined
  /** A request of clawtool's own to this host (a confirmation's elicitation/create); interrupting it cancels it there. */
  readonly ask: (method: string, params: JsonObject) => Effect.Effect<JsonObject, RpcError>
  /** The host initialized with these client capabilities. */
  readonly initialized: (capabilities: JsonObject) => Effect.Effect<void>
  /** The answer to the host's initialize is out: children may spawn. */
  readonly answered: Effect.Effect<void>
  /** Runs `effect` as this session's request in flight on `instance`: what the child asks meanwhile comes back here. */
  readonly inFlight: <A, E, R>(instance: string, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** `inFlight` without an Effect (a relayed call's): counts one request in flight; the returned function ends it. */
  readonly enter: (instance: string) => () => void
  /** Runs `effect` as this session's (HostSession): clawtool's own tools use its roots and state, never another's. */
  readonly asCaller: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** This session's task-augmented call created `taskId` (the child's id) on `instance`. */
  readonly ownTask: (instance: string, taskId: string) => Effect.Effect<void>
  /** Whether this session may see task `taskId` of `instance` (another session's tasks are unknown to it). */
  readonly ownsTask: (instance: string, taskId: string) => Effect.Effect<boolean>
  /**
   * Records the host's (un)subscription of `uri`, routed to `route`. `tell`: the child must hear it; `undo` when it
   * refused.
   */
  readonly subscription: (
    uri: string,
    route: Route,
    on: boolean
  ) => Effect.Effect<{ readonly tell: boolean; readonly undo: Effect.Effect<void> }>
  /** Whether a child's (mapped) notification is for this host: its log level, its subscriptions. */
  readonly hears: (method: string, params: JsonObject) => boolean
  /** Sets its log level; the level children should have now (none: leave them as they are). */
  readonly setLevel: (level: string) => Effect.Effect<string | undefined>
  /** Its roots changed: asked again on next use. True when the children must hear it too. */
  readonly rootsChanged: Effect.Effect<boolean>
  /** The session ends: what that leaves to do at the children. */
  readonly leave: Effect.Effect<Left>
  /** Completes when the session has been idle too long. */
  readonly expired: Effect.Effect<void>
}

/** HostSessions: every host session, and the port the lower layers see. */
export interface Sessions {
  /** Opens a session for the host `request` reaches; it lasts until its `leave`. */
  readonly join: (options: {
    readonly id: string
    readonly stateless?: boolean | undefined
    readonly request: HostRequest
    /** The profile its endpoint (or `serve --profile`) names. */
    readonly profile?: string | undefined
    readonly token?: string | undefined
  }) => Effect.Effect<SessionView>
  /** Children's notifications for the hosts (subscribe before a host can receive any). */
  readonly feed: Effect.Effect<Queue.Dequeue<ChildNotification>, never, Scope.Scope>
  /**
   * Each child notification handed to `tap` synchronously as the child's line is read, before the child's later lines
   * (a log message reaches the call it belongs to before the call's result does); for the scope's life.
   */
  readonly tap: (tap: (notification: ChildNotification) => void) => Effect.Effect<void, never, Scope.Scope>
  /** A request is open on session `id` until the returned effect runs: a session in use never expires. */
  readonly track: (id: string) => Effect.Effect<Effect.Effect<void>>
  readonly port: HostPort
}

/** How one layer's sessions differ: one host over stdio, or many sharing the children (the daemon). */
export interface Policy {
  /** Children serve many sessions: they hear only the first subscribe and last unsubscribe, tasks are isolated, … */
  readonly sharedChildren: boolean
  /** What else the host's initialized means (stdio: children learn its capabilities). */
  readonly initialized: (session: Session) => Effect.Effect<void>
  readonly answered: Effect.Effect<void>
  readonly leave: (session: Session) => Effect.Effect<Left>
}

/** A session with nothing kept yet, last used now. */
export const newSession = (options: Parameters<Sessions["join"]>[0]) =>
  Effect.all([Clock.currentTimeMillis, Deferred.make<void>()]).pipe(
    Effect.map(([now, expired]): Session => ({
      id: options.id,
      stateless: options.stateless === true,
      request: options.request,
      profile: options.profile,
      token: options.token,
      capabilities: undefined,
      level: undefined,
      roots: undefined,
      inFlight: new Map(),
      subscriptions: new Map(),
      kept: new Map(),
      seen: {},
      open: 0,
      lastSeen: now,
      expired
    }))
  )

/** The URIs of a roots/list answer (entries without a string `uri` are skipped). */
const rootUris = (answer: JsonObject): ReadonlyArray<string> =>
  (Array.isArray(answer.roots) ? (answer.roots as ReadonlyArray<unknown>) : []).flatMap((root) =>
    typeof root === "object" && root !== null && typeof (root as { uri?: unknown }).uri === "string"
      ? [(root as { uri: string }).uri]
      : []
  )

/** A host's roots: as last listed, else asked (roots/list) when it declared the capability, and kept. */
export const rootsOf = (session: Session): Effect.Effect<Option.Option<ReadonlyArray<string>>, RpcError> =>
  Effect.suspend(() =>
    session.roots !== undefined
      ? Effect.succeed(session.roots)
      : session.capabilities?.roots === undefined
        ? Effect.succeed(Option.none<ReadonlyArray<string>>())
        : Effect.map(
            session.request("", "roots/list", undefined),
            (answer) => (session.roots = Option.some(rootUris(answer)))
          )
  )

/** Hands a child's notification to every session's feed, and to each tap at once (in the child's order). */
export const notifyInto =
  (notifications: PubSub.PubSub<ChildNotification>, taps: ReadonlySet<(notification: ChildNotification) => void>) =>
  (notification: ChildNotification): void => {
    for (const tap of taps) tap(notification)
    void notifications.unsafeOffer(notification)
  }

/** `Sessions.tap` over a set of taps. */
export const tapInto =
  (taps: Set<(notification: ChildNotification) => void>) => (tap: (notification: ChildNotification) => void) =>
    Effect.acquireRelease(
      Effect.sync(() => void taps.add(tap)),
      () => Effect.sync(() => void taps.delete(tap))
    )

/** One request of `session` in flight on `instance`, until the returned function is called (once counts). */
const enter = (session: Session, instance: string) => {
  session.inFlight.set(instance, (session.inFlight.get(instance) ?? 0) + 1)
  let open = true
  return () => {
    if (!open) return
    open = false
    const left = (session.inFlight.get(instance) ?? 1) - 1
    if (left <= 0) session.inFlight.delete(instance)
    else session.inFlight.set(instance, left)
  }
}

export const viewOf = (table: Table, session: Session, policy: Policy): SessionView => {
  const shared = policy.sharedChildren
  // A stateless request's calls end with it: its tasks cannot be asked for again, so they are not isolated.
  const isolated = shared && !session.stateless
  return {
    id: session.id,
    stateless: session.stateless,
    seen: session.seen,
    profile: session.profile,
    token: session.token,
    capabilities: () => session.capabilities,
    ask: (method, params) => session.request("", method, params),
    initialized: (capabilities) =>
      Effect.suspend(() => {
        session.capabilities = capabilities
        return policy.initialized(session)
      }),
    answered: policy.answered,
    inFlight: (instance, effect) =>
      Effect.acquireUseRelease(
        Effect.sync(() => enter(session, instance)),
        () => effect,
        (leave) => Effect.sync(leave)
      ),
    enter: (instance) => enter(session, instance),
    asCaller: (effect) => Effect.provideService(effect, HostSession, Option.some(session.id)),
    ownTask: (instance, taskId) =>
      shared ? Effect.sync(() => table.ownTask(session.id, instance, taskId)) : Effect.void,
    ownsTask: (instance, taskId) => Effect.sync(() => !isolated || table.ownsTask(session.id, instance, taskId)),
    subscription: (uri, route, on) =>
      Effect.sync(() => {
        const { edge, undo } = table.subscription(session, uri, route, on)
        // One host: its child hears every (un)subscribe, as it asked.
        return { tell: shared ? edge : true, undo: Effect.sync(undo) }
      }),
    hears: (method, params) => {
      if (method === "notifications/message") {
        const level = params.level
        return (
          session.level === undefined ||
          typeof level !== "string" ||
          logLevels.indexOf(level) >= logLevels.indexOf(session.level)
        )
      }
      // Shared children send every subscriber's updates: a session gets those of its own subscriptions.
      if (shared && method === "notifications/resources/updated") {
        return typeof params.uri === "string" && session.subscriptions.has(params.uri)
      }
      return true
    },
    setLevel: (level) =>
      Effect.sync(() => {
        session.level = level
        return table.lowestLevel()
      }),
    // Shared children are not told one session's roots changed: its roots are not every child's.
    rootsChanged: Effect.sync(() => {
      session.roots = undefined
      return !shared
    }),
    leave: policy.leave(session),
    expired: Deferred.await(session.expired)
  }
}
