import { Deferred, type Duration, Effect, FiberMap, Option, Runtime } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import type * as http from "node:http"
import * as Era from "../domain/Era.js"
import { ConfigError } from "../domain/Errors.js"
import {
  bearerMatches,
  hostAllowed,
  isLoopback,
  type ListenAddress,
  originAllowed,
  parseListen
} from "../transport/HttpGuard.js"
import { type HttpServerTransport, loadHttpServerTransports } from "../transport/HttpServerTransport.js"
import { makeModernHttpWire } from "../transport/ModernHttp.js"
import { Config } from "./Config.js"
import { Gateway } from "./Gateway.js"
import { HostSessions, logLevels } from "./HostSessions.js"
import { expand, Secrets } from "./Secrets.js"

/** A JSON-RPC error body with no request id (the request could not be read, or was refused before routing). */
const rpcError = (code: number, message: string) =>
  JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null })

const reply = (res: http.ServerResponse, status: number, body: string, headers: http.OutgoingHttpHeaders = {}) => {
  if (res.headersSent) return void res.end()
  res.writeHead(status, { "content-type": "application/json", ...headers })
  res.end(body)
}

type BodyOutcome = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly tooLarge: true }

/** Reads the body up to `max` bytes; past it the rest is not buffered and the caller answers 413. */
const readBody = (req: http.IncomingMessage, max: number) =>
  new Promise<BodyOutcome>((resolve, reject) => {
    const declared = Number(req.headers["content-length"])
    if (Number.isFinite(declared) && declared > max) return resolve({ ok: false, tooLarge: true })
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > max) {
        req.removeAllListeners("data")
        req.resume()
        return resolve({ ok: false, tooLarge: true })
      }
      chunks.push(chunk)
    })
    req.on("end", () => resolve({ ok: true, text: Buffer.concat(chunks).toString("utf8") }))
    req.on("error", reject)
  })

const isInitialize = (body: unknown): boolean =>
  Array.isArray(body)
    ? body.some(isInitialize)
    : typeof body === "object" && body !== null && (body as { method?: unknown }).method === "initialize"

/** What `[http]` and `--listen` resolve to, checked before anything listens. */
export interface DaemonSettings {
  /** `[http] state_key`, resolved: what signs a modern host's requestState (ADR 032); undefined: random. */
  readonly stateKey: Buffer | undefined
  readonly inputRequiredTtl: Duration.Duration
  readonly listen: ListenAddress
  readonly token: string | undefined
  readonly allowedHosts: ReadonlyArray<string>
  readonly allowedOrigins: ReadonlyArray<string>
  readonly stateless: boolean
  readonly maxBody: number
}

/**
 * `clawtool serve --listen` (ADR 020): MCP streamable HTTP at /mcp for any number of host sessions over the one
 * Gateway, Registry and set of children; /healthz and /readyz for probes. Each HTTP session is a Gateway session over
 * the SDK's streamable-HTTP transport; this file is the HTTP front end only: routing, Host, Origin, token, size, JSON,
 * and which transport a session id names. What a session keeps (and when it expires) is HostSessions'.
 */
export class Daemon extends Effect.Service<Daemon>()("clawtool/Daemon", {
  dependencies: [Gateway.Default, Secrets.Default, HostSessions.Default],
  effect: Effect.gen(function* () {
    const gateway = yield* Gateway
    const hostSessions = yield* HostSessions
    const secrets = yield* Secrets
    const { config, file } = yield* Config
    const where = Option.getOrElse(file, () => "(no config file)")
    const invalid = (keyPath: string, detail: string) =>
      new ConfigError({ reason: "Invalid", file: where, keyPath, detail })

    /** `--listen` (or `[http] listen`) and the `[http]` table, with the token resolved; refuses what is unsafe. */
    const settings = (listenText: string) =>
      Effect.gen(function* () {
        const http = config.http
        const listen = parseListen(listenText)
        if (listen === undefined) {
          return yield* invalid(
            "http.listen",
            `expected HOST:PORT like "127.0.0.1:8765", got ${JSON.stringify(listenText)}`
          )
        }
        let token: string | undefined
        if (http.token !== undefined) {
          const expanded = expand(http.token, (name) => secrets.lookup("global", name))
          if (expanded.missing.length > 0 || expanded.value === "") {
            return yield* invalid(
              "http.token",
              `the token is empty: set ${expanded.missing.join(", ") || "it"} (secrets.toml [scopes.global] or the environment)`
            )
          }
          token = expanded.value
        }
        if (token === undefined && !isLoopback(listen.host)) {
          return yield* invalid(
            "http.token",
            `refusing to listen on ${listenText} without a token: anyone who can reach it could use every source. Set [http] token = "\${CLAWTOOL_HTTP_TOKEN}" (and the variable), or listen on 127.0.0.1`
          )
        }
        let stateKey: Buffer | undefined
        if (http.state_key !== undefined) {
          const expanded = expand(http.state_key, (name) => secrets.lookup("global", name))
          if (expanded.missing.length > 0 || expanded.value.length < 16) {
            return yield* invalid(
              "http.state_key",
              `the key that signs requestState needs at least 16 characters: set ${expanded.missing.join(", ") || "a longer one"} (secrets.toml [scopes.global] or the environment)`
            )
          }
          stateKey = Buffer.from(expanded.value, "utf8")
        }
        return {
          stateKey,
          inputRequiredTtl: http.input_required_ttl,
          listen,
          token,
          allowedHosts: http.allowed_hosts,
          allowedOrigins: http.allowed_origins,
          stateless: http.stateless,
          maxBody: http.max_body
        } satisfies DaemonSettings
      })

    /** Serves until interrupted (SIGINT/SIGTERM); closing ends every session, then the layers stop the children. */
    const serve = (listenText: string) =>
      Effect.gen(function* () {
        const options = yield* settings(listenText)
        // Loaded only here: stdio serve never pays for the HTTP transport and its Hono adapter (cold start, ADR 008).
        const transports = yield* Effect.promise(loadHttpServerTransports)
        const { createServer } = yield* Effect.promise(() => import("node:http"))
        const runtime = yield* Effect.runtime<never>()
        const run = Runtime.runPromise(runtime)
        const runSync = Runtime.runSync(runtime)
        const fibers = yield* FiberMap.make<string>()
        /** Each stateful session's transport, by session id. */
        const sessions = new Map<string, HttpServerTransport>()
        /** Counts a request open on session `id` until the returned function runs: a session in use never expires. */
        const busy = (id: string) => {
          const done = runSync(hostSessions.track(id))
          return () => runSync(done)
        }
        let ready = false
        let bound = options.listen
        yield* Effect.forkScoped(
          Effect.zipRight(
            gateway.awaitSettled,
            Effect.sync(() => (ready = true))
          )
        )

        /** Opens a Gateway session over `transport` in its own fiber; it lives until closed, expired or shut down. */
        const open = (id: string, transport: HttpServerTransport, stateless: boolean) =>
          Effect.gen(function* () {
            const opened = yield* Deferred.make<void>()
            yield* FiberMap.run(
              fibers,
              id,
              Effect.scoped(
                Effect.gen(function* () {
                  const session = yield* gateway.session(transport, { id, stateless })
                  yield* Deferred.succeed(opened, undefined)
                  yield* session.closed
                })
              ).pipe(Effect.ensuring(Effect.sync(() => sessions.delete(id))))
            )
            yield* Deferred.await(opened)
          })
        const close = (id: string) => FiberMap.remove(fibers, id)

        // The 2026-07-28 era (ADR 032): sessionless POSTs, answered on their own response.
        const modernHttp = makeModernHttpWire()
        const modern = gateway.modernServer({
          wire: modernHttp.wire,
          key: options.stateKey ?? randomBytes(32),
          ttl: options.inputRequiredTtl
        })
        const header = (req: http.IncomingMessage, name: string) => {
          const value = req.headers[name]
          return Array.isArray(value) ? value[0] : value
        }
        const serveModern = (req: http.IncomingMessage, res: http.ServerResponse, body: Record<string, unknown>) => {
          const id = body.id
          if (typeof id !== "string" && typeof id !== "number") {
            // A modern notification (the era's cancel is the closed response): accepted, nothing to do.
            return reply(res, 202, "")
          }
          const method = String(body.method)
          const refuse = (error: Era.EraError) => reply(res, 400, JSON.stringify({ jsonrpc: "2.0", id, error }))
          const checked = Era.checkEnvelope(body.params, logLevels)
          if (!checked.ok) return refuse(checked.error)
          const mismatch = Era.checkHeaders(
            {
              method: header(req, "mcp-method"),
              name: header(req, "mcp-name"),
              version: header(req, "mcp-protocol-version")
            },
            method,
            body.params
          )
          if (mismatch !== undefined) return refuse(mismatch)
          const key = randomUUID()
          const meta = (body.params as { _meta?: { progressToken?: unknown } } | undefined)?._meta
          const stream =
            meta?.progressToken !== undefined && (header(req, "accept") ?? "").includes("text/event-stream")
          modernHttp.add(key, res, id, stream)
          res.once("close", () => {
            if (modernHttp.forget(key)) modern.cancel(key)
          })
          void run(modern.serve(key, { id, method, params: body.params }, checked.envelope))
        }

        const readiness = Effect.map(gateway.health, (rows) => rows.map(({ stderrTail: _stderr, ...row }) => row))

        const mcp = async (req: http.IncomingMessage, res: http.ServerResponse) => {
          if (!hostAllowed(req.headers.host, bound, options.allowedHosts)) {
            return reply(
              res,
              403,
              rpcError(-32000, "Forbidden: Host header does not name this server (see [http] allowed_hosts)")
            )
          }
          if (!originAllowed(req.headers.origin, bound, options.allowedOrigins)) {
            return reply(res, 403, rpcError(-32000, "Forbidden: Origin not allowed (see [http] allowed_origins)"))
          }
          if (options.token !== undefined && !bearerMatches(req.headers.authorization, options.token)) {
            return reply(res, 401, rpcError(-32000, "Unauthorized: a valid Authorization: Bearer token is required"), {
              "www-authenticate":
                req.headers.authorization === undefined
                  ? `Bearer realm="clawtool"`
                  : `Bearer realm="clawtool", error="invalid_token"`
            })
          }
          // The host's credentials stay here: nothing below sees them, so no source can receive them.
          delete req.headers.authorization
          let body: unknown
          if (req.method === "POST") {
            const read = await readBody(req, options.maxBody)
            if (!read.ok) {
              res.once("finish", () => req.destroy())
              return reply(
                res,
                413,
                rpcError(-32600, `Request body larger than ${options.maxBody} bytes ([http] max_body)`),
                {
                  connection: "close"
                }
              )
            }
            try {
              body = JSON.parse(read.text)
            } catch (error) {
              return reply(
                res,
                400,
                rpcError(-32700, `Parse error: ${error instanceof Error ? error.message : String(error)}`)
              )
            }
          }
          if (
            req.method === "POST" &&
            req.headers["mcp-session-id"] === undefined &&
            typeof body === "object" &&
            body !== null &&
            !Array.isArray(body) &&
            Era.openingEra((body as { method?: unknown }).method, (body as { params?: unknown }).params) === "modern"
          ) {
            return serveModern(req, res, body as Record<string, unknown>)
          }
          if (options.stateless) {
            // Each request stands alone: a fresh session that ends with its response.
            const id = randomUUID()
            const transport = transports.stateless()
            await run(open(id, transport, true))
            res.once("close", () => void run(close(id)))
            return transport.handleRequest(req, res, body)
          }
          const header = req.headers["mcp-session-id"]
          const sessionId = Array.isArray(header) ? header[0] : header
          if (sessionId === undefined) {
            if (req.method !== "POST" || !isInitialize(body)) {
              return reply(res, 400, rpcError(-32000, "Bad Request: Mcp-Session-Id header is required"))
            }
            const id = randomUUID()
            const transport = transports.session(id)
            sessions.set(id, transport)
            await run(open(id, transport, false))
            const done = busy(id)
            await transport.handleRequest(req, res, body).finally(done)
            // A refused initialize leaves a transport with no session: nothing can reach it again.
            if (transport.sessionId === undefined) await run(close(id))
            return
          }
          const transport = sessions.get(sessionId)
          if (transport === undefined) return reply(res, 404, rpcError(-32001, "Session not found"))
          res.once("close", busy(sessionId))
          return transport.handleRequest(req, res, body)
        }

        const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
          const path = (req.url ?? "/").split("?")[0]
          if (path === "/healthz" && req.method === "GET") return reply(res, 200, JSON.stringify({ status: "ok" }))
          if (path === "/readyz" && req.method === "GET") {
            return void run(readiness).then((rows) =>
              reply(res, ready ? 200 : 503, JSON.stringify({ ready, sources: rows }))
            )
          }
          if (path !== "/mcp") return reply(res, 404, rpcError(-32601, `Not found: MCP is served at /mcp`))
          mcp(req, res).catch((error: unknown) => {
            void run(Effect.logWarning(`http: ${error instanceof Error ? error.message : String(error)}`))
            reply(res, 500, rpcError(-32603, "Internal error"))
          })
        }

        const server = createServer(handler)
        const address = yield* Effect.acquireRelease(
          Effect.async<ListenAddress, ConfigError>((resume) => {
            server.once("error", (error) =>
              resume(Effect.fail(invalid("http.listen", `cannot listen on ${listenText}: ${error.message}`)))
            )
            server.listen(options.listen.port, options.listen.host, () => {
              const bound = server.address()
              const port = typeof bound === "object" && bound !== null ? bound.port : options.listen.port
              resume(Effect.succeed({ host: options.listen.host, port }))
            })
          }),
          () =>
            Effect.async<void>((resume) => {
              server.close(() => resume(Effect.void))
              server.closeAllConnections()
            }).pipe(Effect.timeout("2 seconds"), Effect.ignore)
        )
        // Port 0 binds a free port: the Host and Origin checks name the one actually bound.
        bound = address
        const hostName = address.host.includes(":") ? `[${address.host}]` : address.host
        yield* Effect.sync(() =>
          process.stderr.write(
            `clawtool: serving MCP on http://${hostName}:${address.port}/mcp${options.stateless ? " (stateless)" : ""}\n`
          )
        )

        return yield* Effect.never
      }).pipe(Effect.scoped, Effect.withSpan("Daemon.serve"))

    return { serve, settings } as const
  })
}) {}
