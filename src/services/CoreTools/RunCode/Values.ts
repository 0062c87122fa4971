import { Either } from "effect"
import type { CallToolResult, JsonObject } from "../../../domain/Mcp.js"
import type { RunLog } from "./Protocol.js"

/**
 * What crosses between the guest and clawtool's tools (ADR 035), pure: the value an inner call resolves to in the
 * code, and the run's answer within `[core_tools] max_output`.
 */

const texts = (result: CallToolResult): ReadonlyArray<string> =>
  result.content.flatMap((item) => {
    const block = item as { readonly type?: unknown; readonly text?: unknown }
    return block.type === "text" && typeof block.text === "string" ? [block.text] : []
  })

/**
 * The value code gets from a tool: its structured content when it has one, else its text (one block) or texts, else
 * its content blocks. An `isError` result is the message of the error the code sees thrown.
 */
export const valueOf = (result: CallToolResult): Either.Either<unknown, string> => {
  if (result.isError === true) return Either.left(texts(result).join("\n") || "the tool failed (isError, no text)")
  if (result.structuredContent !== undefined) return Either.right(result.structuredContent)
  const text = texts(result)
  if (text.length === result.content.length) return Either.right(text.length === 1 ? text[0] : text)
  return Either.right(result.content)
}

/** The args an inner call carries: a JSON object, or none. */
export const argsOf = (json: string | undefined): Either.Either<JsonObject | undefined, string> => {
  if (json === undefined) return Either.right(undefined)
  let value: unknown
  try {
    value = JSON.parse(json)
  } catch {
    return Either.left("a tool's arguments must be JSON")
  }
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? Either.right(value as JsonObject)
    : Either.left(`a tool's arguments must be an object, got ${json.length > 60 ? `${json.slice(0, 60)}…` : json}`)
}

/** The console section of an answer, with what did not fit said. */
export const consoleText = (log: RunLog): string =>
  log.dropped === 0 ? log.text : `${log.text}\n[… ${log.dropped} more characters of console output not kept]`

/** The answer's text: the returned value's JSON, then the console output when there was some. */
export const answerText = (json: string | undefined, log: RunLog): string => {
  const value = json ?? "undefined"
  return log.text === "" && log.dropped === 0 ? value : `${value}\n\nconsole:\n${consoleText(log)}`
}
