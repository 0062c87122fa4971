import { assert, beforeAll, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { ensureBuilt, freshCacheDir, main, tempDirEnv, writeConfig } from "../lib/cli.js"
import { modernHost } from "../lib/modernHost.js"
import { spawn } from "node:child_process"
import { eventually, root, tempDir } from "../lib/sources.js"
import { SourceOAuthProvider } from "../../src/services/OAuth/Provider.js"
import { type OAuthServer, startOAuthServer } from "../fixtures/oauth-server.js"

beforeAll(ensureBuilt, 120_000)

const browser = path.join(root, "test/fixtures/browser.mjs")

/**
 * Runs the built CLI without blocking this process (runCli is spawnSync): the OAuth server it talks to lives here, and
 * vitest's worker must keep answering its runner.
 */
const cli = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.async<{ code: number | null; stdout: string; stderr: string }>((resume) => {
    const child = spawn(process.execPath, [main, ...args], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "",
        ...tempDirEnv,
        CLAWTOOL_CACHE_DIR: freshCacheDir(),
        ...env
      }
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr })))
    return Effect.sync(() => child.kill())
  })

/** A "browser" that only records that someone tried to open it: serve and health must never do so. */
const trapBrowser = (dir: string) => {
  const marker = path.join(dir, "browser-opened")
  const script = path.join(dir, "trap-browser.sh")
  fs.writeFileSync(script, `#!/bin/sh\necho "$1" >> ${JSON.stringify(marker)}\n`, { mode: 0o755 })
  return { script, marker }
}

/** `clawtool serve` with the test's state directory, as the host (SDK client over stdio), closed with the scope. */
const serveWith = (config: string, env: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [main, "serve", "--config", config],
        cwd: root,
        env: { ...getDefaultEnvironment(), ...tempDirEnv, CLAWTOOL_CACHE_DIR: freshCacheDir(), ...env },
        stderr: "pipe"
      })
      const client = new Client({ name: "e2e-host", version: "1.0.0" })
      await client.connect(transport)
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

/**
 * What `clawtool serve` does with a remote OAuth source, in the test process: the SDK client over streamable HTTP with
 * the background provider of the token store the CLI wrote (the serve-level test below needs remote connections).
 */
const providerClient = (url: string, state: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const provider = new SourceOAuthProvider({
        instance: "linear",
        url,
        settings: {},
        dir: state,
        mode: { kind: "background" }
      })
      const client = new Client({ name: "e2e-host", version: "1.0.0" })
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }))
      return { client }
    }),
    ({ client }) => Effect.promise(() => client.close())
  )

const healthJson = (config: string, env: Record<string, string>) =>
  Effect.map(cli(["health", "--json", "--config", config], env), (result) => {
    const rows = JSON.parse(result.stdout) as ReadonlyArray<{ name: string; status: string; reason: string }>
    return { ...result, row: rows.find((row) => row.name === "linear")! }
  })

/**
 * An OAuth server with 4 s access tokens (unless `accessTtl` says otherwise) and rotating refresh tokens (serving the
 * modern fixture with `modern`), and a config
 * with one `oauth` source "linear" on it; `background` is the env of serve and health (a browser trap that records any
 * attempt to open one).
 */
const oauthSource = (accessTtl = 4, modern = false) =>
  Effect.gen(function* () {
    const server = yield* Effect.acquireRelease(
      Effect.promise(() => startOAuthServer({ accessTtl, modern })),
      (server) => Effect.promise(() => server.close())
    )
    const work = tempDir("clawtool-oauth-")
    const state = path.join(work, "state")
    const trap = trapBrowser(work)
    const config = writeConfig(`
    [sources.linear]
    url = ${JSON.stringify(server.mcpUrl)}
    oauth = true
  `)
    const background = { CLAWTOOL_STATE_DIR: state, BROWSER: trap.script }
    return { server, work, state, trap, config, background }
  })

/** A call of the fixture's whoami tool (`name` as the client sees it), as its content's JSON. */
const whoami = (client: Client, name: string) =>
  Effect.promise(() => client.callTool({ name, arguments: {} })).pipe(
    Effect.map((result) => JSON.stringify(result.content))
  )

/**
 * Past 80 % of the 4 s token's life, `calls` at once: every one answered for the client, exactly one refresh at the
 * server between them, and no rotated refresh token presented twice.
 */
const refreshedOnce = (server: OAuthServer, calls: ReadonlyArray<Effect.Effect<string>>) =>
  Effect.gen(function* () {
    const refreshes = server.counters.refreshes
    yield* Effect.sleep("3400 millis")
    const results = yield* Effect.all(calls, { concurrency: "unbounded" })
    assert.strictEqual(results.filter((text) => text.includes("client:")).length, calls.length, results.join("\n"))
    assert.strictEqual(server.counters.refreshReuse, 0, "a rotated refresh token was presented again")
    assert.strictEqual(server.counters.refreshes - refreshes, 1)
  })

/** `clawtool auth login linear` with the scripted browser, which logs the URL it was given to `<work>/browser.log`. */
const browserLogin = (config: string, state: string, work: string) =>
  Effect.gen(function* () {
    const log = path.join(work, "browser.log")
    const login = yield* cli(["auth", "login", "linear", "--config", config], {
      CLAWTOOL_STATE_DIR: state,
      BROWSER: browser,
      BROWSER_LOG: log
    })
    assert.strictEqual(login.code, 0, login.stderr)
    // The token file alone: the login's lock file was removed before the process exited.
    assert.deepStrictEqual(fs.readdirSync(path.join(state, "oauth")), ["linear.json"])
    return { login, opened: fs.readFileSync(log, "utf8").trim() }
  })

/** The same, with a grant stored by `clawtool auth login` (scripted browser). */
const loggedIn = (accessTtl?: number, modern?: boolean) =>
  Effect.gen(function* () {
    const source = yield* oauthSource(accessTtl, modern)
    yield* browserLogin(source.config, source.state, source.work)
    return source
  })

describe("clawtool auth (built CLI) against an OAuth authorization server started by the test", () => {
  it.scopedLive(
    "login with a scripted browser, 0600 tokens, status without tokens, a call with the stored grant, one refresh under 10 concurrent calls, logout",
    () =>
      Effect.gen(function* () {
        const { server, work, state, trap, config, background } = yield* oauthSource()

        // Before any login: unauthenticated, with the exact command, and no browser, no registration.
        const before = yield* healthJson(config, background)
        assert.strictEqual(before.code, 1)
        assert.strictEqual(before.row.status, "unauthenticated")
        assert.include(before.row.reason, "clawtool auth login linear")
        const status0 = yield* cli(["auth", "status", "--config", config], background)
        assert.strictEqual(status0.code, 0)
        assert.include(status0.stdout, "no: run clawtool auth login linear")

        // The login: BROWSER follows the authorization URL, which redirects to clawtool's loopback listener.
        const { login, opened } = yield* browserLogin(config, state, work)
        // The URL is always on stderr, and it is the one the browser was given.
        assert.isTrue(opened.startsWith(`${server.url}/authorize?`))
        assert.include(login.stderr, opened)
        const authorize = new URL(opened)
        assert.strictEqual(authorize.searchParams.get("code_challenge_method"), "S256")
        assert.strictEqual(authorize.searchParams.get("resource"), server.mcpUrl)
        assert.strictEqual(server.counters.registrations, 1)
        assert.strictEqual(server.counters.codeExchanges, 1)

        const tokenFile = path.join(state, "oauth", "linear.json")
        assert.strictEqual(fs.statSync(tokenFile).mode & 0o777, 0o600)
        assert.strictEqual(fs.statSync(path.dirname(tokenFile)).mode & 0o777, 0o700)
        const stored = JSON.parse(fs.readFileSync(tokenFile, "utf8"))
        const grant = stored.grants[stored.issuer]
        const secrets = [grant.tokens.access_token, grant.tokens.refresh_token] as ReadonlyArray<string>
        assert.notInclude(login.stdout + login.stderr, secrets[0]!)

        // Status: logged in, an expiry, never a token.
        const status = yield* cli(["auth", "status", "--json", "--config", config], background)
        assert.strictEqual(status.code, 0)
        const rows = JSON.parse(status.stdout)
        assert.strictEqual(rows[0].instance, "linear")
        assert.strictEqual(rows[0].loggedIn, true)
        assert.isTrue(Number.isFinite(Date.parse(rows[0].expiresAt)))
        for (const secret of secrets) assert.notInclude(status.stdout + status.stderr, secret)

        // The grant the CLI stored is what serve's provider (RemoteAuth, background mode) uses: a call succeeds.
        const { client } = yield* providerClient(server.mcpUrl, state)
        assert.include(yield* whoami(client, "whoami"), "client:")
        // The 4 s token passes 80 % of its life: 10 concurrent calls, one refresh at the server.
        yield* refreshedOnce(
          server,
          Array.from({ length: 10 }, () => whoami(client, "whoami"))
        )

        // Logout: the tokens are revoked at the server (RFC 7009), the grant is gone; health says unauthenticated again.
        const logout = yield* cli(["auth", "logout", "linear", "--config", config], background)
        assert.strictEqual(logout.code, 0)
        assert.include(logout.stdout, `tokens revoked at ${new URL(server.url).origin}`)
        assert.deepStrictEqual(server.counters.revocations, ["refresh_token live", "access_token live"])
        assert.isFalse(fs.existsSync(tokenFile))
        const after = yield* healthJson(config, background)
        assert.strictEqual(after.row.status, "unauthenticated")
        assert.include(after.row.reason, "clawtool auth login linear")

        // Neither serve nor health ever opened a browser or started an authorization.
        assert.isFalse(fs.existsSync(trap.marker))
        assert.strictEqual(server.counters.authorizations, 1)
      }),
    120_000
  )

  it.scopedLive(
    "a client ID metadata document: the login registers nothing, the document's URL is the client_id, serve calls and refreshes with it",
    () =>
      Effect.gen(function* () {
        const document = "https://clawtool.example/client.json"
        // The document lists the login's redirect, so its port is fixed (a free one).
        const port = yield* Effect.promise(
          () =>
            new Promise<number>((resolve) => {
              const probe = net.createServer().listen(0, "127.0.0.1", () => {
                const { port } = probe.address() as net.AddressInfo
                probe.close(() => resolve(port))
              })
            })
        )
        const server = yield* Effect.acquireRelease(
          Effect.promise(() =>
            startOAuthServer({
              accessTtl: 4,
              metadataDocuments: { [document]: { redirect_uris: [`http://127.0.0.1:${port}/callback`] } }
            })
          ),
          (server) => Effect.promise(() => server.close())
        )
        const work = tempDir("clawtool-oauth-")
        const state = path.join(work, "state")
        const config = writeConfig(`
          [sources.linear]
          url = ${JSON.stringify(server.mcpUrl)}
          oauth = { client_metadata_url = ${JSON.stringify(document)}, redirect_port = ${port} }
        `)
        const { opened } = yield* browserLogin(config, state, work)
        assert.strictEqual(new URL(opened).searchParams.get("client_id"), document)
        assert.strictEqual(server.counters.registrations, 0, "no dynamic registration")
        assert.include(server.counters.metadataDocuments, document)
        const stored = JSON.parse(fs.readFileSync(path.join(state, "oauth", "linear.json"), "utf8"))
        assert.strictEqual(stored.grants[stored.issuer].client.client_id, document)

        const client = yield* serveWith(config, { CLAWTOOL_STATE_DIR: state, BROWSER: trapBrowser(work).script })
        assert.include(yield* whoami(client, "linear__whoami"), `client:${document}`)
        // Past 80 % of the token's life the call refreshes, as the same client. Counted from here: on a loaded machine
        // the login's token may already be due at the first call.
        const refreshes = server.counters.refreshes
        yield* Effect.sleep("3400 millis")
        assert.include(yield* whoami(client, "linear__whoami"), `client:${document}`)
        assert.strictEqual(server.counters.refreshes - refreshes, 1)
        assert.strictEqual(server.counters.registrations, 0)
      }),
    60_000
  )

  // The same flow through `clawtool serve`, as the host sees it.
  it.scopedLive("serve calls an OAuth source with the CLI's grant, refreshes once under 10 concurrent calls", () =>
    Effect.gen(function* () {
      const { server, config, background, trap } = yield* loggedIn()
      const client = yield* serveWith(config, background)
      assert.include(yield* whoami(client, "linear__whoami"), "client:")
      yield* refreshedOnce(
        server,
        Array.from({ length: 10 }, () => whoami(client, "linear__whoami"))
      )
      // Logout while serve runs: the next call fails and names the login command; no browser was opened.
      assert.strictEqual((yield* cli(["auth", "logout", "linear", "--config", config], background)).code, 0)
      const denied = yield* Effect.promise(() => client.callTool({ name: "linear__whoami", arguments: {} }))
      assert.isTrue(denied.isError)
      assert.include(JSON.stringify(denied.content), "clawtool auth login linear")
      assert.isFalse(fs.existsSync(trap.marker))
      assert.strictEqual(server.counters.authorizations, 1)
    })
  )

  it.scopedLive(
    "two serve processes sharing the token store (two host windows) refresh once between them: the rotating token survives",
    () =>
      Effect.gen(function* () {
        const { server, config, background, trap } = yield* loggedIn()
        const hosts = yield* Effect.all([serveWith(config, background), serveWith(config, background)])
        for (const client of hosts) assert.include(yield* whoami(client, "linear__whoami"), "client:")
        // Both processes find the token due at once.
        yield* refreshedOnce(
          server,
          hosts.flatMap((client) => Array.from({ length: 5 }, () => whoami(client, "linear__whoami")))
        )
        assert.isFalse(fs.existsSync(trap.marker))
      })
  )

  it.scopedLive(
    "the server revokes the access token: 6 concurrent calls through serve all meet a 401, one refresh serves them all",
    () =>
      Effect.gen(function* () {
        // Hour-long tokens: no refresh is due, only the 401s ask for one.
        const { server, config, background } = yield* loggedIn(3600)
        const client = yield* serveWith(config, background)
        assert.include(yield* whoami(client, "linear__whoami"), "client:")
        server.revokeAccess()
        const unauthorized = server.counters.unauthorized
        const results = yield* Effect.all(
          Array.from({ length: 6 }, () => whoami(client, "linear__whoami")),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(results.filter((text) => text.includes("client:")).length, 6, results.join("\n"))
        assert.isAtLeast(server.counters.unauthorized - unauthorized, 6, "every call met the revoked token")
        assert.strictEqual(server.counters.refreshes, 1)
        assert.strictEqual(server.counters.refreshReuse, 0)
      })
  )

  it.scopedLive(
    "two serve processes whose calls all meet a 401 refresh once between them: the one that waited for the lock file uses the other's token",
    () =>
      Effect.gen(function* () {
        const { server, config, background } = yield* loggedIn(3600)
        const hosts = yield* Effect.all([serveWith(config, background), serveWith(config, background)])
        for (const client of hosts) assert.include(yield* whoami(client, "linear__whoami"), "client:")
        server.revokeAccess()
        const unauthorized = server.counters.unauthorized
        const results = yield* Effect.all(
          hosts.flatMap((client) => Array.from({ length: 3 }, () => whoami(client, "linear__whoami"))),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(results.filter((text) => text.includes("client:")).length, 6, results.join("\n"))
        assert.isAtLeast(server.counters.unauthorized - unauthorized, 6, "every call met the revoked token")
        assert.strictEqual(server.counters.refreshes, 1)
        assert.strictEqual(server.counters.refreshReuse, 0)
      })
  )

  it.scopedLive(
    "a modern-only (2026-07-28) source behind OAuth: after auth login, a legacy and a modern host call it and hear its resources/updated",
    () =>
      Effect.gen(function* () {
        const { server, config, background, trap } = yield* loggedIn(3600, true)
        // A legacy SDK v1 host: the probe (with the stored token) finds the era, the v2 client adopts its answer.
        const legacy = yield* serveWith(config, background)
        const echoed = yield* Effect.promise(() => legacy.callTool({ name: "linear__echo", arguments: { text: "hi" } }))
        assert.deepStrictEqual(echoed.content, [{ type: "text", text: "echo:hi" }])
        assert.notInclude(server.counters.modernRequests, "initialize")
        assert.strictEqual(server.counters.modernRequests.filter((method) => method === "server/discover").length, 1)
        const { resources } = yield* Effect.promise(() => legacy.listResources())
        const doc = resources.find((resource) => resource.name === "linear__doc")!
        const heard: Array<string> = []
        legacy.setNotificationHandler(ResourceUpdatedNotificationSchema, async (notification) => {
          heard.push(notification.params.uri)
        })
        // The host's subscribe becomes a subscriptions/listen POST at the remote (a stream of its own, with the token).
        yield* Effect.promise(() => legacy.subscribeResource({ uri: doc.uri }))
        const listens = () =>
          server.counters.modernRequests.filter((request) => request === "subscriptions/listen modern://doc").length
        // Answered once the remote's listen names the URI.
        assert.strictEqual(listens(), 1)
        yield* Effect.promise(() => legacy.callTool({ name: "linear__touch", arguments: { uri: "modern://doc" } }))
        yield* eventually(() => heard.length > 0, 10_000, "resources/updated at the legacy host")
        assert.deepStrictEqual(heard, [doc.uri])

        // A modern SDK v2 host: its own listen at clawtool hears the same remote's update.
        const modern = yield* modernHost(config, {}, background)
        const updates: Array<string> = []
        modern.setNotificationHandler("notifications/resources/updated", (note) => void updates.push(note.params.uri))
        const listen = yield* Effect.promise(() => modern.listen({ resourceSubscriptions: [doc.uri] }))
        // Acknowledged once its clawtool (a process of its own) has a listen of its own at the remote naming the URI, so
        // the update the host causes next is heard.
        assert.strictEqual(listens(), 2)
        const touched = yield* Effect.promise(() =>
          modern.callTool({ name: "linear__touch", arguments: { uri: "modern://doc" } })
        )
        assert.deepStrictEqual(touched.content, [{ type: "text", text: "touched" }])
        yield* eventually(() => updates.length > 0, 10_000, "resources/updated at the modern host")
        assert.deepStrictEqual(updates, [doc.uri])
        yield* Effect.promise(() => listen.close())
        // Every request carried the stored grant: none was refused, no browser was opened, one login in all.
        assert.strictEqual(server.counters.unauthorized, 0)
        assert.isFalse(fs.existsSync(trap.marker))
        assert.strictEqual(server.counters.authorizations, 1)
      }),
    60_000
  )

  it.live("--help of the auth commands: full usage, an example, no filler", () =>
    Effect.gen(function* () {
      for (const command of [["auth"], ["auth", "login"], ["auth", "status"], ["auth", "logout"]]) {
        const result = yield* cli([...command, "--help"])
        assert.strictEqual(result.code, 0, `${command.join(" ")}: ${result.stderr}`)
        assert.notInclude(result.stdout, "\x1b[", command.join(" "))
        assert.notInclude(result.stdout, "A user-defined piece of text", command.join(" "))
        assert.include(result.stdout, `SYNOPSIS\n    ${["clawtool", ...command].join(" ")}`, command.join(" "))
        assert.match(result.stdout, /EXAMPLES\n {4}\$ clawtool auth /, command.join(" "))
      }
      assert.match((yield* cli(["auth", "--help"])).stdout, /\nCOMMANDS\n(.*\n)* {4}login /)
    })
  )

  it.live("auth commands refuse a source without oauth with a usage error", () =>
    Effect.gen(function* () {
      const config = writeConfig(`
        [sources.local]
        command = ["node", "-e", ""]
      `)
      const result = yield* cli(["auth", "login", "local", "--config", config], { BROWSER: "" })
      assert.strictEqual(result.code, 2)
      assert.include(result.stderr, "local source")
      const missing = yield* cli(["auth", "logout", "nope", "--config", config])
      assert.strictEqual(missing.code, 2)
      assert.include(missing.stderr, 'no source named "nope"')
    })
  )
})
