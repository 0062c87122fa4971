import type * as http from "node:http"
import { bearerMatches, hostAllowed, type ListenAddress, originAllowed } from "../../transport/HttpGuard.js"

/**
 * The daemon's routes beside /mcp (issue 29): `/metrics` for Prometheus, and the dashboard's `/ui` and `/api`
 * (Daemon/Dashboard). Each answers a request or declines it (false), so the Daemon's own routing stays as it is.
 */
export type Route = (path: string, req: http.IncomingMessage, res: http.ServerResponse) => boolean

/**
 * What the checks compare with: the address actually bound, the `[http]` extras and the tokens that reach these routes
 * (undefined: the daemon asks for no token; empty: none reaches them — only named tokens are set, and each reaches only
 * its profiles, issue 26).
 */
export interface Guard {
  readonly bound: () => ListenAddress
  readonly token: ReadonlyArray<string> | undefined
  readonly allowedHosts: ReadonlyArray<string>
  readonly allowedOrigins: ReadonlyArray<string>
}

const plain = (res: http.ServerResponse, status: number, text: string, headers: http.OutgoingHttpHeaders = {}) => {
  if (res.headersSent) return void res.end()
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", ...headers })
  res.end(text)
}

type Refusal = { readonly status: number; readonly text: string; readonly headers?: http.OutgoingHttpHeaders }

/** 401 unless the request carries the bearer token (when one is set). */
const tokenRefusal = (guard: Guard, req: http.IncomingMessage): Refusal | undefined =>
  guard.token === undefined || guard.token.some((token) => bearerMatches(req.headers.authorization, token))
    ? undefined
    : {
        status: 401,
        text: "Unauthorized: a valid Authorization: Bearer token is required",
        headers: {
          "www-authenticate":
            req.headers.authorization === undefined
              ? `Bearer realm="clawtool"`
              : `Bearer realm="clawtool", error="invalid_token"`
        }
      }

/** Why a request is refused, or undefined: Host, Origin and the bearer token, as on /mcp. */
export const refusal = (guard: Guard, req: http.IncomingMessage): Refusal | undefined => {
  if (!hostAllowed(req.headers.host, guard.bound(), guard.allowedHosts)) {
    return { status: 403, text: "Forbidden: Host header does not name this server (see [http] allowed_hosts)" }
  }
  if (!originAllowed(req.headers.origin, guard.bound(), guard.allowedOrigins)) {
    return { status: 403, text: "Forbidden: Origin not allowed (see [http] allowed_origins)" }
  }
  return tokenRefusal(guard, req)
}

export const refuse = (res: http.ServerResponse, refused: Refusal) =>
  plain(res, refused.status, refused.text, refused.headers)

/**
 * `GET /metrics`: the token when one is set (a DNS-rebinding page cannot know it, so then Host is not checked: a
 * scraper names the pod by its address), Host and Origin when none is (loopback only); nothing with
 * `[http] metrics_public = true`.
 */
export const metricsRoute =
  (
    guard: Guard,
    isPublic: boolean,
    exposition: () => Promise<{ readonly contentType: string; readonly text: string }>
  ): Route =>
  (path, req, res) => {
    if (path !== "/metrics") return false
    if (req.method !== "GET") {
      plain(res, 405, "Method not allowed", { allow: "GET" })
      return true
    }
    if (!isPublic) {
      const refused = guard.token === undefined ? refusal(guard, req) : tokenRefusal(guard, req)
      if (refused !== undefined) {
        refuse(res, refused)
        return true
      }
    }
    exposition().then(
      ({ contentType, text }) => plain(res, 200, text, { "content-type": contentType }),
      () => plain(res, 500, "Internal error")
    )
    return true
  }
