// Hostile input on either edge of the built `clawtool serve` (issue 16, ADR 010): deep or over-long messages from the
// host or from a child fail the one request they carry, with an error naming the limit, answered exactly once, on the
// relay path and on the SDK path alike, and clawtool keeps serving.
import { assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, exitOf, freshCacheDir, spawnServe, writeConfig } from "../lib/cli.js"
import { callLine, deepArguments, hostileSource, type Message, rawHost, textOf } from "../lib/rawHost.js"

beforeAll(ensureBuilt, 120_000)

/** serve over `config` with a raw host; killed with the scope, then its config and cache folders are removed. */
const serveWith = (config: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const file = writeConfig(config)
      const cacheDir = freshCacheDir()
      const child = spawnServe(file, cacheDir)
      child.stderr.resume()
      return { child, host: rawHost(child), dirs: [path.dirname(file), cacheDir] }
    }),
    ({ child, dirs }) =>
      Effect.gen(function* () {
        child.kill("SIGKILL")
        yield* exitOf(child)
        for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
      })
  )

/** A request line with `args` spliced in as JSON text. */
const rawCall = (id: number, args: string, sdk: boolean) =>
  JSON.stringify(callLine(id, "hostile__echo", "ARGS", sdk)).replace('"ARGS"', args) + "\n"

describe("hostile host input (built CLI)", () => {
  for (const path of ["relay", "SDK"] as const) {
    it.scopedLive(
      `tools/call with arguments 5,000 levels deep (${path} path): an error naming max_depth, then more calls`,
      () =>
        Effect.gen(function* () {
          const { child, host } = yield* serveWith(hostileSource())
          yield* host.handshake
          host.send(rawCall(3, deepArguments(5000), path === "SDK"))
          const answer = yield* host.answer(3)
          assert.strictEqual(answer.error?.code, -32600)
          assert.include(answer.error?.message, "max_depth (512)")
          host.send(callLine(4, "hostile__echo", { text: "still here" }, path === "SDK"))
          assert.strictEqual(textOf(yield* host.answer(4)), "echo:still here")
          assert.lengthOf(host.answersTo(3), 1)
          assert.deepStrictEqual(host.violations, [])
          assert.isNull(child.exitCode)
        })
    )
  }

  it.scopedLive("a too-deep notification is dropped unanswered; a too-deep line without id gets id null", () =>
    Effect.gen(function* () {
      const { host } = yield* serveWith(hostileSource())
      yield* host.handshake
      const before = host.messages.length
      host.send(`{"jsonrpc":"2.0","method":"notifications/x","params":${deepArguments(3000)}}\n`)
      host.send(`${"[".repeat(3000)}${"]".repeat(3000)}\n`)
      host.send({ jsonrpc: "2.0", id: "after", method: "ping" })
      yield* host.answer("after")
      const between = host.messages.slice(before).filter((message) => message.id !== "after")
      assert.deepStrictEqual(
        between.map((message) => [message.id, message.error?.code]),
        [[null, -32600]]
      )
    })
  )

  it.scopedLive("[limits] from the config: max_depth and max_line_bytes are the configured ones, on both edges", () =>
    Effect.gen(function* () {
      const { host } = yield* serveWith(`${hostileSource()}\n[limits]\nmax_depth = 16\nmax_line_bytes = 2048\n`)
      yield* host.handshake
      host.send(rawCall(1, deepArguments(20), false))
      assert.include((yield* host.answer(1)).error?.message, "max_depth (16)")
      // A line over max_line_bytes is consumed, and answered under the id read at its start.
      host.send(callLine(2, "hostile__echo", { text: "x".repeat(5000) }))
      const tooLong = yield* host.answer(2)
      assert.strictEqual(tooLong.error?.code, -32600)
      assert.include(tooLong.error?.message, "max_line_bytes (2048)")
      // The child's answer nested 20 levels: that call fails, naming the configured limit.
      host.send(callLine(3, "hostile__deep", { depth: 20 }))
      const deep = yield* host.answer(3)
      assert.isTrue(deep.result?.isError)
      assert.include(textOf(deep), "max_depth (16)")
      host.send(callLine(4, "hostile__echo", { text: "fine" }))
      assert.strictEqual(textOf(yield* host.answer(4)), "echo:fine")
    })
  )
})

describe("hostile child output (built CLI)", () => {
  for (const path of ["relay", "SDK"] as const) {
    it.scopedLive(
      `a child answering 5,000 levels deep (${path} path): that call fails once, clearly; others go on`,
      () =>
        Effect.gen(function* () {
          const { child, host } = yield* serveWith(`${hostileSource()}${hostileSource("other")}`)
          yield* host.handshake
          host.send(callLine(7, "hostile__deep", { depth: 5000 }, path === "SDK"))
          const answer = yield* host.answer(7)
          assert.isTrue(answer.result?.isError)
          assert.include(textOf(answer), "max_depth (512)")
          host.send(callLine(8, "other__echo", { text: "other" }, path === "SDK"))
          host.send(callLine(9, "hostile__echo", { text: "same" }, path === "SDK"))
          assert.strictEqual(textOf(yield* host.answer(8)), "echo:other")
          assert.strictEqual(textOf(yield* host.answer(9)), "echo:same")
          assert.lengthOf(host.answersTo(7), 1)
          assert.deepStrictEqual(host.violations, [])
          assert.isNull(child.exitCode)
        })
    )

    it.scopedLive(`a child's over-long answer (${path} path): the call fails naming max_line_bytes, exactly once`, () =>
      Effect.gen(function* () {
        const { host } = yield* serveWith(`${hostileSource()}\n[limits]\nmax_line_bytes = 4096\n`)
        yield* host.handshake
        // The SDK's own order: result first, id last, so the id is read at the end of the dropped line.
        const long = `{"result":{"content":[{"type":"text","text":"$PAD"}]},"jsonrpc":"2.0","id":$ID}`
        host.send(callLine(5, "hostile__script", { lines: [long], pad: 10_000 }, path === "SDK"))
        const answer = yield* host.answer(5)
        assert.isTrue(answer.result?.isError)
        assert.include(textOf(answer), "max_line_bytes (4096)")
        host.send({ jsonrpc: "2.0", id: "after", method: "ping" })
        yield* host.answer("after")
        assert.lengthOf(host.answersTo(5), 1)
      })
    )
  }

  it.scopedLive(
    "a child's message with an id is a request whatever its method: notifications/* with an id is answered once, -32601",
    () =>
      Effect.gen(function* () {
        // "timed" has a call_timeout: the relay asks it for progress under the call's own id (its keep-alive).
        const { host } = yield* serveWith(`${hostileSource()}${hostileSource("timed")}call_timeout = "10m"\n`)
        yield* host.handshake
        let probes = 0
        /** What `source`'s child received as answers, once every one of `ids` is among them (its `answers` tool). */
        const answersAtChild = (source: string, ids: ReadonlyArray<string>) =>
          Effect.gen(function* () {
            for (let attempt = 0; ; attempt++) {
              const probe = `answers-${++probes}`
              host.send(callLine(probe, `${source}__answers`, {}))
              const answers = JSON.parse(textOf(yield* host.answer(probe))) as Array<Message>
              if (ids.every((id) => answers.some((answer) => answer.id === id))) return answers
              if (attempt === 200) return yield* Effect.dieMessage(`${source}'s child got no answer to ${ids}`)
              yield* Effect.sleep("50 millis")
            }
          })
        // The relay (a child's progress under the relay's keep-alive token, and under an unknown one) and the SDK path
        // (under the SDK's token for a host that asked for progress): the message is the child's request each time.
        const cases = [
          ["timed", false],
          ["hostile", false],
          ["hostile", true]
        ] as const
        let call = 0
        for (const [source, sdk] of cases) {
          const ids = ["progress", "cancelled", "list_changed"].map((what) => `${source}-${sdk}-${what}`)
          const lines = [
            `{"jsonrpc":"2.0","id":"${ids[0]}","method":"notifications/progress","params":{"progressToken":$ID,"progress":1}}`,
            `{"jsonrpc":"2.0","id":"${ids[1]}","method":"notifications/cancelled","params":{"requestId":0}}`,
            `{"jsonrpc":"2.0","id":"${ids[2]}","method":"notifications/tools/list_changed"}`
          ]
          host.send(callLine(++call, `${source}__script`, { lines }, sdk))
          assert.strictEqual(textOf(yield* host.answer(call)), "final")
          yield* answersAtChild(source, ids)
          // One more round trip: an answer sent twice would be there by now.
          const answers = (yield* answersAtChild(source, ids)).filter((answer) => ids.includes(answer.id))
          assert.deepStrictEqual(answers.map((answer) => answer.id).sort(), [...ids].sort())
          for (const answer of answers) {
            assert.deepStrictEqual(answer, {
              jsonrpc: "2.0",
              id: answer.id,
              error: { code: -32601, message: "Method not found" }
            })
          }
        }
        // None of them reached the host as progress (the SDK path's call asked for it under p-3).
        assert.deepStrictEqual(
          host.messages.filter((message) => message.method === "notifications/progress"),
          []
        )
        assert.deepStrictEqual(host.violations, [])
      })
  )
})
