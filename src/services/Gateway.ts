import { Effect, Layer, Option, Queue, Runtime, Stream } from "effect"
import { ConfigChain, recursionRefusal } from "../domain/Environment.js"
import { CurrentLimits } from "../domain/Limits.js"
import type { Cancels } from "../transport/Cancels.js"
import { StdioServerTransport } from "../transport/StdioServerTransport.js"
import { Audit, type AuditRecorder } from "./Audit.js"
import { metered, Metrics } from "./Metrics.js"
import * as CallPath from "./Gateway/CallPath.js"
import * as Handlers from "./Gateway/Handlers.js"
import { type HostEdge, type ListKind, makeEdge, type Transport } from "./Gateway/Sdk.js"
import type { ChildNotification } from "./HostBridge.js"
import { HostSessions, type SessionView } from "./HostSessions.js"
import { Redaction } from "./Redaction.js"
import { Registry, type RegistryView } from "./Registry.js"
import { Tracing } from "./Tracing.js"

/** How the Gateway serves one host session (see `Gateway.session`). */
export interface SessionOptions {
  /** A daemon session's id (HTTP, ADR 020); absent for the one stdio host. */
  readonly id?: string
  /** One stateless HTTP request: no notifications, no list_changed (nothing could carry them). */
  readonly stateless?: boolean
  /** The profile the session sees (issue 26: its endpoint, or `serve --profile`); absent: the whole catalog. */
  readonly profile?: string | undefined
  /** The name of the `[http.tokens]` token the session came with (for logs and the audit log; never the token). */
  readonly token?: string | undefined
  /** Called with the session's cancels before the transport connects (the stdio relay hooks in here). */
  readonly prepare?: (cancels: Cancels, audit: AuditRecorder | undefined, registry: RegistryView) => void
}

const listKinds = ["tools", "resources", "prompts"] as const

/**
 * The MCP edge facing the host: one session per host connection, over the one Registry every session shares.
 * `initialize` is answered at once; lists wait for sources still starting at most `list_wait` (ADR 015), and a source
 * that arrives later is announced by list_changed. Everything MCP has beyond tools is forwarded to the owning instance
 * (README, "MCP protocol support"). What a session keeps is HostSessions'; what a request does is Gateway/Handlers'; the
 * SDK is behind Gateway/Sdk.
 */
export class Gateway extends Effect.Service<Gateway>()("clawtool/Gateway", {
  // One HostSessions shared by Sources (below Registry) and the Gateway: children learn the host through it.
  dependencies: [Registry.Default.pipe(Layer.provideMerge(HostSessions.Default)), Tracing.Default, Redaction.Default],
  scoped: Effect.gen(function* () {
    const registry = yield* Registry
    /** The whole catalog's view: what every session shares at the children (log level, subscriptions, reverse requests). */
    const whole = registry.viewOf()
    const tracing = yield* Tracing
    const redaction = yield* Redaction
    const sessions = yield* HostSessions
    const chain = yield* ConfigChain
    // `[audit]` (issue 25): provided by serve's layers; absent (tests of the Gateway alone), nothing is recorded.
    const audit = yield* Effect.serviceOption(Audit)
    // The daemon's metrics (issue 29): absent on stdio serve and in tests of the Gateway alone.
    const meter = Option.getOrUndefined(yield* Effect.serviceOption(Metrics))
    const runtime = yield* Effect.runtime<never>()
    const redact = (text: string) => redaction.current().text(text)

    /** Children's notifications for this host, mapped (logger = instance, URIs, task ids) and filtered by the session. */
    const pumpNotifications = (
      feed: Queue.Dequeue<ChildNotification>,
      session: SessionView,
      edge: HostEdge,
      registry: RegistryView
    ) =>
      Effect.forever(
        Effect.gen(function* () {
          const mapped = yield* registry.forward.mapNotification(yield* Queue.take(feed))
          if (Option.isNone(mapped) || !session.hears(mapped.value.method, mapped.value.params)) return
          yield* edge.notify(mapped.value)
        })
      )

    // list_changed: one notice per kind per settled change of what the host saw (re-derived, never relayed raw). A list
    // answered before every source settled is compared with what it answered, so a late source is announced once.
    const notifyChanges = (session: SessionView, edge: HostEdge, registry: RegistryView) =>
      Effect.gen(function* () {
        const seen = session.seen
        const snapshot = Effect.gen(function* () {
          const catalog = yield* registry.catalog
          const surface = yield* registry.surface
          return { tools: catalog.host.hash, resources: surface.resourcesKey, prompts: surface.promptsKey }
        })
        // Once every source settled, a kind the host has not listed yet is compared from then on (as before list_wait).
        yield* Effect.forkScoped(
          Effect.zipRight(
            registry.awaitSettled,
            Effect.map(snapshot, (now) => {
              for (const kind of listKinds) seen[kind] ??= now[kind]
            })
          )
        )
        yield* registry.changes.pipe(
          Stream.debounce("50 millis"),
          Stream.runForEach(() =>
            Effect.gen(function* () {
              const now = yield* snapshot
              for (const kind of listKinds) {
                if (seen[kind] === undefined || seen[kind] === now[kind]) continue
                seen[kind] = now[kind]
                yield* edge.listChanged(kind satisfies ListKind)
              }
            })
          )
        )
      })

    /**
     * One host session over `transport`: its SDK Server, its HostSessions entry (capabilities, log level,
     * subscriptions, tasks, …), its handlers, progress and list_changed notices. stdio serve is one session; the daemon
     * opens one per HTTP session (or per request when stateless). Closed with the scope (or when the session expires):
     * the SDK then aborts the session's handlers, so its calls in flight are cancelled at the children.
     */
    const session = (transport: Transport, options: SessionOptions = {}) =>
      Effect.gen(function* () {
        const edge = makeEdge(runtime)
        const client = () => edge.server.getClientVersion()?.name
        const recorder = metered(
          Option.getOrUndefined(audit)?.recorder(options.id, client, {
            profile: options.profile,
            token: options.token
          }),
          meter,
          options.id,
          client
        )
        const view = yield* sessions.join({
          id: options.id ?? "stdio",
          stateless: options.stateless,
          profile: options.profile,
          token: options.token,
          // A reverse request from a child, sent to the host; interrupting it (the child cancelled) cancels it there.
          request: (instance, method, params) =>
            edge
              .request(method, params === undefined ? undefined : whole.forward.mapReverseParams(instance, params))
              .pipe(
                Effect.withSpan(method, {
                  kind: "client",
                  attributes: { "mcp.method.name": method, "clawtool.instance": instance }
                })
              )
        })
        // What this session sees: its profile's view of the one catalog (issue 26), fixed for the session's life.
        const seen = registry.viewOf(view.profile)
        const services: Handlers.Services = { registry: seen, tracing, redact }
        edge.handle({
          // A clawtool above already serves this config (ADR 013): it learns so from this error; no source was started.
          refusal: () => (Option.isSome(chain.repeated) ? recursionRefusal(chain.repeated.value) : undefined),
          answered: view.answered,
          initialized: view.initialized,
          // Only clawtool's stdio transport (the one with a relay to prepare) splices pre-serialised results (ADR 009).
          requests: Handlers.handlers(services, view, options.prepare !== undefined, recorder),
          rootsChanged: Handlers.rootsChanged(services, view)
        })
        // Subscribed before the host can initialize, so nothing a child sends after its own initialize is lost.
        const feed = yield* sessions.feed
        options.prepare?.(edge.cancels, recorder, seen)
        // Known secrets never reach the host, on every path a message takes to it (issue 25).
        redaction.guard(transport)
        const { closed } = yield* edge.connect(transport)
        // A stateless request has nothing to carry notifications.
        if (!view.stateless) {
          yield* Effect.forkScoped(notifyChanges(view, edge, seen))
          yield* Effect.forkScoped(pumpNotifications(feed, view, edge, seen))
        }
        if (meter !== undefined && !view.stateless) {
          const closeSession = meter.session(options.profile ?? "default")
          yield* Effect.addFinalizer(() => Effect.sync(closeSession))
        }
        // Released first (finalizers run in reverse): the server above closes after, aborting the calls in flight.
        yield* Effect.addFinalizer(() =>
          Effect.gen(function* () {
            const left = yield* view.leave
            yield* left.release
            if (Option.isSome(left.level)) yield* whole.forward.setLevel(left.level.value)
            for (const uri of left.released) {
              yield* Effect.ignore(whole.forward.subscription("resources/unsubscribe", { uri }))
            }
          }).pipe(Effect.timeout("5 seconds"), Effect.ignore)
        )
        return { server: edge.server, closed: Effect.raceFirst(closed, view.expired) } as const
      })

    /**
     * Serves until the host closes stdin (or the fiber is interrupted by SIGINT/SIGTERM); `profile` (`serve --profile`,
     * checked by the command) is what the host sees.
     */
    const serve = (profile?: string) =>
      Effect.gen(function* () {
        const transport = new StdioServerTransport(
          process.stdin,
          process.stdout,
          Runtime.runSync(runtime)(CurrentLimits)
        )
        const { closed } = yield* session(transport, {
          profile,
          prepare: (cancels, audit, seen) => {
            transport.intercept = CallPath.intercept({
              transport,
              registry: seen,
              cancels,
              untraced: tracing.untraced,
              audit
            })
          }
        })
        yield* closed
        yield* Effect.logDebug("stdin closed: shutting down")
      }).pipe(Effect.scoped, Effect.withSpan("Gateway.serve"))

    return {
      serve,
      session,
      /** For the daemon's /readyz: every source's health row, and the wait until every eager source has settled. */
      health: registry.health,
      awaitSettled: registry.awaitSettled
    } as const
  })
}) {}
