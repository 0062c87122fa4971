import { AuthRequired } from "../OAuth/Errors.js"
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js"
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import {
  ErrorCode,
  isInitializedNotification,
  isInitializeRequest,
  type JSONRPCMessage,
  type JSONRPCRequest,
  McpError
} from "@modelcontextprotocol/sdk/types.js"
import { Deferred, Duration, Effect, Either, Option, Runtime, type Scope } from "effect"
import type { CallOptions, Connection, ExitInfo } from "../../domain/Connection.js"
import { CallError, SourceError } from "../../domain/Errors.js"
import { urlLabel } from "../../domain/Health.js"
import type { CallToolRequest, CallToolResult, JsonObject } from "../../domain/Mcp.js"
import { noTimeout } from "../../transport/SdkShape.js"
import { unvalidated } from "../../transport/Unvalidated.js"
import * as Version from "../../version.js"
import { legacyVerdict, modernVersion, startingVerdict } from "../../domain/Era.js"
import type { RemoteLaunchSpec } from "./LaunchSpec.js"
import { probeRemote } from "./Probe.js"
import { loginCommand } from "./RemoteAuth.js"
import * as Relay from "./Relay.js"
import { isOwnTimeout, sdkListTools, sdkToolCall, serverOf } from "./SdkCall.js"
import * as Surface from "./Surface.js"

/**
 * A remote source (ADR 018) over streamable HTTP or the legacy HTTP+SSE transport, behind the same Connection as a
 * child process. What the SDK leaves to us is here: the `auto` fallback from streamable HTTP to SSE, a transparent new
 * session when the server forgets ours (404), and noticing a server that went away (a refused request or a broken
 * stream), which ends the connection like a child's exit so Sources reconnects it with its restart policy.
 */

/** What the HTTP layer saw last: the status and WWW-Authenticate of a refusal, or why no answer came. */
interface HttpWatch {
  status: number | undefined
  challenge: string | undefined
}

/**
 * `fetch` as the SDK transports use it, watched: refusals are recorded (their status and WWW-Authenticate, which the
 * SDK's errors do not carry), and a request that gets no answer or a response stream that breaks reports the server
 * gone. Structural signals only, never error text.
 */
const watchedFetch =
  (
    watch: HttpWatch,
    events: { readonly gone: (why: string) => void; readonly notFound: (method: string) => void },
    /** Whether a broken GET stream ends the connection: with SSE it carries the session; streamable HTTP retries it. */
    getStreamIsSession: boolean
  ) =>
  async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    let response: Response
    try {
      response = await fetch(input, init)
    } catch (cause) {
      if (init?.signal?.aborted !== true) events.gone(networkReason(cause))
      throw cause
    }
    const method = init?.method ?? "GET"
    if (!response.ok) {
      watch.status = response.status
      watch.challenge = response.headers.get("www-authenticate") ?? undefined
      if (response.status === 404) events.notFound(method)
      return response
    }
    const body = response.body
    if (body === null || !(response.headers.get("content-type") ?? "").includes("text/event-stream")) return response
    const reader = body.getReader()
    const watched = new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        try {
          const { done, value } = await reader.read()
          if (done) controller.close()
          else controller.enqueue(value)
        } catch (cause) {
          // A POST's stream holds a pending answer: broken, it would hang its request, so the connection ends now.
          const ends = method === "POST" || getStreamIsSession
          if (ends && init?.signal?.aborted !== true) events.gone(`the event stream broke (${networkReason(cause)})`)
          controller.error(cause)
        }
      },
      cancel: (reason) => reader.cancel(reason)
    })
    return new Response(watched, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers
    })
  }

/** The system error code under a failed fetch (ECONNREFUSED, ENOTFOUND…), else its message. */
const networkReason = (cause: unknown): string => {
  const inner = cause instanceof Error && cause.cause instanceof Error ? cause.cause : cause
  const code = typeof inner === "object" && inner !== null && "code" in inner ? inner.code : undefined
  return typeof code === "string" ? code : inner instanceof Error ? inner.message : String(inner)
}

/**
 * Streamable HTTP with sessions renewed in place: when the server answers 404 for our session (it expired or the
 * server restarted), the recorded initialize is replayed on a fresh transport and the message is sent again. The
 * Client above never sees it: its capabilities and ids stay valid.
 */
class RenewingTransport implements Transport {
  onmessage?: Transport["onmessage"]
  onerror?: Transport["onerror"]
  onclose?: Transport["onclose"]
  private inner: StreamableHTTPClientTransport
  private initialize: JSONRPCMessage | undefined
  private initialized: JSONRPCMessage | undefined
  private protocolVersion: string | undefined
  private renewal: Promise<void> | undefined
  private renewals = 0
  /** Called after each renewal: the new session knows nothing of the old one's log level and subscriptions. */
  onRenewed: (() => void) | undefined
  private closed = false
  private replay: { readonly id: string; readonly settle: (error?: Error) => void } | undefined

  constructor(private readonly make: () => StreamableHTTPClientTransport) {
    this.inner = this.attach(make())
  }

  get sessionId() {
    return this.inner.sessionId
  }

  private attach(transport: StreamableHTTPClientTransport) {
    transport.onmessage = (message: JSONRPCMessage) => {
      const replay = this.replay
      if (replay !== undefined && "id" in message && message.id === replay.id) {
        this.replay = undefined
        return replay.settle(
          "error" in message ? new Error(`re-initialize refused: ${message.error.message}`) : undefined
        )
      }
      if (transport === this.inner) this.onmessage?.(message)
    }
    transport.onerror = (error) => {
      if (transport === this.inner) this.onerror?.(error)
    }
    transport.onclose = () => {
      if (transport === this.inner && !this.closed) {
        this.closed = true
        this.onclose?.()
      }
    }
    return transport
  }

  start() {
    return this.inner.start()
  }

  setProtocolVersion(version: string) {
    this.protocolVersion = version
    this.inner.setProtocolVersion(version)
  }

  async send(message: JSONRPCMessage, options?: Parameters<Transport["send"]>[1]) {
    if (isInitializeRequest(message)) this.initialize = message
    if (isInitializedNotification(message)) this.initialized = message
    const sentOn = this.inner
    try {
      await sentOn.send(message, options)
    } catch (error) {
      if (!(error instanceof StreamableHTTPError && error.code === 404) || !this.renewable()) throw error
      await this.renew(sentOn)
      await this.inner.send(message, options)
    }
  }

  /** Only a session that was established can be renewed (a 404 to the first initialize is a wrong URL). */
  private renewable() {
    return this.initialize !== undefined && this.initialized !== undefined && !this.closed
  }

  /** The server forgot the session of `stale` (a 404 to a POST or to the GET stream): one renewal for all callers. */
  renew(stale: StreamableHTTPClientTransport = this.inner): Promise<void> {
    if (!this.renewable()) return Promise.resolve()
    if (stale !== this.inner) return this.renewal ?? Promise.resolve()
    this.renewal ??= this.doRenew().finally(() => {
      this.renewal = undefined
    })
    return this.renewal
  }

  private async doRenew() {
    const fresh = this.attach(this.make())
    await fresh.start()
    const id = `clawtool-renew-${++this.renewals}`
    const answered = new Promise<void>((resolve, reject) => {
      this.replay = { id, settle: (error) => (error === undefined ? resolve() : reject(error)) }
    })
    await fresh.send({ ...(this.initialize as JSONRPCRequest), id })
    await answered
    if (this.protocolVersion !== undefined) fresh.setProtocolVersion(this.protocolVersion)
    const stale = this.inner
    this.inner = fresh
    // Its GET stream and reconnection timers end here; its session is gone on the server already.
    void stale.close().catch(() => {})
    await fresh.send(this.initialized!)
    this.onRenewed?.()
  }

  async close() {
    if (this.closed) return
    // DELETE ends the session on the server (405 accepted); bounded, so a gone server cannot hold up shutdown.
    await Promise.race([this.inner.terminateSession().catch(() => {}), new Promise((r) => setTimeout(r, 1000))])
    await this.inner.close()
  }
}

/**
 * The SDK transport a remote source uses; `auto` tries streamable HTTP first (see connect). `modern`: a 2026-07-28
 * server, spoken to by SDK v2's client over its own streamable HTTP transport (no session), with the discover answer
 * it adopts, if any (ADR 033).
 */
type Mode = "streamable-http" | "sse" | { readonly modern: JsonObject | undefined }

/** Why a connection attempt failed, as a typed reason: refusals by status, no answer as Connect. */
const attemptError = (
  spec: RemoteLaunchSpec,
  phase: "Initialize" | "ListTools",
  watch: HttpWatch,
  gone: Option.Option<string>,
  cause: unknown
): SourceError => {
  const fail = (reason: SourceError["reason"], detail: string) =>
    new SourceError({ instance: spec.instance, reason, detail, cause })
  const where = urlLabel(spec.url)
  // The OAuth provider's own refusal (no grant, refresh refused) says exactly what to do.
  if (cause instanceof AuthRequired) return fail("Unauthenticated", cause.message)
  if (cause instanceof UnauthorizedError) {
    return fail("Unauthenticated", `${where} needs a login; run: ${loginCommand(spec.instance)}`)
  }
  const status =
    cause instanceof StreamableHTTPError && cause.code !== undefined && cause.code > 0 ? cause.code : watch.status
  if (status === 401 || status === 403) {
    const hint = watch.challenge === undefined ? "" : `; WWW-Authenticate: ${watch.challenge}`
    const fix =
      spec.authProvider === undefined ? "check the source's headers (secrets)" : `run: ${loginCommand(spec.instance)}`
    return fail("Unauthenticated", `HTTP ${status} from ${where}${hint}; ${fix}`)
  }
  if (Option.isSome(gone)) return fail("Connect", `cannot reach ${where}: ${gone.value}`)
  if (cause instanceof McpError) return fail(phase, `the server answered error ${cause.code}: ${cause.message}`)
  if (status !== undefined) return fail("Http", `HTTP ${status} from ${where} during ${phase}`)
  return fail(phase, cause instanceof Error ? cause.message : String(cause))
}

/** One remote connection: the session, its catalogs and calls, until the server goes away or the scope closes. */
export const connect = Effect.fn("SourceClient.connectRemote")(function* (spec: RemoteLaunchSpec) {
  const lost = yield* Deferred.make<ExitInfo>()
  const declared = yield* Surface.declaredCapabilities(spec)
  const headers = { ...spec.headers }
  const runtime = yield* Effect.runtime<never>()
  /** The OAuth provider's current access token, for the modern transport and the probe. */
  const token =
    spec.authProvider === undefined
      ? undefined
      : () => Promise.resolve(spec.authProvider!.tokens()).then((tokens) => tokens?.access_token)

  /** Connects one Client over one transport kind; fails with the attempt's typed reason and the HTTP status seen. */
  const attempt = (mode: Mode) =>
    Effect.gen(function* () {
      const watch: HttpWatch = { status: undefined, challenge: undefined }
      let gone = Option.none<string>()
      let connected = false
      let transport: Transport | undefined
      const markLost = (why: string) => Deferred.unsafeDone(lost, Effect.succeed(lostExit(spec, why)))
      const watched = watchedFetch(
        watch,
        {
          gone: (why) => {
            if (Option.isNone(gone)) gone = Option.some(why)
            if (connected) markLost(why)
          },
          notFound: (method) => {
            // The GET stream of a forgotten session: renew it now, so notifications keep coming.
            if (method === "GET" && transport instanceof RenewingTransport) void transport.renew().catch(() => {})
          }
        },
        mode === "sse"
      )
      // A 401 to a token another call already replaced, or that one shared refresh replaces, is sent again (ADR 019).
      const fetchImpl = spec.authProvider?.retryingFetch(watched) ?? watched
      const url = new URL(spec.url)
      const options = {
        requestInit: { headers },
        fetch: fetchImpl,
        ...(spec.authProvider === undefined ? {} : { authProvider: spec.authProvider })
      }
      // SDK v2's client loads with the first modern source only.
      const Modern = typeof mode === "object" ? yield* Effect.promise(() => import("./Modern.js")) : undefined
      const opened: Transport =
        Modern !== undefined
          ? (Modern.httpTransport(url, { fetch: fetchImpl, headers, token }) as unknown as Transport)
          : mode === "sse"
            ? new SSEClientTransport(url, { ...options, eventSourceInit: { fetch: fetchImpl } })
            : new RenewingTransport(
                () =>
                  new StreamableHTTPClientTransport(url, {
                    ...options,
                    // The GET stream's own retries are short: a server that is gone is the supervisor's business.
                    reconnectionOptions: {
                      initialReconnectionDelay: 500,
                      maxReconnectionDelay: 2000,
                      reconnectionDelayGrowFactor: 1.5,
                      maxRetries: 2
                    }
                  })
              )
      transport = opened
      const modern =
        Modern === undefined || typeof mode !== "object"
          ? undefined
          : new Modern.ModernClient(spec.instance, declared, Modern.askHost(spec, runtime), mode.modern)
      const client =
        modern?.asClient ??
        new Client(
          { name: Version.name, version: Version.version },
          { capabilities: declared, jsonSchemaValidator: unvalidated }
        )
      client.onerror = () => {} // reported through the watched fetch and the calls themselves
      const surface = yield* Surface.install({
        client,
        transport: opened,
        spec,
        declared,
        exitInfo: Deferred.poll(lost).pipe(
          Effect.flatMap(Option.match({ onNone: () => Effect.succeed(undefined), onSome: (done) => done }))
        )
      })
      const failed = (phase: "Initialize" | "ListTools") => (cause: unknown) =>
        attemptError(spec, phase, watch, gone, cause)
      // Closed with the scope, whatever the handshake did; the handshake itself stays interruptible.
      yield* Effect.addFinalizer(() => Effect.promise(() => client.close().catch(() => {})))
      yield* Effect.tryPromise({
        try: (signal) => client.connect(opened, { signal, timeout: noTimeout }),
        catch: (cause) => ({ error: failed("Initialize")(cause), status: watch.status })
      })
      opened.onclose = chainClose(opened.onclose, () => markLost("the connection closed"))
      connected = true
      return { client, surface, failed, transport: opened, era: modern?.verdict ?? legacyVerdict }
    })

  // The era (ADR 033): the config's, else the verdict kept with the catalog, else a server/discover POST.
  const starting = startingVerdict(spec.protocol, spec.knownEra)
  const verdict =
    starting !== "probe"
      ? starting
      : yield* probeRemote(
          spec.url,
          token === undefined ? headers : { ...headers, ...(yield* bearerOf(token)) },
          spec.authProvider?.retryingFetch(fetch) ?? fetch,
          declared,
          spec.probeTimeout
        )
  const first: Mode =
    verdict === undefined || verdict.era === "modern"
      ? { modern: verdict?.era === "modern" ? verdict.discover : undefined }
      : spec.transport === "sse"
        ? "sse"
        : "streamable-http"
  const session = yield* attempt(first).pipe(
    // The spec's backwards compatibility: a 4xx (not an auth refusal) to the initialize POST means an older server.
    Effect.catchIf(
      (failure) =>
        first === "streamable-http" &&
        spec.transport === "auto" &&
        failure.status !== undefined &&
        failure.status >= 400 &&
        failure.status < 500 &&
        failure.status !== 401 &&
        failure.status !== 403,
      () => attempt("sse")
    ),
    Effect.mapError((failure) => failure.error)
  )
  const { client, surface, failed } = session

  const listTools = sdkListTools(client, spec.instance, failed("ListTools"))
  const tools = yield* listTools
  const members = yield* surface.start(tools, listTools)
  if (session.transport instanceof RenewingTransport) {
    session.transport.onRenewed = () => void Runtime.runFork(runtime)(members.restoreHostState)
  }

  const timeoutMs =
    spec.callTimeout === undefined ? undefined : Math.min(Duration.toMillis(spec.callTimeout), noTimeout)
  const callTool = (request: CallToolRequest, options?: CallOptions): Effect.Effect<CallToolResult, CallError> => {
    const tool = `${spec.instance}.${request.name}`
    return sdkToolCall(client, request, options, timeoutMs).pipe(
      Effect.catchAll((cause) =>
        Effect.flatMap(Deferred.poll(lost), (done) => {
          if (Option.isSome(done)) {
            return Effect.fail(Relay.transportError(tool, `source "${spec.instance}": connection lost`))
          }
          if (timeoutMs !== undefined && isOwnTimeout(cause, timeoutMs)) {
            return Effect.fail(Relay.timeoutError(tool, timeoutMs))
          }
          if (cause instanceof McpError && cause.code !== ErrorCode.ConnectionClosed) {
            return Effect.fail(Relay.childError(tool, cause))
          }
          const detail = cause instanceof Error ? cause.message : String(cause)
          return Effect.fail(Relay.transportError(tool, `source "${spec.instance}": ${detail}`))
        })
      )
    )
  }

  // ADR 009's relay writes lines to a child's stdin; over HTTP each call is a request of its own, so the relay's
  // contract (a callback, a cancel) is kept on top of the SDK path.
  const relayCall: Relay.Relay["call"] = (request, done, hostCapabilities) => {
    const cancel = Effect.runCallback(
      callTool(request, hostCapabilities === undefined ? undefined : { hostCapabilities }),
      {
        onExit: (exit) => {
          if (exit._tag === "Success") done(Either.right(exit.value))
          else if (exit.cause._tag === "Fail") done(Either.left(exit.cause.error))
        }
      }
    )
    return () => cancel()
  }

  return {
    instance: spec.instance,
    pid: 0,
    ...members,
    protocolVersion: session.era.era === "modern" ? modernVersion : surface.protocolVersion(),
    era: session.era,
    ...serverOf(client),
    tools,
    listTools,
    callTool,
    relayCall,
    exited: Deferred.await(lost)
  } satisfies Connection
}) as (spec: RemoteLaunchSpec) => Effect.Effect<Connection, SourceError, Scope.Scope>

/** The Authorization header the probe sends (none without a token yet: the legacy attempt then asks for a login). */
const bearerOf = (token: () => Promise<string | undefined>) =>
  Effect.map(
    Effect.orElseSucceed(
      Effect.tryPromise(() => token()),
      () => undefined
    ),
    (access): Record<string, string> => (access === undefined ? {} : { authorization: `Bearer ${access}` })
  )

/** The end of a remote connection, as Sources reads a child's exit: no code, no signal, why it was lost. */
const lostExit = (spec: RemoteLaunchSpec, why: string): ExitInfo => ({
  code: null,
  signal: null,
  at: new Date(),
  lost: new SourceError({ instance: spec.instance, reason: "Connect", detail: `connection lost: ${why}` })
})

const chainClose =
  (previous: (() => void) | undefined, next: () => void): (() => void) =>
  () => {
    previous?.()
    next()
  }
