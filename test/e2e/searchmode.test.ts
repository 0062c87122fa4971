// `catalog = "search"` (issue 14, ADR 025): tools/list shows the hot set and CallTool; every other tool is found with
// ToolSearch and called through CallTool exactly as directly: same result, errors, progress and cancellation.
import { assert, describe, it } from "@effect/vitest"
import { McpError } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { ensureBuilt, serveClient, writeConfig } from "../lib/cli.js"
import * as path from "node:path"
import { everything, pollUntil, root } from "../lib/sources.js"

ensureBuilt()

const wire = path.join(root, "test/fixtures/wire-server.mjs")

const config = (mode: "full" | "search") =>
  writeConfig(`
    catalog = "${mode}"
    [sources.everything]
    command = ${JSON.stringify([process.execPath, everything, "stdio"])}
    [sources.wire]
    command = ${JSON.stringify([process.execPath, wire])}
  `)

const textOf = (result: unknown) =>
  ((result as { content: unknown }).content as ReadonlyArray<{ type: string; text?: string }>)
    .map((block) => block.text ?? "")
    .join("\n")

describe("catalog = search", () => {
  it.scopedLive(
    "tools/list: only alwaysLoad tools and CallTool; ToolSearch finds a source tool; CallTool calls it like a direct call",
    () =>
      Effect.gen(function* () {
        const client = yield* serveClient(config("search"))
        const { tools } = yield* Effect.promise(() => client.listTools())
        const names = tools.map((tool) => tool.name)
        assert.includeMembers(names, ["CallTool", "ToolSearch"])
        assert.isFalse(
          names.some((name) => name.includes("__")),
          `no source tool is listed: ${names.join(", ")}`
        )
        for (const tool of tools) {
          assert.isTrue(tool._meta?.["anthropic/alwaysLoad"] === true, `${tool.name} is alwaysLoad`)
        }
        const callTool = tools.find((tool) => tool.name === "CallTool")!
        assert.deepStrictEqual(callTool.inputSchema.required, ["name"])
        assert.isString((callTool._meta?.clawtool as { usage_hint?: string }).usage_hint)

        const found = yield* Effect.promise(() =>
          client.callTool({ name: "ToolSearch", arguments: { query: "add two numbers", limit: 3 } })
        )
        const hits = (found.structuredContent as { results: ReadonlyArray<{ name: string }> }).results
        assert.strictEqual(hits[0]!.name, "everything__get-sum")

        const direct = yield* Effect.promise(() =>
          client.callTool({ name: "everything__get-sum", arguments: { a: 2, b: 40 } })
        )
        const through = yield* Effect.promise(() =>
          client.callTool({ name: "CallTool", arguments: { name: "everything__get-sum", arguments: { a: 2, b: 40 } } })
        )
        assert.deepStrictEqual(through, direct)
        assert.include(textOf(through), "42")
      })
  )

  it.scopedLive("CallTool relays progress under the host's token, and errors exactly as a direct call", () =>
    Effect.gen(function* () {
      const client = yield* serveClient(config("search"))
      const progress: Array<number> = []
      const result = yield* Effect.promise(() =>
        client.callTool(
          {
            name: "CallTool",
            arguments: { name: "everything__trigger-long-running-operation", arguments: { duration: 1, steps: 3 } }
          },
          undefined,
          { onprogress: (notification) => progress.push(notification.progress), timeout: 30_000 }
        )
      )
      assert.isNotTrue(result.isError)
      // The last one may share a read with the result, which the SDK host itself drops on its own hop (see
      // progress.test.ts): at least the first two, in order.
      assert.deepStrictEqual(progress.slice(0, 2), [1, 2])

      const unknownDirect = yield* Effect.promise(() => client.callTool({ name: "everything__nope", arguments: {} }))
      const unknownThrough = yield* Effect.promise(() =>
        client.callTool({ name: "CallTool", arguments: { name: "everything__nope", arguments: {} } })
      )
      assert.isTrue(unknownThrough.isError)
      assert.deepStrictEqual(unknownThrough, unknownDirect)

      const noName = yield* Effect.promise(() =>
        client.callTool({ name: "CallTool", arguments: { arguments: {} } }).then(
          () => undefined,
          (error: unknown) => error
        )
      )
      assert.instanceOf(noName, McpError)
      assert.strictEqual((noName as McpError).code, -32602)
      assert.include((noName as McpError).message, "CallTool needs arguments.name")
    })
  )

  it.scopedLive("cancelling a CallTool call cancels its target at the child; _meta reaches the child as sent", () =>
    Effect.gen(function* () {
      const client = yield* serveClient(config("search"))
      const controller = new AbortController()
      const pending = client
        .callTool({ name: "CallTool", arguments: { name: "wire__hang" } }, undefined, {
          signal: controller.signal,
          timeout: 120_000
        })
        .then(
          () => "answered",
          () => "cancelled"
        )
      const seen = (method: string) =>
        Effect.promise(async () => {
          const result = await client.callTool({
            name: "CallTool",
            arguments: { name: "wire__seen", arguments: { method } }
          })
          return JSON.parse(textOf(result)) as ReadonlyArray<{ id?: unknown; params?: Record<string, unknown> }>
        })
      // The child has the hang call before the host cancels it.
      const calls = yield* pollUntil(
        seen("tools/call"),
        (all) => all.some((call) => call.params?.name === "hang"),
        "the child got hang()"
      )
      controller.abort()
      assert.strictEqual(yield* Effect.promise(() => pending), "cancelled")
      const hangId = calls.find((call) => call.params?.name === "hang")!.id
      yield* pollUntil(
        seen("notifications/cancelled"),
        (cancels) => cancels.some((cancel) => cancel.params?.requestId === hangId),
        "the child got notifications/cancelled for the hang call"
      )

      const echoed = yield* Effect.promise(() =>
        client.callTool({
          name: "CallTool",
          arguments: { name: "wire__request" },
          _meta: { "example.com/key": "value" }
        })
      )
      const request = JSON.parse(textOf(echoed)) as { params: { name: string; _meta?: Record<string, unknown> } }
      assert.strictEqual(request.params.name, "request")
      assert.strictEqual(request.params._meta?.["example.com/key"], "value")
    })
  )
})

describe("catalog = full", () => {
  it.scopedLive("every tool listed, CallTool not listed but callable", () =>
    Effect.gen(function* () {
      const client = yield* serveClient(config("full"))
      const names = (yield* Effect.promise(() => client.listTools())).tools.map((tool) => tool.name)
      assert.include(names, "everything__get-sum")
      assert.notInclude(names, "CallTool")
      const through = yield* Effect.promise(() =>
        client.callTool({ name: "CallTool", arguments: { name: "everything__echo", arguments: { message: "hi" } } })
      )
      assert.include(textOf(through), "hi")
    })
  )
})
