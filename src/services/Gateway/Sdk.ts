import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import {
  ErrorCode,
  InitializeRequestSchema,
  McpError,
  RootsListChangedNotificationSchema,
  type ServerNotification
} from "@modelcontextprotocol/sdk/types.js"
import { Deferred, Effect, Either, Runtime, type Scope } from "effect"
import * as z from "zod"
import type { JsonObject } from "../../domain/Mcp.js"
import { RpcError } from "../../domain/Surface.js"
import { Cancels } from "../../transport/Cancels.js"
import { type RawHandler, serverInternals } from "../../transport/Sdk.js"
import { jsonRpcError, noTimeout, peerMessage } from "../../transport/SdkShape.js"
import { unvalidated } from "../../transport/Unvalidated.js"
import * as Version from "../../version.js"
import type { Handler } from "./Handlers.js"

/**
 * The Gateway's SDK adapter, the one file of the host edge that touches the SDK: its low-level `Server` (version
 * negotiation, JSON-RPC framing, cancels, the host's own requests), fed by the per-request core (Handlers.ts) and
 * turned into plain Effects for the rest (ADR 002).
 */

export type { Transport }

// Loose request schemas: params are checked by the handlers with precise JSON-RPC errors (-32602), and results are
// relayed without re-validating them against schemas the gateway does not own (ADR-002).
const AnyRequest = (method: string) => z.object({ method: z.literal(method), params: z.unknown().optional() })
const AnyResult = z.looseObject({})

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

export type ListKind = "tools" | "resources" | "prompts"

/** What one session's handlers are, for the edge to serve. */
export interface EdgeHooks {
  /** Why this clawtool refuses to initialize (a clawtool above serves the same config, ADR 013); undefined: it serves. */
  readonly refusal: () => Error | undefined
  /** The answer to initialize is out. */
  readonly answered: Effect.Effect<void>
  /** The host sent notifications/initialized with these client capabilities. */
  readonly initialized: (capabilities: JsonObject) => Effect.Effect<void>
  /** Every other request, by method. */
  readonly requests: Readonly<Record<string, Handler>>
  /** The host sent notifications/roots/list_changed. */
  readonly rootsChanged: Effect.Effect<void>
}

/** One host connection's SDK Server, as plain Effects. */
export const makeEdge = (runtime: Runtime.Runtime<never>) => {
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

  /** Runs a handler: a failure is answered with its own JSON-RPC code and message. */
  const raw =
    (handler: Handler): RawHandler =>
    (request, extra) =>
      Runtime.runPromise(runtime)(
        Effect.either(
          handler(request.params, {
            requestId: extra.requestId,
            notify: (method, params) => void extra.sendNotification({ method, params }).catch(() => {})
          })
        ),
        { signal: extra.signal }
      ).then((result) => {
        if (Either.isLeft(result)) throw jsonRpcError(result.left)
        return result.right
      })

  /** A request to the host (a child's reverse request); interrupting it cancels it there. */
  const request = (method: string, params: JsonObject | undefined) =>
    Effect.tryPromise({
      try: (signal) =>
        server.request(
          { method, ...(params === undefined ? {} : { params }) } as never,
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
    })

  const notices: Record<ListKind, () => Promise<void>> = {
    tools: () => server.sendToolListChanged(),
    resources: () => server.sendResourceListChanged(),
    prompts: () => server.sendPromptListChanged()
  }

  return {
    cancels,
    request,
    /** A notification to the host (lost with the connection, never failing). */
    notify: (notification: { readonly method: string; readonly params: JsonObject }) =>
      Effect.promise(() => server.notification(notification as ServerNotification).catch(() => {})),
    listChanged: (kind: ListKind) => Effect.promise(() => notices[kind]().catch(() => {})),

    /** Serves `hooks` on this connection (before `connect`). */
    handle: (hooks: EdgeHooks) => {
      /** The SDK negotiates the version (the host's if supported, else the latest); tasks only with 2025-11-25. */
      const initialize: RawHandler = async (message) => {
        const refusal = hooks.refusal()
        if (refusal !== undefined) throw refusal
        const result = await sdk.initialize(message)
        // After this answer is written (the next turn of the event loop), the children spawn.
        setImmediate(() => Runtime.runSync(runtime)(hooks.answered))
        if (result.protocolVersion >= tasksSince) return result
        const { tasks: _tasks, ...capabilities } = result.capabilities
        return { ...result, capabilities }
      }
      // initialize keeps the SDK's own request schema (a malformed initialize is refused as before).
      sdk.setRawRequestHandler(InitializeRequestSchema, initialize)
      for (const [method, handler] of Object.entries(hooks.requests)) {
        sdk.setRawRequestHandler(AnyRequest(method), raw(handler))
      }
      // Children wait for this to learn what to declare (ADR-005).
      server.oninitialized = () =>
        Runtime.runFork(runtime)(hooks.initialized((server.getClientCapabilities() ?? {}) as JsonObject))
      server.setNotificationHandler(RootsListChangedNotificationSchema, () =>
        Runtime.runPromise(runtime)(hooks.rootsChanged)
      )
    },

    /** Connects over `transport` until the scope closes; then the SDK aborts the handlers still running. */
    connect: (transport: Transport): Effect.Effect<{ readonly closed: Effect.Effect<void> }, never, Scope.Scope> =>
      Effect.gen(function* () {
        const closed = yield* Deferred.make<void>()
        server.onclose = () => Deferred.unsafeDone(closed, Effect.void)
        yield* Effect.acquireRelease(
          Effect.promise(() => server.connect(transport)),
          () => Effect.promise(() => server.close().catch(() => {}))
        )
        return { closed: Deferred.await(closed) }
      }),
    server
  } as const
}

export type HostEdge = ReturnType<typeof makeEdge>
