import { Deferred, type Duration, Effect, FiberMap, Option, Runtime } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import type * as http from "node:http"
import * as Era from "../domain/HostEra.js"
import { ConfigError } from "../domain/Errors.js"
import { hostAllowed, isLoopback, type ListenAddress, originAllowed, parseListen } from "../transport/HttpGuard.js"
import { type HttpServerTransport, loadHttpServerTransports } from "../transport/HttpServerTransport.js"
import { makeModernHttpWire } from "../transport/ModernHttp.js"
import { Config } from "./Config.js"
import * as Access from "./Daemon/Access.js"
import { Dashboard } from "./Dashboard.js"
import * as Web from "./Daemon/Web.js"
import { Gateway } from "./Gateway.js"
import { HostSessions, logLevels } from "./HostSessions.js"
import { Metrics } from "./Metrics.js"
import { expand, Secrets } from "./Secrets.js"
import * as Tokens from "./Daemon/Tokens.js"

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
  /** `[http] token` (reaching every view) and each `[http.tokens.<name>]`, resolved; none: no token is asked for. */
  readonly tokens: ReadonlyArray<Access.NamedToken>
  readonly allowedHosts: ReadonlyArray<string>
  readonly allowedOrigins: ReadonlyArray<string>
  readonly stateless: boolean
  readonly maxBody: number
  /** `GET /metrics` served, and without the token. */
  readonly metrics: boolean
  readonly metricsPublic: boolean
  /** The dashboard (`/ui`, `/api`). */
  readonly ui: boolean
}

/**
 * `clawtool serve --listen` (ADR 020): MCP streamable HTTP at /mcp for any number of host sessions over the one
 * Gateway, Registry and set of children; /healthz and /readyz for probes. Each HTTP session is a Gateway session over
 * the SDK's streamable-HTTP transport; this file is the HTTP front end only: routing, Host, Origin, token, size, JSON,
 * and which transport a session id names. What a session keeps (and when it expires) is HostSessions'.
 */
export class Daemon extends Effect.Service<Daemon>()("clawtool/Daemon", {
  dependencies: [Gateway.Default, Secrets.Default, HostSessions.Default, Dashboard.Default],
  effect: Effect.gen(function* () {
    const gateway = yield* Gateway
    const hostSessions = yield* HostSessions
    const secrets = yield* Secrets
    // Present whenever the daemon runs (layers/Main.ts); absent in tests of the Daemon alone.
    const metrics = yield* Effect.serviceOption(Metrics)
    const dashboard = yield* Dashboard
    const { config, file, live } = yield* Config
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
        const tokens = yield* Tokens.resolve(http, (name) => secrets.lookup("global", name), invalid)
        if (tokens.length === 0 && !isLoopback(listen.host)) {
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
          tokens,
          allowedHosts: http.allowed_hosts,
          allowedOrigins: http.allowed_origins,
          stateless: http.stateless,
          maxBody: http.max_body,
          metrics: http.metrics,
          metricsPublic: http.metrics_public,
          ui: http.ui
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
        /** Each stateful session's transport, the profile its endpoint named and the token it came with, by id. */
        const sessions = new Map<
          string,
          {
            readonly transport: HttpServerTransport
            readonly profile: string | undefined
            readonly token: Access.NamedToken | undefined
          }
        >()
        // The tokens in effect: the start's, then each reload's (ADR 031). A reload that removes a profile, or removes,
        // changes or narrows a token, ends the sessions it no longer lets in; their next request is refused (404, 401,
        // 403) as a new one would be.
        let tokens = options.tokens
        yield* live.onReload(
          (next, lookup) =>
            void run(
              Effect.gen(function* () {
                // Resolved with the secrets the reload read: a token added with its secret in one edit works.
                const resolved = yield* Tokens.resolve(next.http, lookup, invalid)
                const changed = Tokens.changes(tokens, resolved)
                const before = tokens
                tokens = resolved
                const profiles = Object.keys(next.profiles)
                const ended = [...sessions].filter(([, session]) => !Tokens.stillAllowed(session, tokens, profiles))
                yield* Effect.forEach(ended, ([id]) => close(id), { discard: true })
                // A 2026-07-28 listen has no session: it came with the token of that name then in effect.
                const endedListens = modern.closeListensUnless((listen) =>
                  Tokens.stillAllowed(
                    { profile: listen.profile, token: before.find((token) => token.name === listen.token) },
                    tokens,
                    profiles
                  )
                )
                if (
                  changed.added.length + changed.removed.length + changed.changed.length + ended.length + endedListens >
                  0
                ) {
                  yield* Effect.logInfo(
                    `http: tokens reloaded: added [${changed.added.join(", ")}], removed [${changed.removed.join(", ")}], changed [${changed.changed.join(", ")}]; ${ended.length} session(s) ended` +
                      (endedListens > 0 ? `, ${endedListens} listen(s) ended` : "")
                  )
                }
              }).pipe(
                Effect.catchAll((error) =>
                  Effect.logError(
                    `config reload: [http] tokens not applied, the tokens in use are unchanged: ${error.message}`
                  )
                )
              )
            )
        )
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
        const open = (
          id: string,
          transport: HttpServerTransport,
          stateless: boolean,
          access: { readonly profile: string | undefined; readonly token: string | undefined }
        ) =>
          Effect.gen(function* () {
            const opened = yield* Deferred.make<void>()
            yield* FiberMap.run(
              fibers,
              id,
              Effect.scoped(
                Effect.gen(function* () {
                  const session = yield* gateway.session(transport, { id, stateless, ...access })
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
        const modern = yield* gateway.modernServer({
          wire: modernHttp.wire,
          key: options.stateKey ?? randomBytes(32),
          ttl: options.inputRequiredTtl
        })
        const header = (req: http.IncomingMessage, name: string) => {
          const value = req.headers[name]
          return Array.isArray(value) ? value[0] : value
        }
        const serveModern = (
          req: http.IncomingMessage,
          res: http.ServerResponse,
          body: Record<string, unknown>,
          access: { readonly profile: string | undefined; readonly token: string | undefined }
        ) => {
          const id = body.id
          if (typeof id !== "string" && typeof id !== "number") {
            // A modern notification (the era's cancel is the closed response): accepted, nothing to do.
            return reply(res, 202, "")
          }
          const method = String(body.method)
          const refuse = (error: Era.EraError) => reply(res, 400, JSON.stringify({ jsonrpc: "2.0", id, error }))
          // Headers first: a header that disagrees with the body is -32020 whatever version the body names.
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
          const checked = Era.checkEnvelope(body.params, logLevels)
          if (!checked.ok) return refuse(checked.error)
          const key = randomUUID()
          const meta = (body.params as { _meta?: { progressToken?: unknown } } | undefined)?._meta
          // A listen is always a stream (as SDK v2 serves it); a call, when it asked for progress or log messages and
          // accepts one.
          const stream =
            method === "subscriptions/listen" ||
            ((meta?.progressToken !== undefined || checked.envelope.logLevel !== undefined) &&
              (header(req, "accept") ?? "").includes("text/event-stream"))
          modernHttp.add(key, res, id, stream, method === "subscriptions/listen" ? 15_000 : undefined)
          res.once("close", () => {
            if (modernHttp.forget(key)) modern.cancel(key)
          })
          void run(modern.serve(key, { id, method, params: body.params }, checked.envelope, access))
        }

        const readiness = Effect.map(gateway.health, (rows) => rows.map(({ stderrTail: _stderr, ...row }) => row))

        const mcp = async (
          req: http.IncomingMessage,
          res: http.ServerResponse,
          path: { profile: string | undefined }
        ) => {
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
          // Which view (issue 26): the token's, if it reaches the profile the path names.
          const access = Access.decide({
            tokens,
            authorization: req.headers.authorization,
            profile: path.profile,
            profiles: Object.keys(live.get().profiles)
          })
          if (!access.ok) {
            if (access.status === 403) {
              void run(Effect.logWarning(`http: ${access.message}`))
            }
            return reply(
              res,
              access.status,
              rpcError(access.status === 404 ? -32601 : -32000, access.message),
              access.status !== 401
                ? {}
                : {
                    "www-authenticate":
                      req.headers.authorization === undefined
                        ? `Bearer realm="clawtool"`
                        : `Bearer realm="clawtool", error="invalid_token"`
                  }
            )
          }
          const view = { profile: access.profile, token: access.token }
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
            return serveModern(req, res, body as Record<string, unknown>, view)
          }
          if (options.stateless) {
            // Each request stands alone: a fresh session that ends with its response.
            const id = randomUUID()
            const transport = transports.stateless()
            await run(open(id, transport, true, view))
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
            sessions.set(id, { transport, profile: view.profile, token: tokens.find((t) => t.name === view.token) })
            await run(open(id, transport, false, view))
            void run(
              Effect.logDebug(
                `http: session ${id} on ${view.profile === undefined ? "/mcp" : `/mcp/${view.profile}`}${view.token === undefined ? "" : ` (token "${view.token}")`}`
              )
            )
            const done = busy(id)
            await transport.handleRequest(req, res, body).finally(done)
            // A refused initialize leaves a transport with no session: nothing can reach it again.
            if (transport.sessionId === undefined) await run(close(id))
            return
          }
          const known = sessions.get(sessionId)
          // A session is reached only at the endpoint it was opened on: another profile's path does not know it.
          if (known === undefined || known.profile !== view.profile) {
            return reply(res, 404, rpcError(-32001, "Session not found"))
          }
          res.once("close", busy(sessionId))
          return known.transport.handleRequest(req, res, body)
        }

        const guard: Web.Guard = {
          bound: () => bound,
          // /metrics, /ui and /api see every profile: only the tokens that reach every view open them.
          get token() {
            return tokens.length === 0
              ? undefined
              : tokens.flatMap((token) => (token.reaches === "every" ? [token.value] : []))
          },
          allowedHosts: options.allowedHosts,
          allowedOrigins: options.allowedOrigins
        }
        // The routes beside /mcp (issue 29), each in its own module.
        const routes: Array<Web.Route> = Option.match(metrics, {
          onNone: () => [],
          onSome: (metrics) =>
            options.metrics ? [Web.metricsRoute(guard, options.metricsPublic, () => run(metrics.exposition))] : []
        })
        if (options.ui) {
          // Loaded only here, as the HTTP transport is: stdio serve never pays for the dashboard's routes.
          const { dashboardRoutes } = yield* Effect.promise(() => import("./Daemon/DashboardRoutes.js"))
          routes.push(dashboardRoutes(guard, dashboard, run))
        }

        const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
          const path = (req.url ?? "/").split("?")[0]
          if (path === "/healthz" && req.method === "GET") return reply(res, 200, JSON.stringify({ status: "ok" }))
          if (path === "/readyz" && req.method === "GET") {
            return void run(readiness).then((rows) =>
              reply(res, ready ? 200 : 503, JSON.stringify({ ready, sources: rows }))
            )
          }
          const served = Access.mcpPath(path ?? "/")
          if (served === undefined) {
            if (routes.some((route) => route(path, req, res))) return
            return reply(res, 404, rpcError(-32601, `Not found: MCP is served at /mcp (and /mcp/<profile>)`))
          }
          mcp(req, res, served).catch((error: unknown) => {
            void run(Effect.logWarning(`http: ${error instanceof Error ? error.message : String(error)}`))
            reply(res, 500, rpcError(-32603, "Internal error"))
          })
        }

        const server = createServer(handler)
        // Idle keep-alive sockets outlive the clients' own pools (undici keeps one 4 s): with Node's 5 s, a loaded
        // machine's late client timer let a request go out on a socket the daemon had just closed ("other side
        // closed"). close() still ends idle sockets at once (Node ≥ 19).
        server.keepAliveTimeout = 65_000
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
        // Run before the server closes (finalizers run in reverse): each open listen ends with its result.
        yield* Effect.addFinalizer(() => Effect.sync(() => modern.closeListens()))
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
