/**
 * Vitest setup file (vitest.config.ts `setupFiles`): chai's deep equality sees `Option.some(x)` and `Option.none()`
 * as equal, so `assert.deepStrictEqual(option, expected)` can never fail on the Some/None distinction. This wraps
 * chai's equality asserts so that an Option or Either anywhere inside either operand makes the assertion throw;
 * tests use assertSome/assertNone/assertRight/assertLeft (`@effect/vitest/utils`, node:assert underneath) or
 * Equal.equals instead.
 */
import { Either, Option } from "effect"
import { afterAll, assert } from "vitest"
import { removeLeftovers, tempDir } from "./temp.js"

/** The path of the first Option/Either inside `value` ("" for the value itself), or undefined. */
export const findOptionOrEither = (value: unknown, path = "", seen = new Set<object>()): string | undefined => {
  if (typeof value !== "object" || value === null) return undefined
  if (Option.isOption(value) || Either.isEither(value)) return path === "" ? "(the operand itself)" : path
  if (seen.has(value) || ArrayBuffer.isView(value)) return undefined
  seen.add(value)
  const entries: Iterable<readonly [unknown, unknown]> =
    value instanceof Map
      ? value.entries()
      : value instanceof Set
        ? Array.from(value, (item, index) => [index, item] as const)
        : Object.entries(value)
  for (const [key, item] of entries) {
    const found = findOptionOrEither(
      item,
      `${path}${Array.isArray(value) ? `[${String(key)}]` : `.${String(key)}`}`,
      seen
    )
    if (found !== undefined) return found
  }
  return undefined
}

// Deep equality only: strictEqual/equal compare objects by identity, which does tell two Options apart.
const guarded = ["deepStrictEqual", "deepEqual", "notDeepStrictEqual", "notDeepEqual"] as const

const target = assert as unknown as Record<
  string,
  (actual: unknown, expected: unknown, ...rest: Array<unknown>) => void
>

for (const name of guarded) {
  const original = target[name]
  if (typeof original !== "function") continue
  target[name] = function (this: unknown, actual: unknown, expected: unknown, ...rest: Array<unknown>) {
    const inActual = findOptionOrEither(actual)
    const inExpected = findOptionOrEither(expected)
    if (inActual !== undefined || inExpected !== undefined) {
      const where = inActual !== undefined ? `actual ${inActual}` : `expected ${inExpected}`
      throw new Error(
        `assert.${name} on an Option/Either (${where}) cannot tell Some from None: use assertSome/assertNone/` +
          `assertRight/assertLeft from "@effect/vitest/utils" or Equal.equals`
      )
    }
    return original.call(this, actual, expected, ...rest)
  }
}

// Every clawtool a test starts and that inherits this environment persists its catalog in a temporary folder, never in
// the user's cache (a warm entry there would change what a test's first list shows).
if (process.env.CLAWTOOL_CACHE_DIR === undefined) {
  process.env.CLAWTOOL_CACHE_DIR = tempDir("clawtool-test-cache-")
  afterAll(() => {
    delete process.env.CLAWTOOL_CACHE_DIR
  })
}

// Likewise their state (OAuth tokens, the audit log, on by default): a temporary folder, never the user's.
if (process.env.CLAWTOOL_STATE_DIR === undefined) {
  process.env.CLAWTOOL_STATE_DIR = tempDir("clawtool-test-state-")
  afterAll(() => {
    delete process.env.CLAWTOOL_STATE_DIR
  })
}

// Temporary folders made outside a test (test/lib/temp.ts), removed after the file's own afterAll hooks.
afterAll(removeLeftovers)
