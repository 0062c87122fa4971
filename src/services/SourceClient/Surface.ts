import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { McpError } from "@modelcontextprotocol/sdk/types.js"
import { Cause, Effect, Exit, Option, Queue, Runtime, type Scope, SubscriptionRef } from "effect"
import * as z from "zod"
import type { CallOptions, ExitInfo, LiveSurface, SurfaceMembers } from "../../domain/Connection.js"
import { SourceError } from "../../domain/Errors.js"
import type { JsonObject, Tool } from "../../domain/Mcp.js"
import {
  isJsonObject,
  type ListKind,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  RpcCode,
  RpcError
} from "../../domain/Surface.js"
import { Cancels } from "../../transport/Cancels.js"
import { jsonRpcError, noTimeout, paginate, peerMessage } from "../../transport/SdkShape.js"
import { reverseCapability } from "../HostBridge.js"
import type { LaunchSpec } from "./LaunchSpec.js"

/**
 * Everything a child connection does beyond tools/list and tools/call: the client capabilities it declares, the
 * reverse requests it relays to the host, the notifications it hands on, its resources/prompts catalogs kept
 * current on list_changed, and a generic request for every other method. Part of SourceClient (SDK side).
 */

/** Notifications a child sends that belong to the host (progress is routed per request, list_changed re-lists). */
export const forwardedNotifications: ReadonlySet<string> = new Set([
  "notifications/message",
  "notifications/resources/updated",
  "notifications/tasks/status",
  "notifications/elicitation/complete"
])

const listChangedKind: Readonly<Record<string, ListKind>> = {
  "notifications/tools/list_changed": "tools",
  "notifications/resources/list_changed": "resources",
  "notifications/prompts/list_changed": "prompts"
}

const AnyResult = z.looseObject({})
/** Children announce changes in bursts (server-everything sends several while it registers tools). */
export const relistDebounce = "50 millis"

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** What Surface reads of a launch: the instance and its host side (a child's or a remote source's). */
export type SurfaceSpec = Pick<LaunchSpec, "instance" | "host">

export const declaredCapabilities = (spec: SurfaceSpec): Effect.Effect<JsonObject> =>
  spec.host === undefined ? Effect.succeed({}) : spec.host.clientCapabilities

/**
 * Installs the handlers on a client that is not connected yet (the SDK drops what arrives without one) and
 * returns `start`, to run once tools are listed.
 */
export const install = (options: {
  readonly client: Client
  readonly transport: Transport
  readonly spec: SurfaceSpec
  readonly declared: JsonObject
  readonly exitInfo: Effect.Effect<ExitInfo | undefined>
}) =>
  Effect.gen(function* () {
    const { client, spec, declared } = options
    const runtime = yield* Effect.runtime<never>()
    let negotiated = "unknown"
    // The SDK keeps the negotiated version private; it hands it to transports that want it (and the transport's own
    // setter still runs: an HTTP transport sends it as the MCP-Protocol-Version header).
    const own = options.transport.setProtocolVersion?.bind(options.transport)
    options.transport.setProtocolVersion = (version) => {
      negotiated = version
      own?.(version)
    }

    // Reverse requests in flight, by the child's request id: the SDK ignores a cancel of request id 0 (a falsy check
    // in Protocol._oncancel), which is every child's first request, so clawtool honours cancels itself as well. The
    // message is still handed on (false): for other ids the SDK's own cancel keeps it from answering a cancelled request.
    const reverse = new Cancels()
    const observeCancel = (message: Record<string, unknown>): boolean => {
      reverse.observe(message)
      return false
    }

    // Reverse requests: only those whose capability was declared (the SDK answers -32601 for the others).
    client.fallbackRequestHandler = async (request, extra) => {
      const capability = reverseCapability[request.method]
      if (capability === undefined || declared[capability] === undefined || spec.host === undefined) {
        throw Object.assign(new Error("Method not found"), { code: RpcCode.MethodNotFound })
      }
      const params = isJsonObject(request.params) ? request.params : undefined
      const controller = new AbortController()
      const abort = () => controller.abort(extra.signal.reason)
      extra.signal.addEventListener("abort", abort)
      reverse.set(extra.requestId, (reason) => controller.abort(reason))
      const exit = await Runtime.runPromiseExit(runtime)(spec.host.request(spec.instance, request.method, params), {
        signal: controller.signal
      }).finally(() => {
        reverse.delete(extra.requestId)
        extra.signal.removeEventListener("abort", abort)
      })
      if (Exit.isSuccess(exit)) return exit.value as never
      const failure = Cause.failureOption(exit.cause)
      throw Option.isSome(failure)
        ? jsonRpcError(failure.value)
        : Object.assign(new Error("cancelled"), { code: RpcCode.InternalError })
    }

    // list_changed before the first listing is over is already reflected in it (server-everything sends several
    // while it starts); afterwards each one schedules a debounced re-list.
    let onListChanged: (kind: ListKind) => void = () => {}
    client.fallbackNotificationHandler = async (notification) => {
      const kind = listChangedKind[notification.method]
      if (kind !== undefined) return onListChanged(kind)
      if (forwardedNotifications.has(notification.method)) {
        spec.host?.notify({
          instance: spec.instance,
          method: notification.method,
          params: isJsonObject(notification.params) ? notification.params : undefined
        })
      }
    }

    const request = (method: string, params: JsonObject | undefined, requestOptions?: CallOptions) =>
      Effect.tryPromise({
        try: (signal) =>
          client.request({ method, ...(params === undefined ? {} : { params }) } as never, AnyResult, {
            signal,
            timeout: noTimeout,
            ...(requestOptions?.onProgress === undefined
              ? {}
              : { onprogress: requestOptions.onProgress, resetTimeoutOnProgress: true }),
            // Read by a modern child's client only (MRTR passthrough, its envelope's capabilities); v1 ignores them.
            ...(requestOptions?.input === undefined ? {} : { input: requestOptions.input }),
            ...(requestOptions?.hostCapabilities === undefined
              ? {}
              : { hostCapabilities: requestOptions.hostCapabilities })
          } as never) as Promise<JsonObject>,
        catch: (cause) => cause
      }).pipe(
        Effect.catchAll((cause) =>
          Effect.flatMap(options.exitInfo, (exit) => {
            if (exit !== undefined) {
              const how =
                exit.lost !== undefined
                  ? `lost its connection`
                  : exit.signal === null
                    ? `exited with code ${exit.code}`
                    : `was killed by signal ${exit.signal}`
              return Effect.fail(
                new RpcError({
                  reason: "Transport",
                  code: RpcCode.ConnectionClosed,
                  detail: `source "${spec.instance}" ${how} during ${method}`
                })
              )
            }
            if (cause instanceof McpError) {
              return Effect.fail(
                new RpcError({
                  reason: "Peer",
                  code: cause.code,
                  detail: peerMessage(cause.message),
                  ...(cause.data === undefined ? {} : { data: cause.data })
                })
              )
            }
            return Effect.fail(
              new RpcError({
                reason: "Transport",
                code: RpcCode.InternalError,
                detail: `${method} to source "${spec.instance}": ${cause instanceof Error ? cause.message : String(cause)}`
              })
            )
          })
        )
      )

    /** Every page of a list method; `key` is the array in each page. */
    const listAll = <A>(method: string, key: string) =>
      paginate(
        (cursor) => request(method, cursor === undefined ? {} : { cursor }),
        (page) => (Array.isArray(page[key]) ? (page[key] as ReadonlyArray<A>) : [])
      ).pipe(Effect.map((items): ReadonlyArray<A> => items))

    const listError = (kind: ListKind, error: RpcError | SourceError) =>
      new SourceError({
        instance: spec.instance,
        // The failure literals predate resources/prompts; the detail names the kind.
        reason: "ListTools",
        detail: `listing ${kind} failed: ${error instanceof SourceError ? error.detail : error.detail}`
      })

    /**
     * Runs once tools are listed: lists resources, templates and prompts (only where the child has the
     * capability), then keeps them current. A failed listing keeps the last good one and sets `error`.
     */
    const start = (tools: ReadonlyArray<Tool>, listTools: Effect.Effect<ReadonlyArray<Tool>, SourceError>) =>
      Effect.gen(function* () {
        const capabilities = (client.getServerCapabilities() ?? {}) as JsonObject
        const resources = isJsonObject(capabilities.resources) ? capabilities.resources : undefined

        const listResources = Effect.all(
          [
            listAll<Resource>("resources/list", "resources"),
            // A server may serve resources without templates: -32601 there is an empty list, not an error.
            listAll<ResourceTemplate>("resources/templates/list", "resourceTemplates").pipe(
              Effect.catchIf(
                (error) => error.code === RpcCode.MethodNotFound,
                () => Effect.succeed([] as ReadonlyArray<ResourceTemplate>)
              )
            )
          ],
          { concurrency: 2 }
        )
        const listPrompts = listAll<Prompt>("prompts/list", "prompts")

        const relist = (kinds: ReadonlySet<ListKind>, current: LiveSurface) =>
          Effect.gen(function* () {
            const [nextTools, nextResources, nextPrompts] = yield* Effect.all(
              [
                kinds.has("tools") ? Effect.either(listTools) : Effect.succeed(undefined),
                kinds.has("resources") && resources !== undefined
                  ? Effect.either(listResources)
                  : Effect.succeed(undefined),
                kinds.has("prompts") && capabilities.prompts !== undefined
                  ? Effect.either(listPrompts)
                  : Effect.succeed(undefined)
              ],
              { concurrency: "unbounded" }
            )
            let error: SourceError | undefined
            let next: LiveSurface = current
            if (nextTools !== undefined) {
              if (nextTools._tag === "Left") error = listError("tools", nextTools.left)
              else if (!same(nextTools.right, current.tools)) next = { ...next, tools: nextTools.right }
            }
            if (nextResources !== undefined) {
              if (nextResources._tag === "Left") error = listError("resources", nextResources.left)
              else {
                const [list, templates] = nextResources.right
                if (!same(list, current.resources)) next = { ...next, resources: list }
                if (!same(templates, current.resourceTemplates)) next = { ...next, resourceTemplates: templates }
              }
            }
            if (nextPrompts !== undefined) {
              if (nextPrompts._tag === "Left") error = listError("prompts", nextPrompts.left)
              else if (!same(nextPrompts.right, current.prompts)) next = { ...next, prompts: nextPrompts.right }
            }
            return next === current && error === current.error ? current : { ...next, error }
          })

        const empty: LiveSurface = { tools, resources: [], resourceTemplates: [], prompts: [], error: undefined }
        const first = yield* relist(new Set<ListKind>(["resources", "prompts"]), empty)
        const live = yield* SubscriptionRef.make(first)

        const wake = yield* Queue.sliding<void>(1)
        const dirty = new Set<ListKind>()
        onListChanged = (kind) => {
          dirty.add(kind)
          wake.unsafeOffer(undefined)
        }
        yield* Effect.gen(function* () {
          yield* Queue.take(wake)
          yield* Effect.sleep(relistDebounce)
          const kinds = new Set(dirty)
          dirty.clear()
          const current = yield* SubscriptionRef.get(live)
          const next = yield* relist(kinds, current)
          if (next !== current) yield* SubscriptionRef.set(live, next)
          if (next.error !== undefined) yield* Effect.logWarning(next.error.message)
        }).pipe(
          Effect.forever,
          Effect.withSpan("SourceClient.relist", { attributes: { "clawtool.instance": spec.instance } }),
          Effect.forkScoped
        )

        // What the host set before this child (re)started: its log level and its resource subscriptions.
        const host = spec.host
        const restoreHostState =
          host === undefined
            ? Effect.void
            : Effect.gen(function* () {
                const level = yield* host.logLevel
                if (level !== undefined && capabilities.logging !== undefined) {
                  yield* Effect.ignore(request("logging/setLevel", { level }))
                }
                if (resources?.subscribe === true) {
                  for (const uri of yield* host.subscriptions(spec.instance)) {
                    yield* Effect.ignore(request("resources/subscribe", { uri }))
                  }
                }
              })
        yield* Effect.forkScoped(restoreHostState)

        return {
          clientCapabilities: declared,
          restoreHostState,
          surface: SubscriptionRef.get(live),
          surfaceChanges: live.changes,
          request,
          notify: (method: string, params?: JsonObject) =>
            Effect.promise(() =>
              client.notification({ method, ...(params === undefined ? {} : { params }) } as never).catch(() => {})
            )
        } satisfies SurfaceMembers
      })

    return { start, protocolVersion: () => negotiated, observeCancel } as const
  }) as Effect.Effect<
    {
      /** Offered each message from the child (never takes one): cancels of reverse requests, id 0 included. */
      readonly observeCancel: (message: Record<string, unknown>) => boolean
      readonly start: (
        tools: ReadonlyArray<Tool>,
        listTools: Effect.Effect<ReadonlyArray<Tool>, SourceError>
      ) => Effect.Effect<SurfaceMembers, never, Scope.Scope>
      readonly protocolVersion: () => string
    },
    never,
    never
  >
