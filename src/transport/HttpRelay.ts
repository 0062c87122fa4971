import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { FetchLike, Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import {
  ErrorCode,
  type JSONRPCMessage,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS
} from "@modelcontextprotocol/sdk/types.js"

export interface HttpRelayOptions {
  /** The daemon's streamable-HTTP endpoint, e.g. http://127.0.0.1:8765/mcp. */
  readonly url: URL
  /** Sent as `Authorization: Bearer <token>` on every request to the daemon. */
  readonly token?: string | undefined
  /** Where the relay says what went wrong (stderr in the CLI): never stdout, which is the host's protocol. */
  readonly log: (line: string) => void
  /** The server name and version answered while the daemon is down. */
  readonly serverInfo: { readonly name: string; readonly version: string }
  /** How long a handshake with the daemon may take before it counts as down. */
  readonly handshakeMs?: number
}

type Id = string | number
type Json = Record<string, unknown>

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** Ids of the relay's own requests to the daemon (its re-handshakes and replays); a host's ids never look like these. */
const ownIdPrefix = "clawtool-connect/"

/** One live upstream session: its transport and the host requests it has not answered yet. */
interface Upstream {
  readonly transport: StreamableHTTPClientTransport
  readonly capabilities: Json
  readonly pending: Set<Id>
}

/**
 * A message pump between a host-facing stdio transport and a streamable-HTTP MCP server (ADR 022): every request,
 * response and notification goes through unchanged, both ways, so server→client requests (sampling, elicitation,
 * roots), progress and the GET stream work as they do against the daemon itself. What the relay adds is for a daemon
 * that is not there: the host's `initialize` is kept and replayed upstream (on the first request, and again whenever
 * the daemon has forgotten the session or restarted), the host gets an `initialize` answer and a JSON-RPC error naming
 * the URL for every request while the daemon is down, and list_changed notices once it is back.
 */
export class HttpRelay {
  private initialize: { readonly params: Json } | undefined
  private upstream: Upstream | undefined
  private connecting: Promise<Upstream> | undefined
  /** The relay answered `initialize` itself (daemon down): the host must re-list once a session exists. */
  private answeredLocally = false
  private nextOwnId = 0
  private readonly ownRequests = new Map<string, (message: JSONRPCMessage) => void>()
  /** Replayed after a new upstream session, so the host's choices survive a daemon restart. */
  private logLevel: Json | undefined
  private readonly subscriptions = new Set<string>()
  private lastInitializeResult: Json = {}
  /** Upstream sessions made so far: the first one answers the host's initialize, later ones replace a lost one. */
  private sessions = 0
  private closed = false

  constructor(
    private readonly host: Transport,
    private readonly options: HttpRelayOptions
  ) {}

  /** Starts reading the host; resolves at once. The host transport's `onclose` is the caller's to watch. */
  async start(): Promise<void> {
    this.host.onmessage = (message) => void this.fromHost(message as Json)
    this.host.onerror = (error) => this.options.log(`host: ${error.message}`)
    await this.host.start()
  }

  /** Ends the upstream session (DELETE, best effort and bounded) and drops every stream. */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    const upstream = this.upstream
    this.upstream = undefined
    if (upstream === undefined) return
    await Promise.race([upstream.transport.terminateSession().catch(() => {}), sleep(2_000)])
    await upstream.transport.close().catch(() => {})
  }

  private async fromHost(message: Json): Promise<void> {
    const id = message.id as Id | undefined
    const method = typeof message.method === "string" ? message.method : undefined
    if (method === undefined) return this.answerToUpstream(message)
    if (id === undefined) return this.notificationToUpstream(method, message)
    if (method === "initialize") return this.handshake(id, (message.params ?? {}) as Json)
    this.remember(method, message.params as Json | undefined)
    let upstream: Upstream
    try {
      upstream = await this.connected()
    } catch (error) {
      if (method === "ping") return this.toHost({ jsonrpc: "2.0", id, result: {} })
      return this.fail(id, error)
    }
    await this.forward(upstream, id, message, true)
  }

  /** The host's initialize: answered with the daemon's own result, or locally when the daemon is down. */
  private async handshake(id: Id, params: Json): Promise<void> {
    this.initialize = { params }
    try {
      await this.connected()
      return this.toHost({ jsonrpc: "2.0", id, result: this.lastInitializeResult })
    } catch (error) {
      this.answeredLocally = true
      this.options.log(`${this.unreachable(error)}; answering initialize locally, calls fail until it is back`)
      const requested = typeof params.protocolVersion === "string" ? params.protocolVersion : ""
      return this.toHost({
        jsonrpc: "2.0",
        id,
        result: {
          protocolVersion: SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION,
          capabilities: {
            tools: { listChanged: true },
            prompts: { listChanged: true },
            resources: { listChanged: true, subscribe: true },
            logging: {},
            completions: {}
          },
          serverInfo: this.options.serverInfo,
          instructions: `clawtool connect relays to ${this.options.url.href}, which is not reachable now; every call fails with that error until it is back.`
        }
      })
    }
  }

  /** Sends one host request upstream; a session the daemon no longer knows (404) is re-made once. */
  private async forward(upstream: Upstream, id: Id, message: Json, retry: boolean): Promise<void> {
    upstream.pending.add(id)
    try {
      await upstream.transport.send(message as JSONRPCMessage)
    } catch (error) {
      upstream.pending.delete(id)
      const forgotten = error instanceof StreamableHTTPError && error.code === 404
      this.drop(upstream, error)
      if (forgotten && retry) {
        try {
          return await this.forward(await this.connected(), id, message, false)
        } catch (again) {
          return this.fail(id, again)
        }
      }
      return this.fail(id, error)
    }
  }

  private async answerToUpstream(message: Json): Promise<void> {
    const upstream = this.upstream
    if (upstream === undefined) return this.options.log("an answer from the host was dropped: the daemon is down")
    await upstream.transport.send(message as JSONRPCMessage).catch((error) => this.drop(upstream, error))
  }

  private async notificationToUpstream(method: string, message: Json): Promise<void> {
    // The relay sent its own notifications/initialized when it made the session.
    if (method === "notifications/initialized") return
    const upstream = this.upstream
    if (upstream === undefined) return
    await upstream.transport.send(message as JSONRPCMessage).catch((error) => this.drop(upstream, error))
  }

  /** The live upstream session, or a new one (one attempt at a time, shared by every waiting request). */
  private connected(): Promise<Upstream> {
    if (this.upstream !== undefined) return Promise.resolve(this.upstream)
    if (this.closed) return Promise.reject(new Error("clawtool connect is closing"))
    if (this.initialize === undefined) {
      return Promise.reject(new Error("the host sent a request before initialize"))
    }
    this.connecting ??= this.open(this.initialize.params).finally(() => (this.connecting = undefined))
    return this.connecting
  }

  private async open(params: Json): Promise<Upstream> {
    const headers: Record<string, string> = {}
    if (this.options.token !== undefined) headers.Authorization = `Bearer ${this.options.token}`
    const pending = new Set<Id>()
    const transport = new StreamableHTTPClientTransport(this.options.url, {
      requestInit: { headers },
      fetch: this.watching(pending)
    })
    const upstream: Upstream = { transport, capabilities: {}, pending }
    transport.onmessage = (message) => this.fromUpstream(upstream, message)
    transport.onerror = (error) => this.options.log(`daemon ${this.options.url.href}: ${error.message}`)
    try {
      await transport.start()
      const answer = await this.ownRequest(transport, "initialize", params)
      if ("error" in answer) throw new Error(`initialize failed: ${answer.error.message}`)
      const result = (answer as { result: Json }).result
      if (typeof result.protocolVersion === "string") transport.setProtocolVersion(result.protocolVersion)
      await transport.send({ jsonrpc: "2.0", method: "notifications/initialized" })
      const ready: Upstream = { ...upstream, capabilities: (result.capabilities ?? {}) as Json }
      transport.onmessage = (message) => this.fromUpstream(ready, message)
      this.lastInitializeResult = result
      this.upstream = ready
      this.options.log(`connected to ${this.options.url.href}`)
      void this.afterReconnect(ready)
      return ready
    } catch (error) {
      await transport.close().catch(() => {})
      throw error
    }
  }

  /** Once a session exists again: replay the host's log level and subscriptions, and have it re-list what changed. */
  private async afterReconnect(upstream: Upstream): Promise<void> {
    if (this.sessions++ === 0 && !this.answeredLocally) return
    this.answeredLocally = false
    if (this.logLevel !== undefined) void this.ownRequest(upstream.transport, "logging/setLevel", this.logLevel)
    for (const uri of this.subscriptions) void this.ownRequest(upstream.transport, "resources/subscribe", { uri })
    for (const kind of ["tools", "prompts", "resources"] as const) {
      if (upstream.capabilities[kind] !== undefined) {
        await this.toHost({ jsonrpc: "2.0", method: `notifications/${kind}/list_changed` })
      }
    }
  }

  private ownRequest(transport: Transport, method: string, params: Json) {
    const id = `${ownIdPrefix}${this.nextOwnId++}`
    return new Promise<JSONRPCMessage & ({ result: Json } | { error: { message: string } })>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.ownRequests.delete(id)
        reject(new Error(`no answer to ${method} within ${this.options.handshakeMs ?? 10_000} ms`))
      }, this.options.handshakeMs ?? 10_000)
      this.ownRequests.set(id, (message) => {
        clearTimeout(timer)
        resolve(message as never)
      })
      transport.send({ jsonrpc: "2.0", id, method, params } as JSONRPCMessage).catch((error) => {
        clearTimeout(timer)
        this.ownRequests.delete(id)
        reject(error)
      })
    })
  }

  private fromUpstream(upstream: Upstream, message: JSONRPCMessage): void {
    const json = message as Json
    const id = json.id as Id | undefined
    if (!("method" in json) && id !== undefined) {
      const own = typeof id === "string" ? this.ownRequests.get(id) : undefined
      if (own !== undefined) {
        this.ownRequests.delete(id as string)
        return own(message)
      }
      upstream.pending.delete(id)
    }
    void this.toHost(json)
  }

  /** Forgets a session that failed; its unanswered host requests get the error instead of waiting forever. */
  private drop(upstream: Upstream, error: unknown): void {
    if (this.upstream === upstream) {
      this.upstream = undefined
      this.options.log(`${this.unreachable(error)}; reconnecting on the next request`)
    }
    for (const id of upstream.pending) void this.fail(id, error)
    upstream.pending.clear()
    void upstream.transport.close().catch(() => {})
  }

  /**
   * fetch, watching each POST's SSE response: when it ends (or breaks) without answering a request it carried, and
   * carried no event id the SDK could resume from, that request fails instead of waiting forever (a daemon killed
   * mid-call). The SDK reports such an end only as an error message, with nothing to tell which request it was.
   */
  private watching(pending: Set<Id>): FetchLike {
    return async (url, init) => {
      const response = await fetch(url, init)
      const ids = init?.method === "POST" ? requestIds(init.body) : []
      const stream = response.headers.get("content-type")?.startsWith("text/event-stream") === true
      if (ids.length === 0 || !stream || response.body === null) return response
      const reader = response.body.getReader()
      const decoder = new TextDecoder()
      let resumable = false
      let carry = ""
      const ended = (why: string) =>
        // The SDK parses what was read before the end asynchronously: look once it has had the time to.
        setTimeout(() => {
          if (resumable) return
          for (const id of ids) {
            if (pending.delete(id)) void this.fail(id, new Error(why))
          }
        }, 100)
      const body = new ReadableStream<Uint8Array>({
        pull: async (controller) => {
          try {
            const { done, value } = await reader.read()
            if (done) {
              controller.close()
              return void ended("the daemon ended the response stream before answering")
            }
            const text = carry + decoder.decode(value, { stream: true })
            if (/(^|\n)id:/.test(text)) resumable = true
            carry = text.slice(-3)
            controller.enqueue(value)
          } catch (error) {
            controller.error(error)
            ended(`the response stream broke before the answer (${describe(error)})`)
          }
        },
        cancel: (reason) => reader.cancel(reason)
      })
      return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers })
    }
  }

  private remember(method: string, params: Json | undefined): void {
    const uri = typeof params?.uri === "string" ? params.uri : undefined
    if (method === "logging/setLevel") this.logLevel = params
    else if (method === "resources/subscribe" && uri !== undefined) this.subscriptions.add(uri)
    else if (method === "resources/unsubscribe" && uri !== undefined) this.subscriptions.delete(uri)
  }

  private unreachable(error: unknown): string {
    const status = error instanceof StreamableHTTPError ? ` (HTTP ${error.code})` : ""
    const hint =
      error instanceof StreamableHTTPError && error.code === 401
        ? "; check the token (CLAWTOOL_HTTP_TOKEN or [scopes.global] in secrets.toml)"
        : ""
    return `the clawtool daemon at ${this.options.url.href} is not reachable${status}: ${describeCause(error)}${hint}`
  }

  private fail(id: Id, error: unknown): Promise<void> {
    return this.toHost({
      jsonrpc: "2.0",
      id,
      error: { code: ErrorCode.ConnectionClosed, message: this.unreachable(error) }
    })
  }

  private toHost(message: Json): Promise<void> {
    return this.host.send(message as JSONRPCMessage).catch((error) => this.options.log(`host: ${describe(error)}`))
  }
}

/** The ids of the requests in a POST body (one message or a batch). */
const requestIds = (body: unknown): ReadonlyArray<Id> => {
  if (typeof body !== "string") return []
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return []
  }
  return (Array.isArray(parsed) ? parsed : [parsed]).flatMap((message: Json) =>
    typeof message?.method === "string" && (typeof message.id === "string" || typeof message.id === "number")
      ? [message.id]
      : []
  )
}

/** fetch's "fetch failed" says nothing; its cause (ECONNREFUSED …) does. */
const describeCause = (error: unknown): string => {
  const cause = error instanceof Error ? (error as { cause?: unknown }).cause : undefined
  const code = typeof cause === "object" && cause !== null ? (cause as { code?: unknown }).code : undefined
  return typeof code === "string" ? `${describe(error)} (${code})` : describe(error)
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref())
