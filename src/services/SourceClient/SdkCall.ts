import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js"
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import * as z from "zod"
import * as CallPlan from "../../domain/CallPlan.js"
import type { CallOptions } from "../../domain/Connection.js"
import type { CallToolRequest, CallToolResult, JsonObject, Tool } from "../../domain/Mcp.js"
import { noTimeout, paginate } from "../../transport/SdkShape.js"

// Loose: the result is relayed as the child sent it (ADR 002).
const AnyResult = z.looseObject({})
const ignoreProgress = () => {}

/**
 * One tools/call on the SDK path, for a stdio child and a remote server alike; fails with what the SDK threw (the
 * caller words it). The SDK resets a timeout on progress only when it asked for progress (onprogress set), so with a
 * call_timeout it asks even when the host did not, and drops what comes back.
 */
export const sdkToolCall = (
  client: Client,
  request: CallToolRequest,
  options: CallOptions | undefined,
  timeoutMs: number | undefined
): Effect.Effect<CallToolResult, unknown> => {
  const asked = CallPlan.childProgress(options?.onProgress !== undefined, timeoutMs)
  const onprogress = asked === "forHost" ? options?.onProgress : asked === "keepAlive" ? ignoreProgress : undefined
  return Effect.tryPromise({
    try: (signal) =>
      client.request({ method: "tools/call", params: request }, AnyResult, {
        signal,
        timeout: timeoutMs ?? noTimeout,
        ...(onprogress === undefined ? {} : { onprogress, resetTimeoutOnProgress: true }),
        // Read by a modern child's client only (its envelope's log level and capabilities; MRTR passthrough, ADR 033); v1
        // ignores them.
        ...(options?.logLevel === undefined ? {} : { logLevel: options.logLevel }),
        ...(options?.input === undefined ? {} : { input: options.input }),
        ...(options?.hostCapabilities === undefined ? {} : { hostCapabilities: options.hostCapabilities })
      } as RequestOptions) as Promise<CallToolResult>,
    catch: (cause) => cause
  })
}

const ListToolsResult = z.looseObject({
  tools: z.array(z.looseObject({ name: z.string(), inputSchema: z.looseObject({}) })),
  nextCursor: z.string().optional()
})

/** Every page of the child's tools/list (bounded by maxPages); a failure is mapped by `onError`. */
export const sdkListTools = <E>(client: Client, instance: string, onError: (cause: unknown) => E) =>
  paginate(
    (cursor) =>
      Effect.tryPromise({
        try: (signal) =>
          client.request({ method: "tools/list", params: cursor === undefined ? {} : { cursor } }, ListToolsResult, {
            signal,
            timeout: noTimeout
          }),
        catch: onError
      }),
    (page) => page.tools as ReadonlyArray<Tool>
  ).pipe(
    Effect.map((tools): ReadonlyArray<Tool> => tools),
    Effect.withSpan("SourceClient.listTools", { attributes: { "clawtool.instance": instance } })
  )

/** The SDK's own timeout of a request sent with `timeoutMs` (call_timeout), not the peer's -32001. */
export const isOwnTimeout = (cause: unknown, timeoutMs: number) =>
  cause instanceof McpError &&
  cause.code === ErrorCode.RequestTimeout &&
  (cause.data as { timeout?: unknown } | undefined)?.timeout === timeoutMs

/** What the server said of itself in initialize, as a Connection reports it. */
export const serverOf = (client: Client) => {
  const server = client.getServerVersion()
  return {
    serverInfo: { name: server?.name ?? "unknown", version: server?.version ?? "unknown" },
    capabilities: (client.getServerCapabilities() ?? {}) as JsonObject
  }
}
