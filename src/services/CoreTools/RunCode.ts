import { Duration, Effect, Either, Option, Schema } from "effect"
import { CallError } from "../../domain/Errors.js"
import type { CallToolResult } from "../../domain/Mcp.js"
import { CallRoute, type HostCallRoute } from "../../domain/ToolProvider.js"
import { defineTool } from "./Manifest.js"
import type { FailureReason } from "./RunCode/Protocol.js"
import { toScript } from "./RunCode/Script.js"
import { answerText, argsOf, consoleText, valueOf } from "./RunCode/Values.js"

/**
 * Code mode (issue 30, ADR 035): the agent writes the body of an async function that calls the catalog as `tools`
 * (the names of `clawtool tools export-typescript`) and gets back only what it returns. The code runs in QuickJS on
 * a worker thread (RunCode/Sandbox.ts, loaded on first use); each inner call takes the host's own call path.
 */

const RunCodeInput = Schema.Struct({
  code: Schema.String.pipe(Schema.pattern(/\S/)).annotations({
    description:
      'TypeScript or JavaScript: the body of an async function. Call tools as `await tools.<instance>.<tool>(args)` (core tools: `await tools.Read({ file_path })`) or `await call("<wire name>", args)`; `return` the answer (JSON); console.log is captured.'
  }),
  timeout_ms: Schema.optional(
    Schema.Number.pipe(Schema.int(), Schema.positive()).annotations({
      description: "Stop the code after this many milliseconds (at most [core_tools.RunCode] timeout, 30 s by default)"
    })
  )
})

const RunCodeOutput = Schema.Struct({
  result: Schema.optional(Schema.Unknown).annotations({ description: "The value the code returned" }),
  console: Schema.optional(Schema.String).annotations({ description: "What console.log printed" }),
  calls: Schema.Number.annotations({ description: "Tool calls the code made" })
})

/** What an inner call's result is to the code: its value as JSON text, or the message of the error it sees thrown. */
const encoded = (result: CallToolResult): Either.Either<string | undefined, string> =>
  Either.map(valueOf(result), (value) => (value === undefined ? undefined : JSON.stringify(value)))

const reasons: Readonly<Record<FailureReason, string>> = {
  OutOfMemory: "out of memory",
  Timeout: "timed out",
  MaxCalls: "too many tool calls",
  Thrown: "the code threw",
  NeverSettles: "the code never finishes",
  NotJson: "the result is not JSON",
  Cancelled: "cancelled",
  Crashed: "the sandbox failed"
}

export const RunCode = defineTool({
  name: "RunCode",
  description:
    "Runs a TypeScript/JavaScript snippet in a sandbox that reaches this server's tools as `tools`; only the snippet's return value comes back, not each intermediate result.",
  keywords: ["typescript", "javascript", "sandbox", "snippet", "codemode"],
  category: "dispatch",
  usageHint:
    "The body of an async function: `const x = await tools.<namespace>.<fn>(args)`, Promise.all for independent calls, try/catch for failures; `return` a small answer. ToolSearch gives each signature.",
  alwaysLoad: true,
  annotations: { title: "Run code", readOnlyHint: false, destructiveHint: true, openWorldHint: true },
  input: RunCodeInput,
  output: RunCodeOutput,
  handler: (input, context) =>
    Effect.gen(function* () {
      const settings = context.settings.RunCode
      const limit = Duration.toMillis(settings.timeout)
      const timeoutMs = Math.min(input.timeout_ms ?? limit, limit)
      const script = yield* toScript(input.code)
      const names = yield* context.codeNames
      const route = yield* CallRoute
      const { run } = yield* Effect.promise(() => import("./RunCode/Sandbox.js"))
      let made = 0
      /** One progress notification to the host per inner call. */
      const started = (host: HostCallRoute, name: string) => {
        made += 1
        host.progress({ progress: made, message: `RunCode: ${name}` })
      }
      const outcome = yield* run({
        code: script,
        names,
        memoryBytes: settings.memory * 2 ** 20,
        timeoutMs,
        maxCalls: settings.max_calls,
        maxLog: context.maxOutput,
        call: (name, json) =>
          Either.match(argsOf(json), {
            onLeft: (problem) => Effect.fail(problem),
            onRight: (args) =>
              Option.match(route, {
                onNone: () => Effect.fail(`${name}: no host's call to make it from (RunCode calls tools for a host)`),
                onSome: (host) => {
                  started(host, name)
                  return host.call(name, args).pipe(
                    Effect.mapError((error) => error.message),
                    Effect.flatMap((result) => encoded(result))
                  )
                }
              })
          }),
        relay: (name, json, done) => {
          const args = argsOf(json)
          if (Option.isNone(route) || Either.isLeft(args)) return undefined
          const cancel = route.value.relay(name, args.right, (result) => done(encoded(result)))
          if (cancel !== undefined) started(route.value, name)
          return cancel
        }
      })
      if (!outcome.ok) {
        const printed =
          outcome.log.text === "" && outcome.log.dropped === 0 ? "" : `\n\nconsole:\n${consoleText(outcome.log)}`
        return yield* new CallError({
          tool: "RunCode",
          reason: outcome.reason === "Timeout" ? "Timeout" : "Failed",
          detail: `${reasons[outcome.reason]}: ${outcome.message} (after ${outcome.calls} tool calls)${printed}`
        })
      }
      const text = answerText(outcome.json, outcome.log)
      const structured = {
        ...(outcome.json === undefined ? {} : { result: JSON.parse(outcome.json) as unknown }),
        ...(outcome.log.text === "" ? {} : { console: consoleText(outcome.log) }),
        calls: outcome.calls
      }
      const size = text.length + (outcome.json?.length ?? 0) + (structured.console?.length ?? 0)
      if (size > context.maxOutput) {
        return yield* new CallError({
          tool: "RunCode",
          reason: "TooLarge",
          detail: `the answer is ${size} characters, over [core_tools] max_output (${context.maxOutput}): return less (filter or count in the code)`
        })
      }
      return { text, structured }
    })
})
