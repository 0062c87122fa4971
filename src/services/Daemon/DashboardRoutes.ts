import { Effect, Either, Option } from "effect"
import * as Fs from "node:fs"
import type * as http from "node:http"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import type { JsonObject } from "../../domain/Mcp.js"
import type { Dashboard } from "../Dashboard.js"
import { type Guard, refusal, refuse, type Route } from "./Web.js"

/**
 * The dashboard over HTTP (issue 29, ADR 034), loaded when the daemon starts with `[http] ui`: `/ui` serves the bundled
 * single-page app (dist/ui, built by scripts/bundle.mjs from src/ui; no CDN) under a strict Content-Security-Policy,
 * `/api/*` the Dashboard service's data as JSON and `/api/events` a stream of the state (server-sent events over a
 * fetch, so the token rides in a header: no cookie, no token in a URL). Every /api request is checked as /mcp is
 * (Host, Origin, bearer token); the page and its assets need Host only (they hold nothing).
 */

/** What every dashboard response carries: no framing, no inline script, nothing loaded from elsewhere. */
const securityHeaders: http.OutgoingHttpHeaders = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store"
}

const assets: Readonly<Record<string, string>> = {
  "index.html": "text/html; charset=utf-8",
  "app.js": "text/javascript; charset=utf-8",
  "app.css": "text/css; charset=utf-8"
}

/** dist/ui beside the bundle (dist/clawtool.cjs, or a chunk under dist/bin), or beside tsc's output. */
const assetDir = (): string | undefined => {
  const here = Path.dirname(fileURLToPath(import.meta.url))
  return [Path.join(here, "ui"), Path.join(here, "..", "ui"), Path.join(here, "..", "..", "ui")]
    .concat([Path.join(here, "..", "..", "..", "dist", "ui")])
    .find((dir) => Fs.existsSync(Path.join(dir, "index.html")))
}

const send = (
  res: http.ServerResponse,
  status: number,
  body: string | Buffer,
  type: string,
  headers: http.OutgoingHttpHeaders = {}
) => {
  if (res.headersSent) return void res.end()
  res.writeHead(status, { ...securityHeaders, "content-type": type, ...headers })
  res.end(body)
}
const json = (res: http.ServerResponse, status: number, value: unknown) =>
  send(res, status, JSON.stringify(value), "application/json")

const maxBody = 1024 * 1024

const readJson = (req: http.IncomingMessage) =>
  new Promise<unknown>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBody) {
        req.destroy()
        return reject(new Error(`body larger than ${maxBody} bytes`))
      }
      chunks.push(chunk)
    })
    req.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")))
      } catch (error) {
        reject(error)
      }
    })
    req.on("error", reject)
  })

/** Where the authorization server sends the browser back after a login started on the dashboard. */
const callbackPath = "/ui/oauth/callback"

/** The dashboard's origin as the browser knows it (Origin and Host were checked): the redirect must come back there. */
const pageOrigin = (req: http.IncomingMessage) => {
  const origin = req.headers.origin
  return origin !== undefined && origin !== "null" ? origin : `http://${req.headers.host ?? "127.0.0.1"}`
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

/** The page the login's redirect ends on: what happened, no script, nothing of the code or the tokens. */
const loginPage = (title: string, text: string) =>
  `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>` +
  `<link rel="stylesheet" href="/ui/app.css"></head><body><main class="login"><h1>${escapeHtml(title)}</h1>` +
  `<p role="status">${escapeHtml(text)}</p><p><a href="/ui">Back to the dashboard</a></p></main></body></html>\n`

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

export const dashboardRoutes = (
  guard: Guard,
  dashboard: Dashboard,
  run: <A>(effect: Effect.Effect<A>) => Promise<A>
): Route => {
  const dir = assetDir()
  const cache = new Map<string, Buffer>()

  const page = (name: string, res: http.ServerResponse) => {
    const type = assets[name]
    if (type === undefined || dir === undefined) {
      return send(
        res,
        404,
        dir === undefined ? "the dashboard was not built (npm run build)" : "not found",
        "text/plain"
      )
    }
    let body = cache.get(name)
    if (body === undefined) {
      body = Fs.readFileSync(Path.join(dir, name))
      cache.set(name, body)
    }
    send(res, 200, body, type)
  }

  /** The state, again whenever it changed (checked each second), and a comment every 15 s to keep proxies open. */
  const events = (req: http.IncomingMessage, res: http.ServerResponse) => {
    res.writeHead(200, { ...securityHeaders, "content-type": "text/event-stream", connection: "keep-alive" })
    res.write(": clawtool\n\n")
    let last = ""
    let quiet = 0
    let busy = false
    const tick = () => {
      if (busy) return
      busy = true
      run(dashboard.state).then(
        (state) => {
          busy = false
          const text = JSON.stringify(state)
          if (text !== last) {
            last = text
            quiet = 0
            res.write(`event: state\ndata: ${text}\n\n`)
          } else if (++quiet >= 15) {
            quiet = 0
            res.write(": keep-alive\n\n")
          }
        },
        () => {
          busy = false
        }
      )
    }
    tick()
    const timer = setInterval(tick, 1000)
    req.on("close", () => clearInterval(timer))
  }

  const api = async (path: string, req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://dashboard")
    if (req.method === "GET" && path === "/api/events") return events(req, res)
    if (req.method === "GET" && path === "/api/state") return json(res, 200, await run(dashboard.state))
    if (req.method === "GET" && path.startsWith("/api/sources/")) {
      const found = await run(dashboard.source(decodeURIComponent(path.slice("/api/sources/".length))))
      return Option.isNone(found) ? json(res, 404, { error: "no such source" }) : json(res, 200, found.value)
    }
    if (req.method === "GET" && path === "/api/tools") {
      return json(res, 200, await run(dashboard.tools(url.searchParams.get("q") ?? "")))
    }
    if (req.method === "GET" && path === "/api/trust") return json(res, 200, await run(dashboard.waiting))
    if (req.method !== "POST") return json(res, 404, { error: "not found" })
    // A form post from another page cannot send JSON without a preflight the Origin check refuses.
    if (!/^application\/json\b/.test(req.headers["content-type"] ?? "")) {
      return json(res, 415, { error: "expected Content-Type: application/json" })
    }
    const body = await readJson(req).catch((error: unknown) => error as Error)
    if (body instanceof Error || !isObject(body)) {
      return json(res, 400, { error: `expected a JSON object: ${body instanceof Error ? body.message : ""}` })
    }
    if (path === "/api/call") {
      const { name, arguments: args = {} } = body
      if (typeof name !== "string" || !isObject(args)) {
        return json(res, 400, { error: `expected {"name": string, "arguments": object}` })
      }
      return json(res, 200, await run(dashboard.call(name, args)))
    }
    if (path === "/api/oauth/login") {
      if (typeof body.source !== "string" || body.source === "") {
        return json(res, 400, { error: `expected {"source": "instance"}` })
      }
      const started = await run(dashboard.startLogin(body.source, `${pageOrigin(req)}${callbackPath}`))
      return Either.isLeft(started) ? json(res, 400, { error: started.left }) : json(res, 200, started.right)
    }
    if (path === "/api/trust/approve") {
      if (typeof body.selector !== "string" || body.selector === "") {
        return json(res, 400, { error: `expected {"selector": "instance.tool"}` })
      }
      return json(res, 200, { approved: await run(dashboard.approve(body.selector)) })
    }
    return json(res, 404, { error: "not found" })
  }

  /** The redirect of a login the dashboard started: single use, matched by its `state`, then the source restarts. */
  const callback = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const query = new URL(req.url ?? "/", "http://dashboard").searchParams
    const state = query.get("state") ?? ""
    const refused = query.get("error")
    run(dashboard.finishLogin(state, query.get("code") ?? undefined, refused === null ? undefined : refused)).then(
      (done) =>
        Either.isRight(done)
          ? send(
              res,
              200,
              loginPage("Logged in", `${done.right} is logged in and restarting. You can close this tab.`),
              assets["index.html"]!
            )
          : send(res, 400, loginPage("Login failed", done.left), assets["index.html"]!),
      () => send(res, 500, loginPage("Login failed", "internal error"), assets["index.html"]!)
    )
  }

  return (path, req, res) => {
    if (path === "/ui" || path === "/ui/" || path.startsWith("/ui/")) {
      const host = refusal({ ...guard, token: undefined }, req)
      if (host !== undefined) refuse(res, host)
      else if (req.method !== "GET") send(res, 405, "Method not allowed", "text/plain", { allow: "GET" })
      else if (path === callbackPath) callback(req, res)
      else page(path === "/ui" || path === "/ui/" ? "index.html" : path.slice("/ui/".length), res)
      return true
    }
    if (!path.startsWith("/api/")) return false
    const refused = refusal(guard, req)
    if (refused !== undefined) {
      refuse(res, refused)
      return true
    }
    api(path, req, res).catch(() => json(res, 500, { error: "internal error" }))
    return true
  }
}
