import { createHash, timingSafeEqual } from "node:crypto"
import { isIP } from "node:net"

/**
 * The daemon's checks on every /mcp request (ADR 020), pure so each rule is tested alone: DNS-rebinding protection
 * (Host and Origin must name the listen address or a configured extra) and the bearer token, compared in constant time.
 */

export interface ListenAddress {
  /** As written: "127.0.0.1", "localhost", "::1", "0.0.0.0", a name. */
  readonly host: string
  readonly port: number
}

/** "HOST:PORT", "[::1]:PORT"; undefined when it is not one. */
export const parseListen = (text: string): ListenAddress | undefined => {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text.trim())
  if (match === null) return undefined
  const port = Number(match[3])
  if (port > 65535) return undefined
  return { host: (match[1] ?? match[2])!, port }
}

/** Only these hosts are loopback; anything else (0.0.0.0, a name, a LAN address) reaches other machines. */
export const isLoopback = (host: string): boolean =>
  host === "localhost" || host === "::1" || (isIP(host) === 4 && host.startsWith("127."))

/** The `host:port` forms that name the listen address: on loopback every loopback spelling counts. */
const namesOf = (listen: ListenAddress): ReadonlyArray<string> => {
  const bracket = (host: string) => (isIP(host) === 6 ? `[${host}]` : host)
  const hosts = isLoopback(listen.host)
    ? ["127.0.0.1", "localhost", "[::1]", bracket(listen.host)]
    : [bracket(listen.host)]
  return hosts.map((host) => `${host.toLowerCase()}:${listen.port}`)
}

const hostnameOf = (hostPort: string) => hostPort.replace(/:\d+$/, "")

/** The Host header names the listen address (with its port) or an `allowed_hosts` entry ("host" or "host:port"). */
export const hostAllowed = (
  header: string | undefined,
  listen: ListenAddress,
  allowed: ReadonlyArray<string>
): boolean => {
  if (header === undefined) return false
  const host = header.trim().toLowerCase()
  if (namesOf(listen).includes(host)) return true
  return allowed.some((entry) => {
    const wanted = entry.trim().toLowerCase()
    return wanted === host || (!/:\d+$/.test(wanted) && wanted === hostnameOf(host))
  })
}

/** No Origin (not a browser) passes; one must be the listen address's own origin or an `allowed_origins` entry. */
export const originAllowed = (
  header: string | undefined,
  listen: ListenAddress,
  allowed: ReadonlyArray<string>
): boolean => {
  if (header === undefined) return true
  const origin = header.trim().toLowerCase().replace(/\/$/, "")
  if (namesOf(listen).some((name) => origin === `http://${name}`)) return true
  return allowed.some((entry) => entry.trim().toLowerCase().replace(/\/$/, "") === origin)
}

const digest = (text: string) => createHash("sha256").update(text).digest()

/** `Authorization: Bearer <token>`, compared as equal-length digests so the time taken says nothing of the token. */
export const bearerMatches = (header: string | undefined, token: string): boolean => {
  const match = header === undefined ? null : /^Bearer\s+(.+)$/i.exec(header.trim())
  const given = match?.[1]?.trim() ?? ""
  // Compared even when absent, so a missing header costs what a wrong one does.
  return timingSafeEqual(digest(given), digest(token)) && match !== null
}
