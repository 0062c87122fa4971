import { Duration, ParseResult, Schema } from "effect"

const pattern = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/
const unitMillis = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const

/**
 * A config duration such as "500ms", "60s", "2m" or "1h", decoded to an Effect Duration.
 * Negative, unparsable or non-string values are rejected; the description is the expectation users read.
 */
export const DurationString = Schema.transformOrFail(Schema.String, Schema.DurationFromSelf, {
  strict: true,
  decode: (text, _, ast) => {
    const match = pattern.exec(text.trim())
    if (match === null) return ParseResult.fail(new ParseResult.Type(ast, text))
    const millis = Number(match[1]) * unitMillis[match[2] as keyof typeof unitMillis]
    return ParseResult.succeed(Duration.millis(millis))
  },
  encode: (duration) => ParseResult.succeed(`${Duration.toMillis(duration)}ms`)
}).annotations({ description: `a duration like "500ms", "60s", "2m" or "1h"` })
