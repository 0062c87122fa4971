import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import {
  ErrorCode,
  InitializeRequestSchema,
  LoggingLevelSchema,
  McpError,
  RootsListChangedNotificationSchema,
  type ServerNotification,
  type ServerRequest
} from "@modelcontextprotocol/sdk/types.js"
import { Deferred, Effect, Either, Layer, Option, Queue, Runtime, Stream } from "effect"
import * as z from "zod"
import * as CallPlan from "../domain/CallPlan.js"
import type { Progress } from "../domain/Connection.js"
import { ConfigChain, recursionRefusal } from "../domain/Environment.js"
import { CurrentLimits } from "../domain/Limits.js"
import type { JsonObject } from "../domain/Mcp.js"
import { isJsonObject, RpcError } from "../domain/Surface.js"
import { resumeOptimiser } from "../heap.js"
import { Cancels } from "../transport/Cancels.js"
import { type HandlerExtra, type RawHandler, serverInternals } from "../transport/Sdk.js"
import { jsonRpcError, noTimeout, peerMessage } from "../transport/SdkShape.js"
import { rawResult, StdioServerTransport } from "../transport/StdioServerTransport.js"
import { unvalidated } from "../transport/Unvalidated.js"
import * as Version from "../version.js"
import * as CallPath from "./Gateway/CallPath.js"
import { callErrorResult, invalidParams, serialisable, serialised, unserialisable } from "./Gateway/Replies.js"
import { HostBridge, HostSession } from "./HostBridge.js"
import { Registry } from "./Registry.js"
import * as SurfaceRoutes from "./Registry/Surface.js"
import type { Surface } from "./Registry/Surface.js"
import type { ForwardOptions } from "./Registry/Forward.js"
import { Tracing } from "./Tracing.js"

// Loose request schemas: params are checked here with precise JSON-RPC errors (-32602), and results are
// relayed without re-validating them against schemas the gateway does not own (ADR-002).
const AnyRequest = (method: string) => z.object({ method: z.literal(method), params: z.unknown().optional() })
const AnyResult = z.looseObject({})

/** The params without the host's progressToken (the SDK adds its own downstream); an emptied `_meta` goes too. */
const withoutProgressToken = (params: JsonObject, meta: JsonObject): JsonObject => {
  const { progressToken: _token, ...rest } = meta
  const { _meta: _old, ...others } = params
  return Object.keys(rest).length === 0 ? others : { ...others, _meta: rest }
}

/**
 * What clawtool serves, whatever its children do: every method is routed per instance and answered -32601 naming
 * the source when that child lacks the capability (ADR-005). Fixed because the host initializes before children.
 */
export const gatewayCapabilities = {
  tools: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  completions: {},
  logging: {},
  tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } }
} as const

/** Tasks came with protocol 2025-11-25: an older host is not told about them. */
export const tasksSince = "2025-11-25"

const logLevels = LoggingLevelSchema.options as ReadonlyArray<string>

/** How the Gateway serves one host session (see `Gateway.session`). */
export interface SessionOptions {
  /** A daemon session's id (HTTP, ADR 020); absent for the one stdio host. */
  readonly id?: string
  /** One stateless HTTP request: no notifications, no list_changed (nothing could carry them). */
  readonly stateless?: boolean
  /** Called with the session's cancels before the transport connects (the stdio relay hooks in here). */
  readonly prepare?: (cancels: Cancels) => void
}

/**
 * The MCP edge facing the host: the SDK's low-level Server over clawtool's stdio transport. `initialize` is
 * answered at once; lists wait for sources still starting at most `list_wait` (ADR 015), and a
 * source that arrives later is announced by list_changed. Everything MCP has beyond tools is forwarded to the owning
 * instance (README, "MCP protocol support").
 */
export class Gateway extends Effect.Service<Gateway>()("clawtool/Gateway", {
  // One HostBridge shared by Sources (below Registry) and the Gateway: children learn the host through it.
  dependencies: [Registry.Default.pipe(Layer.provideMerge(HostBridge.Default)), Tracing.Default],
  scoped: Effect.gen(function* () {
    const registry = yield* Registry
    const tracing = yield* Tracing
    const bridge = yield* HostBridge
    const chain = yield* ConfigChain
    const runtime = yield* Effect.runtime<never>()
    const run = <A, E>(effect: Effect.Effect<A, E>, signal: AbortSignal) =>
      Runtime.runPromise(runtime)(effect, { signal })
    /** Runs a forwarded request: a failure is answered with its own JSON-RPC code and message. */
    const runRpc = <A>(effect: Effect.Effect<A, RpcError>, signal: AbortSignal) =>
      run(Effect.either(effect), signal).then((result) => {
        if (Either.isLeft(result)) throw jsonRpcError(result.left)
        return result.right
      })

    /**
     * One host session over `transport`: its own SDK Server, initialize, capabilities, log level, cancels, progress,
     * subscriptions and list_changed notices, over the one Registry every session shares. stdio serve is one session;
     * the daemon opens one per HTTP session (or per request when stateless). Closed with the scope: the SDK then
     * aborts the session's handlers, so its calls in flight are cancelled at the children.
     */
    const session = (transport: Transport, options: SessionOptions = {}) =>
      Effect.gen(function* () {
        const daemonId = options.id
        // Only clawtool's stdio transport splices pre-serialised results (ADR 009); the SDK's HTTP transport
        // serialises objects itself.
        const spliced = options.prepare !== undefined
        const daemon = daemonId === undefined ? undefined : bridge.daemon
        const server = new Server(
          { name: Version.name, version: Version.version },
          { capabilities: gatewayCapabilities, jsonSchemaValidator: unvalidated }
        )
        // Every SDK internal the Gateway uses, checked now (ADR 002).
        const sdk = serverInternals(server)
        server.onerror = (error) => Runtime.runSync(runtime)(Effect.logDebug(`mcp: ${error.message}`))
        // Hosts on the SDK ignore a cancel of request id 0 (a falsy check in Protocol._oncancel): clawtool's requests to
        // the host (forwarded sampling, elicitation, roots) start at 1, so each of them can be cancelled.
        sdk.startRequestIdsAt(1)
        // The host's cancels, for relayed calls and SDK handlers alike (id 0 included): one map, see CallPath.
        const cancels = new Cancels(sdk.abortHandler)

        /** A reverse request from a child, sent to the host; interrupting it (the child cancelled) cancels it there. */
        const hostRequest = (instance: string, method: string, params: JsonObject | undefined) =>
          Effect.tryPromise({
            try: (signal) =>
              server.request(
                {
                  method,
                  ...(params === undefined ? {} : { params: registry.forward.mapReverseParams(instance, params) })
                } as never,
                AnyResult,
                // A reverse request can wait for a human (sampling approval, elicitation): only the child's timeout bounds it.
                { signal, timeout: noTimeout }
              ) as Promise<JsonObject>,
            catch: (cause) =>
              cause instanceof McpError
                ? new RpcError({
                    reason: "Peer",
                    code: cause.code,
                    detail: peerMessage(cause.message),
                    ...(cause.data === undefined ? {} : { data: cause.data })
                  })
                : new RpcError({
                    reason: "Transport",
                    code: ErrorCode.InternalError,
                    detail: `${method} to the host: ${cause instanceof Error ? cause.message : String(cause)}`
                  })
          }).pipe(
            Effect.withSpan(method, {
              kind: "client",
              attributes: { "mcp.method.name": method, "clawtool.instance": instance }
            })
          )

        // Children wait for this to learn what to declare (ADR-005).
        server.oninitialized = () => {
          const capabilities = (server.getClientCapabilities() ?? {}) as JsonObject
          Runtime.runFork(runtime)(
            daemon === undefined
              ? bridge.attach({ capabilities, request: hostRequest })
              : daemon.declare(daemonId!, capabilities)
          )
        }
        if (daemon !== undefined) yield* daemon.join(daemonId!, hostRequest, options.stateless === true)

        /** When the host's request carries a progressToken: progress comes back under it (the SDK uses its own downstream). */
        const progressFor = (meta: JsonObject | undefined, extra: HandlerExtra) => {
          const progressToken = CallPlan.hostProgressToken(meta)
          return progressToken === undefined
            ? undefined
            : (progress: Progress) =>
                void extra
                  .sendNotification({ method: "notifications/progress", params: { ...progress, progressToken } })
                  .catch(() => {})
        }

        // === handlers =====================================================================================================

        /** The SDK negotiates the version (the host's if supported, else the latest); tasks only with 2025-11-25. */
        const initialize: RawHandler = async (request) => {
          // A clawtool above already serves this config (ADR 013): it learns so from this error; no source was started.
          if (Option.isSome(chain.repeated)) throw recursionRefusal(chain.repeated.value)
          const result = await sdk.initialize(request)
          // After this answer is written (the next turn of the event loop), the children spawn.
          setImmediate(() => Runtime.runSync(runtime)(bridge.answered))
          if (result.protocolVersion >= tasksSince) return result
          const { tasks: _tasks, ...capabilities } = result.capabilities
          return { ...result, capabilities }
        }

        /**
         * What the host last saw of each list kind (its key): answered by a list, or announced by list_changed. A kind the
         * host has not listed yet is announced only once every source has settled (see notifyChanges).
         */
        const seen: { tools?: string; resources?: string; prompts?: string } = {}

        const listTools = Effect.gen(function* () {
          yield* registry.listWait
          const catalog = yield* registry.catalog
          seen.tools = catalog.host.hash
          // Spliced into the response by the transport: a 10,000-tool catalog is not re-serialised per list.
          return spliced ? rawResult(catalog.host.listJson) : { tools: catalog.tools }
        })

        /** tools/call on the SDK path: what CallPlan sends here (progress, task, trace context, failures to explain). */
        const callTool: RawHandler = (request, extra) => {
          resumeOptimiser() // the host's first call ends the start-up (src/heap.ts)
          const parsed = CallPlan.parse(request.params)
          if (!parsed.ok) return Promise.reject(invalidParams(parsed.invalid))
          const { name, arguments: args, task, meta } = parsed.call
          // The host's progressToken is never sent on raw: the SDK puts its own token on the child request and
          // each progress notification goes back under the host's token.
          const { progressToken: _token, ...forwardedMeta } = meta ?? {}
          const onProgress = progressFor(meta, extra)
          // The server span wraps the whole call; the child gets the client span's traceparent merged into the
          // host's _meta, and the result's _meta.traceparent names clawtool's server span (SEP-414).
          const call = Effect.flatMap(registry.routeOf(name), (route) =>
            tracing.toolCall({
              wire: name,
              route,
              requestId: extra.requestId,
              context: tracing.extract(meta),
              meta: meta === undefined ? undefined : forwardedMeta,
              call: (_meta) => registry.call(name, { arguments: args, _meta, task }, { onProgress }),
              recover: callErrorResult
            })
          )
          // A daemon session's call is counted in flight on its child: the child's reverse requests are routed by it.
          // It runs as that session's (HostSession): clawtool's own tools use this session's roots, never another's.
          const counted =
            daemon === undefined
              ? call
              : Effect.flatMap(registry.instanceOf(name), (instance) =>
                  Option.isNone(instance) ? call : daemon.inFlight(daemonId!, instance.value, call)
                ).pipe(Effect.provideService(HostSession, Option.some(daemonId!)))
          // Serialised here, where a result too deep for the stack can still be answered (as on the relay).
          const answer = (result: unknown) =>
            spliced
              ? serialised(result, (cause) => callErrorResult(unserialisable(name, cause)))
              : serialisable(result, (cause) => callErrorResult(unserialisable(name, cause)))
          if (task === undefined) return run(counted, extra.signal).then(answer)
          // A task-augmented call needs a child that declared task support: a JSON-RPC error otherwise, since the
          // host expects a CreateTaskResult, not a tool result.
          const checked = Effect.gen(function* () {
            const instance = yield* registry.instanceOf(name)
            if (Option.isNone(instance)) {
              return yield* new RpcError({
                reason: "Unsupported",
                code: ErrorCode.MethodNotFound,
                detail: `tool "${name}" does not support task-augmented tools/call`
              })
            }
            yield* registry.forward.checkTaskCall(instance.value)
          })
          // A daemon session owns the tasks it creates: the child's task-related reverse requests are routed to it.
          const owned =
            daemon === undefined
              ? counted
              : Effect.tap(counted, (result) => {
                  const taskId = (result as { task?: { taskId?: unknown } }).task?.taskId
                  const route = registry.forward.routeTask(taskId)
                  return typeof taskId === "string" && Either.isRight(route)
                    ? daemon.ownTask(daemonId!, route.right.instance, route.right.taskId)
                    : Effect.void
                })
          return runRpc(checked, extra.signal).then(() => run(owned, extra.signal).then(answer))
        }

        /**
         * A forwarded method: params must be an object; the host's progressToken is replaced downstream and its progress
         * comes back under the host's token; the child's error (or the routing error) is the answer.
         */
        const forward =
          (
            method: string,
            handle: (params: JsonObject, options: ForwardOptions) => Effect.Effect<JsonObject, RpcError>
          ): RawHandler =>
          (request, extra) => {
            const params = request.params ?? {}
            if (!isJsonObject(params)) return Promise.reject(invalidParams(`${method} params must be an object`))
            const meta = isJsonObject(params._meta) ? params._meta : undefined
            const onProgress = progressFor(meta, extra)
            const forwarded = meta?.progressToken === undefined ? params : withoutProgressToken(params, meta)
            // In the daemon a request routed to a child counts as this session's request in flight on it, as a
            // tools/call does: what the child asks meanwhile (sampling, elicitation) comes back to this session.
            const around =
              daemon === undefined
                ? undefined
                : (instance: string) =>
                    <A, E>(request: Effect.Effect<A, E>) =>
                      daemon.inFlight(daemonId!, instance, request)
            return runRpc(
              handle(forwarded, { onProgress, around }).pipe(
                Effect.withSpan(method, { kind: "server", attributes: { "mcp.method.name": method } })
              ),
              extra.signal
            )
          }

        /**
         * Tasks are a session's own in the daemon (children are shared): a session lists, reads, awaits and cancels only
         * the tasks its calls created; another session's task id is unknown to it (-32602, as a child answers). Not in
         * stateless mode, where no request outlives its session.
         */
        const isolated = daemon !== undefined && options.stateless !== true
        const owns = (taskId: unknown) =>
          Either.match(registry.forward.routeTask(taskId), {
            // Not a task id clawtool can route: the forwarded request says so itself.
            onLeft: () => Effect.succeed(true),
            onRight: (route) => daemon!.ownsTask(daemonId!, route.instance, route.taskId)
          })
        const ownTask = (params: JsonObject, then: Effect.Effect<JsonObject, RpcError>) =>
          !isolated
            ? then
            : Effect.flatMap(owns(params.taskId), (owned) =>
                owned
                  ? then
                  : Effect.fail(
                      new RpcError({
                        reason: "InvalidParams",
                        code: ErrorCode.InvalidParams,
                        detail: `no task ${JSON.stringify(params.taskId)} in this session`
                      })
                    )
              )
        const ownTasks = (all: Effect.Effect<{ readonly tasks: ReadonlyArray<JsonObject> }, RpcError>) =>
          !isolated
            ? all
            : Effect.flatMap(all, ({ tasks }) =>
                Effect.map(
                  Effect.filter(tasks, (task) => owns(task.taskId)),
                  (own) => ({ tasks: own })
                )
              )

        /** A list waits like tools/list, and what it answers is what the host has seen of its kind. */
        const surfaceList = <A extends JsonObject>(kind: "resources" | "prompts", answer: (surface: Surface) => A) =>
          Effect.gen(function* () {
            yield* registry.listWait
            const current = yield* registry.surface
            seen[kind] = kind === "resources" ? current.resourcesKey : current.promptsKey
            return answer(current)
          })
        const forwardTo = registry.forward

        /** Host-side URIs this daemon session subscribed to, with their route: its resources/updated filter. */
        const subscribed = new Map<string, { readonly instance: string; readonly uri: string }>()
        const subscription = (method: "resources/subscribe" | "resources/unsubscribe", on: boolean) =>
          forward(method, (params) => {
            const direct = Effect.flatMap(forwardTo.subscription(method, params), ({ result, route }) =>
              Effect.as(bridge.remember(route.instance, route.uri, on), result)
            )
            if (daemon === undefined || typeof params.uri !== "string") return direct
            // Shared children: subscribed on the first session's subscribe, unsubscribed on the last one's unsubscribe.
            const uri = params.uri
            return Effect.gen(function* () {
              const route = SurfaceRoutes.routeUri(yield* registry.surface, uri)
              if (Either.isLeft(route)) return yield* direct
              const { instance, uri: childUri } = route.right
              const tell = yield* daemon.subscription(daemonId!, instance, childUri, on)
              if (on) subscribed.set(uri, { instance, uri: childUri })
              else subscribed.delete(uri)
              if (!tell) return {}
              return yield* Effect.map(forwardTo.subscription(method, params), ({ result }) => result).pipe(
                Effect.tapError(() =>
                  Effect.zipRight(
                    daemon.subscription(daemonId!, instance, childUri, !on),
                    Effect.sync(() => (on ? subscribed.delete(uri) : subscribed.set(uri, { instance, uri: childUri })))
                  )
                )
              )
            })
          })

        // logging/setLevel: remembered for children that start later, sent to every running child with logging, and
        // applied here too, so a child that ignores it cannot flood the host.
        let hostLevel: string | undefined
        const setLevel = forward("logging/setLevel", (params) =>
          Effect.gen(function* () {
            const level = params.level
            if (typeof level !== "string" || !logLevels.includes(level)) {
              return yield* new RpcError({
                reason: "InvalidParams",
                code: ErrorCode.InvalidParams,
                detail: `logging/setLevel needs params.level, one of ${logLevels.join(", ")}`
              })
            }
            hostLevel = level
            if (daemon !== undefined) {
              // Children serve every session: they get the lowest level any session asked for; each session filters.
              const lowest = yield* daemon.setLevel(daemonId!, level)
              if (lowest !== undefined) yield* forwardTo.setLevel(lowest)
              return {}
            }
            yield* bridge.setLogLevel(level)
            yield* forwardTo.setLevel(level)
            return {}
          })
        )
        const belowLevel = (level: unknown) =>
          hostLevel !== undefined &&
          typeof level === "string" &&
          logLevels.indexOf(level) < logLevels.indexOf(hostLevel)

        /** Every request the host can send, by method (plain tools/calls are taken earlier by the relay, see CallPath). */
        const handlers: Readonly<Record<string, RawHandler>> = {
          initialize,
          "tools/list": (_request, extra) => run(listTools, extra.signal),
          "tools/call": callTool,
          "resources/list": forward("resources/list", () =>
            surfaceList("resources", (current) => ({ resources: current.resources }))
          ),
          "resources/templates/list": forward("resources/templates/list", () =>
            surfaceList("resources", (current) => ({ resourceTemplates: current.resourceTemplates }))
          ),
          "resources/read": forward("resources/read", (params, options) => forwardTo.readResource(params, options)),
          "resources/subscribe": subscription("resources/subscribe", true),
          "resources/unsubscribe": subscription("resources/unsubscribe", false),
          "prompts/list": forward("prompts/list", () =>
            surfaceList("prompts", (current) => ({ prompts: current.prompts }))
          ),
          "prompts/get": forward("prompts/get", (params, options) => forwardTo.getPrompt(params, options)),
          "completion/complete": forward("completion/complete", (params, options) =>
            forwardTo.complete(params, options)
          ),
          "tasks/get": forward("tasks/get", (params) => ownTask(params, forwardTo.getTask(params))),
          "tasks/result": forward("tasks/result", (params, options) =>
            ownTask(params, forwardTo.taskResult(params, options))
          ),
          "tasks/list": forward("tasks/list", () => ownTasks(forwardTo.listTasks)),
          "tasks/cancel": forward("tasks/cancel", (params) => ownTask(params, forwardTo.cancelTask(params))),
          "logging/setLevel": setLevel
        }
        for (const [method, handler] of Object.entries(handlers)) {
          // initialize keeps the SDK's own request schema (a malformed initialize is refused as before).
          sdk.setRawRequestHandler(method === "initialize" ? InitializeRequestSchema : AnyRequest(method), handler)
        }

        // The host's roots changed: every child that declared roots.listChanged hears it (and asks roots/list again).
        // In the daemon children are shared: one session's roots are not every child's, so nothing is forwarded; only
        // that session's roots for clawtool's own tools are asked again.
        server.setNotificationHandler(RootsListChangedNotificationSchema, () =>
          Runtime.runPromise(runtime)(daemon === undefined ? forwardTo.rootsChanged : daemon.rootsChanged(daemonId!))
        )

        // Children's notifications for the host, mapped (logger = instance, URIs, task ids). Subscribed here, before
        // the host can initialize, so nothing a child sends after its own initialize is lost.
        const feed = yield* bridge.subscribe
        const pumpNotifications = Effect.forever(
          Effect.gen(function* () {
            const notification = yield* Queue.take(feed)
            const mapped = yield* forwardTo.mapNotification(notification)
            if (Option.isNone(mapped)) return
            if (mapped.value.method === "notifications/message" && belowLevel(mapped.value.params.level)) return
            if (
              daemon !== undefined &&
              mapped.value.method === "notifications/resources/updated" &&
              !(typeof mapped.value.params.uri === "string" && subscribed.has(mapped.value.params.uri))
            ) {
              return
            }
            yield* Effect.promise(() => server.notification(mapped.value as ServerNotification).catch(() => {}))
          })
        )

        // list_changed: one notice per kind per settled change of what the host saw (re-derived, never relayed raw). A list
        // answered before every source settled is compared with what it answered, so a late source is announced once.
        const notifyChanges = Effect.gen(function* () {
          const snapshot = Effect.gen(function* () {
            const catalog = yield* registry.catalog
            const surface = yield* registry.surface
            return { tools: catalog.host.hash, resources: surface.resourcesKey, prompts: surface.promptsKey }
          })
          const kinds = ["tools", "resources", "prompts"] as const
          const notices = {
            tools: () => server.sendToolListChanged(),
            resources: () => server.sendResourceListChanged(),
            prompts: () => server.sendPromptListChanged()
          }
          // Once every source settled, a kind the host has not listed yet is compared from then on (as before list_wait).
          yield* Effect.forkScoped(
            Effect.zipRight(
              registry.awaitSettled,
              Effect.map(snapshot, (now) => {
                for (const kind of kinds) seen[kind] ??= now[kind]
              })
            )
          )
          yield* registry.changes.pipe(
            Stream.debounce("50 millis"),
            Stream.runForEach(() =>
              Effect.gen(function* () {
                const now = yield* snapshot
                for (const kind of kinds) {
                  if (seen[kind] === undefined || seen[kind] === now[kind]) continue
                  seen[kind] = now[kind]
                  yield* Effect.promise(() => notices[kind]().catch(() => {}))
                }
              })
            )
          )
        })

        options.prepare?.(cancels)
        const closed = yield* Deferred.make<void>()
        server.onclose = () => Deferred.unsafeDone(closed, Effect.void)
        yield* Effect.acquireRelease(
          Effect.promise(() => server.connect(transport)),
          () => Effect.promise(() => server.close().catch(() => {}))
        )
        if (options.stateless !== true) {
          yield* Effect.forkScoped(notifyChanges)
          yield* Effect.forkScoped(pumpNotifications)
        }
        if (daemon !== undefined) {
          // Released first (finalizers run in reverse): the server above closes after, aborting the calls in flight.
          yield* Effect.addFinalizer(() =>
            Effect.gen(function* () {
              const left = yield* daemon.leave(daemonId!)
              yield* left.release
              if (left.hadLevel && left.level !== undefined) yield* forwardTo.setLevel(left.level)
              for (const [uri, route] of subscribed) {
                if (!left.released.some((r) => r.instance === route.instance && r.uri === route.uri)) continue
                yield* Effect.ignore(forwardTo.subscription("resources/unsubscribe", { uri }))
              }
            }).pipe(Effect.timeout("5 seconds"), Effect.ignore)
          )
        }
        return { server, closed: Deferred.await(closed) } as const
      })

    /** Serves until the host closes stdin (or the fiber is interrupted by SIGINT/SIGTERM). */
    const serve = Effect.gen(function* () {
      const transport = new StdioServerTransport(process.stdin, process.stdout, Runtime.runSync(runtime)(CurrentLimits))
      const { closed } = yield* session(transport, {
        prepare: (cancels) => {
          transport.intercept = CallPath.intercept({ transport, registry, cancels, untraced: tracing.untraced })
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

export type { ServerNotification, ServerRequest }
