import { assert, beforeAll, describe, it, layer } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  type Notification
} from "@modelcontextprotocol/sdk/types.js"
import { Context, Effect, Layer } from "effect"
import * as z from "zod"
import { ensureBuilt, exitOf, freshCacheDir, main, runCli, spawnServe, tempDirEnv, writeConfig } from "../lib/cli.js"
import { eventually, everything, pollUntil, root, stubCommand } from "../lib/sources.js"

/**
 * The whole MCP surface through `clawtool serve` (issue 5): an SDK client as the host, server-everything and the
 * stub fixture as children. Each ✓ in the README's protocol matrix points at one of these tests.
 */

beforeAll(ensureBuilt, 120_000)

const Loose = z.looseObject({})
type Json = Record<string, any>

interface HostShape {
  readonly client: Client
  /** Every notification the host received (progress excluded: the SDK routes it per request). */
  readonly notes: Array<Notification>
  /** Every elicitation/create the host answered. */
  readonly elicitations: Array<Json>
  /** Sampling requests the host saw cancelled (a sampling message "wait" is held until then). */
  readonly cancelledAtHost: () => number
  readonly rootsAsked: () => number
  readonly setRoots: (roots: ReadonlyArray<{ uri: string; name: string }>) => void
  readonly request: (method: string, params?: Json) => Effect.Effect<Json>
  /** The JSON-RPC error a request fails with. */
  readonly rpcError: (method: string, params?: Json) => Effect.Effect<{ code: number; message: string }>
  readonly call: (name: string, args?: Json) => Effect.Effect<Json>
  readonly text: (name: string, args?: Json) => Effect.Effect<string>
}

class Host extends Context.Tag("test/Host")<Host, HostShape>() {}

const fullCapabilities = { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } }

/** An SDK client (the host) with sampling, elicitation and roots handlers, connected to `clawtool serve`. */
const hostLayer = (config: string, capabilities: Json) =>
  Layer.scoped(
    Host,
    Effect.acquireRelease(
      Effect.promise(async (): Promise<HostShape> => {
        const transport = new StdioClientTransport({
          command: process.execPath,
          args: [main, "serve", "--config", config],
          cwd: root,
          // Never the user's persisted catalog (a warm entry would change what the first list shows).
          env: { ...getDefaultEnvironment(), ...tempDirEnv, CLAWTOOL_CACHE_DIR: freshCacheDir() },
          stderr: "pipe"
        })
        const client = new Client({ name: "e2e-host", version: "1.0.0" }, { capabilities })
        const notes: Array<Notification> = []
        const elicitations: Array<Json> = []
        let rootsAsked = 0
        let cancelledAtHost = 0
        let roots: ReadonlyArray<{ uri: string; name: string }> = [{ uri: "file:///tmp/clawtool-roots", name: "first" }]
        client.fallbackNotificationHandler = async (notification) => void notes.push(notification)
        if (capabilities.sampling !== undefined) {
          client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
            const first = request.params.messages[0]?.content
            if (first !== undefined && "text" in first && first.text === "wait") {
              await new Promise<void>((resolve) => extra.signal.addEventListener("abort", () => resolve()))
              cancelledAtHost++
            }
            return { role: "assistant", content: { type: "text", text: "sampled by the host" }, model: "host-model" }
          })
        }
        if (capabilities.elicitation !== undefined) {
          client.setRequestHandler(ElicitRequestSchema, async (request) => {
            elicitations.push(request.params as Json)
            const properties = (request.params as Json).requestedSchema?.properties ?? {}
            return {
              action: "accept",
              content: "interpretation" in properties ? { interpretation: "historical" } : { name: "Ada" }
            }
          })
        }
        if (capabilities.roots !== undefined) {
          client.setRequestHandler(ListRootsRequestSchema, async () => {
            rootsAsked++
            return { roots: [...roots] }
          })
        }
        await client.connect(transport)
        const request = (method: string, params?: Json) =>
          Effect.promise(() =>
            client.request({ method, ...(params === undefined ? {} : { params }) } as never, Loose, {
              timeout: 60_000
            })
          ) as Effect.Effect<Json>
        const call = (name: string, args: Json = {}) =>
          Effect.promise(() =>
            client.request({ method: "tools/call", params: { name, arguments: args } } as never, CallToolResultSchema)
          ) as Effect.Effect<Json>
        return {
          client,
          notes,
          elicitations,
          rootsAsked: () => rootsAsked,
          cancelledAtHost: () => cancelledAtHost,
          setRoots: (next) => {
            roots = next
          },
          request,
          rpcError: (method, params) =>
            Effect.flip(
              Effect.tryPromise(() =>
                client.request({ method, ...(params === undefined ? {} : { params }) } as never, Loose)
              )
            ).pipe(
              Effect.map((error) => error.error as unknown as { code: number; message: string }),
              Effect.orDieWith(() => new Error(`${method} succeeded where an error was expected`))
            ),
          call,
          text: (name, args) =>
            Effect.map(call(name, args), (result) =>
              (result.content as Array<Json>).map((item) => item.text ?? "").join("\n")
            )
        }
      }),
      (host) => Effect.promise(() => host.client.close())
    )
  )

const everythingCommand = JSON.stringify([process.execPath, everything, "stdio"])

/** The stub gives up on a sampling request after 300 ms: its SDK cancels, clawtool aborts the forwarded request, the
 * host sees the abort (the first such request of a session). */
const childCancelsSampling = Effect.gen(function* () {
  const host = yield* Host
  const answer = yield* host.text("stub__ask", { method: "sampling/createMessage", text: "wait", timeout: 300 })
  assert.match(answer, /^error -32001 /)
  yield* eventually(() => host.cancelledAtHost() === 1, 10_000, "the host's handler to be aborted")
})

/** Notifications of one method received so far. */
const received = (host: HostShape, method: string) => host.notes.filter((note) => note.method === method)

layer(
  hostLayer(
    // These hosts expect the whole catalog on their first list: list_wait covers a slow start on a loaded machine.
    writeConfig(`
      list_wait = "60s"
      [sources.everything]
      command = ${everythingCommand}
      [sources.stub]
      command = ${stubCommand("--resources", "--subscribe", "--logging", "--reverse")}
      [sources.twin]
      command = ${stubCommand("--name", "twin", "--resources", "--subscribe")}
    `),
    fullCapabilities
  ),
  { timeout: "90 seconds", excludeTestServices: true }
)("a host with sampling, elicitation and roots; server-everything and two stubs with the same resource URI", (it) => {
  it.effect("initialize: clawtool's capabilities at 2025-11-25; children are declared exactly the host's", () =>
    Effect.gen(function* () {
      const host = yield* Host
      assert.deepStrictEqual(host.client.getServerCapabilities(), {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        completions: {},
        logging: {},
        tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } }
      })
      yield* Effect.promise(() => host.client.ping())
      const { tools } = yield* host.request("tools/list")
      const names = (tools as Array<Json>).map((tool) => tool.name)
      // server-everything registers these only for a client that declared roots, sampling and elicitation.
      assert.includeMembers(names, [
        "everything__get-roots-list",
        "everything__trigger-sampling-request",
        "everything__trigger-elicitation-request"
      ])
      const declared = JSON.parse(yield* host.text("stub__client_caps"))
      assert.deepStrictEqual(Object.keys(declared).sort(), ["elicitation", "roots", "sampling"])
      assert.deepStrictEqual(declared.roots, { listChanged: true })
      assert.deepStrictEqual(declared.elicitation, { form: {}, url: {} })
    })
  )

  it.effect("resources/list and templates from every instance; unique URIs kept, the clashing one qualified", () =>
    Effect.gen(function* () {
      const host = yield* Host
      const { resources } = yield* host.request("resources/list")
      const byName = new Map((resources as Array<Json>).map((resource) => [resource.name, resource.uri]))
      assert.strictEqual(byName.get("everything__features.md"), "demo://resource/static/document/features.md")
      assert.strictEqual(
        (resources as Array<Json>).filter((resource) => String(resource.name).startsWith("everything__")).length,
        7
      )
      assert.strictEqual(byName.get("stub__info"), "clawtool://stub/stub://info")
      assert.strictEqual(byName.get("twin__info"), "clawtool://twin/stub://info")
      const { resourceTemplates } = yield* host.request("resources/templates/list")
      assert.deepInclude(
        (resourceTemplates as Array<Json>).map((template) => [template.name, template.uriTemplate]),
        ["everything__Dynamic Text Resource", "demo://resource/dynamic/text/{resourceId}"]
      )
    })
  )

  it.effect("resources/read routes by listed URI, by template, and by the qualified form of a clashing URI", () =>
    Effect.gen(function* () {
      const host = yield* Host
      const read = (uri: string) => Effect.map(host.request("resources/read", { uri }), (r) => r.contents[0] as Json)
      const features = yield* read("demo://resource/static/document/features.md")
      assert.strictEqual(features.uri, "demo://resource/static/document/features.md")
      assert.isString(features.text)
      const dynamic = yield* read("demo://resource/dynamic/text/2")
      assert.strictEqual(dynamic.uri, "demo://resource/dynamic/text/2")
      assert.include(dynamic.text, "Resource 2")
      assert.deepStrictEqual(yield* read("clawtool://stub/stub://info"), {
        uri: "clawtool://stub/stub://info",
        mimeType: "text/plain",
        text: "stub server stub"
      })
      assert.strictEqual((yield* read("clawtool://twin/stub://info")).text, "stub server twin")
      // The bare clashing URI is ambiguous: the error names both qualified forms.
      const ambiguous = yield* host.rpcError("resources/read", { uri: "stub://info" })
      assert.strictEqual(ambiguous.code, -32602)
      assert.include(ambiguous.message, "clawtool://stub/stub://info")
      assert.include(ambiguous.message, "clawtool://twin/stub://info")
      assert.strictEqual((yield* host.rpcError("resources/read", { uri: "nope://x" })).code, -32002)
      assert.strictEqual((yield* host.rpcError("resources/read", { uri: "clawtool://ghost/x" })).code, -32002)
    })
  )

  it.effect(
    "resources/subscribe and unsubscribe reach the owner; resources/updated comes back with the host's URI",
    () =>
      Effect.gen(function* () {
        const host = yield* Host
        yield* host.request("resources/subscribe", { uri: "clawtool://twin/stub://info" })
        assert.strictEqual(yield* host.text("twin__subscribed"), JSON.stringify(["stub://info"]))
        assert.strictEqual(yield* host.text("stub__subscribed"), "[]")
        yield* host.text("twin__touch")
        yield* eventually(
          () =>
            received(host, "notifications/resources/updated").some(
              (note) => note.params?.uri === "clawtool://twin/stub://info"
            ),
          10_000,
          "resources/updated for the qualified URI"
        )
        yield* host.request("resources/unsubscribe", { uri: "clawtool://twin/stub://info" })
        assert.strictEqual(yield* host.text("twin__subscribed"), "[]")

        // server-everything: a unique URI stays as it is in both directions.
        const uri = "demo://resource/static/document/features.md"
        yield* host.request("resources/subscribe", { uri })
        yield* host.call("everything__toggle-subscriber-updates")
        yield* eventually(
          () => received(host, "notifications/resources/updated").some((note) => note.params?.uri === uri),
          10_000,
          "resources/updated from server-everything"
        )
        yield* host.call("everything__toggle-subscriber-updates")
        yield* host.request("resources/unsubscribe", { uri })
      })
  )

  it.effect("tools/call: relayed (plain) and SDK-path (progress asked) calls answer alike, URIs mapped on both", () =>
    Effect.gen(function* () {
      const host = yield* Host
      yield* host.request("tools/list")
      // A call with a progressToken takes the SDK path; the same call without one is relayed (ADR 009).
      const both = (name: string, args: Json) =>
        Effect.promise(() =>
          Promise.all([
            host.client.request({ method: "tools/call", params: { name, arguments: args } } as never, Loose),
            host.client.request({ method: "tools/call", params: { name, arguments: args } } as never, Loose, {
              onprogress: () => {}
            })
          ])
        )
      for (const [name, args] of [
        ["stub__echo", { text: "same" }],
        ["stub__echo", {}],
        ["stub__add", { a: 1, b: 2 }],
        ["everything__echo", { message: "same" }],
        ["stub__link", {}]
      ] as const) {
        const [relayed, viaSdk] = yield* both(name, args)
        assert.deepStrictEqual(relayed, viaSdk, name)
      }
      // stub://info is served by stub and twin: the link in the result names the host's (qualified) URI.
      const [link] = yield* both("stub__link", {})
      const uri = (link.content as Array<Json>)[0]!.uri as string
      assert.notStrictEqual(uri, "stub://info")
      const read = yield* host.request("resources/read", { uri })
      assert.strictEqual((read.contents as Array<Json>)[0]!.text, "stub server stub")
    })
  )

  it.effect("prompts/list and prompts/get with arguments; completion/complete by prompt and by template", () =>
    Effect.gen(function* () {
      const host = yield* Host
      const { prompts } = yield* host.request("prompts/list")
      assert.includeMembers(
        (prompts as Array<Json>).map((prompt) => prompt.name),
        ["everything__args-prompt", "everything__completable-prompt", "stub__greet", "twin__greet"]
      )
      const weather = yield* host.request("prompts/get", {
        name: "everything__args-prompt",
        arguments: { city: "Paris", state: "TX" }
      })
      assert.include(weather.messages[0].content.text, "Paris")
      const greet = yield* host.request("prompts/get", { name: "twin__greet", arguments: { name: "Ada" } })
      assert.deepStrictEqual(greet.messages[0].content, { type: "text", text: "Hello, Ada!" })
      assert.strictEqual((yield* host.rpcError("prompts/get", { name: "ghost__greet" })).code, -32602)

      const byPrompt = yield* host.request("completion/complete", {
        ref: { type: "ref/prompt", name: "everything__completable-prompt" },
        argument: { name: "department", value: "Eng" }
      })
      assert.include(byPrompt.completion.values, "Engineering")
      const byTemplate = yield* host.request("completion/complete", {
        ref: { type: "ref/resource", uri: "demo://resource/dynamic/text/{resourceId}" },
        argument: { name: "resourceId", value: "1" }
      })
      assert.include(byTemplate.completion.values, "1")
    })
  )

  it.effect("sampling, elicitation and roots from a child reach the host and the answer goes back", () =>
    Effect.gen(function* () {
      const host = yield* Host
      assert.include(yield* host.text("everything__trigger-sampling-request", { prompt: "hi" }), "sampled by the host")
      assert.include(yield* host.text("everything__trigger-elicitation-request"), "Ada")
      assert.include(yield* host.text("everything__get-roots-list"), "file:///tmp/clawtool-roots")
      assert.match(yield* host.text("stub__ask", { method: "roots/list" }), /^ok .*clawtool-roots/)
      assert.match(yield* host.text("stub__ask", { method: "sampling/createMessage" }), /^ok .*host-model/)
    })
  )

  it.effect("notifications/elicitation/complete reaches the host", () =>
    Effect.gen(function* () {
      const host = yield* Host
      yield* host.call("stub__elicitation_complete", { id: "e-1" })
      yield* eventually(
        () => received(host, "notifications/elicitation/complete").some((note) => note.params?.elicitationId === "e-1"),
        10_000,
        "elicitation/complete"
      )
    })
  )

  it.effect("a child's cancel of its reverse request reaches the host", () => childCancelsSampling)

  it.effect("the host's roots/list_changed reaches the children that declared roots", () =>
    Effect.gen(function* () {
      const host = yield* Host
      // server-everything asks roots/list again on the notice and serves the new roots.
      yield* eventually(() => host.rootsAsked() > 0, 10_000, "server-everything's first roots/list")
      const before = host.rootsAsked()
      host.setRoots([{ uri: "file:///tmp/clawtool-roots-2", name: "second" }])
      yield* Effect.promise(() => host.client.sendRootsListChanged())
      yield* eventually(() => host.rootsAsked() > before, 10_000, "roots/list after roots/list_changed")
      const roots = yield* pollUntil(
        host.text("everything__get-roots-list"),
        (text) => text.includes("file:///tmp/clawtool-roots-2"),
        "server-everything to serve the new roots"
      )
      assert.include(roots, "file:///tmp/clawtool-roots-2")
    })
  )

  it.effect("logging/setLevel reaches the children; their messages arrive with the instance as logger", () =>
    Effect.gen(function* () {
      const host = yield* Host
      yield* host.request("logging/setLevel", { level: "error" })
      // The stub's SDK now drops info: the level reached it.
      assert.strictEqual(yield* host.text("stub__log", { level: "info", text: "quiet" }), "ignored")
      assert.strictEqual(yield* host.text("stub__log", { level: "error", text: "loud" }), "logged")
      yield* eventually(
        () => received(host, "notifications/message").some((note) => note.params?.data === "loud"),
        10_000,
        "the error-level message"
      )
      const loud = received(host, "notifications/message").find((note) => note.params?.data === "loud")!
      assert.strictEqual(loud.params?.logger, "stub")
      assert.deepStrictEqual((loud.params?._meta as Json).clawtool, { logger: "stub-logger" })
      assert.isFalse(received(host, "notifications/message").some((note) => note.params?.data === "quiet"))
      assert.strictEqual((yield* host.rpcError("logging/setLevel", { level: "loud" })).code, -32602)
      yield* host.request("logging/setLevel", { level: "debug" })
    })
  )

  it.effect("tasks: task-augmented tools/call, tasks/get, list, result (with an elicitation inside), cancel", () =>
    Effect.gen(function* () {
      const host = yield* Host
      const created = yield* host.request("tools/call", {
        name: "everything__simulate-research-query",
        arguments: { topic: "python", ambiguous: true },
        task: { ttl: 60_000 }
      })
      const taskId = created.task.taskId as string
      assert.match(taskId, /^everything__./)
      const got = yield* host.request("tasks/get", { taskId })
      assert.strictEqual(got.taskId, taskId)
      const { tasks } = yield* host.request("tasks/list")
      assert.include(
        (tasks as Array<Json>).map((task) => task.taskId),
        taskId
      )
      // tasks/result blocks until the end; meanwhile the child asks the host (through clawtool) to clarify.
      const result = yield* host.request("tasks/result", { taskId })
      assert.include(result.content[0].text, "historical")
      assert.strictEqual(result._meta["io.modelcontextprotocol/related-task"].taskId, taskId)
      const asked = host.elicitations.find((params) => params._meta?.["io.modelcontextprotocol/related-task"])
      assert.strictEqual(asked?._meta["io.modelcontextprotocol/related-task"].taskId, taskId)
      assert.isTrue(
        received(host, "notifications/tasks/status").some(
          (note) => note.params?.taskId === taskId && note.params?.status === "completed"
        )
      )

      const second = yield* host.request("tools/call", {
        name: "everything__simulate-research-query",
        arguments: { topic: "x" },
        task: {}
      })
      const cancelled = yield* host.request("tasks/cancel", { taskId: second.task.taskId })
      assert.deepInclude(cancelled, { taskId: second.task.taskId, status: "cancelled" })
      // Routing errors: a task id of no instance; a tool whose child has no task support.
      assert.strictEqual((yield* host.rpcError("tasks/get", { taskId: "no-prefix" })).code, -32602)
      const unsupported = yield* host.rpcError("tools/call", { name: "stub__echo", arguments: {}, task: {} })
      assert.strictEqual(unsupported.code, -32601)
    })
  )
})

layer(
  hostLayer(
    // These hosts expect the whole catalog on their first list: list_wait covers a slow start on a loaded machine.
    writeConfig(`
      list_wait = "60s"
      [sources.everything]
      command = ${everythingCommand}
      [sources.stub]
      command = ${stubCommand("--resources", "--list-changed-after", "1500", "--surface-changed-after", "1500")}
      [sources.flaky]
      command = ${stubCommand("--name", "flaky", "--list-changed-after", "1500", "--fail-list-after", "1")}
    `),
    {}
  ),
  { timeout: "90 seconds", excludeTestServices: true }
)("flow control: progress, cancellation, list_changed", (it) => {
  it.effect("progress comes back under the host's token and keeps the host's timeout alive", () =>
    Effect.gen(function* () {
      const host = yield* Host
      // tools/list waits until every source has settled: the timeout below is about the call, not the start-up.
      yield* host.request("tools/list")
      const progress: Array<Json> = []
      // The host's SDK accepts progress only under its own token: each one seen here was remapped.
      const result = yield* Effect.promise(() =>
        host.client.request(
          { method: "tools/call", params: { name: "stub__slow", arguments: { ms: 3000, steps: 10 } } } as never,
          CallToolResultSchema,
          { onprogress: (p) => progress.push(p), timeout: 1500, resetTimeoutOnProgress: true }
        )
      )
      assert.deepStrictEqual(result.content, [{ type: "text", text: "slept 3000ms" }])
      // Never every one: the SDK can drop the last when it shares a read with the result.
      assert.isAbove(progress.length, 0)
      assert.deepInclude(progress[0], { progress: 1, total: 10 })
    })
  )

  it.effect("the host's cancel reaches the child for that request only (ids differ per hop)", () =>
    Effect.gen(function* () {
      const host = yield* Host
      const count = Effect.map(host.call("stub__cancelled"), (r) => (r.structuredContent as Json).count as number)
      const before = yield* count
      const controller = new AbortController()
      // With onprogress the call carries a progressToken and takes the SDK path; without, it is relayed (ADR 009).
      const slow = (signal?: AbortSignal, progress = false) =>
        host.client.request(
          { method: "tools/call", params: { name: "stub__slow", arguments: { ms: 1500 } } } as never,
          CallToolResultSchema,
          { ...(signal === undefined ? {} : { signal }), ...(progress ? { onprogress: () => {} } : {}) }
        )
      const kept = [slow(), slow(undefined, true)]
      const dropped = [slow(controller.signal), slow(controller.signal, true)].map((call) =>
        call.then(
          () => "answered",
          () => "cancelled"
        )
      )
      setTimeout(() => controller.abort("enough"), 300)
      const keptResults = yield* Effect.promise(() => Promise.all(kept))
      const droppedResults = yield* Effect.promise(() => Promise.all(dropped))
      for (const result of keptResults) assert.deepStrictEqual(result.content, [{ type: "text", text: "slept 1500ms" }])
      assert.deepStrictEqual(droppedResults, ["cancelled", "cancelled"])
      // The child saw exactly two aborts: the ones for the requests the host cancelled, on both paths.
      yield* pollUntil(count, (now) => now - before >= 2, "the child to see both aborts")
      // A quiet period, then the count: no third abort may follow (a negative check, so it needs time).
      yield* Effect.sleep("300 millis")
      assert.strictEqual((yield* count) - before, 2)
    })
  )

  it.effect("a child's list_changed: one host notification per kind and the new catalog", () =>
    Effect.gen(function* () {
      const host = yield* Host
      const toolNames = Effect.map(host.request("tools/list"), (r) => (r.tools as Array<Json>).map((t) => t.name))
      const names = yield* pollUntil(toolNames, (names) => names.includes("stub__late_tool"), "stub__late_tool", 10_000)
      assert.include(names, "stub__late_tool")
      const { resources } = yield* host.request("resources/list")
      assert.include(
        (resources as Array<Json>).map((r) => r.uri),
        "stub://late"
      )
      const { prompts } = yield* host.request("prompts/list")
      assert.include(
        (prompts as Array<Json>).map((p) => p.name),
        "stub__late_prompt"
      )
      // Let any straggler arrive, then count: server-everything's start-up notices and the stubs' one change each.
      yield* Effect.sleep("500 millis")
      assert.strictEqual(received(host, "notifications/tools/list_changed").length, 1)
      assert.strictEqual(received(host, "notifications/resources/list_changed").length, 1)
      assert.strictEqual(received(host, "notifications/prompts/list_changed").length, 1)
    })
  )

  it.effect("a re-list that fails keeps the last good catalog and shows the error in Health", () =>
    Effect.gen(function* () {
      const host = yield* Host
      const flaky = Effect.map(
        host.call("SourceHealth", { instance: "flaky" }),
        (r) => (r.structuredContent as Json).sources[0] as Json
      )
      const row = yield* pollUntil(
        flaky,
        (row) => String(row.reason).includes("listing tools failed"),
        "a failed re-list"
      )
      assert.strictEqual(row.status, "running")
      assert.include(row.reason, "list unavailable")
      const { tools } = yield* host.request("tools/list")
      const names = (tools as Array<Json>).map((t) => t.name)
      assert.include(names, "flaky__echo")
      assert.notInclude(names, "flaky__late_tool")
    })
  )
})

layer(
  hostLayer(
    // These hosts expect the whole catalog on their first list: list_wait covers a slow start on a loaded machine.
    writeConfig(`
      list_wait = "60s"
      [sources.everything]
      command = ${everythingCommand}
      [sources.stub]
      command = ${stubCommand("--reverse")}
    `),
    {}
  ),
  { timeout: "90 seconds", excludeTestServices: true }
)("a host without sampling, elicitation or roots", (it) => {
  it.effect(
    "children are declared nothing; a reverse request gets -32601; no tools that need them; per-instance capabilities",
    () =>
      Effect.gen(function* () {
        const host = yield* Host
        assert.strictEqual(yield* host.text("stub__client_caps"), "{}")
        for (const method of ["sampling/createMessage", "elicitation/create", "roots/list"]) {
          assert.match(yield* host.text("stub__ask", { method }), /^error -32601 /)
        }
        const { tools } = yield* host.request("tools/list")
        const names = (tools as Array<Json>).map((t) => t.name)
        assert.include(names, "everything__echo")
        assert.notInclude(names, "everything__trigger-sampling-request")
        assert.notInclude(names, "everything__get-roots-list")
        // The stub has neither resources nor prompts: had clawtool listed them, its SDK would have answered -32601 and
        // the failed listing would show in Health.
        const health = yield* host.call("SourceHealth", { instance: "stub" })
        assert.deepInclude((health.structuredContent as Json).sources[0], { status: "running", reason: "" })
        assert.strictEqual((yield* host.rpcError("prompts/get", { name: "stub__greet" })).code, -32601)
      })
  )
})

layer(hostLayer(writeConfig(`[sources.stub]\ncommand = ${stubCommand("--reverse")}\n`), fullCapabilities), {
  timeout: "90 seconds",
  excludeTestServices: true
})("request id 0 on both hops", (it) => {
  // The SDK ignores a cancel of request id 0 (Protocol._oncancel): here the child's first request to clawtool has
  // id 0, and so would clawtool's first request to the host had it not started at 1.
  it.effect("the first reverse request, cancelled by the child, is cancelled at the host", () => childCancelsSampling)
})

describe("protocol version negotiation", () => {
  it.live("a 2025-06-18 host gets 2025-06-18 and no tasks capability", () =>
    Effect.gen(function* () {
      const child = spawnServe(writeConfig(`[sources.stub]\ncommand = ${stubCommand()}`))
      let stdout = ""
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
      child.stdin.write(
        JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "old", version: "1" } }
        }) + "\n"
      )
      yield* eventually(() => stdout.includes("\n"), 20_000, "the initialize answer")
      child.stdin.end()
      yield* exitOf(child)
      const answer = JSON.parse(stdout.split("\n")[0]!) as Json
      assert.strictEqual(answer.result.protocolVersion, "2025-06-18")
      assert.notProperty(answer.result.capabilities, "tasks")
      assert.property(answer.result.capabilities, "resources")
    })
  )
})

describe("commands without a host", () => {
  it.live("tools list declares sampling, elicitation and roots to children: the largest catalog", () =>
    Effect.gen(function* () {
      const result = runCli([
        "tools",
        "list",
        "--json",
        "--config",
        writeConfig(`[sources.everything]\ncommand = ${everythingCommand}`)
      ])
      assert.strictEqual(result.code, 0, result.stderr)
      const wires = ((JSON.parse(result.stdout) as Json).tools as Array<Json>).map((row) => row.wire)
      assert.includeMembers(wires, ["everything__trigger-sampling-request", "everything__get-roots-list"])
    })
  )
})
