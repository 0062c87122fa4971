import { CallError } from "../../domain/Errors.js"
import { EraCode } from "../../domain/HostEra.js"
import { errorResult, type CallToolResult } from "../../domain/Mcp.js"
import { RpcCode, RpcError } from "../../domain/Surface.js"
import { mcpErrorText, peerMessage } from "../../transport/SdkShape.js"

/** How the Gateway answers: tool results, JSON-RPC errors, and results as JSON text that never throws. */

/** Params the Gateway cannot read: -32602, worded as the SDK's McpError words it (the host sees the same text as ever). */
export const invalidParams = (message: string) =>
  new RpcError({
    reason: "InvalidParams",
    code: RpcCode.InvalidParams,
    detail: mcpErrorText(RpcCode.InvalidParams, message)
  })

/**
 * A child's answer to a call that is about the host rather than the call: 2026-07-28's MissingRequiredClientCapability
 * (-32021: the request needs a capability the host's envelope did not declare, named in `data`). The host gets it as
 * that JSON-RPC error, as from the child directly; none for every other CallError (an isError result, below).
 */
export const hostRpcError = (error: CallError): RpcError | undefined =>
  error.reason === "Child" && error.code === EraCode.MissingRequiredClientCapability
    ? new RpcError({
        reason: "Peer",
        code: error.code,
        detail: peerMessage(error.detail),
        ...(error.data === undefined ? {} : { data: error.data })
      })
    : undefined

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
 * The result to answer and its JSON, stringified once: a value that cannot be serialised is answered with `fallback`
 * instead (spliced in by clawtool's stdio transport, ADR 009; the HTTP transport serialises the object itself).
 */
export const serialise = (
  result: unknown,
  fallback: (cause: unknown) => unknown
): { readonly value: unknown; readonly json: string } => {
  try {
    return { value: result, json: JSON.stringify(result) }
  } catch (cause) {
    const value = fallback(cause)
    return { value, json: JSON.stringify(value) }
  }
}
