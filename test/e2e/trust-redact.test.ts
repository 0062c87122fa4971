// Secrets never reach the host (issue 25, docs/decisions/029 "Redaction"): a child that echoes its own env secret and a
// remote that echoes its bearer token, into results (text, embedded resource, structuredContent values and keys,
// JSON-escaped and percent-encoded, _meta), an isError result, a JSON-RPC error, a logging and a progress notification,
// a resource read, a prompt and an elicitation request relayed to the host: the host sees [REDACTED:<NAME>] on the
// stdio relay, the SDK path and the daemon alike, and clawtool's stderr never holds the secret either. With
// `[trust] redact_secrets = false` the secret comes through (what the other tests would see without redaction).
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import {
  CallToolResultSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema
} from "@modelcontextprotocol/sdk/types.js"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import { ensureBuilt, serveClient, writeConfig } from "../lib/cli.js"
import { httpClient, startDaemon } from "../lib/daemon.js"
import { eventually, root } from "../lib/sources.js"
// @ts-expect-error: a plain .mjs fixture without types
import { echoSecretServer } from "../fixtures/echo-secret-server.mjs"

ensureBuilt()

const fixture = path.join(root, "test/fixtures/echo-secret-server.mjs")
/** With a quote and a backslash: inside JSON it only appears escaped; percent-encoded in a URL. */
const envSecret = 'env-s3cr3t "quoted" \\ 0123456789'
const bearer = "remote-bearer-0123456789abcdef"

/** A remote source in this process that echoes the Authorization header it receives (one session per initialize). */
const remoteEchoingBearer = Effect.acquireRelease(
  Effect.promise(async () => {
    const sessions = new Map<string, StreamableHTTPServerTransport>()
    const http = Http.createServer(async (req, res) => {
      const id = req.headers["mcp-session-id"]
      const known = typeof id === "string" ? sessions.get(id) : undefined
      if (known !== undefined) return known.handleRequest(req, res)
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sessionId) => void sessions.set(sessionId, transport)
      })
      await echoSecretServer((extra: { requestInfo?: { headers?: Record<string, unknown> } }) =>
        String(extra.requestInfo?.headers?.authorization ?? "")
      ).connect(transport)
      await transport.handleRequest(req, res)
    })
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", () => resolve()))
    return { http, sessions, url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp` }
  }),
  ({ http, sessions }) =>
    Effect.promise(async () => {
      for (const transport of sessions.values()) await transport.close().catch(() => {})
      http.closeAllConnections()
      await new Promise<void>((resolve) => http.close(() => resolve()))
    })
)

/** The config (the secrets in secrets.toml beside it, 0600): the env secret's child and the bearer's remote. */
const configWith = (remoteUrl: string, trust = "") => {
  const config = writeConfig(`
    ${trust}
    [sources.leaky]
    command = ${JSON.stringify([process.execPath, fixture])}
    env = { LEAKED_SECRET = "\${LEAKED}" }

    [sources.remote]
    url = ${JSON.stringify(remoteUrl)}
    headers = { Authorization = "Bearer \${REMOTE_TOKEN}" }
  `)
  const secrets = path.join(path.dirname(config), "secrets.toml")
  fs.writeFileSync(
    secrets,
    `[scopes.leaky]\nLEAKED = ${JSON.stringify(envSecret)}\n[scopes.remote]\nREMOTE_TOKEN = ${JSON.stringify(bearer)}\n`,
    { mode: 0o600 }
  )
  return config
}

/** Everything the host received while calling every leaking tool, resource and prompt of `instance`. */
const everythingFrom = (client: Client, instance: string, received: { logs: Array<unknown>; asked: Array<unknown> }) =>
  Effect.promise(async () => {
    const call = (name: string, onprogress?: (progress: unknown) => void) =>
      client.request(
        { method: "tools/call", params: { name: `${instance}__${name}`, arguments: {} } },
        CallToolResultSchema,
        { timeout: 60_000, ...(onprogress === undefined ? {} : { onprogress }) }
      )
    const progress: Array<unknown> = []
    const seen: Record<string, unknown> = {
      // Without a progressToken: on stdio the relay takes it (ADR 009).
      relayed: await call("leak"),
      // With one: the SDK path.
      viaSdk: await call("leak", (update) => progress.push(update)),
      isError: await call("leak_error"),
      // A child's JSON-RPC error to tools/call reaches the host as an isError result.
      failedCall: await call("leak_rpc"),
      asked: await call("ask"),
      // Both sources list secret://leak: the host reads it qualified.
      resource: await client
        .readResource({ uri: `clawtool://${instance}/secret://leak` })
        .catch((error: Error) => error.message),
      // A JSON-RPC error the child answers, forwarded as such.
      rpcError: await client.readResource({ uri: `clawtool://${instance}/secret://missing` }).then(
        () => "no error",
        (error: Error) => ({ message: error.message, data: (error as { data?: unknown }).data })
      ),
      prompt: await client.getPrompt({ name: `${instance}__leak` }).catch((error: Error) => error.message)
    }
    return { ...seen, progress, logs: received.logs, elicitations: received.asked }
  })

/** A host that records the logging notifications and elicitation requests it gets (declining each). */
const recording = (client: Client) => {
  const received = { logs: [] as Array<unknown>, asked: [] as Array<unknown> }
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    received.logs.push(notification.params)
  })
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    received.asked.push(request.params)
    return { action: "decline" }
  })
  return received
}

const secretForms = (secret: string) => [secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)]

/** The host saw every piece, and no form of either secret anywhere in it. */
const assertRedacted = (seen: Record<string, unknown>, name: string) => {
  const text = JSON.stringify(seen)
  for (const secret of [envSecret, bearer]) {
    for (const form of secretForms(secret)) assert.notInclude(text, form)
  }
  // "Bearer " is the header's literal part; the token is the secret.
  const shown = name === "REMOTE_TOKEN" ? `Bearer [REDACTED:${name}]` : `[REDACTED:${name}]`
  for (const path of ["relayed", "viaSdk"]) {
    const result = seen[path] as { content: Array<any>; structuredContent: Record<string, unknown>; _meta: any }
    assert.strictEqual(result.content[0].text, `text ${shown}`)
    assert.strictEqual(result.content[1].resource.text, `resource ${shown}`)
    assert.strictEqual(result.structuredContent.secret, shown)
    assert.strictEqual(result.structuredContent[shown], "as a key")
    assert.strictEqual(result.structuredContent.escaped, JSON.stringify({ secret: shown }))
    assert.include(String(result.structuredContent.url), `[REDACTED:${name}]`)
    assert.strictEqual(result._meta["example.com/secret"], shown)
  }
  assert.include(JSON.stringify(seen.resource), `resource ${shown}`)
  assert.include(JSON.stringify(seen.isError), `failed with ${shown}`)
  assert.include(JSON.stringify(seen.failedCall), `backend refused ${shown}`)
  assert.include(JSON.stringify(seen.rpcError), `no resource secret://missing for ${shown}`)
  assert.include(JSON.stringify(seen.progress), `progress ${shown}`)
  assert.include(JSON.stringify(seen.logs), `log ${shown}`)
  assert.include(JSON.stringify(seen.elicitations), `please confirm ${shown}`)
  assert.include(JSON.stringify(seen.prompt), `prompt ${shown}`)
}

describe("secrets never reach the host", () => {
  it.scopedLive(
    "stdio: a child's env secret and a remote's bearer are redacted on the relay and the SDK path; stderr holds neither",
    () =>
      Effect.gen(function* () {
        const remote = yield* remoteEchoingBearer
        let stderr = ""
        const client = yield* serveClient(
          configWith(remote.url),
          { elicitation: {} },
          undefined,
          (chunk) => (stderr += chunk)
        )
        const received = recording(client)
        const leaky = yield* everythingFrom(client, "leaky", received)
        yield* eventually(() => received.logs.length >= 2, 10_000, "both logging notifications")
        assertRedacted(leaky, "LEAKED")
        received.logs.length = 0
        received.asked.length = 0
        const fromRemote = yield* everythingFrom(client, "remote", received)
        yield* eventually(() => received.logs.length >= 2, 10_000, "both logging notifications")
        assertRedacted(fromRemote, "REMOTE_TOKEN")
        for (const secret of [envSecret, bearer]) assert.notInclude(stderr, secret)
      }),
    120_000
  )

  it.scopedLive(
    "daemon (serve --listen): the same over a streamable-HTTP session",
    () =>
      Effect.gen(function* () {
        const remote = yield* remoteEchoingBearer
        const daemon = yield* startDaemon(configWith(remote.url))
        const { client } = yield* httpClient(daemon.url, { capabilities: { elicitation: {} } })
        const received = recording(client)
        const leaky = yield* everythingFrom(client, "leaky", received)
        yield* eventually(() => received.logs.length >= 2, 10_000, "both logging notifications")
        assertRedacted(leaky, "LEAKED")
        received.logs.length = 0
        received.asked.length = 0
        const fromRemote = yield* everythingFrom(client, "remote", received)
        yield* eventually(() => received.logs.length >= 2, 10_000, "both logging notifications")
        assertRedacted(fromRemote, "REMOTE_TOKEN")
        for (const secret of [envSecret, bearer]) assert.notInclude(daemon.stderr(), secret)
      }),
    120_000
  )

  it.scopedLive(
    "[trust] redact_secrets = false: the host gets what the child sent",
    () =>
      Effect.gen(function* () {
        const remote = yield* remoteEchoingBearer
        const client = yield* serveClient(configWith(remote.url, `[trust]\nredact_secrets = false`))
        const result = yield* Effect.promise(() => client.callTool({ name: "leaky__leak", arguments: {} }))
        assert.strictEqual((result.content as Array<{ text: string }>)[0]!.text, `text ${envSecret}`)
      }),
    60_000
  )
})
