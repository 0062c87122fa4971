// Property-based fuzzing of both edges of the built `clawtool serve` (issue 16, ADR 010), with fast-check.
// Host edge: batches of arbitrary lines — arbitrary bytes, JSON values, truncations, deep and huge messages, requests
// with wrong types in every params field of every method clawtool handles, answers and notifications.
// Child edge: a child that writes arbitrary lines around (and instead of) its answer to a tools/call.
// Invariants: clawtool stays up; every stdout line is JSON-RPC; each request with a usable id (whatever its method,
// `notifications/…` included) gets exactly one answer, with that id; answers and notifications from the host are never
// answered; another source's calls keep working.
// `npm test` runs a fixed seed and a bounded number of runs; `npm run fuzz` runs more with a random seed
// (FUZZ_SEED / FUZZ_RUNS override both; a failure prints the seed and the shrunk counterexample to replay).
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import { ensureBuilt, spawnServe, writeConfig } from "../lib/cli.js"
import { callLine, hostileSource, rawHost, textOf } from "../lib/rawHost.js"

const seed = process.env.FUZZ_SEED === "random" ? Date.now() % 2 ** 31 : Number(process.env.FUZZ_SEED ?? 16016)
const runs = Number(process.env.FUZZ_RUNS ?? 120)
const limits = { maxDepth: 64, maxLineBytes: 16_384, maxInFlight: 8 }

let serve: ReturnType<typeof spawnServe>
let host: ReturnType<typeof rawHost>

beforeAll(() => {
  ensureBuilt()
  // Small limits, so deep, huge and backpressure cases are cheap to reach.
  serve = spawnServe(
    writeConfig(`${hostileSource()}${hostileSource("other")}
[limits]
max_depth = ${limits.maxDepth}
max_line_bytes = ${limits.maxLineBytes}
max_in_flight = ${limits.maxInFlight}
`)
  )
  serve.stderr.resume()
  host = rawHost(serve)
  return Effect.runPromise(Effect.asVoid(host.handshake))
}, 120_000)

afterAll(() => {
  serve?.kill("SIGKILL")
})

// Ids clawtool must answer: unique per property run, never produced by the JSON arbitraries.
let counter = 0
const freshId = (asString: boolean) => (asString ? `fz-${++counter}` : 1_000_000 + ++counter)

const json = fc.jsonValue({ maxDepth: 3 })
const methods = [
  "initialize",
  "ping",
  "tools/list",
  "tools/call",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "resources/subscribe",
  "resources/unsubscribe",
  "prompts/list",
  "prompts/get",
  "completion/complete",
  "logging/setLevel",
  "tasks/get",
  "tasks/result",
  "tasks/list",
  "tasks/cancel"
] as const
const notifications = [
  "notifications/initialized",
  "notifications/cancelled",
  "notifications/roots/list_changed",
  "notifications/progress"
]
/** Every params field any handled method reads, each with a value of any type (or a plausible one). */
const params = fc.oneof(
  json,
  fc.record(
    {
      name: fc.oneof(fc.constantFrom("hostile__echo", "other__echo", "nope__x", "hostile__"), json),
      arguments: fc.oneof(json, fc.record({ text: json })),
      _meta: fc.oneof(json, fc.record({ progressToken: json, traceparent: json })),
      task: json,
      uri: fc.oneof(fc.constantFrom("hostile://x", "clawtool://other/x"), json),
      cursor: json,
      level: fc.oneof(fc.constantFrom("debug", "error"), json),
      requestId: json,
      taskId: json,
      ref: json,
      argument: json,
      protocolVersion: json,
      capabilities: json
    },
    { requiredKeys: [] }
  )
)

type Item =
  | { readonly kind: "request"; readonly method: string; readonly params: unknown; readonly stringId: boolean }
  | { readonly kind: "unusable-id"; readonly method: string; readonly id: unknown }
  | { readonly kind: "notification"; readonly method: string; readonly params: unknown }
  | { readonly kind: "answer"; readonly stringId: boolean; readonly body: unknown; readonly error: boolean }
  | { readonly kind: "bytes"; readonly bytes: Uint8Array }
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "truncated"; readonly params: unknown; readonly cut: number }
  | { readonly kind: "deep"; readonly depth: number; readonly sdk: boolean; readonly stringId: boolean }
  | { readonly kind: "huge"; readonly size: number; readonly sdk: boolean; readonly stringId: boolean }

const item: fc.Arbitrary<Item> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("request" as const),
      // A notification's name with an id is a request too, and answered like any other.
      method: fc.oneof(
        { weight: 9, arbitrary: fc.constantFrom(...methods) },
        fc.constantFrom(...notifications),
        fc.string({ maxLength: 12 })
      ),
      params: fc.option(params, { nil: undefined }),
      stringId: fc.boolean()
    })
  },
  fc.record({
    kind: fc.constant("unusable-id" as const),
    method: fc.constantFrom(...methods),
    id: fc.oneof(fc.constant(null), fc.boolean(), fc.array(json, { maxLength: 2 }), fc.dictionary(fc.string(), json))
  }),
  fc.record({
    kind: fc.constant("notification" as const),
    method: fc.oneof(fc.constantFrom(...notifications), fc.string({ maxLength: 12 })),
    params: fc.option(json, { nil: undefined })
  }),
  fc.record({ kind: fc.constant("answer" as const), stringId: fc.boolean(), body: json, error: fc.boolean() }),
  fc.record({ kind: fc.constant("bytes" as const), bytes: fc.uint8Array({ maxLength: 200 }) }),
  fc.record({ kind: fc.constant("text" as const), text: fc.oneof(fc.string({ unit: "binary" }), json.map(String)) }),
  fc.record({ kind: fc.constant("truncated" as const), params, cut: fc.nat() }),
  fc.record({
    kind: fc.constant("deep" as const),
    depth: fc.integer({ min: limits.maxDepth + 1, max: 6000 }),
    sdk: fc.boolean(),
    stringId: fc.boolean()
  }),
  fc.record({
    kind: fc.constant("huge" as const),
    size: fc.integer({ min: limits.maxLineBytes, max: 4 * limits.maxLineBytes }),
    sdk: fc.boolean(),
    stringId: fc.boolean()
  })
)

/** The wire text of one item, and the ids that must (or must never) be answered. */
const render = (item: Item): { text: string; expect?: string | number; never?: string | number } => {
  switch (item.kind) {
    case "request": {
      const id = freshId(item.stringId)
      const message = {
        jsonrpc: "2.0",
        id,
        method: item.method,
        ...(item.params === undefined ? {} : { params: item.params })
      }
      return { text: JSON.stringify(message) + "\n", expect: id }
    }
    case "unusable-id":
      return { text: JSON.stringify({ jsonrpc: "2.0", id: item.id, method: item.method }) + "\n" }
    case "notification":
      return {
        text:
          JSON.stringify({
            jsonrpc: "2.0",
            method: item.method,
            ...(item.params === undefined ? {} : { params: item.params })
          }) + "\n"
      }
    case "answer": {
      const id = freshId(item.stringId)
      const body = item.error ? { error: item.body } : { result: item.body }
      return { text: JSON.stringify({ jsonrpc: "2.0", id, ...body }) + "\n", never: id }
    }
    case "bytes":
      return { text: Buffer.from(item.bytes).toString("latin1") + "\n" }
    case "text":
      return { text: item.text.replaceAll("\n", " ") + "\n" }
    case "truncated": {
      const whole = JSON.stringify({ jsonrpc: "2.0", id: freshId(true), method: "tools/call", params: item.params })
      return { text: whole.slice(0, item.cut % whole.length) + "\n" }
    }
    case "deep": {
      const id = freshId(item.stringId)
      const nested = "[".repeat(item.depth) + "]".repeat(item.depth)
      const line = JSON.stringify(callLine(id, "hostile__echo", "ARGS", item.sdk)).replace(
        '"ARGS"',
        `{"deep":${nested}}`
      )
      return { text: line + "\n", expect: id }
    }
    case "huge": {
      const id = freshId(item.stringId)
      return {
        text: JSON.stringify(callLine(id, "hostile__echo", { text: "h".repeat(item.size) }, item.sdk)) + "\n",
        expect: id
      }
    }
  }
}

const expected: Array<string | number> = []
const never: Array<string | number> = []

/** After a batch: every expected id answered, and the other source still answers. */
const settleBatch = (ids: ReadonlyArray<string | number>) =>
  Effect.gen(function* () {
    const probe = freshId(true)
    host.send(callLine(probe, "other__echo", { text: "alive" }))
    assert.strictEqual(textOf(yield* host.answer(probe)), "echo:alive")
    for (const id of ids) yield* host.answer(id)
  })

/** The invariants over everything sent so far. */
const checkAll = () => {
  assert.deepStrictEqual(host.violations, [], "every stdout line is JSON-RPC")
  assert.isNull(serve.exitCode, "clawtool is still running")
  const answeredTwice = expected.filter((id) => host.answersTo(id).length !== 1)
  assert.deepStrictEqual(answeredTwice, [], "each request is answered exactly once")
  const answeredAnswers = never.filter((id) => host.answersTo(id).length > 0)
  assert.deepStrictEqual(answeredAnswers, [], "an answer from the host is never answered")
}

describe(`fuzz (fast-check, seed ${seed}, ${runs} runs per edge)`, () => {
  it.live(
    "host edge: arbitrary lines never kill or wedge clawtool; each request is answered once",
    () =>
      Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(fc.array(item, { minLength: 1, maxLength: 12 }), async (items) => {
            const rendered = items.map(render)
            host.send(rendered.map((one) => one.text).join(""))
            const ids = rendered.flatMap((one) => (one.expect === undefined ? [] : [one.expect]))
            expected.push(...ids)
            never.push(...rendered.flatMap((one) => (one.never === undefined ? [] : [one.never])))
            await Effect.runPromise(settleBatch(ids))
            checkAll()
          }),
          { seed, numRuns: runs, endOnFailure: true }
        )
      ).pipe(Effect.andThen(Effect.sync(checkAll))),
    300_000
  )

  /** What the child writes on stdout while it handles one tools/call ($ID is that call's id at the child). */
  const childLine = fc.oneof(
    fc.string({ unit: "binary", maxLength: 80 }),
    json.map((value) => JSON.stringify(value)),
    json.map((result) => `{"jsonrpc":"2.0","id":$ID,"result":${JSON.stringify(result)}}`),
    json.map((error) => `{"jsonrpc":"2.0","id":$ID,"error":${JSON.stringify(error)}}`),
    fc
      .tuple(fc.string({ maxLength: 20 }), fc.integer())
      .map(([message, code]) => `{"jsonrpc":"2.0","id":$ID,"error":${JSON.stringify({ code, message })}}`),
    fc.constant(`{"jsonrpc":"2.0","id":$ID,"result":{"content":[],"x":$DEEP}}`),
    fc.constantFrom(
      `{"result":{"content":[{"type":"text","text":"$PAD"}]},"jsonrpc":"2.0","id":$ID}`,
      `{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"$PAD"}]}}`,
      `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"$PAD"}}`
    ),
    fc
      .tuple(
        fc.constantFrom("notifications/message", "notifications/progress", "notifications/tools/list_changed", "x/y"),
        json
      )
      .map(([method, params]) => JSON.stringify({ jsonrpc: "2.0", method, params })),
    fc
      .tuple(
        fc.oneof(json, fc.constantFrom("clawtool-1", 1)),
        fc.constantFrom("ping", "roots/list", "sampling/createMessage", "x/y"),
        json
      )
      .map(([id, method, params]) => JSON.stringify({ jsonrpc: "2.0", id, method, params })),
    fc.tuple(json, json).map(([id, result]) => JSON.stringify({ jsonrpc: "2.0", id, result }))
  )

  it.live(
    "child edge: arbitrary output around an answer fails at most that call, once; other sources go on",
    () =>
      Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(
            fc.array(childLine, { maxLength: 6 }),
            fc.boolean(),
            fc.integer({ min: 1, max: 6000 }),
            async (lines, sdk, deep) => {
              const id = freshId(true)
              expected.push(id)
              host.send(callLine(id, "hostile__script", { lines, pad: 2 * limits.maxLineBytes, deep }, sdk))
              await Effect.runPromise(settleBatch([id]))
              const answer = host.answersTo(id)[0]!
              assert.isObject(
                answer.result,
                "a tools/call always gets a tool result (isError when the child failed it)"
              )
              checkAll()
            }
          ),
          { seed, numRuns: runs, endOnFailure: true }
        )
      ).pipe(Effect.andThen(Effect.sync(checkAll))),
    300_000
  )
})
