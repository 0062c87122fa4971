import type { JsonObject } from "./Mcp.js"
import { isJsonObject, RpcCode } from "./Surface.js"

/**
 * The two MCP eras at the host edge (ADR 032), as plain data: the legacy era opens with `initialize` (2024-10-07 …
 * 2025-11-25), the modern era (2026-07-28) carries a `_meta` envelope on every request instead. Pure: the stdio and
 * HTTP edges classify, check and stamp with these; nothing here runs a request.
 */

export const modernVersion = "2026-07-28"

/** The modern versions clawtool serves (-32022 names them). */
export const modernVersions: ReadonlyArray<string> = [modernVersion]

/** The legacy versions (the SDK v1 negotiates among them; `server/discover` lists them too). */
export const legacyVersions: ReadonlyArray<string> = [
  "2025-11-25",
  "2025-06-18",
  "2025-03-26",
  "2024-11-05",
  "2024-10-07"
]

export const metaKey = {
  protocolVersion: "io.modelcontextprotocol/protocolVersion",
  clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  clientInfo: "io.modelcontextprotocol/clientInfo",
  logLevel: "io.modelcontextprotocol/logLevel",
  serverInfo: "io.modelcontextprotocol/serverInfo",
  subscriptionId: "io.modelcontextprotocol/subscriptionId"
} as const

/** The error codes only the modern era has. */
export const EraCode = {
  HeaderMismatch: -32020,
  /** The request needs a client capability its envelope did not declare (answered HTTP 400). */
  MissingRequiredClientCapability: -32021,
  UnsupportedProtocolVersion: -32022
} as const

/** What the modern era serves: the requests of its registry (no ping, setLevel, subscribe or tasks). */
export const modernMethods: ReadonlySet<string> = new Set([
  "server/discover",
  "subscriptions/listen",
  "tools/list",
  "tools/call",
  "prompts/list",
  "prompts/get",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "completion/complete"
])

/** Results that are cacheable (SEP-2549): they carry `ttlMs` and `cacheScope`. */
export const cacheableMethods: ReadonlySet<string> = new Set([
  "server/discover",
  "tools/list",
  "prompts/list",
  "resources/list",
  "resources/templates/list",
  "resources/read"
])

/** One modern request's envelope: who asks, in which version, with what. */
export interface Envelope {
  readonly version: string
  readonly capabilities: JsonObject
  readonly clientInfo: JsonObject | undefined
  readonly logLevel: string | undefined
}

/** A JSON-RPC error to answer, as data. */
export interface EraError {
  readonly code: number
  readonly message: string
  readonly data?: JsonObject
}

/** Where a modern request's answer and its notifications go (a stdio line, an HTTP response or its SSE stream). */
export interface ModernWire {
  /** The result (an object, or JSON text already stamped). */
  readonly result: (id: string | number, result: JsonObject | string) => void
  readonly error: (id: string | number, error: EraError) => void
  /** A notification about request `about` (its progress), or on the listen stream `about`. */
  readonly notify: (method: string, params: JsonObject, about: string | number) => void
}

export type Checked =
  { readonly ok: true; readonly envelope: Envelope } | { readonly ok: false; readonly error: EraError }

const metaOf = (params: unknown): JsonObject | undefined =>
  isJsonObject(params) && isJsonObject(params._meta) ? params._meta : undefined

/** Whether a request claims the modern era: its `_meta` names a protocol version (whatever it names). */
export const claimsModern = (params: unknown): boolean => metaOf(params)?.[metaKey.protocolVersion] !== undefined

/**
 * Which era a connection's opening request selects (stdio: the first request pins it, as SDK v2's serveStdio does):
 * a modern envelope or `server/discover` → modern; anything else (initialize, an envelope-less request) → legacy.
 */
export const openingEra = (method: unknown, params: unknown): "modern" | "legacy" =>
  method === "server/discover" || claimsModern(params) ? "modern" : "legacy"

const unsupported = (requested: string): EraError => ({
  code: EraCode.UnsupportedProtocolVersion,
  message: `Unsupported protocol version: ${requested}`,
  data: { supported: [...modernVersions], requested }
})

const invalidEnvelope = (key: string, problem: string): EraError => ({
  code: RpcCode.InvalidParams,
  message: `Invalid _meta envelope for protocol revision ${modernVersion}: ${key}: ${problem}`
})

/**
 * The envelope of a modern request, or the error it is answered with: -32602 for a missing or malformed one (no `_meta`
 * or no version string: the request is malformed, not of another version), -32022 for a version clawtool does not serve
 * (in the envelope, or in an `initialize`'s params on a modern connection).
 */
export const checkEnvelope = (params: unknown, logLevels: ReadonlyArray<string>): Checked => {
  const meta = metaOf(params)
  const version = meta?.[metaKey.protocolVersion]
  if (typeof version !== "string") {
    // An initialize names its (legacy) version in its params: -32022 tells that client what this era serves.
    const legacy = isJsonObject(params) ? params.protocolVersion : undefined
    if (typeof legacy === "string") return { ok: false, error: unsupported(legacy) }
    return {
      ok: false,
      error: invalidEnvelope(metaKey.protocolVersion, meta === undefined ? "no _meta" : "expected a string")
    }
  }
  if (!modernVersions.includes(version)) return { ok: false, error: unsupported(version) }
  const capabilities = meta![metaKey.clientCapabilities]
  if (!isJsonObject(capabilities)) {
    return { ok: false, error: invalidEnvelope(metaKey.clientCapabilities, "expected an object") }
  }
  const clientInfo = meta![metaKey.clientInfo]
  if (clientInfo !== undefined && !isJsonObject(clientInfo)) {
    return { ok: false, error: invalidEnvelope(metaKey.clientInfo, "expected an object") }
  }
  const logLevel = meta![metaKey.logLevel]
  if (logLevel !== undefined && (typeof logLevel !== "string" || !logLevels.includes(logLevel))) {
    return { ok: false, error: invalidEnvelope(metaKey.logLevel, `expected one of ${logLevels.join(", ")}`) }
  }
  return { ok: true, envelope: { version, capabilities, clientInfo, logLevel } }
}

const envelopeKeys: ReadonlySet<string> = new Set([
  metaKey.protocolVersion,
  metaKey.clientCapabilities,
  metaKey.clientInfo,
  metaKey.logLevel
])

/**
 * The `_meta` a child gets: the host's, without the envelope (the child has its own era and clawtool is its client);
 * undefined when nothing else is left.
 */
export const forwardedMeta = (meta: JsonObject | undefined): JsonObject | undefined => {
  if (meta === undefined) return undefined
  let rest: Record<string, unknown> | undefined
  for (const key in meta) {
    if (envelopeKeys.has(key)) continue
    ;(rest ??= {})[key] = meta[key]
  }
  return rest as JsonObject | undefined
}

/** How long a host may reuse a result, and with whom (SEP-2549). */
export interface CacheHint {
  readonly ttlMs: number
  readonly cacheScope: "public" | "private"
}

/**
 * A modern result: `resultType` (unless the result has its own, e.g. a modern child's `input_required`), the cache
 * hint for cacheable methods, and clawtool's serverInfo in `_meta` (beside the result's own `_meta`). Shallow: the
 * result's content is neither copied nor re-validated.
 */
export const stamp = (result: JsonObject, serverInfo: JsonObject, hint: CacheHint | undefined): JsonObject => {
  const meta = isJsonObject(result._meta) ? result._meta : undefined
  return {
    ...result,
    resultType: typeof result.resultType === "string" ? result.resultType : "complete",
    ...(hint === undefined ? {} : { ttlMs: hint.ttlMs, cacheScope: hint.cacheScope }),
    _meta: { ...meta, [metaKey.serverInfo]: serverInfo }
  }
}

/**
 * The same for a result that is already JSON text (clawtool's own, e.g. the catalog's tools/list, which has no
 * `_meta` or `resultType`): the stamp is spliced in front, nothing is re-serialised.
 */
export const stampJson = (json: string, serverInfo: JsonObject, hint: CacheHint | undefined): string => {
  const head =
    `"resultType":"complete",` +
    (hint === undefined ? "" : `"ttlMs":${hint.ttlMs},"cacheScope":"${hint.cacheScope}",`) +
    `"_meta":${JSON.stringify({ [metaKey.serverInfo]: serverInfo })}`
  return json === "{}" ? `{${head}}` : `{${head},${json.slice(1)}`
}

/** The body field `Mcp-Name` names, per method (SEP-2243). */
const nameField: Readonly<Record<string, string>> = {
  "tools/call": "name",
  "prompts/get": "name",
  "resources/read": "uri"
}

/** What a modern POST's headers say (absent: undefined). */
export interface EraHeaders {
  readonly method: string | undefined
  readonly name: string | undefined
  readonly version: string | undefined
}

const mismatch = (message: string): EraError => ({
  code: EraCode.HeaderMismatch,
  message: `Header mismatch: ${message}`
})

/**
 * HTTP: a modern request's `Mcp-Method` must name its method and `Mcp-Name` its tool, prompt or resource, and
 * `MCP-Protocol-Version`, when sent, the envelope's version; otherwise -32020 HeaderMismatch (what a proxy routed by is
 * not what the body does).
 */
export const checkHeaders = (headers: EraHeaders, method: string, params: unknown): EraError | undefined => {
  if (headers.method === undefined)
    return mismatch(`the body names method ${method} but the Mcp-Method header is absent`)
  if (headers.method !== method) {
    return mismatch(`the body names method ${method} but the Mcp-Method header names ${headers.method}`)
  }
  const version = metaOf(params)?.[metaKey.protocolVersion]
  if (headers.version !== undefined && typeof version === "string" && headers.version !== version) {
    return mismatch(`the envelope names protocol version ${version} but MCP-Protocol-Version names ${headers.version}`)
  }
  const field = nameField[method]
  const value = field === undefined || !isJsonObject(params) ? undefined : params[field]
  if (typeof value !== "string") return undefined
  if (headers.name === undefined)
    return mismatch(`the body carries params.${field}="${value}" but the Mcp-Name header is absent`)
  if (headers.name !== value) {
    return mismatch(`the body carries params.${field}="${value}" but the Mcp-Name header names "${headers.name}"`)
  }
  return undefined
}
