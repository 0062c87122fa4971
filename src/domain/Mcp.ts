/**
 * The MCP shapes clawtool's own services speak. Only Gateway and SourceClient touch the SDK; everything
 * between them passes these plain JSON values, so a future SDK swaps in without touching Sources or Registry.
 * Fields clawtool does not interpret are kept as the child sent them.
 */
export type JsonObject = { readonly [key: string]: unknown }

export interface Tool {
  readonly name: string
  readonly description?: string
  readonly inputSchema: JsonObject
  readonly outputSchema?: JsonObject
  readonly _meta?: JsonObject
  readonly [key: string]: unknown
}

export interface CallToolResult {
  readonly content: ReadonlyArray<unknown>
  readonly isError?: boolean
  readonly structuredContent?: JsonObject
  readonly _meta?: JsonObject
  readonly [key: string]: unknown
}

export interface CallToolRequest {
  readonly name: string
  readonly arguments?: JsonObject
  readonly _meta?: JsonObject
}

export const errorResult = (text: string, _meta?: JsonObject): CallToolResult => ({
  content: [{ type: "text", text }],
  isError: true,
  ...(_meta === undefined ? {} : { _meta })
})
