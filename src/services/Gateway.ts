import { Clock, Duration, Effect, Layer, Option, Queue, Runtime, Stream } from "effect"
import { randomBytes } from "node:crypto"
import { ConfigChain, recursionRefusal } from "../domain/Environment.js"
import * as Era from "../domain/HostEra.js"
import type { JsonObject } from "../domain/Mcp.js"
import type { RpcError } from "../domain/Surface.js"
import { CurrentLimits } from "../domain/Limits.js"
import { Cancels } from "../transport/Cancels.js"
import { StdioServerTransport } from "../transport/StdioServerTransport.js"
import { Audit, type AuditRecorder } from "./Audit.js"
import { metered, Metrics } from "./Metrics.js"
import * as CallPath from "./Gateway/CallPath.js"
import * as Handlers from "./Gateway/Handlers.js"
import { type ListenAccess, listenLimits, type ListenSink, makeHttpListens } from "./Gateway/HttpListens.js"
import { makeListen } from "./Gateway/Listen.js"
import * as Modern from "./Gateway/Modern.js"
import { makeParking } from "./Gateway/Mrtr.js"
import * as StdioEras from "./Gateway/Stdio.js"
import { type ListKind, makeEdge, type Transport } from "./Gateway/Sdk.js"
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
  /** Called before the transport connects (the stdio relay and the era switch hook in here). */
  readonly prepare?: (parts: SessionParts) => void
}

/** What a session is made of, for the edge that carries it (stdio's era switch, ADR 032). */
export interface SessionParts {
  readonly cancels: Cancels
  readonly audit: AuditRecorder | undefined
  readonly view: SessionView
  /** What the session sees: its profile's view of the one catalog (issue 26). */
  readonly registry: RegistryView
  readonly handlers: Readonly<Record<string, Handlers.Handler>>
  /** Where the session's notices and reverse requests go: the legacy SDK Server until a modern host replaces them. */
  readonly outbound: Outbound
  /** Names the client in audit lines when the SDK has no initialize to read it from (a modern host's clientInfo). */
  readonly client: (name: string | undefined) => void
  /** The modern calls that asked for their children's log messages. */
  readonly logs: Modern.LogRoutes
}

/** Where a session's notices and its children's reverse requests go. */
export interface Outbound {
  notify: (notification: { readonly method: string; readonly params: JsonObject }) => Effect.Effect<void>
  listChanged: (kind: ListKind) => Effect.Effect<void>
  request: (instance: string, method: string, params: JsonObject | undefined) => Effect.Effect<JsonObject, RpcError>
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
      edge: Outbound,
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
    // `now`: what the host sees is the catalog as it is now (a listen opened over HTTP, which listed on other requests).
    const notifyChanges = (session: SessionView, edge: Outbound, registry: RegistryView, now = false) =>
      Effect.gen(function* () {
        const seen = session.seen
        const snapshot = Effect.gen(function* () {
          const catalog = yield* registry.catalog
          const surface = yield* registry.surface
          return { tools: catalog.host.hash, resources: surface.resourcesKey, prompts: surface.promptsKey }
        })
        if (now) Object.assign(seen, yield* snapshot)
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

    /** The source instance a tool of `view` routes to (none: a core tool or no such tool). */
    const instanceIn = (view: RegistryView) => (tool: string) => {
      const route = view.routeNow(tool)
      return route === undefined || route === "core" ? undefined : route.instance
    }

    /** A session ends: what it kept is released, and the children hear what no session needs any more. */
    const leave = (view: SessionView) =>
      Effect.gen(function* () {
        const left = yield* view.leave
        yield* left.release
        if (Option.isSome(left.level)) yield* whole.forward.setLevel(left.level.value)
        for (const uri of left.released) {
          yield* Effect.ignore(whole.forward.subscription("resources/unsubscribe", { uri }))
        }
      }).pipe(Effect.timeout("5 seconds"), Effect.ignore)

    /**
     * An HTTP subscriptions/listen's own session (ADR 032, Gateway/HttpListens): its profile's view, list_changed after
     * the debounce and per-kind rules, its children's resources/updated for what it subscribed; it leaves with the scope.
     */
    const listener = (key: string, access: ListenAccess, sink: ListenSink) =>
      Effect.gen(function* () {
        const feed = yield* sessions.feed
        const view = yield* sessions.join({
          id: key,
          ...access,
          request: (_instance, method) => Modern.noReverseRequests(method)
        })
        // In use while open: never expired as idle.
        const done = yield* sessions.track(key)
        yield* Effect.addFinalizer(() => Effect.zipRight(done, leave(view)))
        const seen = registry.viewOf(view.profile)
        const outbound: Outbound = {
          notify: (notification) =>
            Effect.sync(() => {
              if (notification.method === "notifications/resources/updated") sink.updated(notification.params)
            }),
          listChanged: (kind) => Effect.sync(() => sink.listChanged(kind)),
          request: (_instance, method) => Modern.noReverseRequests(method)
        }
        yield* Effect.forkScoped(notifyChanges(view, outbound, seen, true))
        yield* Effect.forkScoped(pumpNotifications(feed, view, outbound, seen))
        return Handlers.handlers({ registry: seen, tracing, redact }, view, false)
      })

    /** Children's log messages, mapped (logger = instance), to the modern calls they belong to, in the child's order. */
    const routeLogs = (logs: Modern.LogRoutes) =>
      sessions.tap((notification) => {
        if (notification.method !== "notifications/message" || logs.idle()) return
        const mapped = Runtime.runSync(runtime)(whole.forward.mapNotification(notification))
        if (Option.isSome(mapped)) logs.message(mapped.value.params)
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
        let client: string | undefined
        const clientName = () => client ?? edge.server.getClientVersion()?.name
        const recorder = metered(
          Option.getOrUndefined(audit)?.recorder(options.id, clientName, {
            profile: options.profile,
            token: options.token
          }),
          meter,
          options.id,
          clientName
        )
        const outbound: Outbound = {
          notify: edge.notify,
          listChanged: edge.listChanged,
          request: (_instance, method, params) => edge.request(method, params)
        }
        const view = yield* sessions.join({
          id: options.id ?? "stdio",
          stateless: options.stateless,
          profile: options.profile,
          token: options.token,
          // A reverse request from a child, sent to the host; interrupting it (the child cancelled) cancels it there.
          request: (instance, method, params) =>
            outbound
              .request(
                instance,
                method,
                params === undefined ? undefined : whole.forward.mapReverseParams(instance, params)
              )
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
        // Only clawtool's stdio transport (the one with a relay to prepare) splices pre-serialised results (ADR 009).
        const handlers = Handlers.handlers(services, view, options.prepare !== undefined, recorder)
        edge.handle({
          // A clawtool above already serves this config (ADR 013): it learns so from this error; no source was started.
          refusal: () => (Option.isSome(chain.repeated) ? recursionRefusal(chain.repeated.value) : undefined),
          answered: view.answered,
          initialized: view.initialized,
          requests: handlers,
          rootsChanged: Handlers.rootsChanged(services, view)
        })
        // Subscribed before the host can initialize, so nothing a child sends after its own initialize is lost.
        const feed = yield* sessions.feed
        const logs = Modern.makeLogRoutes()
        // Only stdio (the transport with a relay to prepare) can carry a modern host.
        if (options.prepare !== undefined) yield* routeLogs(logs)
        options.prepare?.({
          cancels: edge.cancels,
          audit: recorder,
          view,
          registry: seen,
          handlers,
          outbound,
          client: (name) => void (client ??= name),
          logs
        })
        // Known secrets never reach the host, on every path a message takes to it (issue 25).
        redaction.guard(transport)
        const { closed } = yield* edge.connect(transport)
        // A stateless request has nothing to carry notifications.
        if (!view.stateless) {
          yield* Effect.forkScoped(notifyChanges(view, outbound, seen))
          yield* Effect.forkScoped(pumpNotifications(feed, view, outbound, seen))
        }
        if (meter !== undefined && !view.stateless) {
          const closeSession = meter.session(options.profile ?? "default")
          yield* Effect.addFinalizer(() => Effect.sync(closeSession))
        }
        // Released first (finalizers run in reverse): the server above closes after, aborting the calls in flight.
        yield* Effect.addFinalizer(() => leave(view))
        return { server: edge.server, closed: Effect.raceFirst(closed, view.expired) } as const
      })

    /** What signs a modern host's requestState on stdio: this process's own key (ADR 032). */
    const stateKey = randomBytes(32)
    const inputRequiredTtl = Duration.minutes(10)

    /** Every source settled (a modern list's ttl is 0 until then). */
    let settled = false
    yield* Effect.forkScoped(
      Effect.zipRight(
        registry.awaitSettled,
        Effect.sync(() => void (settled = true))
      )
    )

    /**
     * A modern host on this session (ADR 032): the session's notices go to its subscriptions/listen, its children's
     * reverse requests cannot be sent as requests, and its first request tells the children what to declare.
     */
    const modernContext = (parts: SessionParts, wire: Era.ModernWire): Modern.ModernContext => {
      const listen = makeListen((uri, on) => {
        const handler = parts.handlers[on ? "resources/subscribe" : "resources/unsubscribe"]
        return Runtime.runPromiseExit(runtime)(
          Effect.ignoreLogged(handler!({ uri }, { requestId: `listen:${uri}`, notify: () => {} }))
        ).then(() => {})
      })
      const logs = parts.logs
      parts.outbound.notify = (notification) =>
        Effect.sync(() => {
          if (notification.method === "notifications/resources/updated") listen.updated(notification.params)
        })
      parts.outbound.listChanged = (kind) => Effect.sync(() => listen.listChanged(kind))
      const parking = makeParking({
        key: stateKey,
        ttl: inputRequiredTtl,
        now: () => Runtime.runSync(runtime)(Clock.currentTimeMillis),
        wire,
        stamp: (result) => Era.stamp(result, Modern.serverInfo, undefined),
        moved: (from, to, slot) => {
          if (from !== undefined) parts.cancels.delete(from)
          if (to !== undefined) parts.cancels.set(to, slot.cancel)
        }
      })
      parts.outbound.request = parking.ask
      let opened = false
      return {
        runtime,
        handlers: parts.handlers,
        cancels: parts.cancels,
        listen,
        settled: () => settled,
        parking,
        logs,
        instanceOf: instanceIn(parts.registry),
        opened: (envelope) => {
          if (opened) return
          opened = true
          const name = envelope.clientInfo?.name
          parts.client(typeof name === "string" ? name : undefined)
          Runtime.runFork(runtime)(Effect.zipRight(parts.view.initialized(envelope.capabilities), parts.view.answered))
        }
      }
    }

    /** The relay for a modern host's tools/call: the envelope stays here, the result gets the era's stamp. */
    const modernRelay = (transport: StdioServerTransport, parts: SessionParts) => {
      const relay = CallPath.intercept({
        transport,
        registry: parts.registry,
        cancels: parts.cancels,
        untraced: tracing.untraced,
        audit: parts.audit,
        stamp: (result) => Era.stamp(result, Modern.serverInfo, undefined),
        // Only a host that declares none of sampling, elicitation and roots takes this relay (Stdio.ts).
        hostCapabilities: {}
      })
      return (message: Record<string, unknown>) => relay({ ...message, params: Modern.withoutEnvelope(message.params) })
    }

    /**
     * The daemon's modern requests (ADR 032): each is a sessionless request (a stateless session that ends with its
     * call, which may outlive its HTTP response while parked for input), answered on `wire` by the id clawtool gave
     * it. One parking for the daemon: a retry may come on any connection; `key` signs its requestState (`[http]
     * state_key`, shared by replicas).
     */
    const modernServer = (options: {
      readonly wire: Era.ModernWire
      readonly key: Buffer
      readonly ttl: Duration.Duration
    }) =>
      Effect.gen(function* () {
        const cancels = new Cancels()
        // The children's log messages for the calls that asked (their sessions are stateless: nothing else pumps them).
        const logs = Modern.makeLogRoutes()
        yield* routeLogs(logs)
        const parking = makeParking({
          key: options.key,
          ttl: options.ttl,
          now: () => Runtime.runSync(runtime)(Clock.currentTimeMillis),
          wire: options.wire,
          stamp: (result) => Era.stamp(result, Modern.serverInfo, undefined),
          moved: (from, to, slot) => {
            if (from !== undefined) cancels.delete(from)
            if (to !== undefined) cancels.set(to, slot.cancel)
          }
        })
        // Each listen is a session of its own, fed until its stream closes.
        const listens = makeHttpListens({
          runtime,
          wire: options.wire,
          cancels,
          limits: listenLimits,
          session: listener
        })
        return {
          cancel: (key: string) => cancels.cancel(key, "the host closed the request"),
          /** Ends every open listen with its result (the daemon stops). */
          closeListens: listens.closeAll,
          /** Ends the open listens a reload no longer lets in (their token or profile gone); how many. */
          closeListensUnless: listens.closeUnless,
          /** `access`: the endpoint's profile (issue 26; absent: the whole catalog) and the token's name. */
          serve: (key: string, request: Modern.ModernRequest, envelope: Era.Envelope, access: ListenAccess = {}) =>
            Effect.gen(function* () {
              if (request.method === "subscriptions/listen") return yield* listens.serve(key, request, access)
              const view = yield* sessions.join({
                id: key,
                stateless: true,
                ...access,
                request: (instance, method, params) =>
                  parking.ask(
                    instance,
                    method,
                    params === undefined ? undefined : whole.forward.mapReverseParams(instance, params)
                  )
              })
              // What the request declares is what its children's reverse requests may use (MRTR).
              yield* view.initialized(envelope.capabilities)
              const client = () => {
                const name = envelope.clientInfo?.name
                return typeof name === "string" ? name : undefined
              }
              const named = { profile: view.profile, token: view.token }
              const recorder = metered(Option.getOrUndefined(audit)?.recorder(key, client, named), meter, key, client)
              const seen = registry.viewOf(view.profile)
              const handlers = Handlers.handlers({ registry: seen, tracing, redact }, view, false, recorder)
              const fiber = Modern.serve(
                {
                  runtime,
                  handlers,
                  cancels,
                  listen: makeListen(() => Promise.resolve(), 0),
                  settled: () => settled,
                  opened: () => {},
                  parking,
                  logs,
                  instanceOf: instanceIn(seen)
                },
                options.wire,
                { ...request, id: key },
                envelope
              )
              if (fiber !== undefined) yield* Effect.ignore(fiber.await)
              yield* leave(view)
            })
        }
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
        let close = () => {}
        const { closed } = yield* session(transport, {
          profile,
          prepare: (parts) => {
            const eras = StdioEras.eraSwitch({
              transport,
              legacy: CallPath.intercept({
                transport,
                registry: parts.registry,
                cancels: parts.cancels,
                untraced: tracing.untraced,
                audit: parts.audit
              }),
              relay: modernRelay(transport, parts),
              modernContext: (wire) => modernContext(parts, wire),
              refusal: () => (Option.isSome(chain.repeated) ? recursionRefusal(chain.repeated.value) : undefined)
            })
            transport.intercept = eras.intercept
            close = eras.close
          }
        })
        yield* Effect.ensuring(
          closed,
          Effect.sync(() => close())
        )
        yield* Effect.logDebug("stdin closed: shutting down")
      }).pipe(Effect.scoped, Effect.withSpan("Gateway.serve"))

    return {
      serve,
      session,
      modernServer,
      /** For the daemon's /readyz: every source's health row, and the wait until every eager source has settled. */
      health: registry.health,
      awaitSettled: registry.awaitSettled
    } as const
  })
}) {}
