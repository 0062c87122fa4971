import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import {
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema
} from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { execFile, spawn, type ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { ensureBuilt, freshCacheDir, main, runCli, serveClient, tempDirEnv, writeConfig } from "../lib/cli.js"
import { everything, root, stubCommand, tempDir } from "../lib/sources.js"
import { type HttpFixture, type Mode, startHttpFixture } from "../fixtures/http-server.js"

beforeAll(ensureBuilt, 120_000)

const fixtures: Array<HttpFixture> = []
afterAll(() => Promise.all(fixtures.map((fixture) => fixture.close())))

const fixture = (mode: Mode, options: { token?: string; port?: number } = {}) =>
  Effect.promise(async () => {
    const started = await startHttpFixture({ mode, ...options })
    fixtures.push(started)
    return started
  })

const text = (result: unknown) => (result as { content: Array<{ text?: string }> }).content[0]?.text

/** Polls `attempt` every 250 ms until it succeeds (bounded): the reconnects run on the supervisor's backoff. */
const eventually = <A>(attempt: () => Promise<A>, seconds = 20) =>
  Effect.promise(async () => {
    const until = Date.now() + seconds * 1000
    for (;;) {
      try {
        return await attempt()
      } catch (error) {
        if (Date.now() > until) throw error
        await new Promise((resolve) => setTimeout(resolve, 250))
      }
    }
  })

/** The built CLI, without blocking this process (the fixtures answer from it). */
const runCliAsync = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.promise(
    () =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          [main, ...args],
          {
            cwd: root,
            env: {
              PATH: process.env.PATH ?? "",
              HOME: process.env.HOME ?? "",
              ...tempDirEnv,
              CLAWTOOL_CACHE_DIR: freshCacheDir(),
              ...env
            },
            timeout: 60_000
          },
          (error, stdout, stderr) =>
            resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, stdout, stderr })
        )
      })
  )

/** The full surface of one remote source through clawtool serve. */
const exerciseSurface = (client: Client, instance: string, options: { readonly listChanged: boolean }) =>
  Effect.gen(function* () {
    const names = (yield* Effect.promise(() => client.listTools())).tools.map((tool) => tool.name)
    assert.includeMembers(names, [`${instance}__echo`, `${instance}__slow`, `${instance}__add-tool`])
    const echoed = yield* Effect.promise(() =>
      client.callTool({ name: `${instance}__echo`, arguments: { text: "hi" } })
    )
    assert.strictEqual(text(echoed), "echo:hi")

    const resources = yield* Effect.promise(() => client.listResources())
    const hello = resources.resources.find((resource) => resource.name === `${instance}__hello`)
    assert.isDefined(hello, JSON.stringify(resources))
    const read = yield* Effect.promise(() => client.readResource({ uri: hello!.uri }))
    assert.strictEqual((read.contents[0] as { text?: string }).text, "hello from http")

    const prompts = yield* Effect.promise(() => client.listPrompts())
    const greet = prompts.prompts.find((prompt) => prompt.name === `${instance}__greet`)
    assert.isDefined(greet)
    const prompt = yield* Effect.promise(() => client.getPrompt({ name: greet!.name, arguments: { name: "Ada" } }))
    assert.strictEqual((prompt.messages[0]!.content as { text: string }).text, "Hello, Ada")

    // Progress: at least one notification comes back under the host's own token (the last may be dropped, sdk-notes).
    const progress: Array<number> = []
    const slow = yield* Effect.promise(() =>
      client.callTool({ name: `${instance}__slow`, arguments: { steps: 3, ms: 100 } }, undefined, {
        onprogress: (update) => progress.push(update.progress)
      })
    )
    assert.strictEqual(text(slow), "done:3")
    assert.isAbove(progress.length, 0)

    if (options.listChanged) {
      let notices = 0
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        notices++
      })
      yield* Effect.promise(() => client.callTool({ name: `${instance}__add-tool`, arguments: {} }))
      // The notice first: a tools/list answered after the change already shows it, and the Gateway then rightly sends
      // no notice for what the host has seen (polling the list first raced the 50 ms debounce).
      yield* eventually(async () => {
        if (notices === 0) throw new Error("no tools/list_changed yet")
      })
      const after = (yield* Effect.promise(() => client.listTools())).tools.map((tool) => tool.name)
      assert.include(after, `${instance}__added`)
    }
  })

describe("remote sources (streamable HTTP, SSE) through clawtool serve", () => {
  it.live(
    "stateful streamable HTTP: tools, resources, prompts, progress, cancellation and list_changed over the GET stream",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* fixture("stateful")
          const client = yield* serveClient(writeConfig(`[sources.web]\nurl = "${server.url}"\n`))
          yield* exerciseSurface(client, "web", { listChanged: true })

          // Cancellation: the host aborts, the server's handler sees its signal.
          const controller = new AbortController()
          const call = client
            .callTool({ name: "web__slow", arguments: { steps: 50, ms: 100 } }, undefined, {
              signal: controller.signal
            })
            .catch((error: unknown) => error)
          yield* Effect.sleep("400 millis")
          controller.abort("enough")
          assert.instanceOf(yield* Effect.promise(() => call), Error)
          yield* eventually(async () => {
            if (server.cancelled.length === 0) throw new Error("the server saw no cancel yet")
          })
        })
      ),
    60_000
  )

  it.live(
    "a remote server's request named like a notification (it has an id) is answered -32601, as at a child",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* fixture("stateful")
          const config = writeConfig(`[sources.web]\nurl = "${server.url}"\n`)
          const cacheDir = freshCacheDir()
          yield* Effect.addFinalizer(() =>
            Effect.sync(() => {
              for (const dir of [path.dirname(config), cacheDir]) fs.rmSync(dir, { recursive: true, force: true })
            })
          )
          const client = yield* serveClient(config, {}, cacheDir)
          // The server's SDK settles its request on the first answer, and fails the call when none comes.
          const result = yield* Effect.promise(() => client.callTool({ name: "web__misnamed", arguments: {} }))
          assert.strictEqual(text(result), "error -32601 MCP error -32601: Method not found")
        })
      ),
    60_000
  )

  it.live(
    "stateless streamable HTTP: tools, resources, prompts and progress",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* fixture("stateless")
          const client = yield* serveClient(writeConfig(`[sources.flat]\nurl = "${server.url}"\n`))
          yield* exerciseSurface(client, "flat", { listChanged: false })
        })
      ),
    60_000
  )

  it.live(
    'a legacy SSE server, reached with transport = "auto" (streamable first, then SSE on a 4xx)',
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* fixture("sse")
          const client = yield* serveClient(writeConfig(`[sources.old]\nurl = "${server.url}"\ntransport = "auto"\n`))
          yield* exerciseSurface(client, "old", { listChanged: false })
        })
      ),
    60_000
  )

  it.live(
    "a bearer header from secrets.toml; without it the server answers 401 and the source is unauthenticated",
    () =>
      Effect.gen(function* () {
        const server = yield* fixture("stateful", { token: "s3cret-token" })
        const dir = tempDir()
        const config = path.join(dir, "config.toml")
        fs.writeFileSync(
          config,
          `[sources.good]\nurl = "${server.url}"\nheaders = { Authorization = "Bearer \${WEB_TOKEN}" }\n\n[sources.bad]\nurl = "${server.url}"\n\n[sources.nokey]\nurl = "${server.url}"\nheaders = { "X-Api-Key" = "\${MISSING_TOKEN}" }\n\n[sources.oauthy]\nurl = "${server.url}"\noauth = true\n`
        )
        fs.writeFileSync(path.join(dir, "secrets.toml"), `[scopes.global]\nWEB_TOKEN = "s3cret-token"\n`, {
          mode: 0o600
        })
        const health = yield* runCliAsync(["health", "--json", "--config", config])
        const rows = JSON.parse(health.stdout) as Array<{
          name: string
          status: string
          reason: string
          package: string
          pid: unknown
        }>
        const good = rows.find((row) => row.name === "good")!
        const bad = rows.find((row) => row.name === "bad")!
        assert.strictEqual(good.status, "running", good.reason)
        assert.strictEqual(good.package, `http://127.0.0.1:${server.port}/mcp`)
        assert.strictEqual(good.pid, null)
        assert.strictEqual(bad.status, "unauthenticated")
        assert.include(bad.reason, "HTTP 401")
        assert.include(bad.reason, 'Bearer error="invalid_token"')
        const nokey = rows.find((row) => row.name === "nokey")!
        assert.strictEqual(nokey.status, "unauthenticated")
        assert.include(nokey.reason, "MISSING_TOKEN")
        const oauthy = rows.find((row) => row.name === "oauthy")!
        assert.strictEqual(oauthy.status, "unauthenticated")
        assert.include(oauthy.reason, "clawtool auth login oauthy")
        // The secret never shows, in the rows or on stderr.
        assert.notInclude(health.stdout + health.stderr, "s3cret-token")
      }),
    60_000
  )

  it.live(
    "a killed server: calls in flight fail fast and retryable; back on its address, the source reconnects",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const first = yield* fixture("stateful")
          const client = yield* serveClient(writeConfig(`[sources.web]\nurl = "${first.url}"\n`))
          assert.strictEqual(
            text(yield* Effect.promise(() => client.callTool({ name: "web__echo", arguments: { text: "a" } }))),
            "echo:a"
          )
          const inFlight = client.callTool({ name: "web__slow", arguments: { steps: 100, ms: 100 } })
          yield* Effect.sleep("300 millis")
          yield* Effect.promise(() => first.close())
          const failed = (yield* Effect.promise(() => inFlight)) as {
            isError?: boolean
            content: Array<{ text: string }>
          }
          assert.isTrue(failed.isError)

          yield* fixture("stateful", { port: first.port })
          const back = yield* eventually(async () => {
            const result = await client.callTool({ name: "web__echo", arguments: { text: "b" } })
            if (result.isError === true) throw new Error(text(result))
            return result
          }, 30)
          assert.strictEqual(text(back), "echo:b")
        })
      ),
    60_000
  )

  it.live(
    "a session the server forgot (404) is re-initialized without the host seeing an error",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* fixture("stateful")
          const client = yield* serveClient(writeConfig(`[sources.web]\nurl = "${server.url}"\n`))
          assert.strictEqual(
            text(yield* Effect.promise(() => client.callTool({ name: "web__echo", arguments: { text: "a" } }))),
            "echo:a"
          )
          const before = server.initializations()
          yield* Effect.promise(() => server.expireSessions())
          const result = yield* Effect.promise(() => client.callTool({ name: "web__echo", arguments: { text: "b" } }))
          assert.isUndefined(result.isError)
          assert.strictEqual(text(result), "echo:b")
          assert.isAbove(server.initializations(), before)
        })
      ),
    60_000
  )

  it.live(
    "after a renewal (404) the new session gets the host's log level and resource subscriptions again",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* fixture("stateful")
          const client = yield* serveClient(writeConfig(`[sources.web]\nurl = "${server.url}"\n`))
          const updated: Array<string> = []
          client.setNotificationHandler(ResourceUpdatedNotificationSchema, (note) => void updated.push(note.params.uri))
          yield* Effect.promise(() => client.setLoggingLevel("debug"))
          yield* Effect.promise(() => client.subscribeResource({ uri: "fixture://hello" }))
          const count = (line: string) => server.stateRequests.filter((request) => request === line).length
          yield* eventually(async () => {
            if (count("level debug") !== 1 || count("subscribe fixture://hello") !== 1) {
              throw new Error(`not set yet: ${server.stateRequests.join(", ")}`)
            }
          })
          yield* Effect.promise(() => server.expireSessions())
          const result = yield* Effect.promise(() => client.callTool({ name: "web__echo", arguments: { text: "b" } }))
          assert.strictEqual(text(result), "echo:b")
          // The new session hears both again, unasked by the host.
          yield* eventually(async () => {
            if (count("level debug") !== 2 || count("subscribe fixture://hello") !== 2) {
              throw new Error(`not restored: ${server.stateRequests.join(", ")}`)
            }
          })
          const touched = yield* Effect.promise(() => client.callTool({ name: "web__touch", arguments: {} }))
          assert.strictEqual(text(touched), "touched 1")
          yield* eventually(async () => {
            if (!updated.includes("fixture://hello")) throw new Error("no resources/updated")
          })
        })
      ),
    60_000
  )

  it.live(
    "a dropped GET stream is re-opened: no error for the host, list_changed still arrives",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* fixture("stateful")
          const client = yield* serveClient(writeConfig(`[sources.web]\nurl = "${server.url}"\n`))
          assert.strictEqual(
            text(yield* Effect.promise(() => client.callTool({ name: "web__echo", arguments: { text: "a" } }))),
            "echo:a"
          )
          yield* eventually(async () => {
            if (server.dropGetStreams() === 0) throw new Error("no GET stream open yet")
          })
          const before = server.initializations()
          const result = yield* Effect.promise(() => client.callTool({ name: "web__echo", arguments: { text: "b" } }))
          assert.isUndefined(result.isError, text(result))
          let notices = 0
          client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
            notices++
          })
          // The SDK re-opens the stream after its retry delay; the tool list change rides on it.
          yield* Effect.sleep("1500 millis")
          yield* Effect.promise(() => client.callTool({ name: "web__add-tool", arguments: {} }))
          yield* eventually(async () => {
            if (notices === 0) throw new Error("no tools/list_changed yet")
          })
          // Same session: nothing was re-initialized.
          assert.strictEqual(server.initializations(), before)
        })
      ),
    60_000
  )

  it.live(
    "call_timeout applies to a remote call: no answer or progress in time is a Timeout, cancelled at the server",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* fixture("stateful")
          const client = yield* serveClient(
            writeConfig(`[sources.web]\nurl = "${server.url}"\ncall_timeout = "300ms"\n`)
          )
          const result = yield* Effect.promise(() =>
            client.callTool({ name: "web__slow", arguments: { steps: 1, ms: 3000 } })
          )
          assert.isTrue(result.isError)
          assert.include(text(result), "call_timeout")
          yield* eventually(async () => {
            if (server.cancelled.length === 0) throw new Error("the server saw no cancel yet")
          })
        })
      ),
    60_000
  )

  it.live(
    "a mixed JSON config starts the stdio and the remote entry and warns about the unusable one",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* fixture("stateful")
          const [bin, ...args] = JSON.parse(stubCommand()) as Array<string>
          const config = writeConfig(
            JSON.stringify({
              mcpServers: {
                local: { command: bin, args },
                web: { type: "http", url: server.url },
                socket: { type: "websocket", url: "ws://127.0.0.1:1" }
              }
            }),
            "mcp.json"
          )
          const stderr: Array<string> = []
          const client = yield* serveClient(config, {}, freshCacheDir(), (chunk) => stderr.push(chunk))
          const names = (yield* Effect.promise(() => client.listTools())).tools.map((tool) => tool.name)
          assert.include(names, "web__echo")
          assert.isTrue(
            names.some((name) => name.startsWith("local__")),
            names.join(", ")
          )
          assert.isFalse(names.some((name) => name.startsWith("socket__")))
          assert.include(stderr.join(""), `entry socket: type "websocket" is not stdio, http or sse; skipped`)
        })
      ),
    60_000
  )

  it.live(
    "@modelcontextprotocol/server-everything in streamable HTTP mode",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const port = yield* freePort
          const child = yield* Effect.acquireRelease(
            Effect.sync((): ChildProcess =>
              spawn(process.execPath, [everything, "streamableHttp"], {
                env: { PATH: process.env.PATH ?? "", PORT: String(port) },
                stdio: "ignore"
              })
            ),
            (child) => Effect.sync(() => child.kill("SIGKILL"))
          )
          assert.isDefined(child.pid)
          const url = `http://127.0.0.1:${port}/mcp`
          yield* eventually(
            () =>
              new Promise<void>((resolve, reject) => {
                const socket = net.connect(port, "127.0.0.1", () => {
                  socket.end()
                  resolve()
                })
                socket.once("error", reject)
              })
          )
          const client = yield* serveClient(writeConfig(`[sources.every]\nurl = "${url}"\n`))
          const names = (yield* Effect.promise(() => client.listTools())).tools.map((tool) => tool.name)
          assert.includeMembers(names, ["every__echo", "every__get-sum"])
          const sum = yield* Effect.promise(() =>
            client.callTool({ name: "every__get-sum", arguments: { a: 2, b: 3 } })
          )
          assert.include(text(sum), "5")
          const resources = yield* Effect.promise(() => client.listResources())
          assert.isAbove(resources.resources.length, 0)
          const prompts = yield* Effect.promise(() => client.listPrompts())
          assert.isTrue(prompts.prompts.some((prompt) => prompt.name.endsWith("simple-prompt")))
          const progress: Array<number> = []
          const long = yield* Effect.promise(() =>
            client.callTool(
              { name: "every__trigger-long-running-operation", arguments: { duration: 1, steps: 3 } },
              undefined,
              { onprogress: (update) => progress.push(update.progress) }
            )
          )
          assert.isUndefined(long.isError)
          assert.isAbove(progress.length, 0)
        })
      ),
    60_000
  )
})

describe("remote sources in the CLI", () => {
  it("source add --url --header writes a remote table; source list shows origin and path, never the query", () => {
    const config = writeConfig(`[sources.local]\ncommand = ["node", "x.js"]\n`)
    const added = runCli([
      "source",
      "add",
      "linear",
      "--config",
      config,
      "--url",
      "https://user:pw@mcp.example.com/mcp?token=abc",
      "--header",
      "Authorization=Bearer ${LINEAR_TOKEN}"
    ])
    assert.strictEqual(added.code, 0, added.stderr)
    assert.include(
      fs.readFileSync(config, "utf8"),
      `[sources.linear]\nurl = "https://user:pw@mcp.example.com/mcp?token=abc"\nheaders = { Authorization = "Bearer \${LINEAR_TOKEN}" }\n`
    )
    const listed = runCli(["source", "list", "--json", "--config", config], { LINEAR_TOKEN: "t" })
    assert.strictEqual(listed.code, 0, listed.stderr)
    const rows = JSON.parse(listed.stdout) as Array<{ instance: string; package: string; secrets: string }>
    assert.deepStrictEqual(
      rows.find((row) => row.instance === "linear"),
      {
        instance: "linear",
        enabled: true,
        package: "https://mcp.example.com/mcp",
        secrets: "ready",
        missing: []
      } as never
    )
    assert.notInclude(listed.stdout, "token=abc")
    assert.notInclude(listed.stdout, "pw@")
  })
})

const freePort = Effect.promise(
  () =>
    new Promise<number>((resolve) => {
      const server = net.createServer()
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as net.AddressInfo).port
        server.close(() => resolve(port))
      })
    })
)
