import { Effect, type Either, Option } from "effect"
import type { CallOptions, Connection } from "../../domain/Connection.js"
import type { CallError } from "../../domain/Errors.js"
import type { JsonObject } from "../../domain/Mcp.js"
import { isJsonObject, RpcCode, RpcError } from "../../domain/Surface.js"
import { paginate } from "../../transport/SdkShape.js"
import type { ChildNotification } from "../HostBridge.js"
import type { Sources } from "../Sources.js"
import type * as NameBudget from "./NameBudget.js"
import * as S from "./Surface.js"

/**
 * Everything the host asks beyond tools, routed to the owning instance and mapped back (names, URIs, task ids):
 * resources, templates, prompts, completions, logging, roots notices and tasks. Per-instance capabilities are
 * honoured: a child is never sent a method it did not declare; the host gets -32601 naming the source instead.
 */

const fromCallError = (error: CallError) =>
  new RpcError({
    reason: error.reason === "NoSuchInstance" ? "NoRoute" : "NotRunning",
    code: error.reason === "NoSuchInstance" ? RpcCode.InvalidParams : RpcCode.InternalError,
    detail: error.detail,
    data: { clawtool: { reason: error.reason, retryable: error.retryable } }
  })

const unsupported = (instance: string, what: string) =>
  new RpcError({
    reason: "Unsupported",
    code: RpcCode.MethodNotFound,
    detail: `source "${instance}" does not support ${what}`
  })

const invalid = (detail: string) => new RpcError({ reason: "InvalidParams", code: RpcCode.InvalidParams, detail })

const stringParam = (params: JsonObject, key: string, method: string) =>
  typeof params[key] === "string"
    ? Effect.succeed(params[key] as string)
    : Effect.fail(invalid(`${method} needs params.${key} (a string)`))

const objectAt = (value: unknown, ...path: ReadonlyArray<string>): JsonObject | undefined => {
  let current: unknown = value
  for (const key of path) {
    if (!isJsonObject(current)) return undefined
    current = current[key]
  }
  return isJsonObject(current) ? current : undefined
}

/** The capability checks, by what each method needs of the child. */
const has = {
  resources: (c: Connection) => objectAt(c.capabilities, "resources") !== undefined,
  subscribe: (c: Connection) => objectAt(c.capabilities, "resources")?.subscribe === true,
  prompts: (c: Connection) => objectAt(c.capabilities, "prompts") !== undefined,
  /**
   * A modern child is asked even when its server/discover does not name completions (ADR 033): each request of that era
   * stands alone, one it does not serve is a plain -32601, and some serve completion/complete without announcing it
   * (the conformance suite's example server answers a modern client with a stateless server that does).
   */
  completions: (c: Connection) => c.era.era === "modern" || objectAt(c.capabilities, "completions") !== undefined,
  logging: (c: Connection) => objectAt(c.capabilities, "logging") !== undefined,
  tasks: (c: Connection) => objectAt(c.capabilities, "tasks") !== undefined,
  taskList: (c: Connection) => objectAt(c.capabilities, "tasks", "list") !== undefined,
  taskCancel: (c: Connection) => objectAt(c.capabilities, "tasks", "cancel") !== undefined,
  taskToolCall: (c: Connection) => objectAt(c.capabilities, "tasks", "requests", "tools", "call") !== undefined,
  rootsNotice: (c: Connection) => objectAt(c.clientCapabilities, "roots")?.listChanged === true
}

/**
 * What a forwarded request carries besides progress: `around` wraps the request to the child it routes to, once the
 * route is known (the daemon counts it as the session's request in flight there, so the child's reverse requests come
 * back to that session).
 */
export interface ForwardOptions extends CallOptions {
  readonly around?: ((instance: string) => <A, E>(request: Effect.Effect<A, E>) => Effect.Effect<A, E>) | undefined
}

/**
 * The request to the child `instance`, wrapped as `options.around` says; a retry whose passed-through state another
 * instance issued (the name or URI is routed elsewhere now) is refused: that child's state means nothing here.
 */
const toChild = <A>(instance: string, options: ForwardOptions | undefined, request: Effect.Effect<A, RpcError>) => {
  const issuer = options?.input?.issuer
  if (issuer !== undefined && issuer !== instance) {
    return Effect.fail(invalid(`requestState was issued by source ${issuer}, which no longer serves this request`))
  }
  return options?.around === undefined ? request : options.around(instance)(request)
}

export const make = (
  sources: Sources,
  surface: Effect.Effect<S.Surface>,
  /** Each instance's wire-name prefix (task ids carry it); default: the instance names. */
  prefixes?: NameBudget.Prefixes
) => {
  const connection = (instance: string) => Effect.mapError(sources.connection(instance), fromCallError)

  /**
   * The running child for `instance`, failing with -32601 when it lacks the capability `what` needs. An instance still
   * starting is waited for first, as tools/call waits (bounded by its startup_timeout); only one that is not running
   * after that is refused.
   */
  const capable = (instance: string, check: (c: Connection) => boolean, what: string) =>
    Effect.zipRight(
      sources.connectionNow(instance) === undefined ? sources.awaitInstance(instance) : Effect.void,
      Effect.flatMap(connection(instance), (c) =>
        check(c) ? Effect.succeed(c) : Effect.fail(unsupported(instance, what))
      )
    )

  /**
   * Routes a URI on the surface. One no running source claims yet waits first: a qualified one for its instance, any
   * other for every source's first start (as tools/call waits for a name it does not know), then is routed or refused.
   */
  const routed = (uri: string, route: (current: S.Surface, uri: string) => Either.Either<S.UriRoute, RpcError>) =>
    Effect.gen(function* () {
      if (!S.claims(yield* surface, uri)) {
        yield* Option.match(S.unqualify(uri), {
          onSome: ({ instance }) => sources.awaitInstance(instance),
          onNone: () => sources.awaitSettled
        })
      }
      return yield* route(yield* surface, uri)
    })

  const readResource = (params: JsonObject, options?: ForwardOptions) =>
    Effect.gen(function* () {
      const uri = yield* stringParam(params, "uri", "resources/read")
      const route = yield* routed(uri, S.routeUri)
      const child = yield* capable(route.instance, has.resources, "resources")
      const result = yield* toChild(
        route.instance,
        options,
        child.request("resources/read", { ...params, uri: route.uri }, options)
      )
      return S.mapReadResult(yield* surface, route.instance, result)
    })

  /** resources/subscribe and unsubscribe; the route is returned so the Gateway can re-subscribe after a restart. */
  const subscription = (method: "resources/subscribe" | "resources/unsubscribe", params: JsonObject) =>
    Effect.gen(function* () {
      const uri = yield* stringParam(params, "uri", method)
      const route = yield* routed(uri, S.routeUri)
      const child = yield* capable(route.instance, has.subscribe, "resource subscriptions")
      const result = yield* child.request(method, { ...params, uri: route.uri })
      return { result, route }
    })

  const getPrompt = (params: JsonObject, options?: ForwardOptions) =>
    Effect.gen(function* () {
      const wire = yield* stringParam(params, "name", "prompts/get")
      const route = yield* S.routePrompt(yield* surface, wire)
      const child = yield* capable(route.instance, has.prompts, "prompts")
      const result = yield* toChild(
        route.instance,
        options,
        child.request("prompts/get", { ...params, name: route.name }, options)
      )
      return S.mapPromptResult(yield* surface, route.instance, result)
    })

  const complete = (params: JsonObject, options?: ForwardOptions) =>
    Effect.gen(function* () {
      const ref = params.ref
      if (!isJsonObject(ref)) return yield* invalid("completion/complete needs params.ref (an object)")
      if (ref.type === "ref/prompt") {
        const route = yield* S.routePrompt(
          yield* surface,
          yield* stringParam(ref, "name", "completion/complete ref/prompt")
        )
        const child = yield* capable(route.instance, has.completions, "completions")
        return yield* toChild(
          route.instance,
          options,
          child.request("completion/complete", { ...params, ref: { ...ref, name: route.name } }, options)
        )
      }
      if (ref.type === "ref/resource") {
        const uri = yield* stringParam(ref, "uri", "completion/complete ref/resource")
        const route = yield* routed(uri, S.routeTemplate)
        const child = yield* capable(route.instance, has.completions, "completions")
        return yield* toChild(
          route.instance,
          options,
          child.request("completion/complete", { ...params, ref: { ...ref, uri: route.uri } }, options)
        )
      }
      return yield* invalid(`completion/complete: unknown ref type ${JSON.stringify(ref.type)}`)
    })

  /** logging/setLevel to every running child that has logging; one child's failure does not fail the host's call. */
  const setLevel = (level: string) =>
    Effect.flatMap(sources.running, (running) =>
      Effect.forEach(
        running.filter(has.logging),
        (child) =>
          child
            .request("logging/setLevel", { level })
            .pipe(
              Effect.catchAll((error) => Effect.logDebug(`logging/setLevel to ${child.instance}: ${error.detail}`))
            ),
        { concurrency: "unbounded", discard: true }
      )
    )

  /** The host's roots changed: tell every child that declared interest (clawtool declared roots.listChanged to it). */
  const rootsChanged = Effect.flatMap(sources.running, (running) =>
    Effect.forEach(running.filter(has.rootsNotice), (child) => child.notify("notifications/roots/list_changed"), {
      concurrency: "unbounded",
      discard: true
    })
  )

  // === tasks ==========================================================================================================

  const taskRoute = (params: JsonObject, check: (c: Connection) => boolean, what: string) =>
    Effect.gen(function* () {
      const route = yield* S.routeTaskId(params.taskId, prefixes)
      const child = yield* capable(route.instance, check, what)
      return { child, instance: route.instance, params: { ...params, taskId: route.taskId } }
    })

  const getTask = (params: JsonObject) =>
    Effect.gen(function* () {
      const { child, instance, params: forwarded } = yield* taskRoute(params, has.tasks, "tasks")
      return S.mapTask(instance, yield* child.request("tasks/get", forwarded), prefixes)
    })

  const cancelTask = (params: JsonObject) =>
    Effect.gen(function* () {
      const { child, instance, params: forwarded } = yield* taskRoute(params, has.taskCancel, "tasks/cancel")
      return S.mapTask(instance, yield* child.request("tasks/cancel", forwarded), prefixes)
    })

  /** tasks/result blocks until the task ends; the child may send reverse requests meanwhile (input_required). */
  const taskResult = (params: JsonObject, options?: CallOptions) =>
    Effect.gen(function* () {
      const { child, instance, params: forwarded } = yield* taskRoute(params, has.tasks, "tasks")
      const result = yield* child.request("tasks/result", forwarded, options)
      return mapResult(yield* surface, instance, result)
    })

  /** Every running child's tasks (all pages) in one page; a child that fails to list is left out, not fatal. */
  const listTasks = Effect.flatMap(sources.running, (running) =>
    Effect.map(
      Effect.forEach(
        running.filter(has.taskList),
        (child) =>
          paginate(
            (cursor) => child.request("tasks/list", cursor === undefined ? {} : { cursor }),
            (page) =>
              Array.isArray(page.tasks)
                ? page.tasks.filter(isJsonObject).map((task) => S.mapTask(child.instance, task, prefixes))
                : []
          ).pipe(
            Effect.catchAll((error) =>
              Effect.as(Effect.logDebug(`tasks/list on ${child.instance}: ${error.detail}`), [] as Array<JsonObject>)
            )
          ),
        { concurrency: "unbounded" }
      ),
      (lists) => ({ tasks: lists.flat() })
    )
  )

  /** A task-augmented tools/call needs a child that declared tasks.requests.tools.call. */
  const checkTaskCall = (instance: string) =>
    Effect.asVoid(capable(instance, has.taskToolCall, "task-augmented tools/call"))

  // === results and notifications ======================================================================================

  /** A tools/call or tasks/result result: host task ids, and clashing URIs in content qualified. */
  const mapResult = <A extends JsonObject>(current: S.Surface, instance: string, result: A): A => {
    const content = S.mapToolResult(current, instance, result)
    const task = isJsonObject(content.task) ? { task: S.mapTask(instance, content.task, prefixes) } : {}
    const meta =
      content._meta === undefined
        ? {}
        : { _meta: S.mapRelatedTask(content._meta, (taskId) => S.hostTaskId(instance, taskId, prefixes)) }
    return { ...content, ...task, ...meta } as A
  }

  const mapCallResult = <A extends JsonObject>(instance: string, result: A) =>
    Effect.map(surface, (current) => mapResult(current, instance, result))

  /** Whether mapCallResult could change `result`: a task, a related task, or resource URIs in its content. */
  const callResultNeedsMapping = (result: JsonObject): boolean =>
    result.task !== undefined ||
    (isJsonObject(result._meta) && result._meta[S.relatedTaskKey] !== undefined) ||
    (Array.isArray(result.content) &&
      result.content.some((item) => isJsonObject(item) && (item.type === "resource_link" || item.type === "resource")))

  /** A child's notification as the host gets it, or None when it is not for the host. */
  const mapNotification = (notification: ChildNotification) =>
    Effect.map(surface, (current): Option.Option<{ method: string; params: JsonObject }> => {
      const { instance, method } = notification
      const params = notification.params ?? {}
      switch (method) {
        case "notifications/message": {
          // The instance is the logger the host sees; the child's own logger stays in _meta.
          const own =
            typeof params.logger === "string"
              ? { _meta: { ...objectAt(params, "_meta"), clawtool: { logger: params.logger } } }
              : {}
          return Option.some({ method, params: { ...params, logger: instance, ...own } })
        }
        case "notifications/resources/updated":
          return typeof params.uri === "string"
            ? Option.some({ method, params: { ...params, uri: S.hostUri(current, instance, params.uri) } })
            : Option.none()
        case "notifications/tasks/status":
          return Option.some({ method, params: S.mapTask(instance, params, prefixes) })
        case "notifications/elicitation/complete":
          return Option.some({ method, params })
        default:
          return Option.none()
      }
    })

  /** A reverse request's params as the host gets them: a related-task id is the host's. */
  const mapReverseParams = (instance: string, params: JsonObject | undefined): JsonObject | undefined =>
    params?._meta === undefined
      ? params
      : { ...params, _meta: S.mapRelatedTask(params._meta, (taskId) => S.hostTaskId(instance, taskId, prefixes)) }

  /** A host task id → its instance and the child's own id, under the live prefixes. */
  const routeTask = (taskId: unknown) => S.routeTaskId(taskId, prefixes)

  return {
    routeTask,
    readResource,
    subscription,
    getPrompt,
    complete,
    setLevel,
    rootsChanged,
    getTask,
    cancelTask,
    taskResult,
    listTasks,
    checkTaskCall,
    mapCallResult,
    callResultNeedsMapping,
    mapNotification,
    mapReverseParams
  } as const
}

export type Forward = ReturnType<typeof make>
