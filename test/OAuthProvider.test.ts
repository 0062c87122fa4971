import { assert, describe, it, onTestFinished } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { AuthRequired } from "../src/services/OAuth/Errors.js"
import { login } from "../src/services/OAuth/Login.js"
import { SourceOAuthProvider, takeFileLock } from "../src/services/OAuth/Provider.js"
import * as Store from "../src/services/OAuth/Store.js"
import { type OAuthServer, startOAuthServer } from "./fixtures/oauth-server.js"
import { root, tempDir } from "./lib/sources.js"

const browser = path.join(root, "test/fixtures/browser.mjs")

/** An authorization + resource server for the test, closed with its scope. */
const oauthServer = (accessTtl?: number) =>
  Effect.acquireRelease(
    Effect.promise(() => startOAuthServer(accessTtl === undefined ? {} : { accessTtl })),
    (server) => Effect.promise(() => server.close())
  )

const loginTo = (server: OAuthServer, dir: string, instance = "linear", lines: Array<string> = []) =>
  Effect.promise(() =>
    login({
      instance,
      url: server.mcpUrl,
      settings: {},
      dir,
      say: (line) => lines.push(line),
      timeoutMs: 20_000,
      env: { ...process.env, BROWSER: browser }
    })
  )

/** An SDK client over streamable HTTP with the background (serve) provider of `instance`, its fetch as serve's. */
const connect = (server: OAuthServer, dir: string, instance = "linear") =>
  Effect.acquireRelease(
    Effect.gen(function* () {
      const provider = new SourceOAuthProvider({
        instance,
        url: server.mcpUrl,
        settings: {},
        dir,
        mode: { kind: "background" }
      })
      const client = new Client({ name: "test", version: "1.0.0" })
      const transport = new StreamableHTTPClientTransport(new URL(server.mcpUrl), {
        authProvider: provider,
        fetch: provider.retryingFetch(fetch)
      })
      yield* Effect.promise(() => client.connect(transport))
      return { client, provider }
    }),
    ({ client }) => Effect.promise(() => client.close())
  )

const whoami = (client: Client) =>
  Effect.promise(() => client.callTool({ name: "whoami", arguments: {} })).pipe(
    Effect.map((result) => JSON.stringify(result.content))
  )

describe("OAuth provider against an SDK authorization server", () => {
  it.scopedLive("login stores a 0600 grant for the resource; serve's provider calls with it", () =>
    Effect.gen(function* () {
      const server = yield* oauthServer()
      const dir = tempDir("clawtool-state-")
      const lines: Array<string> = []
      yield* loginTo(server, dir, "linear", lines)
      // The URL is printed whether or not a browser opens.
      assert.isTrue(lines.some((line) => line.includes(`${server.url}/authorize?`)))
      assert.strictEqual(server.counters.registrations, 1)
      assert.strictEqual(server.counters.codeExchanges, 1)
      // RFC 8707: the token request names the MCP server.
      assert.deepStrictEqual(server.counters.resources, [server.mcpUrl])
      const file = Store.fileOf(dir, "linear")
      assert.strictEqual(fs.statSync(file).mode & 0o777, 0o600)
      assert.strictEqual(fs.statSync(path.dirname(file)).mode & 0o777, 0o700)
      const record = yield* Effect.promise(() => Store.load(dir, "linear", server.mcpUrl))
      assert.strictEqual(record.issuer, `${server.url}/`)
      assert.isString(Store.currentGrant(record).tokens?.refresh_token)

      const { client } = yield* connect(server, dir)
      assert.include(yield* whoami(client), "client:")
      assert.strictEqual(server.counters.refreshes, 0)
    })
  )

  it.scopedLive("without a grant the background provider fails at once with the login command", () =>
    Effect.gen(function* () {
      const server = yield* oauthServer()
      const dir = tempDir("clawtool-state-")
      const error = yield* connect(server, dir, "notion").pipe(Effect.flip, Effect.catchAllDefect(Effect.succeed))
      assert.instanceOf(error, AuthRequired)
      assert.include((error as AuthRequired).message, "clawtool auth login notion")
      // No registration and no browser step happened in the background.
      assert.strictEqual(server.counters.registrations, 0)
      assert.strictEqual(server.counters.authorizations, 0)
    })
  )

  it.scopedLive("a short-lived token is refreshed once before it expires, however many calls wait", () =>
    Effect.gen(function* () {
      const server = yield* oauthServer(4)
      const dir = tempDir("clawtool-state-")
      yield* loginTo(server, dir)
      const { client } = yield* connect(server, dir)
      // Past 80 % of the 4 s lifetime (seconds-long lifetimes must work; the margin is for loaded machines).
      yield* Effect.sleep("3400 millis")
      const results = yield* Effect.all(
        Array.from({ length: 10 }, () => whoami(client)),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(results.filter((text) => text.includes("client:")).length, 10)
      assert.strictEqual(server.counters.refreshes, 1)
      assert.strictEqual(server.counters.refreshReuse, 0)
      // Long past the old token's expiry: the refreshed grant keeps working.
      yield* Effect.sleep("4500 millis")
      assert.include(yield* whoami(client), "client:")
      assert.strictEqual(server.counters.refreshReuse, 0)
      assert.strictEqual(server.counters.unauthorized, 0)
    })
  )

  it.scopedLive("60 calls refused with 401 at once (5 clients) share one refresh and all succeed", () =>
    Effect.gen(function* () {
      const server = yield* oauthServer()
      const dir = tempDir("clawtool-state-")
      onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }))
      yield* loginTo(server, dir)
      const clients = yield* Effect.all(Array.from({ length: 5 }, () => connect(server, dir)))
      server.revokeAccess()
      const results = yield* Effect.all(
        clients.flatMap(({ client }) => Array.from({ length: 12 }, () => whoami(client))),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(results.filter((text) => text.includes("client:")).length, 60, results.join("\n"))
      assert.isAtLeast(server.counters.unauthorized, 60, "every call met the revoked token")
      assert.strictEqual(server.counters.refreshes, 1)
      assert.strictEqual(server.counters.refreshReuse, 0)
      // The grant is intact: a new connection works without a login.
      const { client } = yield* connect(server, dir)
      assert.include(yield* whoami(client), "client:")
    })
  )

  it.scopedLive("a refresh token the server refused leaves the source needing a login, with no browser step", () =>
    Effect.gen(function* () {
      const server = yield* oauthServer()
      const dir = tempDir("clawtool-state-")
      yield* loginTo(server, dir)
      const { client } = yield* connect(server, dir)
      server.revokeAll()
      const error = yield* Effect.tryPromise(() => client.callTool({ name: "whoami", arguments: {} })).pipe(
        Effect.flip,
        Effect.map((failure) => failure.error)
      )
      assert.instanceOf(error, AuthRequired)
      assert.include((error as AuthRequired).message, "clawtool auth login linear")
      assert.strictEqual(server.counters.authorizations, 1)
      const grant = Store.currentGrant(yield* Effect.promise(() => Store.load(dir, "linear", server.mcpUrl)))
      assert.isUndefined(grant.tokens)
      // Only the tokens went: the client stays registered.
      assert.isString(grant.client?.client_id)
    })
  )

  it.live("invalidateCredentials forgets only what its scope names: tokens, client, verifier, discovery, or all", () =>
    Effect.promise(async () => {
      const dir = tempDir("clawtool-state-")
      onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }))
      const url = "https://a.example/mcp"
      const issuer = "https://as.example/"
      const client = { client_id: "registered", redirect_uris: ["http://127.0.0.1:4000/callback"] }
      const tokens = { access_token: "at", token_type: "bearer", refresh_token: "rt", expires_in: 3600 }
      const discovery = { authorizationServerUrl: issuer }
      const provider = new SourceOAuthProvider({
        instance: "linear",
        url,
        settings: {},
        dir,
        mode: { kind: "background" }
      })
      /** What is left after `scope` is invalidated in a full record (client, tokens, discovery, a PKCE verifier). */
      const left = async (scope: "all" | "client" | "tokens" | "verifier" | "discovery") => {
        await Store.save(dir, "linear", {
          ...Store.emptyRecord(url),
          issuer,
          discovery,
          grants: { [issuer]: { client, tokens, obtainedAt: 1 } }
        })
        await provider.saveCodeVerifier("verifier")
        await provider.invalidateCredentials(scope)
        const record = await Store.load(dir, "linear", url)
        return {
          grant: Store.currentGrant(record),
          discovery: record.discovery,
          verifier: await provider.codeVerifier().catch(() => undefined)
        }
      }
      const full = { client, tokens, obtainedAt: 1 }
      // A refused refresh token (invalid_grant) ends the tokens only: the registered client is kept for the next login.
      assert.deepStrictEqual(await left("tokens"), { grant: { client }, discovery, verifier: "verifier" })
      assert.deepStrictEqual(await left("client"), {
        grant: { tokens, obtainedAt: 1 },
        discovery,
        verifier: "verifier"
      })
      assert.deepStrictEqual(await left("verifier"), { grant: full, discovery, verifier: undefined })
      assert.deepStrictEqual(await left("discovery"), { grant: full, discovery: undefined, verifier: "verifier" })
      assert.deepStrictEqual(await left("all"), { grant: {}, discovery: undefined, verifier: undefined })
    })
  )

  it.scopedLive("a configured client is used as is and its secret never reaches the token file", () =>
    Effect.gen(function* () {
      const server = yield* oauthServer()
      const dir = tempDir("clawtool-state-")
      // Registered by hand (here: through the server's registration endpoint) with a fixed loopback port.
      const port = 30000 + Math.floor(Math.random() * 20000)
      const registered = yield* Effect.promise(() =>
        fetch(`${server.url}/register`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            client_name: "by hand",
            redirect_uris: [`http://127.0.0.1:${port}/callback`],
            token_endpoint_auth_method: "client_secret_post"
          })
        }).then((response) => response.json() as Promise<{ client_id: string; client_secret: string }>)
      )
      yield* Effect.promise(() =>
        login({
          instance: "linear",
          url: server.mcpUrl,
          settings: { clientId: registered.client_id, clientSecret: registered.client_secret, redirectPort: port },
          dir,
          say: () => undefined,
          timeoutMs: 20_000,
          env: { ...process.env, BROWSER: browser }
        })
      )
      assert.strictEqual(server.counters.registrations, 1)
      assert.strictEqual(server.counters.codeExchanges, 1)
      const text = fs.readFileSync(Store.fileOf(dir, "linear"), "utf8")
      assert.notInclude(text, registered.client_secret)
    })
  )

  it.live("the store ignores a file written for another URL and keys grants by issuer", () =>
    Effect.promise(async () => {
      const dir = tempDir("clawtool-state-")
      await Store.updateGrant(dir, "linear", "https://a.example/mcp", "https://as-1.example/", () => ({
        tokens: { access_token: "one", token_type: "bearer" }
      }))
      await Store.updateGrant(dir, "linear", "https://a.example/mcp", "https://as-2.example/", () => ({
        tokens: { access_token: "two", token_type: "bearer" }
      }))
      const record = await Store.load(dir, "linear", "https://a.example/mcp")
      assert.strictEqual(record.issuer, "https://as-2.example/")
      assert.strictEqual(Store.currentGrant(record).tokens?.access_token, "two")
      assert.strictEqual(record.grants["https://as-1.example/"]?.tokens?.access_token, "one")
      // The source now points elsewhere: nothing of the old server's grants is used.
      const moved = await Store.load(dir, "linear", "https://b.example/mcp")
      assert.isUndefined(moved.issuer)
      assert.deepStrictEqual(moved.grants, {})
    })
  )
})

describe("the token store's lock file (one flow at a time across clawtool processes)", () => {
  it.live("a second taker waits for the release; the file is gone after it", () =>
    Effect.gen(function* () {
      const file = path.join(tempDir(), "oauth", "src.json.lock")
      const first = yield* Effect.promise(() => takeFileLock(file))
      assert.isDefined(first)
      assert.strictEqual((fs.statSync(file).mode & 0o777).toString(8), "600")
      let second = false
      const waiting = takeFileLock(file).then((release) => {
        second = true
        return release
      })
      yield* Effect.sleep("150 millis")
      assert.isFalse(second, "the lock is held")
      yield* Effect.promise(() => first!())
      const release = yield* Effect.promise(() => waiting)
      assert.isTrue(second)
      yield* Effect.promise(() => release!())
      assert.isFalse(fs.existsSync(file))
    })
  )

  it.live("a lock left by a process that is gone, or older than the fail-safe, is broken at once", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const file = path.join(dir, "src.json.lock")
      // A pid that is not running: a child that has exited.
      const gone = spawnSync(process.execPath, ["-e", "0"]).pid!
      fs.writeFileSync(file, `${gone} deadbeef`)
      const started = Date.now()
      const release = yield* Effect.promise(() => takeFileLock(file))
      assert.isBelow(Date.now() - started, 5_000)
      assert.notInclude(fs.readFileSync(file, "utf8"), "deadbeef")
      yield* Effect.promise(() => release!())

      // This very process holds it, but for far longer than any flow: stale too.
      fs.writeFileSync(file, `${process.pid} cafe`)
      const old = new Date(Date.now() - 60_000)
      fs.utimesSync(file, old, old)
      const again = yield* Effect.promise(() => takeFileLock(file))
      assert.notInclude(fs.readFileSync(file, "utf8"), "cafe")
      yield* Effect.promise(() => again!())
    })
  )

  it.live("takers that find the same lock stale at once break it once: one holder at a time", () =>
    Effect.gen(function* () {
      const file = path.join(tempDir(), "src.json.lock")
      const gone = spawnSync(process.execPath, ["-e", "0"]).pid!
      for (let round = 0; round < 20; round++) {
        fs.writeFileSync(file, `${gone} deadbeef`)
        let holders = 0
        let most = 0
        yield* Effect.promise(() =>
          Promise.all(
            // Staggered by a few ms: some find it stale while another has just broken it and taken its own.
            Array.from({ length: 12 }, async (_, i) => {
              await new Promise((resume) => setTimeout(resume, i % 4))
              const release = await takeFileLock(file)
              most = Math.max(most, ++holders)
              await new Promise((resume) => setTimeout(resume, 20))
              holders--
              await release!()
            })
          )
        )
        assert.strictEqual(most, 1, `round ${round}: two takers held the lock at once`)
      }
    })
  )
})
