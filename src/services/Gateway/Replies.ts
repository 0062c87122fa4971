import { CallError } from "../../domain/Errors.js"
import { errorResult, type CallToolResult } from "../../domain/Mcp.js"
import { RpcCode, RpcError } from "../../domain/Surface.js"
import { mcpErrorText } from "../../transport/SdkShape.js"
import { rawResult } from "../../transport/StdioServerTransport.js"

/** How the Gateway answers: tool results, JSON-RPC errors, and results as JSON text that never throws. */

/** Params the Gateway cannot read: -32602, worded as the SDK's McpError words it (the host sees the same text as ever). */
export const invalidParams = (message: string) =>
  new RpcError({
    reason: "InvalidParams",
    code: RpcCode.InvalidParams,
    detail: mcpErrorText(RpcCode.InvalidParams, message)
  })

/** A call that cannot be delivered becomes an isError result the agent can read, with the structure in `_meta`. */
export const callErrorResult = (error: CallError): CallToolResult =>
  errorResult(error.reason === "Child" ? `${error.tool} failed: ${error.detail}` : error.detail, {
    clawtool: {
      error: {
        reason: error.reason,
        retryable: error.retryable,
        ...(error.code === undefined ? {} : { code: error.code })
      }
    }
  })

const describe = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause))

/** A source's result that cannot be written to the host (too deep for the stack, a cycle): the same on both paths. */
export const unserialisable = (tool: string, cause: unknown) =>
  new CallError({
    tool,
    reason: "Transport",
    detail: `${tool}: the source's result cannot be serialised for the host (${describe(cause)})`
  })

/**
 * The result as JSON text the transport splices in (so it is stringified once, here, where a failure can still be
 * answered): a value that cannot be serialised is answered with `fallback` instead of leaving the host without reply.
 */
export const serialised = (result: unknown, fallback: (cause: unknown) => unknown): Record<string, never> => {
  try {
    return rawResult(JSON.stringify(result))
  } catch (cause) {
    return rawResult(JSON.stringify(fallback(cause)))
  }
}

/** The same check for a transport that serialises objects itself (HTTP): the result, or `fallback` if it cannot be. */
export const serialisable = (result: unknown, fallback: (cause: unknown) => unknown): unknown => {
  try {
    JSON.stringify(result)
    return result
  } catch (cause) {
    return fallback(cause)
  }
}
