import { Args, Command } from "@effect/cli"
import { Console, Effect } from "effect"
import { AuthLive, type Location } from "../../layers/Main.js"
import { type AuthStatusRow, OAuth } from "../../services/OAuth.js"
import { OAuthError } from "../../services/OAuth/Errors.js"
import * as Store from "../../services/OAuth/Store.js"
import { renderTable } from "../../text.js"
import { config, ExitStatus, json, requireSecretsFile, secrets } from "../Shared.js"

/** An OAuthError on stderr; exit 2 when the instance is not an OAuth source (usage), else 1. */
const reportAuth = <A, E, R>(effect: Effect.Effect<A, E | OAuthError, R>) =>
  Effect.catchIf(
    effect,
    (error): error is OAuthError => error instanceof OAuthError,
    (error) =>
      Effect.zipRight(
        Console.error(`clawtool: ${error.message}`),
        Effect.fail(new ExitStatus({ code: error.reason === "NotRemote" || error.reason === "NoOAuth" ? 2 : 1 }))
      )
  )

/** How every `auth` command runs: a --secrets file must exist, OAuth errors are reported, OAuth is provided. */
const runAuth =
  (options: Location) =>
  <A, E, R>(effect: Effect.Effect<A, E | OAuthError, R>) =>
    Effect.zipRight(requireSecretsFile(options), effect).pipe(reportAuth, Effect.provide(AuthLive(options)))

const expiryText = (row: AuthStatusRow) =>
  !row.loggedIn
    ? "-"
    : row.expiresAt === null
      ? "unknown"
      : `${row.expiresAt}${row.expired ? (row.refreshable ? " (expired; refreshed on next use)" : " (expired)") : ""}`

const authInstance = Args.text({ name: "name" }).pipe(
  Args.withDescription("Instance name of a remote source with oauth set, as in [sources.<name>]")
)

const authLogin = Command.make("login", { config, secrets, name: authInstance }, (options) =>
  Effect.gen(function* () {
    const oauth = yield* OAuth
    const row = yield* oauth.login(options.name, (line) => process.stderr.write(`${line}\n`))
    yield* Console.log(
      `logged in: ${row.instance} (${row.url}); access token expires ${expiryText(row)}${row.refreshable ? ", refreshable" : ""}; tokens in ${Store.fileOf(oauth.dir, row.instance)}`
    )
  }).pipe(runAuth(options))
).pipe(
  Command.withDescription(
    "Log a remote source in with OAuth: prints the authorization URL on stderr and opens $BROWSER (else xdg-open / open), waits for the redirect on a loopback port (oauth.redirect_port, else a free one), stores the tokens (mode 0600) under $CLAWTOOL_STATE_DIR, else $XDG_STATE_HOME/clawtool, else ~/.local/state/clawtool."
  )
)

const authStatus = Command.make("status", { config, secrets, json }, (options) =>
  Effect.gen(function* () {
    const rows = yield* (yield* OAuth).status
    if (options.json) return yield* Console.log(JSON.stringify(rows, null, 2))
    if (rows.length === 0) return yield* Console.log("(no remote source has oauth set)")
    yield* Console.log(
      renderTable(
        ["INSTANCE", "URL", "LOGGED IN", "EXPIRES", "ISSUER"],
        rows.map((row) => [
          row.instance,
          row.url,
          row.loggedIn ? "yes" : `no: run clawtool auth login ${row.instance}`,
          expiryText(row),
          row.issuer ?? "-"
        ])
      )
    )
  }).pipe(runAuth(options))
).pipe(
  Command.withDescription(
    "Show which remote sources with oauth set have tokens, their issuer and when the access token expires. Never prints a token."
  )
)

const authLogout = Command.make("logout", { config, secrets, name: authInstance }, (options) =>
  Effect.gen(function* () {
    const oauth = yield* OAuth
    const { removed, revocation } = yield* oauth.logout(options.name)
    const revoked =
      revocation.kind === "revoked"
        ? `; tokens revoked at ${revocation.endpoint}`
        : revocation.kind === "unsupported"
          ? "; the authorization server offers no revocation: the tokens stay valid until they expire"
          : revocation.kind === "failed"
            ? `; revoking the tokens failed (${revocation.detail}): they stay valid until they expire`
            : ""
    yield* Console.log(
      removed
        ? `logged out: ${options.name} (removed ${Store.fileOf(oauth.dir, options.name)}${revoked})`
        : `${options.name} had no stored tokens`
    )
  }).pipe(runAuth(options))
).pipe(
  Command.withDescription(
    "Revoke a remote source's OAuth tokens at its authorization server when it offers revocation (RFC 7009), then forget them and the registered client; serve and health then report it unauthenticated until the next login."
  )
)

export const auth = Command.make("auth").pipe(
  Command.withDescription("Log remote sources in and out with OAuth 2.1, and show their tokens' state."),
  Command.withSubcommands([authLogin, authStatus, authLogout])
)
