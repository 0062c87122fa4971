// Issue 27's child edge (docs/decisions/033-two-eras-child-edge.md): a modern-only server (SDK v2, legacy rejected:
// `initialize` gets -32022) reached through `clawtool serve` by a legacy SDK v1 host: its tools, calls on the relay and
// on the SDK path, progress, cancellation, resources/updated (a subscriptions/listen at the child), and elicitation and
// roots in the middle of a call (MRTR: the child's input_required becomes real requests to the host). A child that
// exits on any request before initialize still runs, as legacy. The era verdict is persisted with the catalog and
// re-used by the next start (no second probe), and probed again when the server changed eras.
import { assert, beforeAll, describe, it } from "@effect/vitest"
import {
  ElicitRequestSchema,
  ListRootsRequestSchema,
  ResourceUpdatedNotificationSchema
} from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, freshCacheDir, runCliAsync, serveClient, writeConfig } from "../lib/cli.js"
import { callTool, httpClient, messagesOf, rawRequest, startDaemon, textOf as textOfResult } from "../lib/daemon.js"
import { modernHost, modernMeta } from "../lib/modernHost.js"
import { eventually, pollUntil, root, tempDir } from "../lib/sources.js"
import { type Json, wireHost } from "../lib/wire.js"

beforeAll(ensureBuilt, 120_000)

const modernServer = path.join(root, "test/fixtures/modern-server.mjs")
const modernHttpServer = path.join(root, "test/fixtures/modern-http-server.mjs")
const tinyServer = path.join(root, "test/fixtures/tiny-server.mjs")

type Text = { content: Array<{ type: string; text: string }> }
const textOf = (result: unknown) => (result as Text).content[0]!.text

/** A config with the modern fixture (each start logged to `log`) and a legacy child that dies on a probe. */
const bothEras = () => {
  const log = path.join(tempDir(), "starts.log")
  const config = writeConfig(`
    [sources.modern]
    command = ${JSON.stringify([process.execPath, modernServer])}
    env = { MODERN_FIXTURE_LOG = ${JSON.stringify(log)} }
    [sources.legacy]
    command = ${JSON.stringify([process.execPath, tinyServer, "--exit-before-initialize"])}
  `)
  /** How many lines of the fixture's log start with `what`. */
  const count = (what: string) =>
    fs.existsSync(log)
      ? fs
          .readFileSync(log, "utf8")
          .split("\n")
          .filter((line) => line.startsWith(what)).length
      : 0
  return { config, count }
}

describe("a modern-only child behind a legacy host", () => {
  it.scopedLive("tools, calls, progress, cancellation, resources/updated and elicitation/roots mid-call", () =>
    Effect.gen(function* () {
      const { config } = bothEras()
      const client = yield* serveClient(config, { elicitation: {}, roots: {} })
      const asked: Array<string> = []
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        asked.push(request.params.message)
        return { action: "accept", content: { name: "Ada" } }
      })
      client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: "file:///project" }] }))

      const names = yield* pollUntil(
        Effect.promise(() => client.listTools()).pipe(Effect.map(({ tools }) => tools.map((tool) => tool.name))),
        (names) => names.includes("modern__echo") && names.includes("legacy__echo"),
        "both eras listed"
      )
      assert.includeMembers(names, ["modern__ask", "modern__slow", "legacy__pid"])

      // A plain call (the relay, with the envelope) and one with progress (the SDK path).
      const echoed = yield* Effect.promise(() => client.callTool({ name: "modern__echo", arguments: { text: "hi" } }))
      assert.strictEqual(textOf(echoed), "echo:hi")
      assert.notProperty(echoed, "resultType")
      const legacy = yield* Effect.promise(() => client.callTool({ name: "legacy__echo", arguments: { text: "old" } }))
      assert.strictEqual(textOf(legacy), "echo:old")
      const progress: Array<number> = []
      const slow = yield* Effect.promise(() =>
        client.callTool({ name: "modern__slow", arguments: { steps: 3, ms: 30 } }, undefined, {
          onprogress: (update) => progress.push(update.progress)
        })
      )
      assert.strictEqual(textOf(slow), "done")
      // The SDK may drop the last progress when it shares a read with the result (sdk-notes): at least the first came.
      assert.isAtLeast(progress.length, 1)
      assert.strictEqual(progress[0], 1)

      // Cancellation: the host's abort reaches the child as notifications/cancelled.
      const controller = new AbortController()
      const cancelled = yield* Effect.promise(() =>
        client
          .callTool({ name: "modern__slow", arguments: { steps: 100, ms: 100 } }, undefined, {
            signal: controller.signal,
            onprogress: () => controller.abort("enough")
          })
          .then(
            () => "answered",
            () => "aborted"
          )
      )
      assert.strictEqual(cancelled, "aborted")
      yield* pollUntil(
        Effect.promise(() => client.callTool({ name: "modern__aborted", arguments: {} })).pipe(Effect.map(textOf)),
        (count) => count === "1",
        "the child saw the cancel"
      )

      // Elicitation in the middle of a call, on the relay (plain call) and on the SDK path (progress asked).
      const relayed = yield* Effect.promise(() =>
        client.callTool({ name: "modern__ask", arguments: { question: "who?" } })
      )
      assert.strictEqual(textOf(relayed), "answer:accept:Ada")
      const viaSdk = yield* Effect.promise(() =>
        client.callTool({ name: "modern__ask", arguments: { question: "again?" } }, undefined, { onprogress: () => {} })
      )
      assert.strictEqual(textOf(viaSdk), "answer:accept:Ada")
      assert.deepStrictEqual(asked, ["who?", "again?"])
      const roots = yield* Effect.promise(() => client.callTool({ name: "modern__roots", arguments: {} }))
      assert.strictEqual(textOf(roots), "roots:file:///project")

      // resources/updated: the host's subscribe becomes a subscriptions/listen at the child.
      const { resources } = yield* Effect.promise(() => client.listResources())
      const doc = resources.find((resource) => resource.name === "modern__doc")!
      const updated: Array<string> = []
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, async (notification) => {
        updated.push(notification.params.uri)
      })
      yield* Effect.promise(() => client.subscribeResource({ uri: doc.uri }))
      yield* Effect.promise(() => client.callTool({ name: "modern__touch", arguments: { uri: "modern://doc" } }))
      yield* eventually(() => updated.length > 0, 10_000, "resources/updated")
      assert.strictEqual(updated[0], doc.uri)
    })
  )
})

describe("completion/complete of a modern child", () => {
  // Two modern children with the same prompt: one names completions in its server/discover, the other serves them
  // without naming them (as the conformance suite's example server answers a modern client); a legacy child that has
  // no completions (tiny-server) stays refused by clawtool.
  const completing = () =>
    writeConfig(`
      [sources.named]
      command = ${JSON.stringify([process.execPath, modernServer])}
      [sources.unnamed]
      command = ${JSON.stringify([process.execPath, modernServer])}
      env = { MODERN_FIXTURE_COMPLETIONS = "unannounced" }
    `)
  const ask = (prompt: string) => ({
    ref: { type: "ref/prompt" as const, name: prompt },
    argument: { name: "name", value: "A" }
  })

  it.scopedLive("reaches the child whether or not its discover names completions, from either era's host", () =>
    Effect.gen(function* () {
      const config = completing()
      const legacyHost = yield* serveClient(config)
      yield* pollUntil(
        Effect.promise(() => legacyHost.listPrompts()).pipe(
          Effect.map(({ prompts }) => prompts.map((prompt) => prompt.name))
        ),
        (names) => names.includes("named__greet") && names.includes("unnamed__greet"),
        "both prompts listed"
      )
      const modern = yield* modernHost(config)
      for (const source of ["named", "unnamed"]) {
        const fromLegacy = yield* Effect.promise(() => legacyHost.complete(ask(`${source}__greet`)))
        assert.deepStrictEqual(fromLegacy.completion.values, ["Ada", "Alan"], source)
        const fromModern = yield* Effect.promise(() => modern.complete(ask(`${source}__greet`)))
        assert.deepStrictEqual(fromModern.completion.values, ["Ada", "Alan"], source)
      }
    })
  )
})

describe("a modern-only child behind a modern host: input_required passed through", () => {
  const modernOnly = () =>
    writeConfig(`[sources.modern]\ncommand = ${JSON.stringify([process.execPath, modernServer])}\n`)
  const asking = {
    ...modernMeta,
    "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} }, roots: {} }
  }

  it.scopedLive("an SDK v2 host answers the child's elicitation and roots mid-call; progress, cancellation", () =>
    Effect.gen(function* () {
      const client = yield* modernHost(modernOnly(), { elicitation: { form: {} }, roots: {} })
      const asked: Array<string> = []
      client.setRequestHandler("elicitation/create", async (request) => {
        asked.push(String((request.params as Json).message))
        return { action: "accept", content: { name: "Ada" } }
      })
      client.setRequestHandler("roots/list", async () => ({ roots: [{ uri: "file:///project" }] }))
      yield* pollUntil(
        Effect.promise(() => client.listTools()).pipe(Effect.map(({ tools }) => tools.map((tool) => tool.name))),
        (names) => names.includes("modern__ask"),
        "the modern child listed"
      )
      const answer = yield* Effect.promise(() =>
        client.callTool({ name: "modern__ask", arguments: { question: "who?" } })
      )
      assert.strictEqual(textOf(answer), "answer:accept:Ada")
      assert.deepStrictEqual(asked, ["who?"])
      const roots = yield* Effect.promise(() => client.callTool({ name: "modern__roots", arguments: {} }))
      assert.strictEqual(textOf(roots), "roots:file:///project")
      // Progress and cancellation between the two modern ends.
      const progress: Array<number> = []
      const slow = yield* Effect.promise(() =>
        client.callTool(
          { name: "modern__slow", arguments: { steps: 3, ms: 30 } },
          { onprogress: (update) => void progress.push(update.progress) }
        )
      )
      assert.strictEqual(textOf(slow), "done")
      assert.isAtLeast(progress.length, 1)
      const controller = new AbortController()
      const cancelled = yield* Effect.promise(() =>
        client
          .callTool(
            { name: "modern__slow", arguments: { steps: 100, ms: 100 } },
            { signal: controller.signal, onprogress: () => controller.abort("enough") }
          )
          .then(
            () => "answered",
            () => "aborted"
          )
      )
      assert.strictEqual(cancelled, "aborted")
      yield* pollUntil(
        Effect.promise(() => client.callTool({ name: "modern__aborted", arguments: {} })).pipe(Effect.map(textOf)),
        (count) => count === "1",
        "the child saw the cancel"
      )
    })
  )

  it.scopedLive(
    "raw lines: the child's own requests, its state inside clawtool's; forged or reused for another call",
    () =>
      Effect.gen(function* () {
        const host = yield* wireHost(modernOnly())
        const params = { name: "modern__ask", arguments: { question: "who?" }, _meta: asking }
        let first: Json = {}
        for (let id = 1; first.result?.resultType !== "input_required" && id < 100; id++) {
          first = JSON.parse(yield* host.request(id, "tools/call", params)) as Json
          if (first.result?.resultType !== "input_required") yield* Effect.sleep("100 millis")
        }
        // The child's own key and request, as it asked (passed through, not parked under a key of clawtool's).
        assert.deepStrictEqual(Object.keys(first.result.inputRequests), ["answer"])
        assert.strictEqual(first.result.inputRequests.answer.method, "elicitation/create")
        assert.strictEqual(first.result.inputRequests.answer.params.message, "who?")
        const state = first.result.requestState as string
        assert.notInclude(state, "state:who?")
        const inputResponses = { answer: { action: "accept", content: { name: "Ada" } } }
        const done = JSON.parse(
          yield* host.request(200, "tools/call", { ...params, inputResponses, requestState: state })
        ) as Json
        assert.strictEqual(done.result.resultType, "complete")
        // The child checked that its own state came back ("state:who?").
        assert.strictEqual(done.result.content[0].text, "answer:accept:Ada")
        const [payload] = state.split(".")
        const forged = JSON.parse(
          yield* host.request(201, "tools/call", { ...params, inputResponses, requestState: `${payload}.AAAA` })
        ) as Json
        assert.strictEqual(forged.error.code, -32602)
        assert.include(forged.error.message, "signature mismatch")
        const otherCall = JSON.parse(
          yield* host.request(202, "tools/call", {
            ...params,
            arguments: { question: "someone else?" },
            inputResponses,
            requestState: state
          })
        ) as Json
        assert.strictEqual(otherCall.error.code, -32602)
        assert.include(otherCall.error.message, "other arguments")
      })
  )

  it.scopedLive("over HTTP: a state past [http] input_required_ttl is refused (tools/call and prompts/get)", () =>
    Effect.gen(function* () {
      const config = writeConfig(`
        [http]
        input_required_ttl = "1s"
        [sources.modern]
        command = ${JSON.stringify([process.execPath, modernServer])}
      `)
      const { port } = yield* startDaemon(config)
      const params = { name: "modern__ask", arguments: { question: "late?" }, _meta: asking }
      const prompt = { name: "modern__greet", arguments: {}, _meta: asking }
      const post = (id: number, method: string, body: Json) =>
        Effect.map(
          rawRequest(port, {
            headers: { "mcp-method": method, "mcp-name": String(body.name) },
            body: JSON.stringify({ jsonrpc: "2.0", id, method, params: body })
          }),
          (response) => messagesOf(response.body)[0] as Json
        )
      const first = yield* post(1, "tools/call", params)
      assert.strictEqual(first.result.resultType, "input_required")
      const greet = yield* post(2, "prompts/get", prompt)
      assert.strictEqual(greet.result.resultType, "input_required")
      yield* Effect.sleep("1500 millis")
      const inputResponses = { answer: { action: "accept", content: { name: "Ada" } } }
      const late = yield* post(3, "tools/call", { ...params, inputResponses, requestState: first.result.requestState })
      assert.strictEqual(late.error.code, -32602)
      assert.include(late.error.message, "has expired")
      const latePrompt = yield* post(4, "prompts/get", {
        ...prompt,
        inputResponses,
        requestState: greet.result.requestState
      })
      assert.strictEqual(latePrompt.error.code, -32602)
      assert.include(latePrompt.error.message, "has expired")
    })
  )

  it.scopedLive("over HTTP: replicas sharing [http] state_key take each other's state; another key's is refused", () =>
    Effect.gen(function* () {
      const config = writeConfig(`
        [http]
        state_key = "\${STATE_KEY}"
        [sources.modern]
        command = ${JSON.stringify([process.execPath, modernServer])}
      `)
      // Three stateless daemons, each with its own child: two share a key, the third has another.
      const shared = { STATE_KEY: "a-key-both-replicas-share-0123456789" }
      const first = yield* startDaemon(config, { env: shared })
      const second = yield* startDaemon(config, { env: shared })
      const stranger = yield* startDaemon(config, { env: { STATE_KEY: "another-key-of-another-clawtool-42" } })
      const post = (port: number, id: number, body: Json) =>
        Effect.map(
          rawRequest(port, {
            headers: { "mcp-method": "tools/call", "mcp-name": String(body.name) },
            body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: body })
          }),
          (response) => messagesOf(response.body)[0] as Json
        )
      const params = { name: "modern__ask", arguments: { question: "which replica?" }, _meta: asking }
      const asked = yield* post(first.port, 1, params)
      assert.strictEqual(asked.result.resultType, "input_required")
      const retry = {
        ...params,
        inputResponses: { answer: { action: "accept", content: { name: "Ada" } } },
        requestState: asked.result.requestState
      }
      // The other replica's child checks that its own state came back inside clawtool's ("state:which replica?").
      const answered = yield* post(second.port, 2, retry)
      assert.strictEqual(answered.result.resultType, "complete")
      assert.strictEqual(answered.result.content[0].text, "answer:accept:Ada")
      const refused = yield* post(stranger.port, 3, retry)
      assert.strictEqual(refused.error.code, -32602)
      assert.include(refused.error.message, "signature mismatch")
    })
  )
})

/** The modern fixture over HTTP (legacy rejected), each request's method logged; killed with the scope. */
const modernRemote = Effect.acquireRelease(
  Effect.async<{ url: string; count: (method: string) => number; stop: () => void }>((resume) => {
    const log = path.join(tempDir(), "requests.log")
    const child = spawn(process.execPath, [modernHttpServer], {
      env: { ...process.env, MODERN_FIXTURE_LOG: log },
      stdio: ["ignore", "pipe", "inherit"]
    })
    child.stdout.once("data", (chunk: Buffer) => {
      const port = /listening (\d+)/.exec(chunk.toString("utf8"))![1]
      resume(
        Effect.succeed({
          url: `http://127.0.0.1:${port}/mcp`,
          count: (method) =>
            fs.existsSync(log)
              ? fs
                  .readFileSync(log, "utf8")
                  .split("\n")
                  .filter((line) => line === method).length
              : 0,
          stop: () => void child.kill()
        })
      )
    })
  }),
  (remote) => Effect.sync(remote.stop)
)

describe("a modern-only remote (a url source)", () => {
  it.scopedLive("a legacy SDK v1 host calls its tools through clawtool: calls, progress, elicitation mid-call", () =>
    Effect.gen(function* () {
      const remote = yield* modernRemote
      const config = writeConfig(`[sources.remote]\nurl = ${JSON.stringify(remote.url)}\n`)
      const client = yield* serveClient(config, { elicitation: {} })
      client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { name: "Ada" } }))
      yield* pollUntil(
        Effect.promise(() => client.listTools()).pipe(Effect.map(({ tools }) => tools.map((tool) => tool.name))),
        (names) => names.includes("remote__echo"),
        "the modern remote listed"
      )
      const echoed = yield* Effect.promise(() => client.callTool({ name: "remote__echo", arguments: { text: "hi" } }))
      assert.strictEqual(textOf(echoed), "echo:hi")
      assert.notProperty(echoed, "resultType")
      const progress: Array<number> = []
      const slow = yield* Effect.promise(() =>
        client.callTool({ name: "remote__slow", arguments: { steps: 3, ms: 30 } }, undefined, {
          onprogress: (update) => progress.push(update.progress)
        })
      )
      assert.strictEqual(textOf(slow), "done")
      assert.isAtLeast(progress.length, 1)
      const asked = yield* Effect.promise(() =>
        client.callTool({ name: "remote__ask", arguments: { question: "who?" } })
      )
      assert.strictEqual(textOf(asked), "answer:accept:Ada")
      // Never an initialize: the probe found the era, the v2 client adopted its answer.
      assert.strictEqual(remote.count("initialize"), 0)
      assert.strictEqual(remote.count("server/discover"), 1)
    })
  )

  it.scopedLive('the verdict is kept with the catalog; protocol = "legacy" does not reach it', () =>
    Effect.gen(function* () {
      const remote = yield* modernRemote
      const config = writeConfig(`
        [sources.auto]
        url = ${JSON.stringify(remote.url)}
        [sources.old]
        url = ${JSON.stringify(remote.url)}
        protocol = "legacy"
        restart = "never"
      `)
      const cache = freshCacheDir()
      const health = () =>
        Effect.promise(() => runCliAsync(["health", "--json", "--config", config], { CLAWTOOL_CACHE_DIR: cache })).pipe(
          Effect.map(({ stdout }) =>
            (JSON.parse(stdout) as Array<{ name: string; status: string; era: string | null }>).map((row) => [
              row.name,
              row.status,
              row.era
            ])
          )
        )
      const expected = [
        ["auto", "running", "modern"],
        ["old", "down", null]
      ]
      assert.deepStrictEqual(yield* health(), expected)
      assert.strictEqual(remote.count("server/discover"), 1)
      assert.deepStrictEqual(yield* health(), expected)
      // The second start adopted the kept verdict and discover answer: no probe.
      assert.strictEqual(remote.count("server/discover"), 1)
    })
  )
})

describe("the era verdict", () => {
  it.live("is probed once, in place, then re-used from the catalog cache at the next start (no second probe)", () =>
    Effect.gen(function* () {
      const { config, count } = bothEras()
      const cache = freshCacheDir()
      const first = yield* Effect.promise(() =>
        runCliAsync(["health", "--json", "--config", config], { CLAWTOOL_CACHE_DIR: cache })
      )
      const rows = JSON.parse(first.stdout) as Array<{ name: string; status: string; era: string | null }>
      assert.deepStrictEqual(
        rows.map((row) => [row.name, row.status, row.era]),
        [
          ["legacy", "running", "legacy"],
          ["modern", "running", "modern"]
        ]
      )
      // Probed in place: one process, one server/discover, no initialize (the modern child never gets one).
      assert.deepStrictEqual([count("start"), count("server/discover"), count("initialize")], [1, 1, 0])
      yield* Effect.promise(() => runCliAsync(["health", "--json", "--config", config], { CLAWTOOL_CACHE_DIR: cache }))
      // The next start adopts the kept verdict (and discover answer): no probe at all.
      assert.deepStrictEqual([count("start"), count("server/discover"), count("initialize")], [2, 1, 0])
    })
  )

  it.live("a kept verdict that fails is probed again: a server that became modern-only is reached", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const eraFile = path.join(dir, "era")
      fs.writeFileSync(eraFile, "legacy")
      const config = writeConfig(`
        [sources.switch]
        command = ${JSON.stringify([process.execPath, modernServer])}
        env = { ERA_FILE = ${JSON.stringify(eraFile)} }
      `)
      const cache = freshCacheDir()
      const run = () =>
        Effect.promise(() => runCliAsync(["health", "--json", "--config", config], { CLAWTOOL_CACHE_DIR: cache })).pipe(
          Effect.map(({ stdout }) => (JSON.parse(stdout) as Array<{ era: string | null; toolCount: number }>)[0]!)
        )
      const before = yield* run()
      assert.deepStrictEqual([before.era, before.toolCount], ["legacy", 4])
      fs.writeFileSync(eraFile, "modern")
      const after = yield* run()
      assert.deepStrictEqual([after.era, after.toolCount], ["modern", 7])
    })
  )

  it.live('protocol = "modern" speaks 2026-07-28 with no probe to keep; a legacy server then does not start', () =>
    Effect.gen(function* () {
      const log = path.join(tempDir(), "starts.log")
      const config = writeConfig(`
        [sources.modern]
        command = ${JSON.stringify([process.execPath, modernServer])}
        env = { MODERN_FIXTURE_LOG = ${JSON.stringify(log)} }
        protocol = "modern"
        [sources.legacy]
        command = ${JSON.stringify([process.execPath, tinyServer])}
        protocol = "modern"
        restart = "never"
      `)
      const { stdout } = yield* Effect.promise(() => runCliAsync(["health", "--json", "--config", config]))
      const rows = JSON.parse(stdout) as Array<{ name: string; status: string; era: string | null; toolCount: number }>
      assert.deepStrictEqual(
        rows.map((row) => [row.name, row.status, row.era, row.toolCount]),
        [
          ["legacy", "down", null, 0],
          ["modern", "running", "modern", 7]
        ]
      )
      // The pinned client's own server/discover, on the session's process: one process, never an initialize.
      const lines = fs.readFileSync(log, "utf8").split("\n").filter(Boolean)
      assert.deepStrictEqual(
        lines.map((line) => line.split(" ")[0]),
        ["start", "server/discover"]
      )
    })
  )

  it.live("tools list names each running source's era, in its text and its JSON", () =>
    Effect.gen(function* () {
      const { config } = bothEras()
      const cache = freshCacheDir()
      const text = yield* Effect.promise(() =>
        runCliAsync(["tools", "list", "--config", config], { CLAWTOOL_CACHE_DIR: cache })
      )
      assert.include(text.stdout.split("\n"), "sources' MCP eras: legacy legacy, modern modern")
      const json = yield* Effect.promise(() =>
        runCliAsync(["tools", "list", "--json", "--config", config], { CLAWTOOL_CACHE_DIR: cache })
      )
      assert.deepStrictEqual((JSON.parse(json.stdout) as { eras: unknown }).eras, {
        legacy: "legacy",
        modern: "modern"
      })
    })
  )
})

describe("per request: the host's capabilities, and input_required on prompts/get and resources/read", () => {
  const modernOnly = () =>
    writeConfig(`[sources.modern]\ncommand = ${JSON.stringify([process.execPath, modernServer])}\n`)
  const listed = (client: { listTools: () => Promise<{ tools: Array<{ name: string }> }> }) =>
    pollUntil(
      Effect.promise(() => client.listTools()).pipe(Effect.map(({ tools }) => tools.map((tool) => tool.name))),
      (names) => names.includes("modern__ask"),
      "the modern child listed"
    )
  /** The code and data a call was refused with (SDK v2's ProtocolError or v1's McpError), or "answered". */
  const refusal = (call: () => Promise<unknown>) =>
    Effect.promise(() =>
      call().then(
        () => ({ code: 0, data: undefined as unknown }),
        (error: { code: number; data?: unknown }) => ({ code: error.code, data: error.data })
      )
    )

  it.scopedLive(
    "a modern host without elicitation: the child itself answers -32021, on the relay and the SDK path",
    () =>
      Effect.gen(function* () {
        // No input capability at all: the call takes the relay; roots only: the SDK path (it could answer roots/list).
        for (const capabilities of [{}, { roots: {} }]) {
          const client = yield* modernHost(modernOnly(), capabilities)
          yield* listed(client)
          const refused = yield* refusal(() =>
            client.callTool({ name: "modern__ask", arguments: { question: "who?" } })
          )
          assert.strictEqual(refused.code, -32021)
          assert.deepStrictEqual((refused.data as Json).requiredCapabilities, { elicitation: { form: {} } })
        }
      })
  )

  it.scopedLive(
    "over HTTP: a modern request's envelope reaches the child (-32021 is HTTP 400); a legacy session's own",
    () =>
      Effect.gen(function* () {
        const { port, url } = yield* startDaemon(modernOnly())
        const post = (capabilities: Json) =>
          rawRequest(port, {
            headers: { "mcp-method": "tools/call", "mcp-name": "modern__ask" },
            body: JSON.stringify({
              jsonrpc: "2.0",
              id: 1,
              method: "tools/call",
              params: {
                name: "modern__ask",
                arguments: { question: "who?" },
                _meta: { ...modernMeta, "io.modelcontextprotocol/clientCapabilities": capabilities }
              }
            })
          })
        const refused = yield* pollUntil(
          post({}),
          (response) => messagesOf(response.body)[0]?.error !== undefined,
          "the child answered"
        )
        assert.strictEqual(refused.status, 400)
        assert.strictEqual((messagesOf(refused.body)[0] as Json).error.code, -32021)
        const asked = yield* post({ elicitation: { form: {} } })
        assert.strictEqual((messagesOf(asked.body)[0] as Json).result.resultType, "input_required")
        // A legacy session declares elicitation at initialize ([http] child_capabilities is empty): the child is told so
        // for its calls, asks, and clawtool asks that session for real.
        const client = yield* httpClient(url, {
          capabilities: { elicitation: {} },
          setup: (client) =>
            client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { name: "Ada" } }))
        })
        const answered = yield* callTool(client.client, "modern__ask", { question: "who?" })
        assert.strictEqual(textOfResult(answered), "answer:accept:Ada")
      })
  )

  it.scopedLive("an SDK v2 host gets a prompt and reads a resource whose child asks for input (passed through)", () =>
    Effect.gen(function* () {
      const client = yield* modernHost(modernOnly(), { elicitation: { form: {} } })
      const asked: Array<string> = []
      client.setRequestHandler("elicitation/create", async (request) => {
        asked.push(String((request.params as Json).message))
        return { action: "accept", content: { name: "Ada" } }
      })
      yield* listed(client)
      const prompt = yield* Effect.promise(() =>
        client.getPrompt({ name: "modern__greet", arguments: { style: "warm" } })
      )
      assert.deepStrictEqual(prompt.messages[0]!.content, { type: "text", text: "warm hello accept:Ada" })
      const { resources } = yield* Effect.promise(() => client.listResources())
      const secret = resources.find((resource) => resource.name === "modern__secret")!
      const read = yield* Effect.promise(() => client.readResource({ uri: secret.uri }))
      assert.strictEqual((read.contents[0] as { text: string }).text, "secret of accept:Ada")
      assert.deepStrictEqual(asked, ["who is greeted?", "whose secret?"])
    })
  )

  it.scopedLive("raw lines: prompts/get's state is clawtool's, and only good for the same prompt and arguments", () =>
    Effect.gen(function* () {
      const host = yield* wireHost(modernOnly())
      const meta = { ...modernMeta, "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } } }
      const params = { name: "modern__greet", arguments: { style: "warm" }, _meta: meta }
      let first: Json = {}
      for (let id = 1; first.result?.resultType !== "input_required" && id < 100; id++) {
        first = JSON.parse(yield* host.request(id, "prompts/get", params)) as Json
        if (first.result?.resultType !== "input_required") yield* Effect.sleep("100 millis")
      }
      assert.deepStrictEqual(Object.keys(first.result.inputRequests), ["answer"])
      const state = first.result.requestState as string
      assert.notInclude(state, "state:greet")
      const inputResponses = { answer: { action: "accept", content: { name: "Ada" } } }
      const retry = (id: number, method: string, body: Json) =>
        Effect.map(host.request(id, method, { ...body, inputResponses }), (line) => JSON.parse(line) as Json)
      const done = yield* retry(200, "prompts/get", { ...params, requestState: state })
      assert.strictEqual(done.result.resultType, "complete")
      assert.strictEqual(done.result.messages[0].content.text, "warm hello accept:Ada")
      const [payload] = state.split(".")
      const forged = yield* retry(201, "prompts/get", { ...params, requestState: `${payload}.AAAA` })
      assert.include(forged.error.message, "signature mismatch")
      const other = yield* retry(202, "prompts/get", { ...params, arguments: { style: "cold" }, requestState: state })
      assert.include(other.error.message, "other arguments")
      const elsewhere = yield* retry(203, "resources/read", {
        uri: "modern://secret",
        _meta: meta,
        requestState: state
      })
      assert.strictEqual(
        elsewhere.error.message,
        "Invalid params: requestState was issued for a prompts/get of modern__greet"
      )
      // The child was spawned for a host with elicitation; this request's envelope has none (the relay's line says so).
      const bare = JSON.parse(
        yield* host.request(204, "tools/call", {
          name: "modern__ask",
          arguments: { question: "who?" },
          _meta: modernMeta
        })
      ) as Json
      assert.strictEqual(bare.error.code, -32021)
    })
  )

  it.scopedLive("a legacy host is asked for real when a modern child's prompts/get or resources/read needs input", () =>
    Effect.gen(function* () {
      const client = yield* serveClient(modernOnly(), { elicitation: {} })
      client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { name: "Ada" } }))
      yield* listed(client)
      const prompt = yield* Effect.promise(() => client.getPrompt({ name: "modern__greet", arguments: {} }))
      assert.deepStrictEqual(prompt.messages[0]!.content, { type: "text", text: "plain hello accept:Ada" })
      const { resources } = yield* Effect.promise(() => client.listResources())
      const secret = resources.find((resource) => resource.name === "modern__secret")!
      const read = yield* Effect.promise(() => client.readResource({ uri: secret.uri }))
      assert.strictEqual((read.contents[0] as { text: string }).text, "secret of accept:Ada")
    })
  )
})
