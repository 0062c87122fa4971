import { Deferred, Effect, Option, PubSub } from "effect"
import type { JsonObject } from "../../domain/Mcp.js"
import { RpcCode, RpcError } from "../../domain/Surface.js"
import {
  type ChildNotification,
  childCapabilities,
  type HostPort,
  type HostRequest,
  keptIn,
  reverseCapability
} from "../HostBridge.js"
import { nothingLeft, type Session, Table } from "./Table.js"
import { newSession, notifyInto, type Policy, tapInto, rootsOf, type Sessions, viewOf } from "./View.js"

/** A host initializes within milliseconds of starting clawtool; one that never does must not hold children forever. */
export const hostWait = "10 seconds"

/** How long spawning children waits for the host's initialize (a host sends it first thing). */
export const spawnWait = "1 second"

/**
 * stdio serve: one host. Children are spawned once its initialize is answered (or after `spawnWait`), declare what it
 * declared (or nothing after `hostWait`), and send it every reverse request its capabilities allow; its state (log
 * level, subscriptions, clawtool's own tools' state) lasts as long as the process.
 */
export const makeSingle = Effect.gen(function* () {
  const declared = yield* Deferred.make<JsonObject>()
  const initialized = yield* Deferred.make<void>()
  yield* Deferred.await(initialized).pipe(
    Effect.timeout(spawnWait),
    Effect.ignore,
    Effect.zipRight(Deferred.succeed(initialized, undefined)),
    Effect.forkScoped
  )
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
  const notifications = yield* PubSub.unbounded<ChildNotification>()
  const taps = new Set<(notification: ChildNotification) => void>()
  const table = new Table()
  /** The host that initialized (the last one, should a test open several): reverse requests and roots go to it. */
  let host: Session | undefined
  /** perCaller's store: one host, one process. */
  const processState = keptIn(new Map())

  const policy: Policy = {
    sharedChildren: false,
    initialized: (session) =>
      Effect.suspend(() => {
        host = session
        return Deferred.succeed(declared, childCapabilities(session.capabilities ?? {}))
      }),
    answered: Deferred.succeed(initialized, undefined),
    // The stdio host's state lasts as long as the process: its session's end releases nothing.
    leave: () => Effect.succeed(nothingLeft)
  }

  const request: HostRequest = (instance, method, params) =>
    Effect.suspend(() => {
      const capability = reverseCapability[method]
      if (host === undefined) {
        return Effect.fail(
          new RpcError({
            reason: "Unsupported",
            code: RpcCode.MethodNotFound,
            detail: `${method}: the host has not initialized`
          })
        )
      }
      if (capability !== undefined && host.capabilities?.[capability] === undefined) {
        return Effect.fail(
          new RpcError({
            reason: "Unsupported",
            code: RpcCode.MethodNotFound,
            detail: `${method}: the host did not declare the ${capability} capability`
          })
        )
      }
      return host.request(instance, method, params)
    })

  const port: HostPort = {
    ready: Deferred.await(initialized),
    clientCapabilities: Deferred.await(declared),
    request,
    notify: notifyInto(notifications, taps),
    logLevel: Effect.sync(() => table.lowestLevel()),
    subscriptions: (instance) => Effect.sync(() => table.childSubscriptions(instance)),
    callerRoots: Effect.suspend(() => (host === undefined ? Effect.succeed(Option.none()) : rootsOf(host))),
    forgetRoots: Effect.sync(() => {
      if (host !== undefined) host.roots = undefined
    }),
    perCaller: (key, make, release) => Effect.sync(() => Option.some(processState(key, make, release)))
  }

  return {
    join: (options) =>
      Effect.map(newSession(options), (session) => {
        table.add(session)
        return viewOf(table, session, policy)
      }),
    feed: PubSub.subscribe(notifications),
    tap: tapInto(taps),
    // One host never expires.
    track: () => Effect.succeed(Effect.void),
    port
  } satisfies Sessions
})
