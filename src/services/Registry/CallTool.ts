import { callToolName } from "../../domain/CallPlan.js"
import type { Tool } from "../../domain/Mcp.js"
import * as Pipeline from "./Pipeline.js"

/**
 * `CallTool`: the one tool through which a `catalog = "search"` host calls every tool it found with ToolSearch
 * (docs/decisions/025). Not a manifest spec: it has no handler and no output schema of its own — the Gateway routes
 * a CallTool call as the call of its target (CallPlan.parse), so the result, errors, progress, cancellation and trace
 * context are exactly those of a direct call. Listed in search mode only; callable in both modes.
 */

const usageHint =
  'Find the tool with ToolSearch first, then call it here: {"name": "<wire name from ToolSearch>", "arguments": {…matching its inputSchema…}}. The result is the tool\'s own.'

const definition: Tool = {
  name: callToolName,
  description:
    "Calls any tool of this server's catalog by its wire name, including tools not in your tool list (find them with ToolSearch). Behaves exactly like calling that tool directly.",
  inputSchema: {
    type: "object",
    properties: {
      name: { type: "string", description: "The wire name of the tool to call, as ToolSearch returns it" },
      arguments: {
        type: "object",
        description: "The tool's arguments, matching the inputSchema ToolSearch returned",
        additionalProperties: true
      }
    },
    required: ["name"],
    additionalProperties: false
  },
  // It can reach every tool, destructive ones included: hosts that ask before such tools ask here too.
  annotations: {
    title: "Call a tool",
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: true
  }
}

/** CallTool as tools/list sends it: usage hint and alwaysLoad applied, canonical key order. */
export const tool: Tool = Pipeline.canonical(Pipeline.shapeTool(definition, usageHint, true))
export const json = JSON.stringify(tool)
export const digest = Pipeline.toolDigest(json)
