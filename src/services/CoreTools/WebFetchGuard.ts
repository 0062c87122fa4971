import { Data } from "effect"
import ipaddr from "ipaddr.js"
import type { LookupAddress, LookupAllOptions, LookupOneOptions } from "node:dns"
import * as Dns from "node:dns"

/**
 * WebFetch's SSRF guard (ADR 024). A URL is refused unless every address it reaches is public unicast: the literal host
 * is checked after WHATWG parsing (which turns `0x7f.1` and `2130706433` into `127.0.0.1`), and names are checked in a
 * `lookup` hook on the socket itself, so the address checked is the address dialled (no DNS rebinding in between).
 * `allowPrivate` is the operator's `[core_tools.WebFetch] allow_private`, never a tool argument.
 */

export class WebFetchRefusal extends Data.TaggedError("WebFetchRefusal")<{
  readonly reason: "InvalidUrl" | "Blocked"
  readonly detail: string
}> {}

/** The error a guarded lookup fails with: recognised by its class when the request errors. */
export class BlockedAddress extends Error {
  constructor(
    readonly host: string,
    readonly address: string,
    readonly range: string
  ) {
    super(`${host} resolves to ${address} (${range}), which WebFetch does not reach`)
  }
}

/** Resolves a name to every address (the guard checks them all). Injected in tests to play DNS. */
export type Resolver = (hostname: string) => Promise<ReadonlyArray<LookupAddress>>

export const systemResolver: Resolver = (hostname) => Dns.promises.lookup(hostname, { all: true, verbatim: true })

/** ipaddr.js's range name of an address, IPv4-mapped IPv6 unmapped first; "unicast" is the only public one. */
export const addressRange = (address: string): string => ipaddr.process(address).range()

export const isPublic = (address: string): boolean => ipaddr.isValid(address) && addressRange(address) === "unicast"

/** Which addresses may be dialled: public unicast only, or (allow_private) any. Tests pass their own. */
export type AddressPolicy = (address: string) => boolean

export const policyFor = (allowPrivate: boolean): AddressPolicy => (allowPrivate ? () => true : isPublic)

const rangeOf = (address: string) => (ipaddr.isValid(address) ? addressRange(address) : "invalid")

/** The host as an address when it is a literal one (`[::1]` unbracketed), else undefined. */
export const literalAddress = (url: URL): string | undefined => {
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname
  return ipaddr.isValid(host) ? host : undefined
}

/** Names that mean this machine whatever DNS says. */
const localName = (hostname: string) => {
  const name = hostname.toLowerCase().replace(/\.$/, "")
  return name === "localhost" || name.endsWith(".localhost")
}

/** Parses and checks a URL before any connection: scheme, credentials, and a literal or local host. */
export const checkUrl = (raw: string, allowed: AddressPolicy): URL | WebFetchRefusal => {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return new WebFetchRefusal({ reason: "InvalidUrl", detail: `not a URL: ${JSON.stringify(raw.slice(0, 200))}` })
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return new WebFetchRefusal({
      reason: "InvalidUrl",
      detail: `only http and https URLs are fetched, not ${url.protocol}`
    })
  }
  if (url.username !== "" || url.password !== "") {
    return new WebFetchRefusal({ reason: "InvalidUrl", detail: "URLs with credentials (user:password@) are refused" })
  }
  // Node dials a literal address without calling `lookup`: it is checked here.
  const literal = literalAddress(url)
  if (literal !== undefined && !allowed(literal)) {
    return new WebFetchRefusal({ reason: "Blocked", detail: blockedDetail(url.hostname, literal, rangeOf(literal)) })
  }
  if (literal === undefined && localName(url.hostname) && !allowed("127.0.0.1")) {
    return new WebFetchRefusal({ reason: "Blocked", detail: blockedDetail(url.hostname, url.hostname, "loopback") })
  }
  return url
}

export const blockedDetail = (host: string, address: string, range: string) =>
  `${host} is ${address === host ? "" : `${address}, `}a ${range} address: WebFetch reaches only public addresses (an operator can set [core_tools.WebFetch] allow_private = true)`

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | ReadonlyArray<LookupAddress>,
  family?: number
) => void

/**
 * A `lookup` for node:http(s) (and net): resolves every address, fails with BlockedAddress if ANY is not public, and
 * hands the socket only the addresses it checked, so the connection cannot reach another one.
 */
export const guardedLookup =
  (resolver: Resolver, allowed: AddressPolicy) =>
  (hostname: string, options: LookupOneOptions | LookupAllOptions, callback: LookupCallback): void => {
    resolver(hostname).then(
      (all) => {
        const family = typeof options.family === "number" ? options.family : 0
        const addresses = all.filter((entry) => family === 0 || entry.family === family)
        if (addresses.length === 0) {
          const error: NodeJS.ErrnoException = new Error(`${hostname}: no address`)
          error.code = "ENOTFOUND"
          return callback(error, [])
        }
        const blocked = addresses.find((entry) => !allowed(entry.address))
        if (blocked !== undefined) {
          return callback(new BlockedAddress(hostname, blocked.address, rangeOf(blocked.address)), [])
        }
        if (options.all === true) return callback(null, addresses)
        callback(null, addresses[0]!.address, addresses[0]!.family)
      },
      (error: NodeJS.ErrnoException) => callback(error, [])
    )
  }
