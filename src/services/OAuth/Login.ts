/**
 * `clawtool auth login <instance>`: the browser step of the authorization code flow, with a loopback redirect
 * (RFC 8252 §7.3). The authorization URL is always printed on stderr; a browser is opened when one is known
 * ($BROWSER, else xdg-open / open). The SDK's `auth()` runs the flow around it: discovery, registration, PKCE S256,
 * the `resource` parameter, the code exchange.
 */
import { auth, extractWWWAuthenticateParams } from "@modelcontextprotocol/sdk/client/auth.js"
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import { OAuthError } from "./Errors.js"
import { type OAuthSettings, SourceOAuthProvider } from "./Provider.js"

export interface LoginOptions {
  readonly instance: string
  readonly url: string
  readonly settings: OAuthSettings
  readonly dir: string
  /** Lines for the person at the terminal (stderr). */
  readonly say: (line: string) => void
  /** How long to wait for the redirect. */
  readonly timeoutMs: number
  readonly env?: NodeJS.ProcessEnv
}

const fail = (instance: string, reason: OAuthError["reason"], detail: string) =>
  new OAuthError({ instance, reason, detail })

/** The first of `names` found as an executable file on PATH. */
const onPath = (names: ReadonlyArray<string>, env: NodeJS.ProcessEnv): string | undefined => {
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    for (const name of names) {
      const file = path.join(dir, name)
      try {
        fs.accessSync(file, fs.constants.X_OK)
        return file
      } catch {
        // not here
      }
    }
  }
  return undefined
}

/**
 * The browser command: $BROWSER when set (set but empty: none, the URL is only printed), else xdg-open or open when
 * found on PATH.
 */
export const browserCommand = (env: NodeJS.ProcessEnv): string | undefined => {
  if (env.BROWSER !== undefined) return env.BROWSER === "" ? undefined : env.BROWSER
  return onPath(process.platform === "darwin" ? ["open"] : ["xdg-open"], env)
}

/** Starts the browser on `url` in the background; a browser that cannot start only costs a line (the URL is shown). */
export const openBrowser = (url: string, env: NodeJS.ProcessEnv, say: (line: string) => void) => {
  const command = browserCommand(env)
  if (command === undefined) return
  try {
    const child = spawn(command, [url], { stdio: "ignore", detached: true, env })
    child.on("error", (error) => say(`could not start the browser (${command}): ${error.message}`))
    child.unref()
  } catch (error) {
    say(`could not start the browser (${command}): ${error instanceof Error ? error.message : String(error)}`)
  }
}

interface Callback {
  readonly code: string
  readonly state: string | null
}

/** A loopback HTTP server taking one redirect on /callback. */
const listen = (port: number) =>
  new Promise<{ server: http.Server; port: number; next: Promise<Callback | { error: string }> }>((resolve, reject) => {
    let deliver!: (value: Callback | { error: string }) => void
    const next = new Promise<Callback | { error: string }>((done) => (deliver = done))
    const server = http.createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1")
      if (url.pathname !== "/callback") {
        res.writeHead(404).end()
        return
      }
      const code = url.searchParams.get("code")
      const error = url.searchParams.get("error")
      const page = (text: string) =>
        res.writeHead(code === null ? 400 : 200, { "content-type": "text/plain; charset=utf-8" }).end(`${text}\n`)
      if (code === null) {
        page("clawtool: authorization failed; see the terminal.")
        deliver({
          error:
            error === null
              ? "the redirect carried no code"
              : `the authorization server answered ${error}${url.searchParams.has("error_description") ? `: ${url.searchParams.get("error_description")}` : ""}`
        })
        return
      }
      page("clawtool: authorized. You can close this window.")
      deliver({ code, state: url.searchParams.get("state") })
    })
    server.once("error", reject)
    server.listen(port, "127.0.0.1", () => resolve({ server, port: (server.address() as AddressInfo).port, next }))
  })

/** The server's own hints from an unauthenticated request: its resource metadata URL and the scope it wants. */
const challenge = async (url: string): Promise<{ resourceMetadataUrl?: URL; scope?: string }> => {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: LATEST_PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: "clawtool", version: "0" }
        }
      }),
      signal: AbortSignal.timeout(10_000)
    })
    await response.body?.cancel()
    return response.status === 401 ? extractWWWAuthenticateParams(response) : {}
  } catch {
    // Discovery falls back to the well-known URIs.
    return {}
  }
}

/** An error's message and, for a failed fetch, the system's reason (`fetch failed (ECONNREFUSED)`). */
const why = (error: unknown): string => {
  if (!(error instanceof Error)) return String(error)
  const cause = (error as { cause?: { code?: unknown } }).cause
  return typeof cause?.code === "string" ? `${error.message} (${cause.code})` : error.message
}

/** One authorization code flow waiting for its redirect: where to send the browser, and the code's exchange. */
export interface Flow {
  /** The `state` the redirect must carry back (random, this flow's only). */
  readonly state: string
  /** The authorization URL for the browser; undefined when no browser step was needed. */
  readonly authorizationUrl: URL | undefined
  /** Exchanges the redirect's code (with this flow's PKCE verifier) and stores the tokens (0600). */
  readonly finish: (code: string) => Promise<void>
}

export interface FlowOptions {
  readonly instance: string
  readonly url: string
  readonly settings: OAuthSettings
  readonly dir: string
  /** Where the authorization server sends the browser back: the loopback listener, or the daemon's callback. */
  readonly redirectUrl: string
}

/**
 * The flow up to the browser step (discovery, registration, PKCE S256, `resource`), shared by `auth login` and the
 * daemon's dashboard (ADR 034): nothing here waits for the browser.
 */
export const startFlow = async (options: FlowOptions): Promise<Flow> => {
  const { instance, url } = options
  const origin = new URL(url).origin
  let authorizationUrl: URL | undefined
  const provider = new SourceOAuthProvider({
    instance,
    url,
    settings: options.settings,
    dir: options.dir,
    mode: {
      kind: "login",
      redirectUrl: options.redirectUrl,
      open: async (opened) => {
        authorizationUrl = opened
      }
    }
  })
  const hints = await challenge(url)
  const step = (authorizationCode?: string) =>
    auth(provider, {
      serverUrl: url,
      ...(authorizationCode === undefined ? {} : { authorizationCode }),
      ...(hints.resourceMetadataUrl === undefined ? {} : { resourceMetadataUrl: hints.resourceMetadataUrl }),
      ...(hints.scope === undefined ? {} : { scope: hints.scope })
    }).catch(async (error: unknown) => {
      // A flow that throws frees nothing itself: the lock file must not outlive this process.
      await provider.releaseLock()
      throw error instanceof OAuthError
        ? error
        : fail(instance, "Flow", `the OAuth flow with ${origin} failed: ${why(error)}`)
    })
  const first = await step()
  return {
    state: provider.state(),
    authorizationUrl: first === "AUTHORIZED" ? undefined : authorizationUrl,
    finish: async (code) => {
      if ((await step(code)) !== "AUTHORIZED") {
        throw fail(instance, "Flow", "the authorization server did not issue tokens for the code")
      }
    }
  }
}

/** Runs the whole flow; resolves once the tokens are stored. */
export const login = async (options: LoginOptions): Promise<void> => {
  const { instance, url, say } = options
  const env = options.env ?? process.env
  const loopback = await listen(options.settings.redirectPort ?? 0).catch((error: NodeJS.ErrnoException) => {
    throw fail(
      instance,
      "Callback",
      `cannot listen on 127.0.0.1:${options.settings.redirectPort ?? 0} for the redirect (${error.code ?? error.message})`
    )
  })
  try {
    const redirectUrl = `http://127.0.0.1:${loopback.port}/callback`
    const flow = await startFlow({ instance, url, settings: options.settings, dir: options.dir, redirectUrl })
    if (flow.authorizationUrl === undefined) return
    say(`Open this URL in a browser to authorize ${instance}:`)
    say(`  ${flow.authorizationUrl.href}`)
    say(`Waiting for the redirect to ${redirectUrl} ...`)
    openBrowser(flow.authorizationUrl.href, env, say)
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            fail(
              instance,
              "Timeout",
              `no redirect within ${Math.round(options.timeoutMs / 1000)} s; run the command again`
            )
          ),
        options.timeoutMs
      )
    })
    const answer = await Promise.race([loopback.next, timeout]).finally(() => clearTimeout(timer))
    if ("error" in answer) throw fail(instance, "Callback", answer.error)
    if (answer.state !== flow.state) {
      throw fail(instance, "Callback", "the redirect's state does not match this login (a stale or forged redirect)")
    }
    await flow.finish(answer.code)
  } finally {
    loopback.server.closeAllConnections()
    await new Promise<void>((resolve) => loopback.server.close(() => resolve()))
  }
}
