import { Effect, Option } from "effect"
import { CallError } from "../domain/Errors.js"
import type { CallToolResult, JsonObject, Tool } from "../domain/Mcp.js"
import * as WireName from "../domain/WireName.js"
import type { CallOptions } from "./SourceClient.js"
import { Sources } from "./Sources.js"

const byteOrder = (a: Tool, b: Tool) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

/**
 * Shapes the catalog the host sees (`<instance>__<tool>`, sorted byte-wise, last) and routes a wire name
 * back to its instance and original tool.
 */
export class Registry extends Effect.Service<Registry>()("clawtool/Registry", {
  dependencies: [Sources.Default],
  effect: Effect.gen(function* () {
    const sources = yield* Sources

    const list = Effect.fn("Registry.list")(function* () {
      const catalog = yield* sources.catalog
      const tools = catalog.flatMap(({ instance, tools }) =>
        tools.map((tool): Tool => ({ ...tool, name: WireName.make(instance, tool.name) }))
      )
      return tools.sort(byteOrder) as ReadonlyArray<Tool>
    })

    const call = (
      wire: string,
      request: { readonly arguments?: JsonObject | undefined; readonly _meta?: JsonObject | undefined },
      options?: CallOptions
    ): Effect.Effect<CallToolResult, CallError> =>
      Option.match(WireName.split(wire), {
        onNone: () =>
          Effect.fail(new CallError({ tool: wire, reason: "NoSuchTool", detail: `unknown tool "${wire}"` })),
        onSome: ({ instance, tool }) =>
          sources.callTool(
            instance,
            {
              name: tool,
              ...(request.arguments === undefined ? {} : { arguments: request.arguments }),
              ...(request._meta === undefined ? {} : { _meta: request._meta })
            },
            options
          )
      }).pipe(Effect.withSpan("Registry.call", { attributes: { "gen_ai.tool.name": wire } }))

    return { list, call, changes: sources.changes, awaitSettled: sources.awaitSettled } as const
  })
}) {}
