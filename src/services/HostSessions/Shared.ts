import { Clock, Deferred, Duration, Effect, Either, Option, PubSub, Schedule } from "effect"
import type { JsonObject } from "../../domain/Mcp.js"
import { type ChildNotification, type HostPort, keptIn } from "../HostBridge.js"
import { Table } from "./Table.js"
import { HostSession, newSession, notifyInto, type Policy, tapInto, rootsOf, type Sessions, viewOf } from "./View.js"

/** What the daemon's sessions share (ADR 020): what children are told, and when an unused session expires. */
export interface SharedSettings {
  /** `[http] child_capabilities`: children spawn at once and declare these, not a host's. */
  readonly childCapabilities: JsonObject
  /** `[http] session_idle`: a session with no open request for this long is closed (hosts rarely send DELETE). */
  readonly sessionIdle: Duration.Duration
}

/**
 * The daemon (`serve --listen`, ADR 020): many host sessions share the children. A child's reverse request goes to the
 * session owning its task or with a request in flight on it; children run at the lowest log level any session set and
 * hear the first subscribe and the last unsubscribe; clawtool's own tools keep state per session, released when it
 * leaves; a session unused for `sessionIdle` expires (checked on the Clock).
 */
export const makeShared = (settings: SharedSettings) =>
  Effect.gen(function* () {
    const notifications = yield* PubSub.unbounded<ChildNotification>()
    const taps = new Set<(notification: ChildNotification) => void>()
    const table = new Table()

    const policy: Policy = {
      sharedChildren: true,
      // No host to wait for: children spawned at once and declare what the config says.
      initialized: () => Effect.void,
      answered: Effect.void,
      leave: (session) => Effect.sync(() => table.leave(session.id))
    }

    /** The session whose request this fiber serves, if it is still here. */
    const caller = Effect.map(HostSession, (id) => (Option.isSome(id) ? table.sessions.get(id.value) : undefined))

    const port: HostPort = {
      ready: Effect.void,
      clientCapabilities: Effect.succeed(settings.childCapabilities),
      request: (instance, method, params) =>
        Effect.suspend(() =>
          Either.match(table.routeReverse(instance, method, params), {
            onLeft: Effect.fail,
            onRight: (owner) => owner.request(instance, method, params)
          })
        ),
      notify: notifyInto(notifications, taps),
      logLevel: Effect.sync(() => table.lowestLevel()),
      subscriptions: (instance) => Effect.sync(() => table.childSubscriptions(instance)),
      callerRoots: Effect.flatMap(caller, (session) =>
        session === undefined ? Effect.succeed(Option.none()) : rootsOf(session)
      ),
      // A session's roots are forgotten by its own roots/list_changed (SessionView.rootsChanged).
      forgetRoots: Effect.void,
      // No session (stateless, or gone) keeps nothing: a shared fallback would let one caller see another's state.
      perCaller: (key, make, release) =>
        Effect.map(caller, (session) =>
          session === undefined || session.stateless
            ? Option.none()
            : Option.some(keptIn(session.kept)(key, make, release))
        )
    }

    // Idle sessions expire: hosts rarely send DELETE.
    const idleMillis = Duration.toMillis(settings.sessionIdle)
    const expire = Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.forEach(
        table.idle(now, idleMillis),
        (session) =>
          Effect.unlessEffect(
            Effect.zipRight(
              Effect.logDebug("http: session idle, closing"),
              Deferred.succeed(session.expired, undefined)
            ),
            Deferred.isDone(session.expired)
          ),
        { discard: true }
      )
    )
    yield* Effect.forkScoped(
      Effect.repeat(expire, Schedule.spaced(Duration.millis(Math.max(50, Math.min(idleMillis / 4, 30_000)))))
    )

    return {
      join: (options) =>
        Effect.map(newSession(options), (session) => {
          table.add(session)
          return viewOf(table, session, policy)
        }),
      feed: PubSub.subscribe(notifications),
      tap: tapInto(taps),
      track: (id) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          const session = table.sessions.get(id)
          if (session === undefined) return Effect.void
          session.open += 1
          session.lastSeen = now
          return Effect.map(Clock.currentTimeMillis, (later) => {
            session.open -= 1
            session.lastSeen = later
          })
        }),
      port
    } satisfies Sessions
  })
