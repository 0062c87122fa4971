// Profiles (issue 26): views over the one running set, chosen by endpoint, flag or token, never by a session's request.
// Real SDK clients against the built CLI: stdio serves with --profile / CLAWTOOL_PROFILE, one daemon serving /mcp and
// /mcp/<profile> to many sessions over the same children, named tokens, read_only, and a hot reload.
import { assert, beforeAll, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { type CallToolResult, McpError, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import * as z from "zod"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, freshCacheDir, main, runCli, tempDirEnv, writeConfig } from "../lib/cli.js"
import { callTool, httpClient, initializeBody, rawRequest, startDaemon, textOf } from "../lib/daemon.js"
import { pollUntil, root, stubCommand, tempDir } from "../lib/sources.js"

beforeAll(ensureBuilt, 120_000)

const confirmServer = JSON.stringify([process.execPath, path.join(root, "test/fixtures/confirm-server.mjs")])

/**
 * `files` (confirm-server: look and calls are readOnlyHint, the rest not) tagged code; `stub` (echo, …) recording its
 * starts. code: the tagged sources and Read; chat: stub and no core tool but the registry's; ro: read-only tools.
 */
const profilesConfig = (starts: string, extra = "", chatTools = `["*"]`) => `
[sources.files]
command = ${confirmServer}
tags = ["code"]

[sources.stub]
command = ${stubCommand("--record-start", starts)}

[profiles.code]
tags = ["code"]
core_tools = ["Read"]

[profiles.chat]
sources = ["stub"]
core_tools = []
tools = ${chatTools}

[profiles.ro]
read_only = true
${extra}
`

/** A source outside every profile but the whole view that lists two tasks of its own (tiny-server --paged). */
const pagedSource = `
[sources.paged]
command = ${JSON.stringify([process.execPath, path.join(root, "test/fixtures/tiny-server.mjs"), "--paged"])}
`

const taskList = z.looseObject({ tasks: z.array(z.looseObject({ taskId: z.string() })) })

const names = (tools: ReadonlyArray<{ readonly name: string }>) => tools.map((tool) => tool.name)
const sourceNames = (tools: ReadonlyArray<{ readonly name: string }>) =>
  names(tools).filter((name) => name.includes("__"))

const startsOf = (file: string) =>
  fs.existsSync(file)
    ? fs
        .readFileSync(file, "utf8")
        .split("\n")
        .filter((line) => line !== "")
    : []

/** `clawtool <args>` over stdio (serve, connect), an SDK client as its host; its stderr to `onStderr`, if given. */
const cliHost = (args: ReadonlyArray<string>, env: Record<string, string> = {}, onStderr?: (text: string) => void) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [main, ...args],
        cwd: root,
        env: { ...getDefaultEnvironment(), ...tempDirEnv, CLAWTOOL_CACHE_DIR: freshCacheDir(), ...env },
        stderr: "pipe"
      })
      transport.stderr?.on("data", (chunk: Buffer) => onStderr?.(chunk.toString("utf8")))
      const client = new Client({ name: "e2e-host", version: "1.0.0" }, { capabilities: {} })
      await client.connect(transport)
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

/** `clawtool serve` over stdio with extra arguments and environment. */
const stdioHost = (config: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  cliHost(["serve", "--config", config, ...args], env)

/** The tools/list answer once the sources settled (a list waits at most list_wait; both sources start in ms). */
const settledList = (client: Client, expected: number) =>
  pollUntil(
    Effect.promise(() => client.listTools()),
    (listed) => sourceNames(listed.tools).length >= expected,
    "the profile's source tools listed"
  )

/** Saves `text` as an editor does (a temporary file renamed over the config): one reload. */
const save = (config: string, text: string) => {
  fs.writeFileSync(`${config}.tmp`, text)
  fs.renameSync(`${config}.tmp`, config)
}

const errorText = (result: CallToolResult) => ({ isError: result.isError, text: textOf(result) })

describe("profiles over stdio", () => {
  it.scopedLive(
    "two serves of one config with different profiles list different catalogs, each byte-stable; outside is unknown",
    () =>
      Effect.gen(function* () {
        const config = writeConfig(profilesConfig(path.join(tempDir(), "starts")))
        const code = yield* stdioHost(config, ["--profile", "code"])
        const chat = yield* stdioHost(config, [], { CLAWTOOL_PROFILE: "chat" })
        const codeList = yield* settledList(code, 6)
        const chatList = yield* settledList(chat, 1)
        assert.deepStrictEqual(sourceNames(codeList.tools), [
          "files__calls",
          "files__change",
          "files__look",
          "files__plain",
          "files__remove",
          "files__touch"
        ])
        assert.deepStrictEqual(
          names(codeList.tools).filter((name) => !name.includes("__")),
          ["Read", "SourceHealth", "ToolSearch"]
        )
        assert.isTrue(sourceNames(chatList.tools).every((name) => name.startsWith("stub__")))
        assert.include(sourceNames(chatList.tools), "stub__echo")
        assert.deepStrictEqual(
          names(chatList.tools).filter((name) => !name.includes("__")),
          ["SourceHealth", "ToolSearch"]
        )
        // Byte-stable: listing again gives the same bytes.
        assert.strictEqual(JSON.stringify(yield* Effect.promise(() => code.listTools())), JSON.stringify(codeList))
        assert.strictEqual(JSON.stringify(yield* Effect.promise(() => chat.listTools())), JSON.stringify(chatList))

        // A tool of another profile is answered exactly as a name nothing serves.
        const outside = yield* callTool(code, "stub__echo", { text: "x" })
        const unknown = yield* callTool(code, "nothing__here", { text: "x" })
        assert.deepStrictEqual(errorText(outside), {
          isError: true,
          text: errorText(unknown).text.replace("nothing__here", "stub__echo")
        })
        assert.include(textOf(outside), `unknown tool "stub__echo"`)
        assert.deepStrictEqual(errorText(yield* callTool(chat, "Bash", { command: "true" })), {
          isError: true,
          text: errorText(yield* callTool(chat, "Nothing", {})).text.replace("Nothing", "Bash")
        })
        // Inside, it is called.
        assert.strictEqual(textOf(yield* callTool(chat, "stub__echo", { text: "hi" })), "echo:hi")
        // ToolSearch finds nothing outside the profile.
        const found = textOf(yield* callTool(code, "ToolSearch", { query: "echo text back", limit: 20 }))
        assert.notInclude(found, "stub__")
        assert.include(
          textOf(yield* callTool(chat, "ToolSearch", { query: "echo text back", limit: 20 })),
          "stub__echo"
        )
      }),
    60_000
  )

  it.scopedLive("read_only lists only the tools annotated readOnlyHint: true", () =>
    Effect.gen(function* () {
      const config = writeConfig(profilesConfig(path.join(tempDir(), "starts")))
      const ro = yield* stdioHost(config, ["--profile", "ro"])
      const listed = yield* settledList(ro, 2)
      assert.deepStrictEqual(
        sourceNames(listed.tools).filter((name) => name.startsWith("files__")),
        ["files__calls", "files__look"]
      )
      for (const tool of listed.tools) assert.isTrue(tool.annotations?.readOnlyHint === true, tool.name)
      assert.isTrue(errorText(yield* callTool(ro, "files__change", {})).isError)
    })
  )

  it.scopedLive(
    "tasks of a source outside the profile are not listed, and are unknown to tasks/get, result and cancel",
    () =>
      Effect.gen(function* () {
        // `paged` (tiny-server --paged) lists tasks task-1 and task-2 from its start; chat sees only stub.
        const config = writeConfig(profilesConfig(path.join(tempDir(), "starts"), pagedSource))
        const chat = yield* stdioHost(config, ["--profile", "chat"])
        const whole = yield* stdioHost(config, [])
        yield* settledList(whole, 9)
        const taskIds = (client: Client) =>
          Effect.map(
            Effect.promise(() => client.request({ method: "tasks/list", params: {} }, taskList)),
            ({ tasks }) => tasks.map((task) => task.taskId)
          )
        assert.deepStrictEqual(yield* taskIds(whole), ["paged__task-1", "paged__task-2"])
        yield* settledList(chat, 1)
        assert.deepStrictEqual(yield* taskIds(chat), [])
        const unknownTo = (client: Client) =>
          Effect.forEach(["tasks/get", "tasks/result", "tasks/cancel"], (method) =>
            Effect.map(
              Effect.promise(() =>
                client.request({ method, params: { taskId: "paged__task-1" } }, z.looseObject({})).then(
                  () => undefined,
                  (error: unknown) => error
                )
              ),
              (refused) => {
                assert.instanceOf(refused, McpError, method)
                assert.strictEqual((refused as McpError).code, -32602, method)
                assert.include((refused as McpError).message, `no task "paged__task-1" in this session`, method)
              }
            )
          )
        yield* unknownTo(chat)
        // The daemon's /mcp/chat says the same (there a session sees only the tasks its own calls created, too).
        const daemon = yield* startDaemon(config)
        const http = yield* httpClient(new URL("/mcp/chat", daemon.url))
        yield* settledList(http.client, 1)
        assert.deepStrictEqual(yield* taskIds(http.client), [])
        yield* unknownTo(http.client)
      }),
    60_000
  )

  it("an unknown profile on the command line exits 2 naming the known ones", () => {
    const config = writeConfig(profilesConfig(path.join(tempDir(), "starts")))
    const { code, stderr } = runCli(["serve", "--config", config, "--profile", "cod"])
    assert.strictEqual(code, 2)
    assert.include(stderr, `no profile named "cod"; did you mean "code"?; known profiles: chat, code, ro`)
    const listed = runCli(["tools", "list", "--config", config, "--profile", "zzzzzz"])
    assert.strictEqual(listed.code, 2)
    assert.include(listed.stderr, `no profile named "zzzzzz"; known profiles: chat, code, ro`)
  })
})

describe("a profile removed while a stdio serve uses it", () => {
  it.scopedLive("keeps its last view, warns once on stderr and says so in SourceHealth", () =>
    Effect.gen(function* () {
      const starts = path.join(tempDir(), "starts")
      const config = writeConfig(profilesConfig(starts))
      let stderr = ""
      const client = yield* cliHost(["serve", "--config", config, "--profile", "chat"], {}, (text) => (stderr += text))
      const before = yield* settledList(client, 1)
      const withoutChat = profilesConfig(starts).replace(
        /\[profiles\.chat\]\nsources = .*\ncore_tools = .*\ntools = .*\n/,
        ""
      )
      assert.notInclude(withoutChat, "profiles.chat")
      save(config, withoutChat)
      yield* pollUntil(
        Effect.sync(() => stderr),
        (text) => text.includes(`profile "chat" was removed`),
        "the warning"
      )
      // The same view, callable as before.
      assert.strictEqual(JSON.stringify(yield* Effect.promise(() => client.listTools())), JSON.stringify(before))
      assert.strictEqual(textOf(yield* callTool(client, "stub__echo", { text: "still" })), "echo:still")
      const health = textOf(yield* callTool(client, "SourceHealth", {}))
      assert.include(health, `profile "chat" was removed from the config by a reload`)
      assert.strictEqual(stderr.split(`profile "chat" was removed`).length - 1, 1, "warned once")
      assert.strictEqual(startsOf(starts).length, 1, "no child restarted")
    })
  )
})

describe("profiles in the CLI", () => {
  it("profile list: each view's endpoint, sources, tools, catalog mode and tokens; health and tools list per profile", () => {
    const starts = path.join(tempDir(), "starts")
    const config = writeConfig(
      profilesConfig(
        starts,
        `[profiles.ghost]\nsources = ["nowhere"]\ntools = ["stub.no_such_*"]\ncatalog = "search"\n`
      )
    )
    const listed = runCli(["profile", "list", "--config", config, "--json"])
    assert.strictEqual(listed.code, 0, listed.stderr)
    const rows = JSON.parse(listed.stdout) as ReadonlyArray<Record<string, unknown>>
    assert.deepStrictEqual(
      rows.map((row) => [row.name, row.endpoint, row.sources, row.catalog, row.readOnly]),
      [
        ["default", "/mcp", ["files", "stub"], "full", false],
        ["chat", "/mcp/chat", ["stub"], "full", false],
        ["code", "/mcp/code", ["files"], "full", false],
        ["ghost", "/mcp/ghost", [], "search", false],
        ["ro", "/mcp/ro", ["files", "stub"], "full", true]
      ]
    )
    const byName = new Map(rows.map((row) => [row.name, row]))
    // code: six files tools, Read, SourceHealth, ToolSearch; its tools/list's tokens are less than the whole one's.
    assert.strictEqual(byName.get("code")!.tools, 9)
    assert.isBelow(byName.get("code")!.tokens as number, byName.get("default")!.tokens as number)
    assert.isAbove(byName.get("code")!.tokens as number, 0)
    // What a profile names that does not exist: warnings naming it.
    assert.include(listed.stderr, `warning: [profiles.ghost] sources names no configured source "nowhere"`)
    assert.include(
      listed.stderr,
      `warning: [profiles.ghost] tools "stub.no_such_*" matches no tool of the running sources`
    )

    const table = runCli(["profile", "list", "--config", config])
    assert.match(table.stdout, /^PROFILE\s+ENDPOINT\s+SOURCES\s+TOOLS\s+CATALOG\s+READ-ONLY\s+~TOKENS/m)

    const health = runCli(["health", "--config", config, "--profile", "code", "--json"])
    assert.strictEqual(health.code, 0, health.stderr)
    assert.deepStrictEqual(
      (JSON.parse(health.stdout) as ReadonlyArray<{ name: string }>).map((row) => row.name),
      ["files"]
    )
    const tools = runCli(["tools", "list", "--config", config, "--profile", "chat", "--json"])
    const wires = (JSON.parse(tools.stdout) as { tools: ReadonlyArray<{ wire: string }> }).tools.map((row) => row.wire)
    assert.isTrue(
      wires.every((wire) => wire.startsWith("stub__") || !wire.includes("__")),
      wires.join(",")
    )
    assert.notInclude(wires, "Bash")
  })
})

const tokens = `
[http.tokens.alice]
token = "alice-secret-token"
profiles = ["code"]

[http.tokens.bob]
token = "bob-secret-token"
profiles = ["chat", "default"]
`

describe("profiles on the daemon", () => {
  it.scopedLive(
    "/mcp/code and /mcp/chat list different catalogs over the same children; tokens reach only their profiles",
    () =>
      Effect.gen(function* () {
        const starts = path.join(tempDir(), "starts")
        const daemon = yield* startDaemon(writeConfig(profilesConfig(starts, tokens)))
        const at = (profile?: string) => new URL(profile === undefined ? "/mcp" : `/mcp/${profile}`, daemon.url)
        const code = yield* httpClient(at("code"), { token: "alice-secret-token" })
        const chat = yield* httpClient(at("chat"), { token: "bob-secret-token" })
        const whole = yield* httpClient(at(), { token: "bob-secret-token" })
        const codeList = yield* settledList(code.client, 6)
        const chatList = yield* settledList(chat.client, 1)
        const wholeList = yield* settledList(whole.client, 7)
        assert.isTrue(sourceNames(codeList.tools).every((name) => name.startsWith("files__")))
        assert.isTrue(sourceNames(chatList.tools).every((name) => name.startsWith("stub__")))
        assert.includeMembers(sourceNames(wholeList.tools), [
          ...sourceNames(codeList.tools),
          ...sourceNames(chatList.tools)
        ])
        // The same tool objects under the same names in every view.
        const byName = new Map(wholeList.tools.map((tool) => [tool.name, JSON.stringify(tool)]))
        for (const tool of [...codeList.tools, ...chatList.tools]) {
          if (tool.name.includes("__")) assert.strictEqual(JSON.stringify(tool), byName.get(tool.name))
        }
        assert.strictEqual(textOf(yield* callTool(chat.client, "stub__echo", { text: "b" })), "echo:b")
        assert.include(textOf(yield* callTool(code.client, "stub__echo", { text: "a" })), `unknown tool "stub__echo"`)
        // `clawtool connect --profile chat` reaches /mcp/chat with the token it finds.
        const relayed = yield* cliHost(["connect", "--profile", "chat", daemon.url.href], {
          CLAWTOOL_HTTP_TOKEN: "bob-secret-token"
        })
        assert.strictEqual(
          JSON.stringify((yield* Effect.promise(() => relayed.listTools())).tools),
          JSON.stringify(chatList.tools)
        )
        // One child for every session and view: the stub started once.
        assert.strictEqual(startsOf(starts).length, 1)

        // alice reaches /mcp/code only: 403 on chat's profile and on /mcp, with a JSON-RPC body naming her token.
        for (const where of ["/mcp/chat", "/mcp"]) {
          const refused = yield* rawRequest(daemon.port, {
            path: where,
            headers: { authorization: "Bearer alice-secret-token" },
            body: initializeBody
          })
          assert.strictEqual(refused.status, 403, where)
          const body = JSON.parse(refused.body) as { error: { code: number; message: string } }
          assert.strictEqual(body.error.message, `Forbidden: token "alice" does not reach ${where}`)
        }
        // No token, or a wrong one: 401.
        assert.strictEqual((yield* rawRequest(daemon.port, { path: "/mcp/code", body: initializeBody })).status, 401)
        // An unknown profile: 404 with a JSON-RPC error body.
        const missing = yield* rawRequest(daemon.port, {
          path: "/mcp/nope",
          headers: { authorization: "Bearer bob-secret-token" },
          body: initializeBody
        })
        assert.strictEqual(missing.status, 404)
        assert.deepStrictEqual(JSON.parse(missing.body), {
          jsonrpc: "2.0",
          error: { code: -32601, message: `Not found: no profile "nope"; profiles: chat, code, ro (and /mcp)` },
          id: null
        })
        // A session is reached only at its own endpoint.
        const elsewhere = yield* rawRequest(daemon.port, {
          path: "/mcp/chat",
          headers: { authorization: "Bearer bob-secret-token", "mcp-session-id": code.transport.sessionId! },
          body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" })
        })
        assert.strictEqual(elsewhere.status, 404)
        // Names, never values, in the daemon's log.
        assert.include(daemon.stderr(), `token "alice"`)
        assert.notInclude(daemon.stderr(), "alice-secret-token")
      }),
    60_000
  )

  it.scopedLive(
    "a hot-reloaded profile change notifies only the sessions of that profile",
    () =>
      Effect.gen(function* () {
        const starts = path.join(tempDir(), "starts")
        const config = writeConfig(profilesConfig(starts))
        const daemon = yield* startDaemon(config)
        const at = (profile: string) => new URL(`/mcp/${profile}`, daemon.url)
        const notices = { code: 0, chat: 0 }
        const listening = (profile: "code" | "chat") => ({
          setup: (client: Client) =>
            client.setNotificationHandler(ToolListChangedNotificationSchema, () => void (notices[profile] += 1))
        })
        const code = yield* httpClient(at("code"), listening("code"))
        const chat = yield* httpClient(at("chat"), listening("chat"))
        yield* settledList(code.client, 6)
        const before = yield* settledList(chat.client, 1)
        assert.include(sourceNames(before.tools), "stub__echo")
        // chat loses stub.echo: only chat's view changed.
        save(config, profilesConfig(starts, "", `["*", "!stub.echo"]`))
        yield* pollUntil(
          Effect.sync(() => notices.chat),
          (count) => count === 1,
          "chat's list_changed"
        )
        const after = yield* Effect.promise(() => chat.client.listTools())
        assert.notInclude(sourceNames(after.tools), "stub__echo")
        // Then code's view changes (files.remove excluded): its first notice is this one, so the first reload sent it none.
        save(
          config,
          profilesConfig(starts, "", `["*", "!stub.echo"]`).replace(
            `core_tools = ["Read"]`,
            `core_tools = ["Read"]\ntools = ["*", "!files.remove"]`
          )
        )
        yield* pollUntil(
          Effect.sync(() => notices.code),
          (count) => count >= 1,
          "code's list_changed"
        )
        assert.deepStrictEqual(notices, { code: 1, chat: 1 })
        assert.strictEqual(startsOf(starts).length, 1, "no child restarted")
      }),
    60_000
  )

  it.scopedLive(
    "a reload that changes only a source's tags restarts nothing and notifies only the profiles whose view changed",
    () =>
      Effect.gen(function* () {
        const starts = path.join(tempDir(), "starts")
        const config = writeConfig(profilesConfig(starts))
        const daemon = yield* startDaemon(config)
        const notices = { code: 0, chat: 0 }
        const listening = (profile: "code" | "chat") => ({
          setup: (client: Client) =>
            client.setNotificationHandler(ToolListChangedNotificationSchema, () => void (notices[profile] += 1))
        })
        const code = yield* httpClient(new URL("/mcp/code", daemon.url), listening("code"))
        const chat = yield* httpClient(new URL("/mcp/chat", daemon.url), listening("chat"))
        assert.notInclude(sourceNames((yield* settledList(code.client, 6)).tools), "stub__echo")
        const chatBefore = yield* settledList(chat.client, 1)
        // stub is tagged code: the code profile (tags = ["code"]) now sees it; chat (by name) is unchanged.
        save(config, profilesConfig(starts).replace(`[sources.stub]`, `[sources.stub]\ntags = ["code"]`))
        // The notice first: a host that lists the new view before it is told has nothing left to be told.
        yield* pollUntil(
          Effect.sync(() => notices.code),
          (count) => count >= 1,
          "code's list_changed"
        )
        const after = yield* settledList(code.client, 7)
        assert.include(sourceNames(after.tools), "stub__echo")
        assert.strictEqual(textOf(yield* callTool(code.client, "stub__echo", { text: "t" })), "echo:t")
        // Settled: one notice to code, none to chat, the same list for chat, and the stub's one child.
        yield* Effect.sleep("500 millis")
        assert.deepStrictEqual(notices, { code: 1, chat: 0 })
        assert.strictEqual(
          JSON.stringify(yield* Effect.promise(() => chat.client.listTools())),
          JSON.stringify(chatBefore)
        )
        assert.strictEqual(startsOf(starts).length, 1, "the stub was not restarted")
        assert.include(daemon.stderr(), "tags changed (no restart): stub")
      }),
    60_000
  )

  it.scopedLive(
    "a reload applies [http.tokens]: a new token works, a removed or changed one is refused and its sessions end",
    () =>
      Effect.gen(function* () {
        const starts = path.join(tempDir(), "starts")
        const config = writeConfig(profilesConfig(starts, tokens))
        const daemon = yield* startDaemon(config)
        const at = (profile: string) => new URL(`/mcp/${profile}`, daemon.url)
        const alice = yield* httpClient(at("code"), { token: "alice-secret-token" })
        const bob = yield* httpClient(at("chat"), { token: "bob-secret-token" })
        yield* settledList(alice.client, 6)
        yield* settledList(bob.client, 1)
        // alice removed, bob's value changed, carol added (chat only).
        const reloaded = profilesConfig(
          starts,
          `
[http.tokens.bob]
token = "bob-new-token"
profiles = ["chat", "default"]

[http.tokens.carol]
token = "\${CAROL_TOKEN}"
profiles = ["chat"]
`
        )
        // carol's value comes with the same edit, in the secrets file beside the config.
        fs.writeFileSync(
          path.join(path.dirname(config), "secrets.toml"),
          `[scopes.global]\nCAROL_TOKEN = "carol-secret-token"\n`,
          {
            mode: 0o600
          }
        )
        save(config, reloaded)
        yield* pollUntil(
          Effect.sync(() => daemon.stderr()),
          (text) => text.includes("http: tokens reloaded"),
          "the tokens' reload"
        )
        assert.include(daemon.stderr(), "added [carol], removed [alice], changed [bob]; 2 session(s) ended")
        assert.notInclude(daemon.stderr(), "takes effect when serve restarts")
        const initializeWith = (token: string, where: string) =>
          rawRequest(daemon.port, { path: where, headers: { authorization: `Bearer ${token}` }, body: initializeBody })
        // Removed and old values: 401 on their next request; the new value and the new token are let in.
        assert.strictEqual((yield* initializeWith("alice-secret-token", "/mcp/code")).status, 401)
        assert.strictEqual((yield* initializeWith("bob-secret-token", "/mcp/chat")).status, 401)
        assert.strictEqual((yield* initializeWith("carol-secret-token", "/mcp/code")).status, 403)
        const carol = yield* httpClient(at("chat"), { token: "carol-secret-token" })
        assert.strictEqual(textOf(yield* callTool(carol.client, "stub__echo", { text: "c" })), "echo:c")
        // bob's session, opened with the old value, has ended: with the new value its id is unknown.
        const old = yield* rawRequest(daemon.port, {
          path: "/mcp/chat",
          headers: { authorization: "Bearer bob-new-token", "mcp-session-id": bob.transport.sessionId! },
          body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" })
        })
        assert.strictEqual(old.status, 404)
        // Tokens that cannot be told apart reject the reload as a whole, as they stop a start; Health says why.
        save(config, reloaded.replace('token = "${CAROL_TOKEN}"', `token = "bob-new-token"`))
        yield* pollUntil(
          Effect.map(callTool(carol.client, "SourceHealth", {}), textOf),
          (health) => health.includes("last reload failed"),
          "the rejected reload in SourceHealth"
        )
        assert.include(
          textOf(yield* callTool(carol.client, "SourceHealth", {})),
          `http.tokens.carol.token: has the same value as the token "bob"`
        )
        assert.strictEqual(textOf(yield* callTool(carol.client, "stub__echo", { text: "d" })), "echo:d")
        assert.notInclude(daemon.stderr(), "secret-token")
        assert.notInclude(daemon.stderr(), "bob-new-token")
      }),
    60_000
  )

  it.scopedLive(
    "a token's secret changed in secrets.toml alone is applied: the old value is refused and its sessions end",
    () =>
      Effect.gen(function* () {
        const starts = path.join(tempDir(), "starts")
        const config = writeConfig(
          profilesConfig(starts, `\n[http.tokens.dave]\ntoken = "\${DAVE_TOKEN}"\nprofiles = ["chat"]\n`)
        )
        const secrets = path.join(path.dirname(config), "secrets.toml")
        fs.writeFileSync(secrets, `[scopes.global]\nDAVE_TOKEN = "dave-old-token"\n`, { mode: 0o600 })
        const daemon = yield* startDaemon(config)
        const dave = yield* httpClient(new URL("/mcp/chat", daemon.url), { token: "dave-old-token" })
        yield* settledList(dave.client, 1)
        // The config file is not touched: only the secret behind the token changes.
        fs.writeFileSync(secrets, `[scopes.global]\nDAVE_TOKEN = "dave-new-token"\n`, { mode: 0o600 })
        yield* pollUntil(
          Effect.sync(() => daemon.stderr()),
          (text) => text.includes("http: tokens reloaded"),
          "the tokens' reload"
        )
        assert.include(daemon.stderr(), "added [], removed [], changed [dave]; 1 session(s) ended")
        const initializeWith = (token: string) =>
          rawRequest(daemon.port, {
            path: "/mcp/chat",
            headers: { authorization: `Bearer ${token}` },
            body: initializeBody
          })
        assert.strictEqual((yield* initializeWith("dave-old-token")).status, 401)
        const again = yield* httpClient(new URL("/mcp/chat", daemon.url), { token: "dave-new-token" })
        assert.strictEqual(textOf(yield* callTool(again.client, "stub__echo", { text: "d" })), "echo:d")
        assert.notInclude(daemon.stderr(), "dave-old-token")
        assert.notInclude(daemon.stderr(), "dave-new-token")
      }),
    60_000
  )

  it.scopedLive(
    "a profile removed by a reload ends its sessions; its endpoint answers 404 naming it; other profiles go on",
    () =>
      Effect.gen(function* () {
        const starts = path.join(tempDir(), "starts")
        const config = writeConfig(profilesConfig(starts))
        const daemon = yield* startDaemon(config)
        const ro = yield* httpClient(new URL("/mcp/ro", daemon.url))
        const chat = yield* httpClient(new URL("/mcp/chat", daemon.url))
        yield* settledList(ro.client, 2)
        yield* settledList(chat.client, 1)
        save(config, profilesConfig(starts).replace("[profiles.ro]\nread_only = true", ""))
        yield* pollUntil(
          Effect.sync(() => daemon.stderr()),
          (text) => text.includes("1 session(s) ended"),
          "the ro session's end"
        )
        const again = yield* rawRequest(daemon.port, {
          path: "/mcp/ro",
          headers: { "mcp-session-id": ro.transport.sessionId! },
          body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" })
        })
        assert.strictEqual(again.status, 404)
        assert.include((JSON.parse(again.body) as { error: { message: string } }).error.message, `no profile "ro"`)
        assert.strictEqual(textOf(yield* callTool(chat.client, "stub__echo", { text: "on" })), "echo:on")
      }),
    60_000
  )
})
