import { Clock, Effect, Either, Exit, Option, Tracer } from "effect"
import * as CallPlan from "../../domain/CallPlan.js"
import type { Progress } from "../../domain/Connection.js"
import type { InputPass } from "../../domain/Era.js"
import type { CallToolResult, JsonObject } from "../../domain/Mcp.js"
import { isJsonObject, RpcCode, RpcError } from "../../domain/Surface.js"
import { resumeOptimiser } from "../../heap.js"
import { rawResult } from "../../transport/StdioServerTransport.js"
import { logLevels, type SessionView } from "../HostSessions.js"
import type { ForwardOptions } from "../Registry/Forward.js"
import * as SurfaceRoutes from "../Registry/Surface.js"
import type { Surface } from "../Registry/Surface.js"
import type { RegistryView as Registry } from "../Registry.js"
import { CallError } from "../../domain/Errors.js"
import { CallRoute, type HostCallRoute } from "../../domain/ToolProvider.js"
import type { AuditRecorder } from "../Audit.js"
import type { TraceContext, Tracing } from "../Tracing.js"
import { outcomeOfError, outcomeOfResult } from "../Trust/AuditLine.js"
import { confirmed } from "./Confirmation.js"
import { auditRelayed } from "./CallPath.js"
import { callErrorResult, invalidParams, serialise, unserialisable } from "./Replies.js"

/** What a request's handler gets besides its params. */
export interface RequestContext {
  readonly requestId: string | number
  /** Sends the host a notification about this request (its progress), never failing. */
  readonly notify: (method: string, params: JsonObject) => void
  /** A 2026-07-28 host's log level for this request (its envelope's); none: no request-related log messages. */
  readonly logLevel?: string | undefined
  /** A modern host's tools/call: a modern child's input_required is passed through to it (ADR 033). */
  readonly input?: InputPass | undefined
}

/** One host request: its params in, its result or its JSON-RPC error out. */
export type Handler = (params: unknown, context: RequestContext) => Effect.Effect<unknown, RpcError>

/** What every session's requests share. */
export interface Services {
  readonly registry: Registry
  readonly tracing: Tracing
  /** Known secrets replaced in text clawtool itself writes for the host before cutting it (a confirmation's arguments). */
  readonly redact: (text: string) => string
}

/** What one SDK-path call tells its audit line besides its exit. */
interface Seen {
  /** The CallError the answered result stands for (its reason is the outcome: denied, quarantined, timeout, error). */
  failure: CallError | undefined
  traceId: string | undefined
  /** The answered result and its JSON. */
  result: unknown
  json: string
}

const traceIdPattern = /^[0-9a-f]{32}$/

/**
 * The current span, if any: `Effect.option(Effect.currentSpan)` without its failure, whose NoSuchElementException (an
 * Error, its stack captured, per untraced call) was most of what a daemon with metrics on did more than one without
 * (ADR 034).
 */
const currentSpan = Effect.map(
  Effect.serviceOption(Tracer.ParentSpan),
  Option.filter((span): span is Tracer.Span => span._tag === "Span")
)

/** The call's trace id: the host's trace context's, else the span tracing made (none: a call without spans). */
const traceOf = (seen: Seen, context: Option.Option<TraceContext>) =>
  Option.isSome(context)
    ? Effect.sync(() => void (seen.traceId = context.value.traceId))
    : Effect.map(currentSpan, (span) => {
        if (Option.isSome(span) && traceIdPattern.test(span.value.traceId)) seen.traceId = span.value.traceId
      })

/** Records the call's audit line when it ends: answered (its result or CallError), failed, or cancelled by the host. */
const auditCall = <A, E>(
  audit: AuditRecorder,
  registry: Registry,
  wire: string,
  args: JsonObject | undefined,
  seen: Seen,
  effect: Effect.Effect<A, E>,
  via: string | undefined
) => {
  const started = performance.now()
  audit.begin?.()
  return Effect.flatMap(Clock.currentTimeMillis, (at) =>
    Effect.onExit(effect, (exit) =>
      Effect.sync(() => {
        const route = registry.routeNow(wire)
        audit.record({
          at,
          durationMs: performance.now() - started,
          session: audit.session,
          client: audit.client(),
          profile: audit.profile,
          token: audit.token,
          instance: route === "core" ? "core" : route?.instance,
          tool: route === undefined || route === "core" ? wire : route.tool,
          outcome: Exit.isSuccess(exit)
            ? seen.failure === undefined
              ? outcomeOfResult(seen.result)
              : outcomeOfError(seen.failure)
            : Exit.isInterrupted(exit)
              ? "cancelled"
              : "error",
          arguments: args,
          bytesOut: Exit.isSuccess(exit) ? Buffer.byteLength(seen.json) : 0,
          traceId: seen.traceId,
          via
        })
      })
    )
  )
}

/** The params without the host's progressToken (the SDK adds its own downstream); an emptied `_meta` goes too. */
const withoutProgressToken = (params: JsonObject, meta: JsonObject): JsonObject => {
  const { progressToken: _token, ...rest } = meta
  const { _meta: _old, ...others } = params
  return Object.keys(rest).length === 0 ? others : { ...others, _meta: rest }
}

/** A call made by a core tool's code (RunCode, ADR 035): which tool, and whether the call running it is traced. */
interface Inner {
  readonly via: string
  /** The running call has spans (an exporter, or its host's trace context): the inner call's are their children. */
  readonly traced: boolean
}

/** An inner call (RunCode's) has no request of its own: its progress goes out as the running call's, once per call. */
const innerContext: RequestContext = { requestId: "inner", notify: () => {} }

/** When the host's request carries a progressToken: progress comes back under it (the SDK uses its own downstream). */
const progressFor = (meta: JsonObject | undefined, context: RequestContext) => {
  const progressToken = CallPlan.hostProgressToken(meta)
  return progressToken === undefined
    ? undefined
    : (progress: Progress) => context.notify("notifications/progress", { ...progress, progressToken })
}

/**
 * Every request a host can send after initialize, by method, for one session: a function of the session and the
 * request, whatever carries it (stdio, an HTTP session, or a stateless request's ephemeral session). `spliced`: the
 * transport splices pre-serialised results (clawtool's stdio transport, ADR 009); the SDK's HTTP transport serialises
 * objects itself. Plain tools/calls over stdio are taken earlier by the relay (see CallPath).
 */
export const handlers = (
  { registry, tracing, redact }: Services,
  session: SessionView,
  spliced: boolean,
  /** The audit log's recorder for this session; undefined when `[audit]` is off. */
  audit?: AuditRecorder
): Readonly<Record<string, Handler>> => {
  const forwardTo = registry.forward

  const listTools = Effect.gen(function* () {
    yield* registry.listWait
    const catalog = yield* registry.catalog
    session.seen.tools = catalog.host.hash
    // Spliced into the response by the transport: a 10,000-tool catalog is not re-serialised per list.
    return spliced ? rawResult(catalog.host.listJson) : { tools: catalog.tools }
  })

  /**
   * The route a core tool's code calls tools by (RunCode, ADR 035): this session's own call path, its audit lines
   * marked `via`, its spans under the running call's, one progress notification per call to the running call's host.
   */
  const routeFor = (onProgress: ((progress: Progress) => void) | undefined, inner: Inner): HostCallRoute => ({
    progress: onProgress ?? (() => {}),
    relay: (wire, args, done) => (inner.traced ? undefined : relayInner(wire, args, inner.via, done)),
    call: (wire, args) =>
      wire === inner.via
        ? Effect.fail(new CallError({ tool: wire, reason: "Denied", detail: `${wire} cannot call ${wire}` }))
        : toolCall({ name: wire, ...(args === undefined ? {} : { arguments: args }) }, innerContext, inner).pipe(
            Effect.map((result) => result as CallToolResult),
            Effect.mapError((error) => new CallError({ tool: wire, reason: "InvalidArguments", detail: error.detail }))
          )
  })

  /**
   * The host's trace context for its own call; for an inner call of a traced call, the current span's (none: the
   * host's, if any); an inner call of an untraced call has none, as its caller had none (no span, no traceparent).
   */
  const contextOf = (meta: JsonObject | undefined, inner: Inner | undefined) =>
    inner === undefined
      ? Effect.succeed(tracing.extract(meta))
      : !inner.traced
        ? Effect.succeed(Option.none<TraceContext>())
        : Effect.map(currentSpan, (span) =>
            Option.isSome(span) && traceIdPattern.test(span.value.traceId)
              ? Option.some<TraceContext>({
                  traceId: span.value.traceId,
                  spanId: span.value.spanId,
                  sampled: span.value.sampled,
                  traceState: undefined,
                  source: "meta"
                })
              : tracing.extract(meta)
          )

  /**
   * An inner call of an untraced call (RunCode's) on the line relay when a host's call of it would take it (ADR 009: a
   * listed tool of this view, of a running source, not named by `[trust] confirm`): counted in flight on its child as
   * this session's and audited as made by `via`, as the relay does a host's call. Undefined otherwise: the whole path
   * then explains every refusal (a name outside the profile, a quarantined pin, a read-only source's write tool) and
   * asks for confirmation.
   */
  const relayInner = (
    name: string,
    args: JsonObject | undefined,
    via: string,
    done: (result: CallToolResult) => void
  ): (() => void) | undefined => {
    const route = name === via ? undefined : registry.routeNow(name)
    if (route === undefined || route === "core") return undefined
    const leave = session.enter(route.instance)
    const started = performance.now()
    const call = { name, arguments: args }
    const cancel = registry.relayCall(name, args === undefined ? {} : { arguments: args }, (outcome) => {
      leave()
      const result = Either.isRight(outcome) ? outcome.right : callErrorResult(outcome.left)
      if (audit !== undefined) {
        const seen = Either.isRight(outcome) ? outcomeOfResult(result) : outcomeOfError(outcome.left)
        auditRelayed(audit, registry, call, started, seen, JSON.stringify(result), via)
      }
      done(result)
    })
    if (cancel === undefined) {
      leave()
      return undefined
    }
    audit?.begin?.()
    return () => {
      leave()
      cancel()
      if (audit !== undefined) auditRelayed(audit, registry, call, started, "cancelled", "", via)
    }
  }

  /** tools/call on the SDK path: what CallPlan sends here (progress, task, trace context, failures to explain). */
  const callTool: Handler = (params, context) => toolCall(params, context, undefined)

  /** A tools/call, the host's (`inner` undefined) or made by a core tool's code (`inner`; answered unspliced). */
  const toolCall = (
    params: unknown,
    context: RequestContext,
    inner: Inner | undefined
  ): Effect.Effect<unknown, RpcError> => {
    resumeOptimiser() // the host's first call ends the start-up (src/heap.ts)
    const parsed = CallPlan.parse(params)
    if (!parsed.ok) return Effect.fail(invalidParams(parsed.invalid))
    const { name, arguments: args, task, meta } = parsed.call
    // The host's progressToken is never sent on raw: the SDK puts its own token on the child request and
    // each progress notification goes back under the host's token.
    const { progressToken: _token, ...forwardedMeta } = meta ?? {}
    const onProgress = progressFor(meta, context)
    // What the audit learns on the way (only with [audit] on): the CallError a result stands for, the trace.
    const seen: Seen = { failure: undefined, traceId: undefined, result: undefined, json: "" }
    // The server span wraps the whole call; the child gets the client span's traceparent merged into the
    // host's _meta, and the result's _meta.traceparent names clawtool's server span (SEP-414). An inner call's context
    // is the running call's span (RunCode's), so its spans are that span's children and its child joins the trace.
    const call = Effect.flatMap(Effect.zip(registry.routeOf(name), contextOf(meta, inner)), ([route, traceContext]) =>
      tracing.toolCall({
        wire: name,
        route,
        requestId: context.requestId,
        context: traceContext,
        meta: meta === undefined ? undefined : forwardedMeta,
        nested: inner !== undefined,
        call: (_meta) => {
          const called = Effect.provideService(
            registry.call(
              name,
              { arguments: args, _meta, task },
              { onProgress, logLevel: context.logLevel, input: context.input }
            ),
            CallRoute,
            Option.some(routeFor(onProgress, { via: name, traced: Option.isSome(traceContext) || !tracing.untraced }))
          )
          return audit === undefined ? called : Effect.zipRight(traceOf(seen, traceContext), called)
        },
        recover:
          audit === undefined
            ? callErrorResult
            : (error) => {
                seen.failure = error
                return callErrorResult(error)
              }
      })
    )
    // Counted in flight on its child (the child's reverse requests are routed by it), run as this session's: clawtool's
    // own tools use its roots and state, never another session's.
    const running = session.asCaller(
      Effect.flatMap(registry.instanceOf(name), (instance) =>
        Option.isNone(instance) ? call : session.inFlight(instance.value, call)
      )
    )
    // `[trust] confirm` (ADR 029): this session's user says yes first, before the call counts in flight on its child.
    // A retry with the answers a passed-through state asked for continues a call that was already confirmed (the state
    // names that call: tool and arguments).
    const retry = context.input?.inputResponses !== undefined
    const counted = Effect.flatMap(registry.confirmation(name), (confirmation) =>
      Option.isNone(confirmation) || retry
        ? running
        : Effect.matchEffect(confirmed(session, name, args, confirmation.value, redact), {
            onFailure: (denied) => {
              seen.failure = denied // the audit records it as denied, not as an error result
              return Effect.succeed(callErrorResult(denied))
            },
            onSuccess: () => running
          })
    )
    // Serialised here, where a result too deep for the stack can still be answered (as on the relay).
    const answer = (result: unknown) => {
      const { value, json } = serialise(result, (cause) => callErrorResult(unserialisable(name, cause)))
      seen.result = value
      seen.json = json
      // A passed-through input_required keeps its own resultType: the modern stamp is put on the object, not spliced.
      return spliced && inner === undefined && !(isJsonObject(value) && value.resultType !== undefined)
        ? rawResult(json)
        : value
    }
    const audited = <A, E>(effect: Effect.Effect<A, E>) =>
      audit === undefined ? effect : auditCall(audit, registry, name, args, seen, effect, inner?.via)
    if (task === undefined) return audited(Effect.map(counted, answer))
    // A task-augmented call needs a child that declared task support: a JSON-RPC error otherwise, since the
    // host expects a CreateTaskResult, not a tool result.
    const supported = Effect.gen(function* () {
      const instance = yield* registry.instanceOf(name)
      if (Option.isNone(instance)) {
        return yield* new RpcError({
          reason: "Unsupported",
          code: RpcCode.MethodNotFound,
          detail: `tool "${name}" does not support task-augmented tools/call`
        })
      }
      yield* forwardTo.checkTaskCall(instance.value)
    })
    // The session owns the tasks it creates: the child's task-related reverse requests are routed to it.
    const owned = Effect.tap(counted, (result) => {
      const taskId = (result as { task?: { taskId?: unknown } }).task?.taskId
      const route = forwardTo.routeTask(taskId)
      return typeof taskId === "string" && Either.isRight(route)
        ? session.ownTask(route.right.instance, route.right.taskId)
        : Effect.void
    })
    return audited(Effect.zipRight(supported, Effect.map(owned, answer)))
  }

  /**
   * A forwarded method: params must be an object; the host's progressToken is replaced downstream and its progress
   * comes back under the host's token; the child's error (or the routing error) is the answer. A request routed to a
   * child counts as this session's in flight on it, as a tools/call does: what the child asks meanwhile (sampling,
   * elicitation) comes back to this session.
   */
  const forward =
    (
      method: string,
      handle: (params: JsonObject, options: ForwardOptions) => Effect.Effect<JsonObject, RpcError>
    ): Handler =>
    (raw, context) => {
      const params = raw ?? {}
      if (!isJsonObject(params)) return Effect.fail(invalidParams(`${method} params must be an object`))
      const meta = isJsonObject(params._meta) ? params._meta : undefined
      const onProgress = progressFor(meta, context)
      const forwarded = meta?.progressToken === undefined ? params : withoutProgressToken(params, meta)
      const around =
        (instance: string) =>
        <A, E>(request: Effect.Effect<A, E>) =>
          session.inFlight(instance, request)
      return handle(forwarded, { onProgress, around }).pipe(
        Effect.withSpan(method, { kind: "server", attributes: { "mcp.method.name": method } })
      )
    }

  /** Another session's task id is unknown to this one (-32602, as a child answers); see SessionView.ownsTask. */
  const owns = (taskId: unknown) =>
    Either.match(forwardTo.routeTask(taskId), {
      // Not a task id clawtool can route: the forwarded request says so itself.
      onLeft: () => Effect.succeed(true),
      onRight: (route) => session.ownsTask(route.instance, route.taskId)
    })
  const ownTask = (params: JsonObject, then: Effect.Effect<JsonObject, RpcError>) =>
    Effect.flatMap(owns(params.taskId), (owned) =>
      owned
        ? then
        : Effect.fail(
            new RpcError({
              reason: "InvalidParams",
              code: RpcCode.InvalidParams,
              detail: `no task ${JSON.stringify(params.taskId)} in this session`
            })
          )
    )
  const ownTasks = (all: Effect.Effect<{ readonly tasks: ReadonlyArray<JsonObject> }, RpcError>) =>
    Effect.flatMap(all, ({ tasks }) =>
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
      session.seen[kind] = kind === "resources" ? current.resourcesKey : current.promptsKey
      return answer(current)
    })

  /**
   * resources/(un)subscribe: recorded on the session (a restarted child is subscribed again; its updates reach the
   * session), and sent to the child when the session says so (shared children: the first subscribe, the last
   * unsubscribe). A URI no running source claims yet is forwarded as is (it waits for its source) and recorded after.
   */
  const subscription = (method: "resources/subscribe" | "resources/unsubscribe", on: boolean) =>
    forward(method, (params) => {
      const uri = params.uri
      const direct = Effect.flatMap(forwardTo.subscription(method, params), ({ result, route }) =>
        typeof uri === "string" ? Effect.as(session.subscription(uri, route, on), result) : Effect.succeed(result)
      )
      if (typeof uri !== "string") return direct
      return Effect.gen(function* () {
        const route = SurfaceRoutes.routeUri(yield* registry.surface, uri)
        if (Either.isLeft(route)) return yield* direct
        const { tell, undo } = yield* session.subscription(uri, route.right, on)
        if (!tell) return {}
        return yield* Effect.map(forwardTo.subscription(method, params), ({ result }) => result).pipe(
          Effect.tapError(() => undo)
        )
      })
    })

  // logging/setLevel: kept on the session (it filters what this host gets), and children get the level the session
  // says (the lowest any session asked for), remembered for children that start later.
  const setLevel = forward("logging/setLevel", (params) =>
    Effect.gen(function* () {
      const level = params.level
      if (typeof level !== "string" || !logLevels.includes(level)) {
        return yield* new RpcError({
          reason: "InvalidParams",
          code: RpcCode.InvalidParams,
          detail: `logging/setLevel needs params.level, one of ${logLevels.join(", ")}`
        })
      }
      const children = yield* session.setLevel(level)
      if (children !== undefined) yield* forwardTo.setLevel(children)
      return {}
    })
  )

  return {
    "tools/list": () => listTools,
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
    "prompts/list": forward("prompts/list", () => surfaceList("prompts", (current) => ({ prompts: current.prompts }))),
    "prompts/get": forward("prompts/get", (params, options) => forwardTo.getPrompt(params, options)),
    "completion/complete": forward("completion/complete", (params, options) => forwardTo.complete(params, options)),
    "tasks/get": forward("tasks/get", (params) => ownTask(params, forwardTo.getTask(params))),
    "tasks/result": forward("tasks/result", (params, options) =>
      ownTask(params, forwardTo.taskResult(params, options))
    ),
    "tasks/list": forward("tasks/list", () => ownTasks(forwardTo.listTasks)),
    "tasks/cancel": forward("tasks/cancel", (params) => ownTask(params, forwardTo.cancelTask(params))),
    "logging/setLevel": setLevel
  }
}

/** The host's roots changed: the session forgets them, and children hear it when the session says so (one host). */
export const rootsChanged = ({ registry }: Services, session: SessionView) =>
  Effect.flatMap(session.rootsChanged, (tell) => (tell ? registry.forward.rootsChanged : Effect.void))
