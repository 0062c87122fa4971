import * as Http from "node:http"
import * as Https from "node:https"
import type { Readable } from "node:stream"
import * as Zlib from "node:zlib"
import {
  type AddressPolicy,
  BlockedAddress,
  blockedDetail,
  checkUrl,
  guardedLookup,
  isPublic,
  literalAddress,
  type Resolver,
  WebFetchRefusal
} from "./WebFetchGuard.js"

/**
 * One guarded GET with manual redirects: every hop is parsed and checked again, http is upgraded to https for public
 * hosts, the body is decompressed and capped by its DECOMPRESSED size, and the whole fetch by time. No proxy: node:http
 * connects directly, so the guard's check is the connection's address.
 */

export interface FetchOptions {
  /** Which addresses may be dialled: `policyFor(allow_private)`. */
  readonly allowed: AddressPolicy
  /** http → https for hosts whose addresses are all public (true in clawtool; tests of the guard turn it off). */
  readonly upgradeHttp: boolean
  readonly resolver: Resolver
  readonly timeoutMs: number
  readonly maxBytes: number
  readonly maxRedirects: number
  readonly userAgent: string
}

export interface Fetched {
  readonly url: string
  readonly finalUrl: string
  readonly status: number
  readonly contentType: string
  readonly body: Buffer
  /** The body was longer than maxBytes (decompressed) and was cut there. */
  readonly truncated: boolean
  readonly redirects: ReadonlyArray<string>
}

export class WebFetchFailure extends Error {
  constructor(
    readonly reason: "Timeout" | "Network" | "TooManyRedirects",
    detail: string
  ) {
    super(detail)
  }
}

/** Fetches `raw`; rejects with WebFetchRefusal (bad URL, blocked address) or WebFetchFailure. `signal` aborts. */
export const fetchGuarded = async (raw: string, options: FetchOptions, signal?: AbortSignal): Promise<Fetched> => {
  const deadline = AbortSignal.timeout(options.timeoutMs)
  const abort = signal === undefined ? deadline : AbortSignal.any([signal, deadline])
  const redirects: Array<string> = []
  let target = raw
  for (let hop = 0; ; hop++) {
    const checked = checkUrl(target, options.allowed)
    if (checked instanceof WebFetchRefusal) throw checked
    const url = await upgraded(checked, options)
    const response = await request(url, options, abort).catch((cause: unknown) => {
      throw translate(cause, url, deadline.aborted, options.timeoutMs)
    })
    const location = response.headers.location
    if (response.statusCode !== undefined && response.statusCode >= 300 && response.statusCode < 400 && location) {
      response.resume()
      if (hop >= options.maxRedirects) {
        throw new WebFetchFailure("TooManyRedirects", `more than ${options.maxRedirects} redirects (last: ${location})`)
      }
      target = new URL(location, url).href
      redirects.push(target)
      continue
    }
    const { body, truncated } = await readBody(response, options.maxBytes, abort).catch((cause: unknown) => {
      throw translate(cause, url, deadline.aborted, options.timeoutMs)
    })
    return {
      url: raw,
      finalUrl: url.href,
      status: response.statusCode ?? 0,
      contentType: String(response.headers["content-type"] ?? ""),
      body,
      truncated,
      redirects
    }
  }
}

/**
 * http → https for public hosts. A private host that the policy lets through (allow_private: a dev server, an intranet
 * name) keeps plain http, so such a name is resolved once here to decide; the connection checks again.
 */
export const upgraded = async (url: URL, options: Pick<FetchOptions, "allowed" | "upgradeHttp" | "resolver">) => {
  if (url.protocol !== "http:" || !options.upgradeHttp) return url
  const literal = literalAddress(url)
  const addresses =
    literal !== undefined
      ? [literal]
      : !options.allowed("127.0.0.1")
        ? [] // private addresses are refused anyway: no need to resolve
        : await options.resolver(url.hostname).then(
            (all) => all.map((entry) => entry.address),
            () => ["unresolved"]
          )
  if (addresses.some((address) => !isPublic(address))) return url
  const secure = new URL(url.href)
  secure.protocol = "https:"
  if (secure.port === "80") secure.port = ""
  return secure
}

const request = (url: URL, options: FetchOptions, signal: AbortSignal): Promise<Http.IncomingMessage> =>
  new Promise((resolve, reject) => {
    const client = url.protocol === "https:" ? Https : Http
    const req = client.request(url, {
      method: "GET",
      // A fresh connection per request: a pooled socket could have been opened to an address checked for another name.
      agent: false,
      lookup: guardedLookup(options.resolver, options.allowed) as never,
      signal,
      headers: {
        "user-agent": options.userAgent,
        accept: "text/html, text/markdown, text/plain, application/json, application/xhtml+xml, */*;q=0.1",
        "accept-encoding": "gzip, deflate, br"
      }
    })
    req.once("response", resolve)
    req.once("error", reject)
    req.end()
  })

/** Reads the decompressed body up to maxBytes, then stops (a gzip bomb costs maxBytes, not its expanded size). */
const readBody = (
  response: Http.IncomingMessage,
  maxBytes: number,
  signal: AbortSignal
): Promise<{ body: Buffer; truncated: boolean }> =>
  new Promise((resolve, reject) => {
    const encoding = String(response.headers["content-encoding"] ?? "")
      .trim()
      .toLowerCase()
    const stream: Readable =
      encoding === "gzip" || encoding === "x-gzip"
        ? response.pipe(Zlib.createGunzip())
        : encoding === "deflate"
          ? response.pipe(Zlib.createInflate())
          : encoding === "br"
            ? response.pipe(Zlib.createBrotliDecompress())
            : response
    const chunks: Array<Buffer> = []
    let length = 0
    let settled = false
    const finish = (truncated: boolean) => {
      if (settled) return
      settled = true
      signal.removeEventListener("abort", onAbort)
      resolve({ body: Buffer.concat(chunks, length), truncated })
    }
    const fail = (error: unknown) => {
      if (settled) return
      settled = true
      signal.removeEventListener("abort", onAbort)
      response.destroy()
      if (stream !== response) stream.destroy()
      reject(error)
    }
    const onAbort = () => fail(signal.reason)
    signal.addEventListener("abort", onAbort)
    stream.on("data", (chunk: Buffer) => {
      if (settled) return
      const room = maxBytes - length
      if (chunk.length > room) {
        // A byte past the cap: the body is cut there and nothing more is read (decompressed or not).
        chunks.push(chunk.subarray(0, room))
        length += room
        response.destroy()
        if (stream !== response) stream.destroy()
        return finish(true)
      }
      chunks.push(chunk)
      length += chunk.length
    })
    stream.once("end", () => finish(false))
    stream.once("error", fail)
    response.once("error", fail)
  })

const translate = (cause: unknown, url: URL, timedOut: boolean, timeoutMs: number): unknown => {
  if (cause instanceof WebFetchRefusal || cause instanceof WebFetchFailure) return cause
  if (cause instanceof BlockedAddress) {
    return new WebFetchRefusal({ reason: "Blocked", detail: blockedDetail(cause.host, cause.address, cause.range) })
  }
  if (timedOut) return new WebFetchFailure("Timeout", `no complete answer from ${url.host} within ${timeoutMs} ms`)
  const code = (cause as NodeJS.ErrnoException | undefined)?.code
  const message = cause instanceof Error ? cause.message : String(cause)
  return new WebFetchFailure("Network", `${url.host}: ${code === undefined ? message : `${code}: ${message}`}`)
}

// WebFetch loads this module on its first call and gets the guard from it too (one chunk, loaded on demand).
export { policyFor, systemResolver, WebFetchRefusal } from "./WebFetchGuard.js"
