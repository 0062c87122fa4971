import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Either, Logger, LogLevel, Option } from "effect"
import type { CallToolResult, JsonObject } from "../../domain/Mcp.js"
import { isJsonObject } from "../../domain/Surface.js"
import { CallLive } from "../../layers/Main.js"
import { Config } from "../../services/Config.js"
import { Gateway } from "../../services/Gateway.js"
import { Registry } from "../../services/Registry.js"
import * as Version from "../../version.js"
import { callArguments, resolveTool, resultText } from "../Call.js"
import { type HostAnswer, makeLocalHost } from "../LocalHost.js"
import { checkProfile, config, ExitStatus, profile, requireSecretsFile, secrets } from "../Shared.js"

const toolArg = Args.text({ name: "tool" }).pipe(
  Args.withDescription(
    "The tool's wire name (notes__add_note, Read) or <instance>.<tool> as tools list shows its origin"
  )
)
const argumentsArg = Args.text({ name: "json" }).pipe(
  Args.withDescription("The arguments as one JSON object"),
  Args.optional
)
const arg = Options.text("arg").pipe(
  Options.withPseudoName("KEY=VALUE"),
  Options.repeated,
  Options.withDescription(
    "One argument (repeatable, over the JSON's): VALUE is text for a string property, else JSON when it parses (3, true, [1])"
  )
)
const whole = Options.boolean("json").pipe(
  Options.withDescription("Print the whole result (content, structuredContent, isError, _meta) as JSON")
)

const usage = (message: string) =>
  Effect.zipRight(Console.error(`clawtool: ${message}`), Effect.fail(new ExitStatus({ code: 2 })))

/** A question the session asks this host: `[trust] confirm`'s yes/no (or any one-boolean form) on a terminal. */
const answer =
  (interactive: boolean): HostAnswer =>
  async (method, params) => {
    if (method === "ping") return {}
    const schema = params?.requestedSchema
    const properties = isJsonObject(schema) && isJsonObject(schema.properties) ? Object.entries(schema.properties) : []
    const [only] = properties
    if (method !== "elicitation/create" || !interactive || properties.length !== 1 || !isJsonObject(only![1])) {
      throw { code: -32601, message: `clawtool call cannot answer ${method} here` }
    }
    if (only![1].type !== "boolean") return { action: "decline" }
    const Readline = await import("node:readline/promises")
    const prompt = Readline.createInterface({ input: process.stdin, output: process.stderr })
    try {
      const said = await prompt.question(
        `${String(params?.message ?? "")}\n${String(only![1].title ?? only![0])} [y/N] `
      )
      return { action: "accept", content: { [only![0]]: /^y(es)?$/i.test(said.trim()) } }
    } finally {
      prompt.close()
    }
  }

/**
 * One tool call through serve's whole stack: the config's sources and the core tools, pins, redaction, `[trust]
 * confirm` (asked on a terminal, refused as for a host that cannot ask otherwise) and the audit log. The CLI is the
 * host of one session, in process.
 */
export const call = Command.make(
  "call",
  { config, secrets, profile, json: whole, arg, tool: toolArg, arguments: argumentsArg },
  (options) =>
    Effect.gen(function* () {
      const gateway = yield* Gateway
      // `--profile` (issue 26): the session sees that profile's view, as `serve --profile` would; a tool outside it is
      // unknown here too.
      const chosen = yield* checkProfile(options.profile, (yield* Config).config)
      const registry = (yield* Registry).viewOf(chosen)
      const interactive = process.stdin.isTTY === true && process.stderr.isTTY === true
      const host = makeLocalHost(answer(interactive))
      yield* gateway.session(host.transport, { profile: chosen })
      const failed = (failure: { readonly message: string }) =>
        Effect.zipRight(Console.error(`clawtool: ${failure.message}`), Effect.fail(new ExitStatus({ code: 1 })))
      yield* Effect.catchAll(
        host.request("initialize", {
          protocolVersion: "2025-11-25",
          capabilities: interactive ? { elicitation: { form: {} } } : {},
          clientInfo: { name: "clawtool-call", version: Version.version }
        }),
        failed
      )
      yield* host.notify("notifications/initialized")

      // A name not in the catalog yet may belong to a source still starting: asked again once every source settled.
      let catalog = yield* registry.catalog
      let wire = resolveTool(options.tool, catalog.entries)
      if (Either.isLeft(wire)) {
        yield* registry.awaitSettled
        catalog = yield* registry.catalog
        wire = resolveTool(options.tool, catalog.entries)
      }
      if (Either.isLeft(wire)) return yield* usage(wire.left)
      const name = wire.right
      const schema = catalog.entries.find((entry) => entry.wire === name)?.tool.inputSchema
      const args = callArguments(Option.getOrUndefined(options.arguments), options.arg, schema)
      if (Either.isLeft(args)) return yield* usage(args.left)

      const result = (yield* Effect.catchAll(
        host.request("tools/call", { name, arguments: args.right } satisfies JsonObject),
        failed
      )) as unknown as CallToolResult
      if (options.json) {
        yield* Console.log(JSON.stringify(result, null, 2))
      } else {
        const { text, notes } = resultText(result)
        if (text !== "") yield* result.isError === true ? Console.error(text) : Console.log(text)
        for (const note of notes) yield* Console.error(note)
      }
      if (result.isError === true) return yield* new ExitStatus({ code: 1 })
    }).pipe(
      Effect.scoped,
      (effect) => Effect.zipRight(requireSecretsFile(options), effect),
      Effect.provide(CallLive(options)),
      Logger.withMinimumLogLevel(LogLevel.Error)
    )
).pipe(
  Command.withDescription(
    "Call one tool as a host would, through everything clawtool serve does: the config's sources and the core tools, pins, redaction, [trust] confirm (asked on a terminal) and the audit log; with --profile NAME, as a host of that profile. Prints the result's text on stdout (an error result's on stderr), or the whole result with --json. Exit 0 ok, 1 when the result is an error, 2 on usage errors (bad JSON, an unknown tool: with the close names)."
  )
)
