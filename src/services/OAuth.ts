import { Clock, Effect, Layer, Option } from "effect"
import { type OAuthConfig, oauthOf, type SourceConfig } from "../domain/Config.js"
import { SourceError } from "../domain/Errors.js"
import { suggest } from "../domain/Suggest.js"
import { stateDir } from "../paths.js"
import { Config, ProcessEnv } from "./Config.js"
import { OAuthError } from "./OAuth/Errors.js"
import type { OAuthSettings } from "./OAuth/Provider.js"
import * as Store from "./OAuth/Store.js"
import { Redaction } from "./Redaction.js"
import { expand, Secrets } from "./Secrets.js"
import { loginCommand, RemoteAuth, type SourceAuthProvider } from "./SourceClient/RemoteAuth.js"

/** One row of `clawtool auth status`: never a token, never a secret. */
export interface AuthStatusRow {
  readonly instance: string
  /** The server, as origin + path (no query string, no credentials). */
  readonly url: string
  readonly loggedIn: boolean
  readonly issuer: string | null
  /** When the access token expires (ISO time); null when unknown or not logged in. */
  readonly expiresAt: string | null
  readonly expired: boolean
  /** A refresh token is stored: an expired access token is renewed without a login. */
  readonly refreshable: boolean
  readonly scope: string | null
}

/** `https://user:pw@host/mcp?key=x` → `https://host/mcp`. */
const shownUrl = (url: string) => {
  try {
    const parsed = new URL(url)
    return `${parsed.origin}${parsed.pathname}`
  } catch {
    return "(invalid url)"
  }
}

/**
 * The SDK's OAuth client (discovery, registration, token exchange) and the login flow's HTTP listener are loaded on the
 * first remote source with `oauth` set, never at start-up (most configs have none).
 */
const loadProvider = () => import("./OAuth/Provider.js")
const loadLogin = () => import("./OAuth/Login.js")

/** How long `auth login` waits for the browser's redirect. */
const loginTimeoutMs = 5 * 60_000

/**
 * OAuth 2.1 for remote sources (issue 11, ADR 019): the providers `serve` and `health` hand to the SDK transport (never
 * interactive), and the `clawtool auth` commands. Grants live in the token store under the state directory.
 */
export class OAuth extends Effect.Service<OAuth>()("clawtool/OAuth", {
  effect: Effect.gen(function* () {
    const { config } = yield* Config
    const secrets = yield* Secrets
    const redaction = yield* Redaction
    const env = yield* ProcessEnv
    const dir = stateDir(env)

    /** The source's settings with `client_secret`'s `${VAR}`s resolved; the names that are missing otherwise. */
    const settingsOf = (
      instance: string,
      oauth: OAuthConfig
    ): { readonly settings: OAuthSettings; readonly missing: ReadonlyArray<string> } => {
      const secret =
        oauth.client_secret === undefined
          ? undefined
          : expand(oauth.client_secret, (name) => secrets.lookup(instance, name))
      return {
        settings: {
          clientId: oauth.client_id,
          clientMetadataUrl: oauth.client_metadata_url,
          clientSecret: secret?.value,
          scopes: oauth.scopes,
          redirectPort: oauth.redirect_port
        },
        missing: secret?.missing ?? []
      }
    }

    /** A configured remote source with `oauth` set, or why `instance` is not one. */
    const oauthSource = (instance: string) => {
      const source: SourceConfig | undefined = config.sources[instance]
      if (source === undefined) {
        const known = Object.keys(config.sources).filter((name) => Option.isSome(oauthSourceOf(config.sources[name]!)))
        return Effect.fail(
          new OAuthError({
            instance,
            reason: "NotRemote",
            detail: `no source named ${JSON.stringify(instance)}${suggest(instance, known, { label: "sources with oauth", none: "no source has oauth set" })}`
          })
        )
      }
      return Option.match(oauthSourceOf(source), {
        onNone: () =>
          Effect.fail(
            new OAuthError({
              instance,
              reason: source.url === undefined ? "NotRemote" : "NoOAuth",
              detail:
                source.url === undefined
                  ? "is a local source (command); OAuth is for remote sources (url)"
                  : "has no oauth setting; add oauth = true to its [sources] table"
            })
          ),
        onSome: Effect.succeed
      })
    }

    /** A login's url and settings, or why none can run (not an oauth source, a client secret not set). */
    const loginSettings = (instance: string) =>
      Effect.flatMap(oauthSource(instance), ({ url, oauth }) => {
        const { settings, missing } = settingsOf(instance, oauth)
        return missing.length > 0
          ? Effect.fail(
              new OAuthError({
                instance,
                reason: "Flow",
                detail: `oauth.client_secret refers to ${missing.map((name) => `\${${name}}`).join(", ")}; set it with: clawtool source set-secret ${instance} ${missing[0]}`
              })
            )
          : Effect.succeed({ url, settings })
      })

    /** A step of the flow (the SDK's promises): its OAuthError as is, anything else as a Flow failure. */
    const flowStep = <A>(instance: string, step: () => Promise<A>) =>
      Effect.tryPromise({
        try: step,
        catch: (error) =>
          error instanceof OAuthError
            ? error
            : new OAuthError({
                instance,
                reason: "Flow",
                detail: error instanceof Error ? error.message : String(error)
              })
      })

    const provider = (instance: string, url: string, oauth: OAuthConfig) =>
      Effect.suspend(() => {
        const { settings, missing } = settingsOf(instance, oauth)
        if (missing.length > 0) {
          return Effect.fail(
            new SourceError({
              instance,
              reason: "Unauthenticated",
              detail: `oauth.client_secret refers to ${missing.map((name) => `\${${name}}`).join(", ")}, which no secret or env var sets`
            })
          )
        }
        return Effect.promise(() => Store.load(dir, instance, url).catch(() => Store.emptyRecord(url))).pipe(
          Effect.filterOrFail(
            (record) => Store.currentGrant(record).tokens !== undefined,
            // Nothing to send and no browser to get it: say so before any request.
            () =>
              new SourceError({
                instance,
                reason: "Unauthenticated",
                detail: `no OAuth tokens stored; run: ${loginCommand(instance)}`
              })
          ),
          Effect.zipRight(Effect.promise(loadProvider)),
          Effect.map(
            ({ SourceOAuthProvider }): SourceAuthProvider =>
              new SourceOAuthProvider({
                instance,
                url,
                settings,
                dir,
                mode: { kind: "background" },
                learn: (tokens) => redaction.learnTokens(instance, tokens)
              })
          )
        )
      })

    const statusOf = (instance: string, url: string) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.promise(async (): Promise<AuthStatusRow> => {
          const record = await Store.load(dir, instance, url).catch(() => Store.emptyRecord(url))
          const { refreshDueAt } = await loadProvider()
          const grant = Store.currentGrant(record)
          const tokens = grant.tokens
          const expiresAt = refreshDueAt(grant, 1)
          return {
            instance,
            url: shownUrl(url),
            loggedIn: tokens !== undefined,
            issuer: tokens === undefined ? null : (record.issuer ?? null),
            expiresAt: expiresAt === undefined ? null : new Date(expiresAt).toISOString(),
            expired: expiresAt !== undefined && expiresAt <= now,
            refreshable: tokens?.refresh_token !== undefined,
            scope: tokens?.scope ?? null
          }
        })
      )

    return {
      /** The state directory (tokens live in its `oauth/` folder). */
      dir,
      provider,
      /** The browser flow for one source; `say` gets the lines for the terminal (the URL among them). */
      login: Effect.fn("OAuth.login")(function* (instance: string, say: (line: string) => void) {
        const { url, settings } = yield* loginSettings(instance)
        yield* flowStep(instance, () =>
          loadLogin().then(({ login }) => login({ instance, url, settings, dir, say, env, timeoutMs: loginTimeoutMs }))
        )
        return yield* statusOf(instance, url)
      }),
      /**
       * The dashboard's login (ADR 034): the flow up to the browser step, its redirect on the daemon (`redirectUrl`);
       * the caller keeps the flow by its `state` until the redirect brings the code.
       */
      startLogin: Effect.fn("OAuth.startLogin")(function* (instance: string, redirectUrl: string) {
        const { url, settings } = yield* loginSettings(instance)
        const flow = yield* flowStep(instance, () =>
          loadLogin().then(({ startFlow }) => startFlow({ instance, url, settings, dir, redirectUrl }))
        )
        return {
          state: flow.state,
          authorizationUrl: flow.authorizationUrl?.href,
          finish: (code: string) => flowStep(instance, () => flow.finish(code))
        }
      }),
      /** Whether `instance` is a remote source with `oauth` set (a login can help it). */
      canLogin: (instance: string) => {
        const source = config.sources[instance]
        return source !== undefined && Option.isSome(oauthSourceOf(source))
      },
      /** Every remote source with `oauth` set, by instance. */
      status: Effect.forEach(
        Object.keys(config.sources)
          .sort()
          .flatMap((instance) =>
            Option.match(oauthSourceOf(config.sources[instance]!), {
              onNone: () => [],
              onSome: ({ url }) => [{ instance, url }]
            })
          ),
        ({ instance, url }) => statusOf(instance, url)
      ),
      /**
       * Revokes the source's tokens at the authorization server when it offers revocation (RFC 7009, best effort), then
       * forgets the grant (tokens and registered client): whether there was one, and what the server said.
       */
      logout: Effect.fn("OAuth.logout")(function* (instance: string) {
        const { url, oauth } = yield* oauthSource(instance)
        const revocation = yield* Effect.promise(async () => {
          const record = await Store.load(dir, instance, url).catch(() => Store.emptyRecord(url))
          const { revoke } = await import("./OAuth/Revoke.js")
          return revoke(record, settingsOf(instance, oauth).settings)
        })
        const removed = yield* Effect.tryPromise({
          try: () => Store.remove(dir, instance),
          catch: (error) =>
            new OAuthError({
              instance,
              reason: "Store",
              detail: `cannot remove ${Store.fileOf(dir, instance)} (${error instanceof Error ? error.message : String(error)})`
            })
        })
        return { removed, revocation }
      })
    }
  }),
  dependencies: [Secrets.Default, Config.Default, Redaction.Default]
}) {
  /** RemoteAuth for serve and health: background providers over the token store. */
  static readonly RemoteAuthLive = Layer.effect(
    RemoteAuth,
    Effect.map(OAuth, (oauth) => ({ provider: oauth.provider }))
  ).pipe(Layer.provide(OAuth.Default))
}

/** The url and oauth settings of a remote source with `oauth` set. */
const oauthSourceOf = (source: SourceConfig) =>
  source.url === undefined ? Option.none() : Option.map(oauthOf(source), (oauth) => ({ url: source.url!, oauth }))
