import { Deferred, Effect, Exit, Runtime, type Scope } from "effect"
import type * as Era from "../../domain/HostEra.js"
import type { JsonObject } from "../../domain/Mcp.js"
import { type ListKind, RpcCode } from "../../domain/Surface.js"
import type { Cancels } from "../../transport/Cancels.js"
import type { Handler } from "./Handlers.js"
import { makeListen } from "./Listen.js"
import type { ModernRequest } from "./Modern.js"

/**
 * `subscriptions/listen` on `serve --listen` (2026-07-28, ADR 032): the POST's response is an SSE stream carrying the
 * acknowledgement, then the list_changed notices and resources/updated the filter asked for, tagged with the listen's
 * id, until the host closes it or clawtool ends it with the listen's result. Each open listen is a session of its own
 * (the Gateway's `listener`): its endpoint's profile, the session's debounce and per-kind rules, and its resource
 * subscriptions ref-counted at the children with every other session's; closing the stream leaves that session.
 * Open listens are bounded per daemon and per token.
 */

/** How many listens may be open at once: on the daemon, and per token (the token-less endpoint counts as one). */
export interface ListenLimits {
  readonly total: number
  readonly perToken: number
}

/** The daemon's caps: SDK v2's default for one server (1,024), and a share of it per token. */
export const listenLimits: ListenLimits = { total: 1024, perToken: 64 }

/** Open listens counted per daemon and per token: `take` refuses (with why) past either cap; `give` frees one. */
export const makeQuota = (limits: ListenLimits) => {
  let total = 0
  const byToken = new Map<string, number>()
  return {
    take: (token: string | undefined): string | undefined => {
      const mine = byToken.get(token ?? "") ?? 0
      if (total >= limits.total) {
        return `Subscription limit reached: ${limits.total} listens are open on this clawtool`
      }
      if (mine >= limits.perToken) {
        return `Subscription limit reached: ${limits.perToken} listens are open ${token === undefined ? "without a token" : `for token "${token}"`}`
      }
      total += 1
      byToken.set(token ?? "", mine + 1)
      return undefined
    },
    give: (token: string | undefined) => {
      const mine = (byToken.get(token ?? "") ?? 1) - 1
      if (mine <= 0) byToken.delete(token ?? "")
      else byToken.set(token ?? "", mine)
      total = Math.max(0, total - 1)
    },
    open: () => total
  }
}

/** Where a listen's session sends what it hears. */
export interface ListenSink {
  readonly listChanged: (kind: ListKind) => void
  /** A child's resources/updated, mapped to the host's URI. */
  readonly updated: (params: JsonObject) => void
}

/** Who opens a listen: its endpoint's profile and its token's name. */
export interface ListenAccess {
  readonly profile?: string | undefined
  readonly token?: string | undefined
}

export const makeHttpListens = (deps: {
  readonly runtime: Runtime.Runtime<never>
  /** The daemon's modern wire: a listen is answered on its request's response, known by clawtool's key. */
  readonly wire: Era.ModernWire
  /** Where the daemon's "the host closed the request" reaches an open listen. */
  readonly cancels: Cancels
  readonly limits: ListenLimits
  /** The listen's own session, feeding `sink` until the scope closes (then it leaves); its handlers. */
  readonly session: (
    key: string,
    access: ListenAccess,
    sink: ListenSink
  ) => Effect.Effect<Readonly<Record<string, Handler>>, never, Scope.Scope>
}) => {
  const quota = makeQuota(deps.limits)
  /** Each open listen's graceful end (clawtool stops serving, or its access was taken away), and who opened it. */
  const closers = new Map<() => void, ListenAccess>()
  const { wire } = deps

  /** Serves listen `key` until its host closes the stream or clawtool ends it. */
  const serve = (key: string, request: ModernRequest, access: ListenAccess) =>
    Effect.scoped(
      Effect.gen(function* () {
        const refused = quota.take(access.token)
        if (refused !== undefined) return wire.error(key, { code: RpcCode.InternalError, message: refused })
        yield* Effect.addFinalizer(() => Effect.sync(() => quota.give(access.token)))
        const ended = yield* Deferred.make<void>()
        const end = () => void Deferred.unsafeDone(ended, Exit.void)
        deps.cancels.set(key, end)
        yield* Effect.addFinalizer(() => Effect.sync(() => deps.cancels.delete(key)))
        let handlers: Readonly<Record<string, Handler>> = {}
        const listen = makeListen((uri, on) => {
          const handler = handlers[on ? "resources/subscribe" : "resources/unsubscribe"]
          if (handler === undefined) return Promise.resolve()
          return Runtime.runPromiseExit(deps.runtime)(
            Effect.ignoreLogged(handler({ uri }, { requestId: `listen:${uri}`, notify: () => {} }))
          ).then(() => {})
        }, 1)
        handlers = yield* deps.session(key, access, {
          listChanged: (kind) => listen.listChanged(kind),
          updated: (params) => listen.updated(params)
        })
        // Tagged with the host's id (its subscription id), written to this request's response.
        listen.open(request.id, request.params, {
          result: (_id, result) => wire.result(key, result),
          error: (_id, error) => wire.error(key, error),
          notify: (method, params) => wire.notify(method, params, key)
        })
        // Refused (an invalid filter): answered, nothing to keep open.
        if (listen.size() === 0) return
        const close = () => {
          listen.closeAll()
          end()
        }
        closers.set(close, access)
        yield* Effect.addFinalizer(() => Effect.sync(() => closers.delete(close)))
        yield* Deferred.await(ended)
      })
    )

  return {
    serve,
    /** Ends every open listen with its result (the daemon stops). */
    closeAll: () => {
      for (const close of [...closers.keys()]) close()
    },
    /** Ends, with its result, every open listen whose access `allowed` no longer grants; how many. */
    closeUnless: (allowed: (access: ListenAccess) => boolean): number => {
      const ended = [...closers].filter(([, access]) => !allowed(access))
      for (const [close] of ended) close()
      return ended.length
    },
    /** How many listens are open. */
    size: () => quota.open()
  }
}
