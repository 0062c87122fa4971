import {
  type FetchLike,
  Client as ModernSdkClient,
  type McpSubscription,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  StreamableHTTPClientTransport
} from "@modelcontextprotocol/client"
import { Cause, Exit, Option, Runtime } from "effect"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js"
import {
  completeResult,
  type EraVerdict,
  type InputPass,
  type InputRequired,
  inputMethods,
  inputRequiredOf,
  maxInputRounds,
  modernVersion,
  retryParams
} from "../../domain/Era.js"
import { metaKey } from "../../domain/HostEra.js"
import type { CallToolRequest, JsonObject } from "../../domain/Mcp.js"
import { isJsonObject, RpcCode } from "../../domain/Surface.js"
import { noTimeout } from "../../transport/SdkShape.js"
import * as Version from "../../version.js"
import { type HostPort, reverseCapability } from "../HostBridge.js"

/**
 * A modern (2026-07-28) child behind the face of the v1 SDK's Client that SourceClient and Surface use (ADR 033):
 * SDK v2's client does the era's wire (the `_meta` envelope on every request, `server/discover`, the codec,
 * `subscriptions/listen`); this adapter maps what a legacy child would have been asked onto the era, so the rest of
 * clawtool sees one kind of child:
 * - `input_required` (MRTR): toward a modern host (a call with `input`) it goes back as it is, the child's state
 *   sealed into clawtool's; otherwise each embedded request is asked of the host for real (`ask`: HostBridge's reverse
 *   request, the host session with the call in flight) and the child is retried with the answers and its state, at most
 *   `maxInputRounds` rounds;
 * - `resources/subscribe|unsubscribe` re-open one `subscriptions/listen` with the URIs (and the list_changed kinds the
 *   child announces); `logging/setLevel` and `ping` are answered here (the era has neither);
 * - errors come back as the v1 SDK's McpError (code, message, data), so the callers word them as for a legacy child.
 * Loaded only with the first modern child.
 */

/**
 * The streamable HTTP transport of a modern remote (SDK v2's: the era's headers, no session): `fetch` is clawtool's
 * watched one, `token` the OAuth provider's current access token (a 401 is retried by that fetch, ADR 019).
 */
export const httpTransport = (
  url: URL,
  options: {
    readonly fetch: FetchLike
    readonly headers: Readonly<Record<string, string>>
    readonly token: (() => Promise<string | undefined>) | undefined
  }
) =>
  new StreamableHTTPClientTransport(url, {
    fetch: options.fetch,
    requestInit: { headers: { ...options.headers } },
    ...(options.token === undefined ? {} : { authProvider: { token: options.token } })
  })

/**
 * A host's answer to one embedded request (interrupting it through `signal` cancels it at the host); `capabilities`:
 * what that host declared for the request (what the child was told), the only requests it may be asked.
 */
export type Ask = (
  method: string,
  params: JsonObject | undefined,
  signal: AbortSignal,
  capabilities: JsonObject
) => Promise<JsonObject>

type RequestOptions = {
  readonly signal?: AbortSignal
  readonly timeout?: number
  readonly onprogress?: (progress: { progress: number; total?: number; message?: string }) => void
  readonly resetTimeoutOnProgress?: boolean
  /** The host's log level for this request, put into the child's envelope. */
  readonly logLevel?: string
  /** A modern host's request: its input_required is handed back, not asked (CallOptions.input). */
  readonly input?: InputPass | undefined
  /** The capabilities of the host the request is for (CallOptions.hostCapabilities), in place of `declared`. */
  readonly hostCapabilities?: JsonObject | undefined
}

/**
 * A retry's params: the host's answers and the child's own state (what clawtool's state carried), never what the host
 * sent in their place (clawtool's state is not the child's).
 */
const withInput = (params: JsonObject, pass: InputPass): JsonObject => {
  const { inputResponses: _answers, requestState: _state, ...rest } = params
  return {
    ...rest,
    ...(pass.inputResponses === undefined ? {} : { inputResponses: pass.inputResponses }),
    ...(pass.requestState === undefined ? {} : { requestState: pass.requestState })
  }
}

/** The request's own `_meta` keys: the host's log level, and its capabilities (which win over the SDK's envelope). */
const withMeta = (params: JsonObject, options: RequestOptions): JsonObject => {
  const { logLevel, hostCapabilities } = options
  if (logLevel === undefined && hostCapabilities === undefined) return params
  return {
    ...params,
    _meta: {
      ...(isJsonObject(params._meta) ? params._meta : {}),
      ...(logLevel === undefined ? {} : { [metaKey.logLevel]: logLevel }),
      ...(hostCapabilities === undefined ? {} : { [metaKey.clientCapabilities]: hostCapabilities })
    }
  }
}

/** The v2 SDK's failures in the v1 SDK's terms (a timeout keeps the `timeout` datum isOwnTimeout reads). */
const asMcpError = (cause: unknown, timeout: number | undefined): unknown => {
  if (cause instanceof ProtocolError) return new McpError(cause.code, cause.message, cause.data)
  if (cause instanceof SdkError) {
    if (cause.code === SdkErrorCode.RequestTimeout) {
      return new McpError(ErrorCode.RequestTimeout, "Request timed out", { timeout })
    }
    if (cause.code === SdkErrorCode.ConnectionClosed) return new McpError(ErrorCode.ConnectionClosed, cause.message)
    // Over HTTP a JSON-RPC error may come with a 4xx status (a modern server answers -32601 with 404): the error it is.
    const error = rpcErrorIn((cause.data as { text?: unknown } | undefined)?.text)
    if (error !== undefined) return new McpError(error.code, error.message, error.data)
  }
  return cause
}

/** The JSON-RPC error an HTTP error response's body carries, if it is one. */
const rpcErrorIn = (text: unknown): { code: number; message: string; data?: unknown } | undefined => {
  if (typeof text !== "string" || !text.startsWith("{")) return undefined
  try {
    const error = (JSON.parse(text) as { error?: unknown }).error
    return isJsonObject(error) && typeof error.code === "number" && typeof error.message === "string"
      ? { code: error.code, message: error.message, data: error.data }
      : undefined
  } catch {
    return undefined
  }
}

export class ModernClient {
  readonly sdk: ModernSdkClient
  private discovered: JsonObject | undefined
  private readonly subscribed = new Set<string>()
  private listening: McpSubscription | undefined

  constructor(
    private readonly instance: string,
    private readonly declared: JsonObject,
    private readonly ask: Ask,
    /** The cached `server/discover` answer, adopted without a round trip; none asks the child itself (pinned). */
    private readonly prior: JsonObject | undefined
  ) {
    this.sdk = new ModernSdkClient(
      { name: Version.name, version: Version.version },
      {
        capabilities: declared,
        versionNegotiation: { mode: { pin: modernVersion } },
        // clawtool asks the host itself (the host session of the call), so the rounds are its own.
        inputRequired: { autoFulfill: false }
      }
    )
  }

  /** As a v1 Client, for the code that drives a child. */
  get asClient(): Client {
    return this as unknown as Client
  }

  set onerror(handler: (error: Error) => void) {
    this.sdk.onerror = handler
  }
  /** A modern child sends no requests (the era embeds them in results; the SDK drops inbound requests). */
  set fallbackRequestHandler(_handler: unknown) {}
  set fallbackNotificationHandler(handler: (notification: { method: string; params?: unknown }) => Promise<void>) {
    this.sdk.fallbackNotificationHandler = handler as never
  }
  /** ClientInternals' progress dispatch (ADR 009): the v2 client has the same private member. */
  get _onprogress(): (notification: unknown) => void {
    const internal = this.sdk as unknown as { _onprogress: (notification: unknown) => void }
    return (notification) => internal._onprogress(notification)
  }

  /** The verdict this connection stands on, for the catalog cache. */
  get verdict(): EraVerdict {
    return { era: "modern", discover: this.discovered ?? {} }
  }

  async connect(transport: unknown, options: RequestOptions): Promise<void> {
    try {
      await this.sdk.connect(transport as never, {
        ...options,
        ...(this.prior === undefined ? {} : { prior: { kind: "modern", discover: this.prior as never } })
      })
    } catch (cause) {
      throw asMcpError(cause, options.timeout)
    }
    const discover = this.sdk.getDiscoverResult()
    this.discovered = (discover as JsonObject | undefined) ?? this.prior
    // list_changed comes on a listen in this era: opened now for the kinds the child announces.
    await this.relisten().catch(() => {})
  }

  getServerCapabilities() {
    return this.sdk.getServerCapabilities()
  }
  getServerVersion() {
    return this.sdk.getServerVersion()
  }
  getNegotiatedProtocolVersion() {
    return this.sdk.getNegotiatedProtocolVersion()
  }

  async notification(notification: { method: string; params?: JsonObject }): Promise<void> {
    // roots/list_changed has no meaning here: the next request carries the host's capabilities, and roots are asked per call.
    if (notification.method === "notifications/roots/list_changed") return
    await this.sdk.notification(notification as never)
  }

  async close(): Promise<void> {
    await this.sdk.close()
  }

  async request(
    request: { method: string; params?: JsonObject },
    schema: unknown,
    options: RequestOptions = {}
  ): Promise<JsonObject> {
    const params = request.params ?? {}
    switch (request.method) {
      case "ping":
      case "logging/setLevel":
        return {}
      case "resources/subscribe":
      case "resources/unsubscribe": {
        if (typeof params.uri !== "string") throw new McpError(RpcCode.InvalidParams, "uri must be a string")
        if (request.method === "resources/subscribe") this.subscribed.add(params.uri)
        else this.subscribed.delete(params.uri)
        await this.relisten()
        return {}
      }
    }
    const sent = withMeta(params, options)
    const pass = inputMethods.has(request.method) ? options.input : undefined
    const capabilities = options.hostCapabilities ?? this.declared
    let current = pass === undefined ? sent : withInput(sent, pass)
    for (let round = 0; ; round++) {
      let result: JsonObject
      try {
        result = (await this.sdk.request(
          { method: request.method, params: current } as never,
          schema as never,
          {
            ...options,
            allowInputRequired: true
          } as never
        )) as JsonObject
      } catch (cause) {
        throw asMcpError(cause, options.timeout)
      }
      const needed = inputRequiredOf(result)
      if (needed === undefined) return completeResult(result)
      if (pass !== undefined) return this.passOn(request.method, result, needed, pass)
      if (round >= maxInputRounds) {
        throw new McpError(
          RpcCode.InternalError,
          `${request.method}: the source still asked for input after ${maxInputRounds} rounds`
        )
      }
      current = retryParams(sent, needed, await this.answers(needed, options.signal, capabilities))
    }
  }

  /** A modern host's request: the child's input_required goes back to it, the child's state inside clawtool's. */
  private passOn(method: string, result: JsonObject, needed: InputRequired, pass: InputPass): JsonObject {
    const requestState = pass.seal(this.instance, needed.requestState)
    if (requestState === undefined) {
      throw new McpError(RpcCode.InternalError, `${method}: the source's requestState is too long to pass on`)
    }
    return { ...result, requestState }
  }

  /**
   * The rest of a call the relay sent raw (ADR 009) whose first answer was `input_required`: asked, then retried on
   * the SDK path (progress, if the host asked for it, is not asked of the retries).
   */
  continueCall(
    request: CallToolRequest,
    needed: InputRequired,
    signal: AbortSignal,
    hostCapabilities: JsonObject | undefined
  ): Promise<JsonObject> {
    return this.answers(needed, signal, hostCapabilities ?? this.declared).then((answers) =>
      this.request(
        { method: "tools/call", params: retryParams(request as unknown as JsonObject, needed, answers) },
        undefined,
        { signal, timeout: noTimeout, hostCapabilities }
      )
    )
  }

  /** Each embedded request asked of the host in turn (one dialog at a time); a refusal fails the call. */
  private async answers(
    needed: InputRequired,
    signal: AbortSignal | undefined,
    capabilities: JsonObject
  ): Promise<Record<string, JsonObject>> {
    const answers: Record<string, JsonObject> = {}
    for (const [key, input] of Object.entries(needed.inputRequests)) {
      answers[key] = await this.ask(input.method, input.params, signal ?? new AbortController().signal, capabilities)
    }
    return answers
  }

  /** One listen with what the host subscribed to and the list_changed kinds the child announces; replaced on change. */
  private async relisten(): Promise<void> {
    const capabilities = (this.sdk.getServerCapabilities() ?? {}) as JsonObject
    const announces = (kind: string) => isJsonObject(capabilities[kind]) && capabilities[kind].listChanged === true
    const filter = {
      ...(announces("tools") ? { toolsListChanged: true } : {}),
      ...(announces("prompts") ? { promptsListChanged: true } : {}),
      ...(announces("resources") ? { resourcesListChanged: true } : {}),
      ...(this.subscribed.size > 0 ? { resourceSubscriptions: [...this.subscribed] } : {})
    }
    const previous = this.listening
    this.listening = undefined
    await previous?.close().catch(() => {})
    if (Object.keys(filter).length === 0) return
    this.listening = await this.sdk.listen(filter, { timeout: 10_000 })
  }
}

/**
 * A modern child's embedded request asked of the host (MRTR, ADR 033): only what the child was told the host has for
 * this request; the host's refusal fails the call with its code.
 */
export const askHost =
  (spec: { readonly instance: string; readonly host?: HostPort | undefined }, runtime: Runtime.Runtime<never>): Ask =>
  (method, params, signal, declared) => {
    const capability = reverseCapability[method]
    if (capability === undefined || declared[capability] === undefined || spec.host === undefined) {
      return Promise.reject(
        new McpError(RpcCode.MethodNotFound, `${method}: the host did not declare ${capability ?? "this capability"}`)
      )
    }
    return Runtime.runPromiseExit(runtime)(spec.host.request(spec.instance, method, params), { signal }).then(
      (exit) => {
        if (Exit.isSuccess(exit)) return exit.value
        const failure = Option.getOrUndefined(Cause.failureOption(exit.cause))
        throw failure === undefined
          ? new McpError(RpcCode.InternalError, `${method}: cancelled`)
          : new McpError(failure.code, `${method}: ${failure.detail}`, failure.data)
      }
    )
  }
