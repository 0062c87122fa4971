import fc from "fast-check"
import * as AuditLine from "../../src/services/Trust/AuditLine.js"

/**
 * Audit calls of every kind (test/Trust/AuditLine.test.ts, AuditQueue.test.ts): names with controls, quotes,
 * backslashes, non-ASCII and lone surrogates; times past 2038 and fractional; durations of every size (and NaN).
 */
const tricky = fc.constantFrom(
  '"',
  "\\",
  "\n",
  "\u0000",
  "\u001b",
  "\u007f",
  "é",
  "\u2028",
  "😀",
  "\ud800",
  "\udc00",
  "a",
  "Z"
)
const name = fc.oneof(fc.string({ unit: "binary", maxLength: 40 }), fc.string({ unit: tricky, maxLength: 12 }))
const optionalName = fc.option(name, { nil: undefined })

export const auditCall: fc.Arbitrary<AuditLine.AuditCall> = fc.record({
  at: fc.oneof(fc.integer({ min: 0, max: 8.64e15 }), fc.double({ min: 0, max: 4e12, noNaN: true })),
  durationMs: fc.oneof(
    fc.double({ noDefaultInfinity: false }),
    fc.integer({ min: 0, max: 1e9 }).map((n) => n / 1000)
  ),
  session: optionalName,
  client: optionalName,
  profile: optionalName,
  token: optionalName,
  instance: optionalName,
  tool: name,
  outcome: fc.constantFrom(...AuditLine.outcomes),
  arguments: fc.option(fc.dictionary(name, fc.jsonValue({ maxDepth: 2 })), { nil: undefined }),
  bytesOut: fc.oneof(fc.nat(), fc.double()),
  traceId: optionalName,
  via: optionalName
})

export const argsMode = fc.constantFrom<AuditLine.ArgsMode>("none", "redacted", "full")

/** A redactor that keeps the JSON valid: Z is in no literal, number or escape. */
export const redactZ = (text: string) => text.replaceAll("Z", "[R]")
