import { Schema } from "effect"
import type { JsonObject, Tool } from "./Mcp.js"

/**
 * The MCP surface beyond tools, as plain JSON (only Gateway and SourceClient touch the SDK). Fields clawtool
 * does not interpret are kept as the child sent them.
 */
export interface Resource {
  readonly uri: string
  readonly name: string
  readonly [key: string]: unknown
}

export interface ResourceTemplate {
  readonly uriTemplate: string
  readonly name: string
  readonly [key: string]: unknown
}

export interface Prompt {
  readonly name: string
  readonly [key: string]: unknown
}

/** The catalogs one child lists, as it sent them (the last good listing of each kind). */
export interface InstanceSurface {
  readonly tools: ReadonlyArray<Tool>
  readonly resources: ReadonlyArray<Resource>
  readonly resourceTemplates: ReadonlyArray<ResourceTemplate>
  readonly prompts: ReadonlyArray<Prompt>
}

/** The three kinds a child (and clawtool) announces with `notifications/<kind>/list_changed`. */
export type ListKind = "tools" | "resources" | "prompts"

/** JSON-RPC and MCP error codes clawtool answers with. */
export const RpcCode = {
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  ConnectionClosed: -32000,
  ResourceNotFound: -32002
} as const

/**
 * A forwarded request (host → child or child → host) that failed: the JSON-RPC error to answer with. A child's
 * or the host's own error keeps its code, message and data.
 */
export class RpcError extends Schema.TaggedError<RpcError>("clawtool/RpcError")("RpcError", {
  reason: Schema.Literal(
    /** The peer answered with this JSON-RPC error. */
    "Peer",
    /** No instance owns the name, URI or id. */
    "NoRoute",
    /** The owning instance is not running. */
    "NotRunning",
    /** The owner (or the host) did not declare the capability the method needs. */
    "Unsupported",
    "InvalidParams",
    /** The child died or its pipe broke while the request was in flight. */
    "Transport"
  ),
  code: Schema.Number,
  detail: Schema.String,
  data: Schema.optional(Schema.Unknown)
}) {
  override get message() {
    return this.detail
  }
}

export const isJsonObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)
