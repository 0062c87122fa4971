// [trust] confirm, confirm_timeout, unconfirmed and per source read_only (issue 25, ADR 029), through the built
// `clawtool serve` over stdio and as the daemon (`serve --listen`): SDK clients as hosts, with and without the
// elicitation capability, answering yes, no, cancel or nothing; test/fixtures/confirm-server.mjs as the children (it
// says which calls reached it). Plain stdio calls take the line relay unless CallPlan sends them to the SDK path, so
// the stdio tests also show that the relay never skips a confirmation.
import { assert, beforeAll, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { type CallToolResult, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import * as path from "node:path"
import { ensureBuilt, freshCacheDir, main, tempDirEnv, writeConfig } from "../lib/cli.js"
import { callTool, httpClient, startDaemon, textOf } from "../lib/daemon.js"
import { eventually, root } from "../lib/sources.js"

beforeAll(ensureBuilt, 120_000)

const fixture = JSON.stringify([process.execPath, path.join(root, "test/fixtures/confirm-server.mjs")])

const configOf = (trust: string) =>
  writeConfig(`
    [trust]
    ${trust}
    [sources.fx]
    command = ${fixture}
    [sources.ro]
    command = ${fixture}
    read_only = true
  `)

/** What the host answers to clawtool's elicitation/create: yes, no, cancel, or nothing until it is cancelled. */
type Answer = "yes" | "no" | "cancel" | "silence"

/** A host with the elicitation capability: what it was asked, what it answers, and the questions cancelled. */
const asking = () => {
  const state = {
    answer: "yes" as Answer,
    asked: [] as Array<{ readonly message: string; readonly requestedSchema: unknown }>,
    cancelled: 0
  }
  const setup = (client: Client) =>
    client.setRequestHandler(ElicitRequestSchema, (request, extra) => {
      const params = request.params as { message: string; requestedSchema: unknown }
      state.asked.push({ message: params.message, requestedSchema: params.requestedSchema })
      switch (state.answer) {
        case "yes":
          return Promise.resolve({ action: "accept", content: { confirm: true } })
        case "no":
          return Promise.resolve({ action: "decline" })
        case "cancel":
          return Promise.resolve({ action: "cancel" })
        case "silence":
          return new Promise((_resolve, reject) =>
            extra.signal.addEventListener("abort", () => {
              state.cancelled++
              reject(new Error("cancelled by clawtool"))
            })
          )
      }
    })
  return { state, setup, capabilities: { elicitation: {} } }
}

/** An SDK host over stdio on `clawtool serve`, set up before it connects; its stderr collected. */
const stdioHost = (config: string, capabilities: Record<string, unknown>, setup?: (client: Client) => void) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [main, "serve", "--config", config],
        cwd: root,
        env: { ...getDefaultEnvironment(), ...tempDirEnv, CLAWTOOL_CACHE_DIR: freshCacheDir() },
        stderr: "pipe"
      })
      let stderr = ""
      transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
      const client = new Client({ name: "confirm-host", version: "1.0.0" }, { capabilities })
      setup?.(client)
      await client.connect(transport)
      return { client, stderr: () => stderr }
    }),
    ({ client }) => Effect.promise(() => client.close())
  )

const reasonOf = (result: CallToolResult) =>
  (result._meta as { clawtool?: { error?: { reason?: string } } } | undefined)?.clawtool?.error?.reason

/** The call was refused with CallError Denied, its text saying `why`. */
const assertDenied = (result: CallToolResult, why: string) => {
  assert.isTrue(result.isError, textOf(result))
  assert.strictEqual(reasonOf(result), "Denied")
  assert.include(textOf(result), why)
}

/** What reached `instance`'s child, in order (the fixture's own record). */
const reached = (client: Client, instance = "fx") =>
  Effect.map(callTool(client, `${instance}__calls`), (result) => textOf(result))

/** Yes runs, no / cancel / silence refuse (the child never sees them); tools no selector names run unasked. */
const answersDecide = (client: Client, state: ReturnType<typeof asking>["state"]) =>
  Effect.gen(function* () {
    const args = { path: "/srv/data", note: `hidden${" ".repeat(300)}payload` }
    state.answer = "yes"
    assert.strictEqual(textOf(yield* callTool(client, "fx__remove", args)), `remove:${JSON.stringify(args)}`)
    assert.lengthOf(state.asked, 1)
    const { message, requestedSchema } = state.asked[0]!
    assert.include(message, 'fx__remove (tool "remove" of source "fx")')
    assert.include(message, '"path":"/srv/data"')
    assert.include(message, "hidden [300 spaces] payload")
    assert.deepInclude(requestedSchema, { required: ["confirm"] })

    state.answer = "no"
    assertDenied(yield* callTool(client, "fx__remove", args), "the user declined it")
    state.answer = "cancel"
    assertDenied(yield* callTool(client, "fx__remove", args), "the user dismissed the question (cancel)")
    state.answer = "silence"
    assertDenied(yield* callTool(client, "fx__remove", args), "no answer came within 300ms ([trust] confirm_timeout)")
    // The unanswered question is withdrawn at the host.
    yield* eventually(() => state.cancelled === 1, 10_000, "the question cancelled at the host")
    assert.lengthOf(state.asked, 4)

    // An explicit destructiveHint: false and no annotations at all are not "destructive"; "fx.change" names a tool.
    state.answer = "no"
    assert.strictEqual(textOf(yield* callTool(client, "fx__touch")), "touch:{}")
    assert.strictEqual(textOf(yield* callTool(client, "fx__plain")), "plain:{}")
    assert.lengthOf(state.asked, 4)
    assertDenied(yield* callTool(client, "fx__change"), "the user declined it")
    assert.include(state.asked[4]!.message, 'fx__change (tool "change" of source "fx")')
    state.answer = "yes"
    assert.strictEqual(textOf(yield* callTool(client, "fx__change")), "change:{}")
    assert.strictEqual(yield* reached(client), "remove,touch,plain,change")
  })

/** A read_only source lists only its tools annotated readOnlyHint: true; a call to another is refused unsent. */
const readOnlyHolds = (client: Client) =>
  Effect.gen(function* () {
    const { tools } = yield* Effect.promise(() => client.listTools())
    const names = tools.map((listed) => listed.name)
    assert.includeMembers(names, ["ro__look", "ro__calls", "fx__change", "fx__plain"])
    for (const hidden of ["ro__remove", "ro__touch", "ro__plain", "ro__change"]) assert.notInclude(names, hidden)
    assert.strictEqual(textOf(yield* callTool(client, "ro__look")), "look:{}")
    for (const hidden of ["ro__change", "ro__plain"]) {
      assertDenied(yield* callTool(client, hidden), `source "ro" is read-only (sources.ro.read_only = true)`)
    }
    assert.strictEqual(yield* reached(client, "ro"), "look")
  })

const confirming = `confirm = ["destructive", "fx.change", "nope.*"]\n    confirm_timeout = "300ms"`

describe("[trust] confirm over stdio", () => {
  it.scopedLive("a host that says yes runs the call; no, cancel and no answer within confirm_timeout refuse it", () =>
    Effect.gen(function* () {
      const host = asking()
      const { client, stderr } = yield* stdioHost(configOf(confirming), host.capabilities, host.setup)
      yield* answersDecide(client, host.state)
      assert.include(stderr(), `config: [trust] confirm "nope.*" names no configured source "nope"`)
    })
  )

  it.scopedLive(
    'a host without elicitation is refused (unconfirmed = "deny", the default), naming the key; "allow" runs it',
    () =>
      Effect.gen(function* () {
        const denying = yield* stdioHost(configOf(confirming), {})
        assertDenied(
          yield* callTool(denying.client, "fx__remove"),
          'this host cannot be asked (it did not declare the elicitation capability for forms). Set [trust] unconfirmed = "allow"'
        )
        assert.strictEqual(textOf(yield* callTool(denying.client, "fx__plain")), "plain:{}")
        assert.strictEqual(yield* reached(denying.client), "plain")

        const allowing = yield* stdioHost(configOf(`${confirming}\n    unconfirmed = "allow"`), {})
        assert.strictEqual(textOf(yield* callTool(allowing.client, "fx__remove")), "remove:{}")
        assert.strictEqual(yield* reached(allowing.client), "remove")
      })
  )

  it.scopedLive("a core tool is asked about by name; CallTool (catalog = search) is asked about as its target", () =>
    Effect.gen(function* () {
      const host = asking()
      const config = writeConfig(`
        catalog = "search"
        [trust]
        confirm = ["fx.remove", "Bash"]
        [sources.fx]
        command = ${fixture}
      `)
      const { client } = yield* stdioHost(config, host.capabilities, host.setup)
      const callThrough = (name: string) => callTool(client, "CallTool", { name, arguments: { path: "/x" } })
      host.state.answer = "no"
      assertDenied(yield* callThrough("fx__remove"), "the user declined it")
      assert.strictEqual(textOf(yield* callThrough("fx__touch")), 'touch:{"path":"/x"}')
      assert.lengthOf(host.state.asked, 1)
      assert.include(host.state.asked[0]!.message, 'fx__remove (tool "remove" of source "fx")')
      assertDenied(yield* callTool(client, "Bash", { command: "echo never" }), "the user declined it")
      assert.include(host.state.asked[1]!.message, "Bash (a clawtool core tool)")
      host.state.answer = "yes"
      assert.strictEqual(textOf(yield* callThrough("fx__remove")), 'remove:{"path":"/x"}')
      assert.strictEqual(textOf(yield* callThrough("fx__calls")), "touch,remove")
    })
  )

  it.scopedLive("read_only: only tools annotated readOnlyHint: true are listed and callable", () =>
    Effect.gen(function* () {
      const { client } = yield* stdioHost(configOf(""), {})
      yield* readOnlyHolds(client)
    })
  )
})

describe("[trust] confirm on the daemon (serve --listen)", () => {
  it.scopedLive(
    "each session is asked about its own calls: yes runs, no, cancel and silence refuse; a session without elicitation is refused",
    () =>
      Effect.gen(function* () {
        const daemon = yield* startDaemon(configOf(confirming))
        const first = asking()
        const other = asking()
        const { client } = yield* httpClient(daemon.url, { capabilities: first.capabilities, setup: first.setup })
        const otherSession = yield* httpClient(daemon.url, { capabilities: other.capabilities, setup: other.setup })
        yield* answersDecide(client, first.state)
        // The other session's host was never asked about the first one's calls, and is asked about its own.
        assert.lengthOf(other.state.asked, 0)
        other.state.answer = "no"
        assertDenied(yield* callTool(otherSession.client, "fx__remove"), "the user declined it")
        assert.lengthOf(other.state.asked, 1)
        assert.lengthOf(first.state.asked, 6)

        const plain = yield* httpClient(daemon.url)
        assertDenied(
          yield* callTool(plain.client, "fx__remove"),
          "this host cannot be asked (it did not declare the elicitation capability for forms)"
        )
        yield* readOnlyHolds(plain.client)
        assert.include(daemon.stderr(), `config: [trust] confirm "nope.*" names no configured source "nope"`)
      })
  )

  it.scopedLive('unconfirmed = "allow": a session without elicitation runs the call unasked', () =>
    Effect.gen(function* () {
      const daemon = yield* startDaemon(configOf(`${confirming}\n    unconfirmed = "allow"`))
      const { client } = yield* httpClient(daemon.url)
      assert.strictEqual(textOf(yield* callTool(client, "fx__remove")), "remove:{}")
      assert.strictEqual(yield* reached(client), "remove")
    })
  )
})
