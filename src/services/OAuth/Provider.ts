/**
 * The SDK `OAuthClientProvider` of one remote source (issue 11, ADR 019). The SDK's `auth()` does discovery (RFC 9728
 * protected-resource metadata, RFC 8414 / OIDC authorization-server metadata), client registration, PKCE S256 and the
 * RFC 8707 `resource` parameter; this class keeps what it hands over in the token store and adds what the SDK leaves
 * to its callers:
 * - in `background` mode (serve, health) it never opens a browser or waits for one: a flow that would need a person
 *   fails with AuthRequired, naming `clawtool auth login <instance>`;
 * - access tokens are refreshed before they expire (at 80 % of `expires_in`), single-flight per source: however many
 *   requests ask for a token meanwhile, one refresh runs and they all get its result;
 * - a request refused with 401 is sent again with the stored token when another call already replaced the refused one,
 *   else after one refresh shared by every call refused meanwhile (`retryingFetch`): N concurrent 401s, one refresh;
 * - the SDK's own flows (run by the transport on a 401 no new token answered) are serialized per source, so a rotating
 *   refresh token is never presented twice (the second use would revoke the grant) — across processes too: every host
 *   window runs its own clawtool over the one token store, so a flow also holds a lock file beside the token file.
 */
import { auth, type OAuthClientProvider, type OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js"
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens
} from "@modelcontextprotocol/sdk/shared/auth.js"
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { AuthRequired } from "./Errors.js"
import * as Store from "./Store.js"

/** The `oauth` settings of a source, secrets already resolved. */
export interface OAuthSettings {
  /** A client registered by hand with the authorization server; without it, dynamic client registration. */
  readonly clientId?: string | undefined
  /** A client ID metadata document's https URL: the client_id where the server supports them (else DCR). */
  readonly clientMetadataUrl?: string | undefined
  readonly clientSecret?: string | undefined
  readonly scopes?: ReadonlyArray<string> | undefined
  /** Port of the loopback redirect during `auth login` (0 or absent: any free port). */
  readonly redirectPort?: number | undefined
}

export type Mode =
  /** serve and health: no browser, no waiting. */
  | { readonly kind: "background" }
  /** `clawtool auth login`: a loopback redirect is listening; `open` shows the authorization URL. */
  | { readonly kind: "login"; readonly redirectUrl: string; readonly open: (url: URL) => Promise<void> }

export interface ProviderOptions {
  readonly instance: string
  readonly url: string
  readonly settings: OAuthSettings
  /** The state directory (paths.ts stateDir). */
  readonly dir: string
  readonly mode: Mode
  /** Fraction of the access token's lifetime after which it is refreshed. */
  readonly refreshAt?: number
  readonly now?: () => number
  /** Told every token handed to the transport or received (the redaction of what reaches the host learns them). */
  readonly learn?: (tokens: OAuthTokens) => void
}

/** Per source (per token file) in this process: the refresh in flight and the lock that serializes flows. */
interface Shared {
  refreshing: Promise<void> | undefined
  /** Resolves when the flow holding the lock ends; undefined when free. */
  held: Promise<void> | undefined
  /** Access tokens the server refused (401) since this process last saved tokens: a refresh is for them only. */
  refused: Set<string>
  /** Refreshes performed (for tests and logs). */
  refreshes: number
}
const shared = new Map<string, Shared>()
const sharedOf = (dir: string, instance: string): Shared => {
  const key = Store.fileOf(dir, instance)
  let entry = shared.get(key)
  if (entry === undefined) {
    entry = { refreshing: undefined, held: undefined, refused: new Set(), refreshes: 0 }
    shared.set(key, entry)
  }
  return entry
}

/** An SDK flow that ends without calling back (a network error inside auth()) frees the lock after this long. */
const lockFailSafeMs = 15_000

/**
 * The cross-process side of a source's lock: `<token file>.lock`, created exclusively (mode 0600) with this process's
 * pid and a nonce, removed by its holder. A lock whose process is gone, or older than the fail-safe, is stale and broken
 * (a clawtool killed in the middle of a refresh); waiting polls every 25 ms. A lock that cannot be taken for another
 * reason (a read-only state folder) is not waited for: the in-process lock still holds.
 */
const lockPollMs = 25
const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (cause) {
    return (cause as NodeJS.ErrnoException).code === "EPERM"
  }
}
export const takeFileLock = async (file: string): Promise<(() => Promise<void>) | undefined> => {
  const mine = `${process.pid} ${randomBytes(8).toString("hex")}`
  await Fs.mkdir(Path.dirname(file), { recursive: true, mode: 0o700 }).catch(() => undefined)
  for (;;) {
    try {
      await Fs.writeFile(file, mine, { flag: "wx", mode: 0o600 })
      // Removed only while it is still ours (a fail-safe elsewhere may have broken it meanwhile).
      return async () => {
        if ((await Fs.readFile(file, "utf8").catch(() => undefined)) === mine) await Fs.rm(file, { force: true })
      }
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code !== "EEXIST") return undefined
    }
    const [held, stat] = await Promise.all([
      Fs.readFile(file, "utf8").catch(() => undefined),
      Fs.stat(file).catch(() => undefined)
    ])
    const pid = Number(held?.split(" ")[0])
    // Wall-clock time, not Effect's Clock: this runs inside the SDK's auth() callbacks (no Effect runtime), and the
    // lock's age is measured against the file system's mtime, which is wall-clock time whatever clock a test drives.
    const stale =
      held !== undefined &&
      stat !== undefined &&
      ((Number.isInteger(pid) && pid > 0 && !alive(pid)) || Date.now() - stat.mtimeMs > lockFailSafeMs)
    // Broken by one waiter at a time, under `<lock>.break`, and only while the file still holds what was found stale:
    // of two waiters that found it stale at once, the later one would otherwise remove the lock the first one took
    // meanwhile (two holders: a rotating refresh token presented twice). A breaker that died is stale in its turn.
    if (stale) {
      const dropBreaker = await takeFileLock(`${file}.break`)
      try {
        if ((await Fs.readFile(file, "utf8").catch(() => undefined)) === held) await Fs.rm(file, { force: true })
      } finally {
        await dropBreaker?.()
      }
      continue
    }
    await new Promise((resume) => setTimeout(resume, lockPollMs))
  }
}

/** Placeholder redirect of background providers: never registered, never listened on (they never start a flow). */
const backgroundRedirect = "http://127.0.0.1/callback"

const registeredFor = (client: OAuthClientInformationMixed, redirectUrl: string) =>
  "redirect_uris" in client && Array.isArray(client.redirect_uris) && client.redirect_uris.includes(redirectUrl)

/** When the stored access token is due for a refresh (ms since the epoch); none when its lifetime is unknown. */
export const refreshDueAt = (grant: Store.Grant, fraction: number): number | undefined =>
  grant.tokens?.expires_in === undefined || grant.obtainedAt === undefined
    ? undefined
    : grant.obtainedAt + grant.tokens.expires_in * 1000 * fraction

export class SourceOAuthProvider implements OAuthClientProvider {
  private readonly shared: Shared
  private readonly stateValue = randomBytes(16).toString("hex")
  private verifier: string | undefined
  private readonly fraction: number
  private readonly now: () => number
  /** Set on the provider a refresh runs with: it holds the lock already and must not refresh from tokens() again. */
  private inner = false
  /** Frees the source's lock while a flow of this provider holds it. */
  private release: (() => Promise<void>) | undefined

  constructor(private readonly options: ProviderOptions) {
    this.shared = sharedOf(options.dir, options.instance)
    this.fraction = options.refreshAt ?? 0.8
    this.now = options.now ?? Date.now
  }

  /** Refreshes this process made for the source (tests count them). */
  get refreshCount() {
    return this.shared.refreshes
  }

  get redirectUrl(): string {
    return this.options.mode.kind === "login" ? this.options.mode.redirectUrl : backgroundRedirect
  }

  /** The SDK uses it as the client_id when the server's metadata says `client_id_metadata_document_supported`. */
  get clientMetadataUrl(): string | undefined {
    return this.options.settings.clientMetadataUrl
  }

  get clientMetadata(): OAuthClientMetadata {
    const { scopes, clientSecret } = this.options.settings
    return {
      client_name: "clawtool",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: clientSecret === undefined ? "none" : "client_secret_post",
      ...(scopes === undefined || scopes.length === 0 ? {} : { scope: scopes.join(" ") })
    }
  }

  state(): string {
    return this.stateValue
  }

  private load() {
    return Store.load(this.options.dir, this.options.instance, this.options.url)
  }

  /** The error that ends a background flow; the flow's lock is released first (no callback follows a throw). */
  private async required(reason: AuthRequired["reason"], detail: string) {
    await this.releaseLock()
    return new AuthRequired({ instance: this.options.instance, reason, detail })
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    const { clientId, clientSecret } = this.options.settings
    if (clientId !== undefined) {
      return { client_id: clientId, ...(clientSecret === undefined ? {} : { client_secret: clientSecret }) }
    }
    const client = Store.currentGrant(await this.load()).client
    const { mode } = this.options
    // A client named by its metadata document has no redirect_uris here (the server checks the redirect against the
    // document): it is this login's client too, and the code exchange needs it back.
    const { clientMetadataUrl } = this.options.settings
    if (clientMetadataUrl !== undefined && client?.client_id === clientMetadataUrl) return client
    // A client registered for another loopback port cannot receive this login's redirect: register again.
    if (mode.kind === "login" && client !== undefined && !registeredFor(client, mode.redirectUrl)) return undefined
    // In the background a registration would be a side effect no one asked for, and useless without the browser step.
    if (client === undefined && this.options.mode.kind === "background") {
      throw await this.required("NoGrant", "no client is registered with the authorization server")
    }
    return client
  }

  async saveClientInformation(client: OAuthClientInformationMixed): Promise<void> {
    // A configured client stays in the config (its secret in secrets.toml), never in the token file.
    if (this.options.settings.clientId !== undefined) return
    await Store.updateGrant(this.options.dir, this.options.instance, this.options.url, client.issuer, (grant) => ({
      ...grant,
      client
    }))
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    const tokens = await this.currentTokens()
    if (tokens !== undefined) this.options.learn?.(tokens)
    return tokens
  }

  private async currentTokens(): Promise<OAuthTokens | undefined> {
    // A login asks for a new grant: the browser step runs even when a refresh token is stored.
    if (this.options.mode.kind === "login") return undefined
    const grant = Store.currentGrant(await this.load())
    if (this.inner || grant.tokens?.refresh_token === undefined) return grant.tokens
    const due = refreshDueAt(grant, this.fraction)
    if (due === undefined || this.now() < due) return grant.tokens
    // A flow of the SDK holds the lock and is getting new tokens: this request goes with the old one (a 401 makes
    // it wait for that flow). Refreshing here would wait for the lock the flow (which may be our caller) holds.
    if (this.shared.refreshing === undefined && this.shared.held !== undefined) return grant.tokens
    try {
      await this.refresh()
    } catch (error) {
      // The grant is gone (refused refresh token): say so. Anything else (the server unreachable) leaves the old
      // token in use; it may still be valid, and a 401 starts the SDK's own flow.
      if (error instanceof AuthRequired) throw error
    }
    return Store.currentGrant(await this.load()).tokens
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    this.options.learn?.(tokens)
    const obtainedAt = this.now()
    try {
      await Store.updateGrant(this.options.dir, this.options.instance, this.options.url, tokens.issuer, (grant) => ({
        ...grant,
        // A refresh answer may leave the refresh token out: the old one stays valid then (RFC 6749 §6).
        tokens: { ...tokens, refresh_token: tokens.refresh_token ?? grant.tokens?.refresh_token },
        obtainedAt
      }))
      // Every token refused so far is older than these.
      this.shared.refused.clear()
    } finally {
      await this.releaseLock()
    }
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    if (this.options.mode.kind === "background") {
      throw await this.required("LoginNeeded", "the authorization server asks for the browser step")
    }
    await this.releaseLock()
    await this.options.mode.open(url)
  }

  async saveCodeVerifier(verifier: string): Promise<void> {
    this.verifier = verifier
  }

  async codeVerifier(): Promise<string> {
    if (this.verifier === undefined) throw new Error("no PKCE code verifier: the authorization was not started here")
    return this.verifier
  }

  /** Forgets what `scope` names (the SDK's contract), nothing else: a refused refresh token keeps the client. */
  async invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): Promise<void> {
    if (scope === "all" || scope === "verifier") this.verifier = undefined
    try {
      if (scope === "verifier") return
      await Store.update(this.options.dir, this.options.instance, this.options.url, (record) => {
        const issuer = record.issuer
        const grant = Store.currentGrant(record)
        const kept: Store.Grant =
          scope === "all"
            ? {}
            : scope === "client"
              ? { ...grant, client: undefined }
              : scope === "tokens"
                ? { ...grant, tokens: undefined, obtainedAt: undefined }
                : grant
        return {
          ...record,
          grants: issuer === undefined ? record.grants : { ...record.grants, [issuer]: kept },
          ...(scope === "all" || scope === "discovery" ? { discovery: undefined } : {})
        }
      })
    } finally {
      // The SDK retries its flow right after this, starting with discoveryState(): let it take the lock again, once
      // the store no longer holds what was invalidated.
      await this.releaseLock()
    }
  }

  /** The first call of every SDK flow: it waits for the source's lock, so flows (and refreshes) run one at a time. */
  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    const record = await this.load()
    if (this.options.mode.kind === "background" && Store.currentGrant(record).tokens === undefined) {
      // Nothing to refresh and no browser: fail before any request to the servers.
      throw new AuthRequired({ instance: this.options.instance, reason: "NoGrant", detail: "no tokens are stored" })
    }
    if (!this.inner) {
      await this.shared.refreshing?.catch(() => undefined)
      await this.acquireLock()
    }
    return (await this.load()).discovery
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    await Store.update(this.options.dir, this.options.instance, this.options.url, (record) => ({
      ...record,
      discovery: state,
      issuer: state.authorizationServerUrl
    }))
  }

  /**
   * The transport's `fetch` (ADR 019): a request to the source refused with 401 is sent once more with the stored
   * access token when that is no longer the refused one (another call's refresh replaced it, in this process or
   * another), else after the one refresh that every call refused meanwhile shares. The SDK sees the 401, and runs its
   * own flow, only when no new token came.
   */
  retryingFetch(fetch: FetchLike): FetchLike {
    const source = new URL(this.options.url).href
    return async (url, init) => {
      const response = await fetch(url, init)
      if (response.status !== 401 || new URL(url).href !== source) return response
      const headers = new Headers(init?.headers)
      const refused = /^Bearer (.+)$/i.exec(headers.get("authorization") ?? "")?.[1]
      if (refused === undefined) return response
      const renewed = await this.renewRefused(refused)
      if (renewed === undefined) return response
      await response.body?.cancel().catch(() => undefined)
      headers.set("authorization", `Bearer ${renewed.access_token}`)
      return fetch(url, { ...init, headers })
    }
  }

  /** The tokens to send instead of `refused`, an access token the server answered 401 to; none when none came. */
  private async renewRefused(refused: string): Promise<OAuthTokens | undefined> {
    // Every refresh that looks at the stored token from now on sees this refusal; one that looked before is waited out.
    this.shared.refused.add(refused)
    await this.shared.refreshing?.catch(() => undefined)
    const stored = Store.currentGrant(await this.load()).tokens
    if (stored?.access_token !== refused) return stored
    if (stored.refresh_token === undefined) return undefined
    await this.refresh().catch(() => undefined)
    const renewed = Store.currentGrant(await this.load()).tokens
    return renewed?.access_token === refused ? undefined : renewed
  }

  /**
   * One refresh per source at a time; callers arriving meanwhile share it. Under the lock it runs only while the stored
   * access token is due or refused: another flow, of this process or another, may have replaced it meanwhile. A
   * failure leaves the stored state as is.
   */
  refresh(): Promise<void> {
    if (this.shared.refreshing !== undefined) return this.shared.refreshing
    const run = (async () => {
      await this.acquireLock()
      try {
        const grant = Store.currentGrant(await this.load())
        const due = refreshDueAt(grant, this.fraction)
        const refused = grant.tokens !== undefined && this.shared.refused.has(grant.tokens.access_token)
        if (!refused && (due === undefined || this.now() < due)) return
        const view = new SourceOAuthProvider({ ...this.options, mode: { kind: "background" } })
        view.inner = true
        this.shared.refreshes++
        await auth(view, { serverUrl: this.options.url })
      } finally {
        await this.releaseLock()
      }
    })()
    this.shared.refreshing = run
    void run
      .finally(() => {
        if (this.shared.refreshing === run) this.shared.refreshing = undefined
      })
      .catch(() => undefined)
    return run
  }

  private async acquireLock(): Promise<void> {
    while (this.shared.held !== undefined) await this.shared.held
    let resolve!: () => void
    const held = new Promise<void>((done) => (resolve = done))
    // Taken now, so no other flow of this process starts while this one waits for another process's lock.
    this.shared.held = held
    const dropFile = await takeFileLock(`${Store.fileOf(this.options.dir, this.options.instance)}.lock`)
    let released: Promise<void> | undefined
    // Resolves once the lock file is gone: a process that exits right after the flow (`auth login`) leaves none.
    const release = () =>
      (released ??= (async () => {
        clearTimeout(timer)
        if (this.release === release) this.release = undefined
        await dropFile?.().catch(() => undefined)
        if (this.shared.held === held) this.shared.held = undefined
        resolve()
      })())
    const timer = setTimeout(() => void release(), lockFailSafeMs)
    timer.unref()
    this.release = release
  }

  /** Frees the lock a flow of this provider holds, if any (a flow that ends by throwing calls nothing that frees it). */
  releaseLock(): Promise<void> {
    return this.inner ? Promise.resolve() : (this.release?.() ?? Promise.resolve())
  }
}
