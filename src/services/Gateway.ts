import { Protocol } from "@modelcontextprotocol/sdk/shared/protocol.js"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { ErrorCode, McpError, type ServerNotification, type ServerRequest } from "@modelcontextprotocol/sdk/types.js"
import { Deferred, Effect, Runtime, Stream } from "effect"
import * as z from "zod"
import type { CallError } from "../domain/Errors.js"
import { errorResult, type CallToolResult, type JsonObject } from "../domain/Mcp.js"
import { StdioServerTransport } from "../transport/StdioServerTransport.js"
import * as Version from "../version.js"
import { Registry } from "./Registry.js"
import type { Progress } from "./SourceClient.js"
import { Tracing } from "./Tracing.js"

// Loose request schemas: params are checked here with precise JSON-RPC errors (-32602), and results are
// relayed without re-validating them against schemas the gateway does not own (ADR-002).
const ListToolsRequest = z.object({ method: z.literal("tools/list"), params: z.unknown().optional() })
const CallToolRequest = z.object({ method: z.literal("tools/call"), params: z.unknown().optional() })

type Handler = (
  request: { method: string; params?: unknown },
  extra: {
    signal: AbortSignal
    requestId: string | number
    sendNotification: (notification: ServerNotification) => Promise<void>
  }
) => Promise<unknown>

/** Registers on the base Protocol, skipping Server's result re-validation wrapper for tools/call. */
const setRawRequestHandler = (server: Server, schema: z.ZodObject, handler: Handler) =>
  (Protocol.prototype.setRequestHandler as (this: Server, schema: unknown, handler: Handler) => void).call(
    server,
    schema,
    handler
  )

const isPlainObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const invalidParams = (message: string) => new McpError(ErrorCode.InvalidParams, message)

/** A call that cannot be delivered becomes an isError result the agent can read, with the structure in `_meta`. */
const callErrorResult = (error: CallError): CallToolResult =>
  errorResult(error.reason === "Child" ? `${error.tool} failed: ${error.detail}` : error.detail, {
    clawtool: {
      error: {
        reason: error.reason,
        retryable: error.retryable,
        ...(error.code === undefined ? {} : { code: error.code })
      }
    }
  })

/**
 * The MCP edge facing the host: the SDK's low-level Server over clawtool's stdio transport. `initialize` is
 * answered at once; `tools/list` waits until every source has settled so hosts that never refresh still
 * see the whole catalog.
 */
export class Gateway extends Effect.Service<Gateway>()("clawtool/Gateway", {
  dependencies: [Registry.Default, Tracing.Default],
  scoped: Effect.gen(function* () {
    const registry = yield* Registry
    const tracing = yield* Tracing
    const runtime = yield* Effect.runtime<never>()
    const run = <A, E>(effect: Effect.Effect<A, E>, signal: AbortSignal) =>
      Runtime.runPromise(runtime)(effect, { signal })

    const server = new Server(
      { name: Version.name, version: Version.version },
      { capabilities: { tools: { listChanged: true } } }
    )
    server.onerror = (error) => Runtime.runSync(runtime)(Effect.logDebug(`mcp: ${error.message}`))

    const listTools = Effect.gen(function* () {
      yield* registry.awaitSettled
      return { tools: yield* registry.list() }
    })

    setRawRequestHandler(server, ListToolsRequest, (_request, extra) => run(listTools, extra.signal))

    setRawRequestHandler(server, CallToolRequest, (request, extra) => {
      const params = request.params
      if (!isPlainObject(params) || typeof params.name !== "string") {
        return Promise.reject(invalidParams("tools/call needs params.name (a string)"))
      }
      const args = params.arguments
      if (args !== undefined && !isPlainObject(args)) {
        return Promise.reject(invalidParams(`tools/call arguments for "${params.name}" must be an object`))
      }
      const meta = isPlainObject(params._meta) ? params._meta : undefined
      // The host's progressToken is never sent on raw: the SDK puts its own token on the child request and
      // each progress notification goes back under the host's token.
      const { progressToken, ...forwardedMeta } = meta ?? {}
      const hasProgress = typeof progressToken === "string" || typeof progressToken === "number"
      const onProgress = hasProgress
        ? (progress: Progress) =>
            void extra
              .sendNotification({
                method: "notifications/progress",
                params: { ...progress, progressToken }
              })
              .catch(() => {})
        : undefined
      // The server span wraps the whole call; the child gets the client span's traceparent merged into the
      // host's _meta, and the result's _meta.traceparent names clawtool's server span (SEP-414).
      const name = params.name
      const call = tracing.toolCall({
        wire: name,
        requestId: extra.requestId,
        context: tracing.extract(meta),
        meta: meta === undefined ? undefined : forwardedMeta,
        call: (_meta) => registry.call(name, { arguments: args, _meta }, { onProgress }),
        recover: callErrorResult
      })
      return run(call, extra.signal)
    })

    // list_changed: one notice per settled change of the catalog the host sees.
    const notifyChanges = Effect.gen(function* () {
      yield* registry.awaitSettled
      let last = (yield* registry.list()).map((tool) => tool.name).join("\n")
      yield* registry.changes.pipe(
        Stream.debounce("50 millis"),
        Stream.runForEach(() =>
          Effect.gen(function* () {
            const now = (yield* registry.list()).map((tool) => tool.name).join("\n")
            if (now === last) return
            last = now
            yield* Effect.promise(() => server.sendToolListChanged().catch(() => {}))
          })
        )
      )
    })

    /** Serves until the host closes stdin (or the fiber is interrupted by SIGINT/SIGTERM). */
    const serve = Effect.gen(function* () {
      const closed = yield* Deferred.make<void>()
      const transport = new StdioServerTransport()
      server.onclose = () => Deferred.unsafeDone(closed, Effect.void)
      yield* Effect.acquireRelease(
        Effect.promise(() => server.connect(transport)),
        () => Effect.promise(() => server.close().catch(() => {}))
      )
      yield* Effect.forkScoped(notifyChanges)
      yield* Deferred.await(closed)
      yield* Effect.logDebug("stdin closed: shutting down")
    }).pipe(Effect.scoped, Effect.withSpan("Gateway.serve"))

    return { serve, server } as const
  })
}) {}

export type { ServerNotification, ServerRequest }
