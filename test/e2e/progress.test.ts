// Progress that shares a read with its result (docs/decisions/009-call-relay.md): a child that writes 3 progress
// notifications and its result in ONE write gets all 3 to the host, under the host's token, in order, before the
// result; a progress after the result never reaches the host. A raw host reads clawtool's stdout line by line (an SDK
// host would itself drop progress that shares a read with the result, on its own hop).
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as path from "node:path"
import { ensureBuilt, exitOf, spawnServe, writeConfig } from "../lib/cli.js"
import { eventually, root } from "../lib/sources.js"

ensureBuilt()

const burst = path.join(root, "test/fixtures/progress-burst.mjs")

type Message = Record<string, any>

/** `clawtool serve` over the burst fixture, driven line by line; every message it writes is kept in order. */
const rawHost = Effect.acquireRelease(
  Effect.gen(function* () {
    // call_timeout: the relay then asks the child for progress too (under its own token), and keeps it to itself.
    const config = writeConfig(`
      [sources.burst]
      command = ${JSON.stringify([process.execPath, burst])}
      call_timeout = "60s"
    `)
    const child = spawnServe(config)
    const received: Array<Message> = []
    let buffer = ""
    child.stdout.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8")
      const lines = buffer.split("\n")
      buffer = lines.pop()!
      for (const line of lines) if (line.length > 0) received.push(JSON.parse(line) as Message)
    })
    let next = 1
    const request = (method: string, params: Record<string, unknown>) =>
      Effect.gen(function* () {
        const id = next++
        child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n")
        yield* eventually(() => received.some((message) => message.id === id), 20_000, `the answer to ${method} ${id}`)
        return received.findIndex((message) => message.id === id)
      })
    yield* request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "raw-host", version: "1" }
    })
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n")
    yield* request("tools/list", {}) // answered once the child has settled
    return { child, received, request }
  }),
  ({ child }) =>
    Effect.flatMap(
      Effect.sync(() => child.stdin.end()),
      () => exitOf(child)
    )
)

const progressOf = (messages: ReadonlyArray<Message>, token: unknown) =>
  messages.filter((message) => message.method === "notifications/progress" && message.params?.progressToken === token)

describe("progress in the same read as the result (raw host)", () => {
  it.scopedLive(
    "SDK path (host asked for progress): all 3 reach the host under its token, in order, before the result",
    () =>
      Effect.gen(function* () {
        const host = yield* rawHost
        const answer = yield* host.request("tools/call", {
          name: "burst__burst",
          _meta: { progressToken: "host-token" }
        })
        const result = host.received[answer]!
        // The SDK client's numeric id and its own token reached the child: this call took the SDK path.
        assert.strictEqual(result.result.structuredContent.idType, "number")
        assert.notStrictEqual(result.result.structuredContent.token, "host-token")
        const before = progressOf(host.received.slice(0, answer), "host-token")
        assert.deepStrictEqual(
          before.map((message) => message.params),
          [1, 2, 3].map((n) => ({ progressToken: "host-token", progress: n, total: 3, message: `step ${n}` }))
        )
        assert.deepStrictEqual(progressOf(host.received.slice(answer), "host-token"), [])
      })
  )

  it.scopedLive("no progress is sent to the host after its result (same write, or a later one)", () =>
    Effect.gen(function* () {
      const host = yield* rawHost
      const answer = yield* host.request("tools/call", { name: "burst__late", _meta: { progressToken: "late-token" } })
      assert.strictEqual(host.received[answer]!.result.structuredContent.idType, "number")
      // The child writes its stale progress before this answer: by the time it is here, that progress was handled.
      yield* host.request("tools/call", { name: "burst__burst", _meta: { progressToken: "next-token" } })
      assert.deepStrictEqual(progressOf(host.received, "late-token"), [])
      assert.strictEqual(progressOf(host.received, "next-token").length, 3)
    })
  )

  it.scopedLive("relay (no progress asked): the child's progress keeps the call alive and never reaches the host", () =>
    Effect.gen(function* () {
      const host = yield* rawHost
      const start = host.received.length
      const answer = yield* host.request("tools/call", { name: "burst__burst" })
      const result = host.received[answer]!
      // The relay's string id and token reached the child: this call took the relay.
      assert.strictEqual(result.result.structuredContent.idType, "string")
      assert.match(result.result.structuredContent.token, /^clawtool-/)
      assert.deepStrictEqual(result.result.content, [{ type: "text", text: "burst done" }])
      const late = yield* host.request("tools/call", { name: "burst__late" })
      assert.strictEqual(host.received[late]!.result.structuredContent.idType, "string")
      yield* host.request("tools/call", { name: "burst__burst" })
      assert.deepStrictEqual(
        host.received.slice(start).filter((message) => message.method === "notifications/progress"),
        []
      )
    })
  )
})
