import { Args, type CliApp, Command, Options } from "@effect/cli"
import { Console, Data, Effect, Either, Layer, Logger, LogLevel, Option, Schedule } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { commitConfig, commitSecrets, EditError, readConfigText, validateConfigText } from "./cli/ConfigEdit.js"
import { cacheDir, codeCacheDir } from "./paths.js"
import { withHelpText } from "./cli/HelpText.js"
import * as Manage from "./cli/Manage.js"
import { ConfigError } from "./domain/Errors.js"
import { isDown, packageOfSource } from "./domain/Health.js"
import { type Choices, choices, didYouMean, suggest } from "./domain/Suggest.js"
import { DaemonLive, HealthLive, listenAddress, type Location, StaticLive } from "./layers/Main.js"
import { Daemon } from "./services/Daemon.js"
import { CatalogCache } from "./services/CatalogCache.js"
import { Config, ConfigLocation, ProcessEnv, readText, resolveConfigPaths } from "./services/Config.js"
import { Connect, defaultDaemonUrl } from "./services/Connect.js"
import { Gateway } from "./services/Gateway.js"
import { type AuthStatusRow, OAuth } from "./services/OAuth.js"
import { OAuthError } from "./services/OAuth/Errors.js"
import * as Store from "./services/OAuth/Store.js"
import { Registry } from "./services/Registry.js"
import type { Catalog } from "./services/Registry/Catalog.js"
import { ClawtoolConfig } from "./domain/Config.js"
import { catalogLine, collisionLines, healthTable, renderTable } from "./services/Registry/Text.js"
import { Secrets } from "./services/Secrets.js"
import { Sources } from "./services/Sources.js"
import * as Version from "./version.js"

export { healthTable, renderTable } from "./services/Registry/Text.js"

/** Ends the program with this exit code after the command already said why (e.g. health: a source is down). */
export class ExitStatus extends Data.TaggedError("ExitStatus")<{ readonly code: number }> {}

const config = Options.text("config").pipe(
  Options.withAlias("c"),
  Options.withPseudoName("FILE"),
  Options.optional,
  Options.withDescription(
    "Config file (TOML, or a Claude Desktop / Cursor / VS Code .json). Default: $CLAWTOOL_CONFIG, else $XDG_CONFIG_HOME/clawtool/config.toml, else ~/.config/clawtool/config.toml"
  )
)
const secrets = Options.text("secrets").pipe(
  Options.withPseudoName("FILE"),
  Options.optional,
  Options.withDescription("Secrets file. Default: secrets.toml beside the config file")
)
const json = Options.boolean("json").pipe(Options.withDescription("Print JSON instead of a table"))

/** A `--secrets` file that does not exist is a usage error, like a missing `--config` (a default one may be absent). */
const requireSecretsFile = (options: { readonly secrets: Option.Option<string> }) =>
  Option.match(options.secrets, {
    onNone: () => Effect.void,
    onSome: (file) =>
      Fs.existsSync(file)
        ? Effect.void
        : Effect.fail(
            new ConfigError({
              reason: "NotFound",
              file: Path.resolve(file),
              detail: "no such file (given by --secrets)"
            })
          )
  })

/** An EditError is a usage error: say why on stderr and exit 2 (nothing was written). */
const reportEdit = <A, E, R>(effect: Effect.Effect<A, E | EditError, R>) =>
  Effect.catchIf(
    effect,
    (error): error is EditError => error instanceof EditError,
    (error) => Effect.zipRight(Console.error(`clawtool: ${error.detail}`), Effect.fail(new ExitStatus({ code: 2 })))
  )

const configPaths = (options: { readonly config: Option.Option<string>; readonly secrets?: Option.Option<string> }) =>
  Effect.map(ProcessEnv, (env) =>
    resolveConfigPaths({ config: options.config, secrets: options.secrets ?? Option.none() }, env)
  )

/**
 * Reads the config text, applies `edit` (given the text and the current config, which must be valid), validates the
 * result and writes it atomically. Returns the file.
 */
const editConfig = (
  options: { readonly config: Option.Option<string> },
  mayCreate: boolean,
  edit: (text: string, current: ClawtoolConfig) => Manage.Edit
) =>
  Effect.gen(function* () {
    const { file } = yield* configPaths(options)
    const before = yield* readConfigText(file, { mayCreate })
    const current = validateConfigText(before, file)
    if (Either.isLeft(current)) {
      return yield* new EditError({ detail: `${current.left.message}; fix the config before editing it` })
    }
    const after = edit(before, current.right)
    if (Either.isLeft(after)) return yield* new EditError({ detail: after.left.detail })
    yield* commitConfig(file, before, after.right)
    return file
  })

/** A wrong source name is answered with the close names, else the configured ones. */
const configuredSources: Choices = { label: "configured sources", none: "no sources are configured" }
const knownSources = (config: ClawtoolConfig, name: string) =>
  suggest(name, Object.keys(config.sources), configuredSources)

/** "3/7 settled" on a TTY's stderr while sources start; nothing when stderr is a pipe. */
/** "3/7 settled" on a TTY's stderr while sources start, until interrupted; nothing when stderr is not a terminal. */
const showProgress = (sources: Sources): Effect.Effect<never> =>
  process.stderr.isTTY !== true
    ? Effect.never
    : Effect.gen(function* () {
        const rows = yield* sources.health
        const settled = rows.filter((row) => row.status !== "starting").length
        process.stderr.write(`\r${settled}/${rows.length} settled`)
      }).pipe(
        Effect.repeat(Schedule.spaced("100 millis")),
        Effect.zipRight(Effect.never),
        Effect.ensuring(Effect.sync(() => process.stderr.write("\r\x1b[K")))
      )

/** Waits until every source has settled, showing progress on a TTY. */
const settle = (sources: Sources) => Effect.raceFirst(sources.awaitSettled, showProgress(sources))

const health = Command.make("health", { config, secrets, json }, (options) =>
  Effect.gen(function* () {
    const sources = yield* Sources
    yield* settle(sources)
    const rows = yield* sources.health
    const catalog = yield* (yield* Registry).catalog
    yield* warnUnknownSelectors((yield* Config).config, sources, catalog)
    if (options.json) {
      const keys = [
        "name",
        "status",
        "reason",
        "toolCount",
        "package",
        "pid",
        "startupMs",
        "stderrTail",
        "restarts",
        "lastExit",
        "nextRetryAt",
        "uptimeMs",
        "stdoutGarbage"
      ] as const
      const out = rows.map((row) => Object.fromEntries(keys.map((key) => [key, row[key]])))
      yield* Console.log(JSON.stringify(out, null, 2))
      // stdout stays the array it always was; the catalog summary goes beside it, on stderr.
      yield* Console.error(
        [...collisionLines(catalog.collisions), catalogLine(catalog.hash, catalog.tools.length)].join("\n")
      )
    } else {
      yield* Console.log(
        [
          healthTable(rows),
          "",
          ...collisionLines(catalog.collisions),
          catalogLine(catalog.hash, catalog.tools.length)
        ].join("\n")
      )
    }
    // An idle lazy source is healthy: its catalog is known and the next request starts it. A skipped entry was warned.
    if (rows.some(isDown)) return yield* new ExitStatus({ code: 1 })
  }).pipe(
    (effect) => Effect.zipRight(requireSecretsFile(options), effect),
    Effect.provide(HealthWithConfig(options)),
    // The table carries every failure; per-source warnings on stderr would only repeat it.
    Logger.withMinimumLogLevel(LogLevel.Error)
  )
).pipe(
  Command.withDescription(
    "Start every configured source (as serve does), wait until each has settled, print their health; entries of a JSON config clawtool cannot use are listed as skipped, with why. Exit 0 when all run (or are idle lazy sources, or skipped), 1 when any does not, 2 on usage or config errors."
  )
)

const listen = Options.text("listen").pipe(
  Options.withDescription(
    "HOST:PORT: serve MCP streamable HTTP at http://HOST:PORT/mcp for many hosts at once instead of stdio (overrides [http] listen)"
  ),
  Options.optional
)

const serve = Command.make("serve", { config, secrets, listen }, (options) =>
  Effect.zipRight(
    requireSecretsFile(options),
    Effect.gen(function* () {
      const address = yield* listenAddress(options.listen)
      if (Option.isSome(address)) return yield* Effect.flatMap(Daemon, (daemon) => daemon.serve(address.value))
      return yield* Effect.flatMap(Gateway, (gateway) => gateway.serve)
    }).pipe(Effect.provide(DaemonLive(options, options.listen)))
  )
).pipe(
  Command.withDescription(
    "Serve every configured source as one MCP server over stdio (what an MCP host runs; exits when stdin closes), or with --listen over HTTP for many hosts (until SIGTERM)."
  )
)

/** The daemon URL for `connect`: http(s) only, anything else is a usage error. */
const daemonUrl = (text: string) => {
  let url: URL | undefined
  try {
    url = new URL(text)
  } catch {
    url = undefined
  }
  return url !== undefined && (url.protocol === "http:" || url.protocol === "https:")
    ? Effect.succeed(url)
    : Effect.zipRight(
        Console.error(`clawtool: connect expects an http:// or https:// URL, got ${JSON.stringify(text)}`),
        Effect.fail(new ExitStatus({ code: 2 }))
      )
}

const connect = Command.make(
  "connect",
  {
    config: Options.text("config").pipe(
      Options.withAlias("c"),
      Options.withPseudoName("FILE"),
      Options.optional,
      Options.withDescription(
        "Only to find secrets.toml beside it (for the token); the daemon reads its own config. Default: as for serve"
      )
    ),
    secrets,
    url: Args.text({ name: "URL" }).pipe(
      Args.withDefault(defaultDaemonUrl),
      Args.withDescription(`The daemon's MCP endpoint (clawtool serve --listen). Default: ${defaultDaemonUrl}`)
    )
  },
  (options) =>
    Effect.gen(function* () {
      yield* requireSecretsFile(options)
      const url = yield* daemonUrl(options.url)
      yield* (yield* Connect).run(url)
    }).pipe(Effect.provide(Connect.Default.pipe(Layer.provide(ConfigLocation.layer(options)))))
).pipe(
  Command.withDescription(
    "Serve a clawtool daemon (clawtool serve --listen) to a host over stdio: relays every MCP message to its streamable-HTTP endpoint, so hosts that only spawn processes share one daemon. Sends the token CLAWTOOL_HTTP_TOKEN (secrets.toml [scopes.global], then the environment) as a bearer token. While the daemon is down it answers initialize, fails every call with an error naming the URL, and reconnects when the daemon is back. Exits when stdin closes."
  )
)

const sourceList = Command.make("list", { config, secrets, json }, (options) =>
  Effect.gen(function* () {
    const { config: loaded, skipped } = yield* Config
    const store = yield* Secrets
    const rows = [
      ...store.readiness().map((row) => ({
        instance: row.instance,
        enabled: row.enabled,
        package: packageOfSource(loaded.sources[row.instance]!),
        secrets: row.missing.length === 0 ? "ready" : "missing",
        missing: row.missing
      })),
      ...skipped.map((entry) => ({
        instance: entry.name,
        enabled: false,
        package: "",
        secrets: "skipped",
        missing: [],
        reason: entry.reason
      }))
    ]
    if (options.json) return yield* Console.log(JSON.stringify(rows, null, 2))
    if (rows.length === 0) return yield* Console.log("(no sources configured)")
    yield* Console.log(
      renderTable(
        ["INSTANCE", "ENABLED", "PACKAGE", "SECRETS"],
        rows.map((row) => [
          row.instance,
          row.enabled ? "yes" : "no",
          row.package === "" ? "-" : row.package,
          "reason" in row
            ? `skipped: ${row.reason}`
            : row.missing.length === 0
              ? "✓ ready"
              : `✗ missing: ${row.missing.join(", ")}`
        ])
      )
    )
  }).pipe((effect) => Effect.zipRight(requireSecretsFile(options), effect), Effect.provide(StaticLive(options)))
).pipe(
  Command.withDescription(
    "List configured sources and whether their secrets resolve, without starting anything; entries of a JSON config clawtool cannot use are listed as skipped, with why."
  )
)

const configForEdit = Options.text("config").pipe(
  Options.withAlias("c"),
  Options.withPseudoName("FILE"),
  Options.optional,
  Options.withDescription(
    "Config file to edit (clawtool's TOML; comments and layout are kept). Default: $CLAWTOOL_CONFIG, else $XDG_CONFIG_HOME/clawtool/config.toml, else ~/.config/clawtool/config.toml"
  )
)
const instanceArg = Args.text({ name: "name" }).pipe(
  Args.withDescription("Instance name of the source (kebab-case, 2-32 characters), as in [sources.<name>]")
)

const sourceAdd = Command.make(
  "add",
  {
    config: configForEdit,
    name: instanceArg,
    command: Args.text({ name: "command" }).pipe(
      Args.repeated,
      Args.withDescription("After --: the program and its arguments, run without a shell")
    ),
    url: Options.text("url").pipe(
      Options.withPseudoName("URL"),
      Options.optional,
      Options.withDescription(
        "URL of a remote MCP server (streamable HTTP or SSE), instead of a command; add headers with --header"
      )
    ),
    env: Options.text("env").pipe(
      Options.withPseudoName("KEY=VALUE"),
      Options.repeated,
      Options.withDescription("KEY=VALUE for the child's env table (repeatable); use ${VAR} to refer to a secret")
    ),
    header: Options.text("header").pipe(
      Options.withPseudoName("KEY=VALUE"),
      Options.repeated,
      Options.withDescription("KEY=VALUE HTTP header for a --url source (repeatable); use ${VAR} to refer to a secret")
    )
  },
  (options) =>
    Effect.gen(function* () {
      if (Option.isSome(options.url)) {
        const url = options.url.value
        if (options.command.length > 0 || options.env.length > 0) {
          return yield* new EditError({
            detail: "a source has a command or a --url, not both (and --env is for local commands; use --header)"
          })
        }
        const headers = Manage.parsePairs("header", options.header)
        if (Either.isLeft(headers)) return yield* new EditError({ detail: headers.left.detail })
        const file = yield* editConfig(options, true, (text, current) =>
          Manage.addRemoteSource(text, Object.keys(current.sources), options.name, url, headers.right)
        )
        return yield* Console.log(`added remote source ${options.name} to ${file}; check it with: clawtool health`)
      }
      if (options.header.length > 0) {
        return yield* new EditError({ detail: "--header is for remote sources; give the server's --url" })
      }
      const env = Manage.parsePairs("env", options.env)
      if (Either.isLeft(env)) return yield* new EditError({ detail: env.left.detail })
      const file = yield* editConfig(options, true, (text, current) =>
        Manage.addSource(text, Object.keys(current.sources), options.name, options.command, env.right)
      )
      yield* Console.log(`added source ${options.name} to ${file}; check it with: clawtool health`)
    }).pipe(reportEdit)
).pipe(
  Command.withDescription(
    "Add a source: appends a [sources.<name>] table with its command (and env), or with --url a remote server's url (and headers), to the config, keeping the rest of the file as it is. The result is validated before anything is written."
  )
)

const sourceRemove = Command.make("remove", { config: configForEdit, name: instanceArg }, (options) =>
  Effect.gen(function* () {
    const file = yield* editConfig(options, false, (text, current) =>
      Manage.removeSource(text, Object.keys(current.sources), options.name, knownSources(current, options.name))
    )
    yield* Console.log(`removed source ${options.name} from ${file}`)
  }).pipe(reportEdit)
).pipe(Command.withDescription("Remove a source's [sources.<name>] table (and its sub-tables) from the config."))

const sourceToggle = (enabled: boolean) =>
  Command.make(enabled ? "enable" : "disable", { config: configForEdit, name: instanceArg }, (options) =>
    Effect.gen(function* () {
      const file = yield* editConfig(options, false, (text, current) =>
        Manage.setSourceEnabled(
          text,
          Object.keys(current.sources),
          options.name,
          enabled,
          knownSources(current, options.name)
        )
      )
      yield* Console.log(`${enabled ? "enabled" : "disabled"} source ${options.name} in ${file}`)
    }).pipe(reportEdit)
  ).pipe(
    Command.withDescription(
      enabled
        ? "Set enabled = true on a source, so serve starts it again."
        : "Set enabled = false on a source: it stays configured but is not started."
    )
  )

const sourceSetSecret = Command.make(
  "set-secret",
  {
    config: configForEdit,
    secrets: Options.text("secrets").pipe(
      Options.withPseudoName("FILE"),
      Options.optional,
      Options.withDescription("Secrets file to write (created with mode 0600). Default: secrets.toml beside the config")
    ),
    value: Options.text("value").pipe(
      Options.withPseudoName("VALUE"),
      Options.optional,
      Options.withDescription("The secret's value. Default: read from stdin (one trailing newline dropped)")
    ),
    scope: Args.text({ name: "name|global" }).pipe(
      Args.withDescription("The instance that may see the secret, or global for every instance")
    ),
    key: Args.text({ name: "KEY" }).pipe(Args.withDescription("The variable name, as referred to by ${KEY}"))
  },
  (options) =>
    Effect.gen(function* () {
      const paths = yield* configPaths(options)
      const configText = yield* readText(paths.file).pipe(
        Effect.mapError((error) => new EditError({ detail: error.message }))
      )
      const instances: ReadonlyArray<string> = Option.match(configText, {
        onNone: () => [],
        onSome: (text) =>
          Either.match(validateConfigText(text, paths.file), {
            onLeft: () => [],
            onRight: (config) => Object.keys(config.sources)
          })
      })
      if (options.scope !== "global" && !instances.includes(options.scope)) {
        return yield* new EditError({
          detail: `no source named ${JSON.stringify(options.scope)} in ${paths.file}; give an instance name or global${didYouMean(options.scope, [...instances, "global"]) || choices(instances, configuredSources)}`
        })
      }
      const value = Option.isSome(options.value) ? options.value.value : yield* readStdinValue(options.key)
      const before = yield* readText(paths.secretsFile).pipe(
        Effect.mapError((error) => new EditError({ detail: error.message }))
      )
      const after = Manage.setSecret(
        Option.getOrElse(before, () => ""),
        options.scope,
        options.key,
        value
      )
      if (Either.isLeft(after)) return yield* new EditError({ detail: after.left.detail })
      yield* commitSecrets(paths.secretsFile, after.right)
      yield* Console.log(`set ${options.key} for ${options.scope} in ${paths.secretsFile} (mode 0600)`)
    }).pipe(reportEdit)
).pipe(
  Command.withDescription(
    "Store a secret in the secrets file under [scopes.<name>] (or [scopes.global]), mode 0600, so ${KEY} in the config resolves. The value is never printed."
  )
)

/** The secret's value from stdin: everything up to EOF, without one trailing newline. */
const readStdinValue = (key: string) =>
  Effect.gen(function* () {
    if (process.stdin.isTTY === true) yield* Console.error(`value for ${key} (end with Ctrl-D):`)
    const text = yield* Effect.try({
      try: () => Fs.readFileSync(0, "utf8"),
      catch: (cause) => new EditError({ detail: `cannot read the value from stdin (${String(cause)}); use --value` })
    })
    return text.replace(/\r?\n$/, "")
  })

const source = Command.make("source").pipe(
  Command.withDescription("List, add, remove, enable and disable sources; store their secrets."),
  Command.withSubcommands([
    sourceList,
    sourceAdd,
    sourceRemove,
    sourceToggle(true),
    sourceToggle(false),
    sourceSetSecret
  ])
)

// === auth ==========================================================================================================

/** Config, Secrets and the OAuth store: `auth` starts no source. */
const AuthLive = (location: Location) => OAuth.Default.pipe(Layer.provide(ConfigLocation.layer(location)))

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

const authCommand = Command.make("auth").pipe(
  Command.withDescription("Log remote sources in and out with OAuth 2.1, and show their tokens' state."),
  Command.withSubcommands([authLogin, authStatus, authLogout])
)

// === cache =========================================================================================================

const cacheClear = Command.make("clear", {}, () =>
  Effect.gen(function* () {
    const removed = yield* (yield* CatalogCache).clear
    // The bin's V8 code cache (src/launcher.ts) lives beside the catalogs; it is rebuilt on the next start.
    yield* Effect.sync(() => Fs.rmSync(codeCacheDir(), { recursive: true, force: true }))
    yield* Console.log(
      `removed ${removed} cached catalog${removed === 1 ? "" : "s"} and the code cache from ${cacheDir()}`
    )
  }).pipe(Effect.provide(CatalogCache.Default))
).pipe(
  Command.withDescription(
    "Remove every persisted catalog (the tools each source last listed, kept so the next start serves them at once) and the bin's code cache. Sources list again on their next start."
  )
)

const cache = Command.make("cache").pipe(
  Command.withDescription(
    "Manage the persisted catalog in $CLAWTOOL_CACHE_DIR, else $XDG_CACHE_HOME/clawtool, else ~/.cache/clawtool."
  ),
  Command.withSubcommands([cacheClear])
)

// === tools =========================================================================================================

/**
 * Sources that are not running have no tools in the catalog: say so on stderr, so a short list is not a surprise. An
 * idle lazy source's (cached) tools are listed.
 */
const warnNotRunning = (sources: Sources, what: string) =>
  Effect.gen(function* () {
    for (const row of yield* sources.health) {
      if (isDown(row)) {
        yield* Console.error(
          `warning: source ${row.name} is ${row.status}${row.reason === "" ? "" : ` (${row.reason})`}; ${what}`
        )
      }
    }
  })

/** One row per tool, listed or not, as `tools list --json` prints it. */
export const toolRows = (catalog: Catalog) =>
  catalog.entries.map((entry) => ({
    wire: entry.wire,
    kind: entry.kind,
    instance: entry.kind === "core" ? null : entry.instance,
    original: entry.original,
    shaping: entry.shaping,
    enabled: entry.listed,
    rule: entry.rule,
    alwaysLoad: entry.alwaysLoad,
    hint: entry.hint ?? null,
    tokens: entry.tokens
  }))

export const toolTotals = (catalog: Catalog) => {
  const listed = catalog.entries.filter((entry) => entry.listed)
  return {
    tools: catalog.entries.length,
    listed: listed.length,
    disabled: catalog.entries.filter((entry) => entry.status === "disabled").length,
    collided: catalog.entries.filter((entry) => entry.status === "collision").length,
    tokens: listed.reduce((sum, entry) => sum + entry.tokens, 0),
    /** What the host's tools/list costs in each `catalog` mode: tools shown and ~tokens of their definitions. */
    host: {
      full: { tools: catalog.view("full").tools.length, tokens: catalog.view("full").tokens },
      search: { tools: catalog.view("search").tools.length, tokens: catalog.view("search").tokens }
    }
  }
}

export const toolsTable = (catalog: Catalog): string => {
  const totals = toolTotals(catalog)
  const table = renderTable(
    ["NAME", "ORIGIN", "ENABLED", "ALWAYS-LOAD", "HINT", "~TOKENS"],
    catalog.entries.map((entry) => [
      entry.wire,
      entry.kind === "core" ? "core" : `${entry.instance}.${entry.original}`,
      `${entry.listed ? "yes" : "no"} (${entry.rule})`,
      entry.alwaysLoad ? "yes" : "-",
      entry.hint === undefined ? "-" : "yes",
      String(entry.tokens)
    ])
  )
  return [
    table,
    "",
    `${totals.tools} tools: ${totals.listed} listed, ${totals.disabled} disabled, ${totals.collided} lost a name collision; ~${totals.tokens} schema tokens listed`,
    `the host's tools/list: catalog = "full" ${totals.host.full.tools} tools, ~${totals.host.full.tokens} tokens; catalog = "search" ${totals.host.search.tools} tools, ~${totals.host.search.tokens} tokens (the rest through ToolSearch + CallTool)`,
    ...collisionLines(catalog.collisions),
    catalogLine(catalog.hash, totals.listed)
  ].join("\n")
}

const toolsList = Command.make("list", { config, secrets, json }, (options) =>
  Effect.gen(function* () {
    const sources = yield* Sources
    yield* settle(sources)
    const catalog = yield* (yield* Registry).catalog
    yield* warnNotRunning(sources, "its tools are not listed")
    yield* warnUnknownSelectors((yield* Config).config, sources, catalog)
    if (options.json) {
      return yield* Console.log(
        JSON.stringify(
          {
            catalogHash: catalog.hash,
            tools: toolRows(catalog),
            collisions: catalog.collisions,
            totals: toolTotals(catalog)
          },
          null,
          2
        )
      )
    }
    yield* Console.log(toolsTable(catalog))
  }).pipe(
    (effect) => Effect.zipRight(requireSecretsFile(options), effect),
    Effect.provide(HealthWithConfig(options)),
    Logger.withMinimumLogLevel(LogLevel.Error)
  )
).pipe(
  Command.withDescription(
    "Start every source, then list every tool: wire name, origin (instance.original name), enabled and by which rule, alwaysLoad, hint, estimated schema tokens; totals and the catalog hash at the end."
  )
)

const output = Options.text("output").pipe(
  Options.withAlias("o"),
  Options.withPseudoName("DIR"),
  Options.withDescription("Directory to write the stubs to (created when missing)")
)
const check = Options.boolean("check").pipe(
  Options.withDescription(
    "Write nothing; exit 1 when the directory differs from what would be generated (CI drift check)"
  )
)

const exportTypeScript = Command.make("export-typescript", { config, secrets, output, check }, (options) =>
  Effect.gen(function* () {
    const sources = yield* Sources
    yield* settle(sources)
    const catalog = yield* (yield* Registry).catalog
    yield* warnNotRunning(sources, "its tools are not exported")
    // Loaded by this command only (with its own lazily loaded json-schema-to-typescript).
    const TypeScriptExport = yield* Effect.promise(() => import("./services/Registry/TypeScriptExport.js"))
    const files = yield* TypeScriptExport.generate(catalog)
    const dir = Path.resolve(options.output)
    if (options.check) {
      const drift = yield* TypeScriptExport.check(dir, files)
      if (drift.length === 0) {
        return yield* Console.log(`up to date: ${files.length} files in ${dir} (catalog sha256:${catalog.hash})`)
      }
      yield* Console.log(drift.map((item) => `${item.kind.padEnd(7)} ${item.path}`).join("\n"))
      yield* Console.log(
        `${drift.length} of the files in ${dir} differ from the catalog; run without --check to refresh`
      )
      return yield* new ExitStatus({ code: 1 })
    }
    const report = yield* TypeScriptExport.write(dir, files)
    const lines = [
      ...report.written.map((path) => `wrote   ${path}`),
      ...report.removed.map((path) => `removed ${path}`),
      `${files.length} files in ${dir}: ${report.written.length} written, ${report.unchanged.length} unchanged, ${report.removed.length} removed (catalog sha256:${catalog.hash})`
    ]
    yield* Console.log(lines.join("\n"))
  }).pipe(
    (effect) => Effect.zipRight(requireSecretsFile(options), effect),
    Effect.provide(HealthLive(options)),
    Logger.withMinimumLogLevel(LogLevel.Error)
  )
).pipe(
  Command.withDescription(
    "Start every source, then write TypeScript stubs for code-mode hosts: <Name>.ts per core tool, <instance>/<tool>.ts per source tool, index.ts barrels; types from the tools' JSON Schemas. Removes stubs it generated for tools that are gone. Exit 0 ok, 1 on failure (or drift with --check), 2 on usage errors."
  )
)

/** Tools each running instance serves (listed or not), by instance; instances that are not running are absent. */
const knownTools = (sources: Sources, catalog: Catalog) =>
  Effect.map(sources.health, (rows) => {
    const running = new Set(rows.filter((row) => row.status === "running").map((row) => row.name))
    const byInstance = new Map<string, Set<string>>([...running].map((name) => [name, new Set<string>()]))
    for (const entry of catalog.entries) {
      if (entry.kind !== "core") byInstance.get(entry.instance)?.add(entry.original)
    }
    return byInstance
  })

/** Why `selector` names nothing known (None when it does, or when its instance is not running to tell). */
const selectorProblem = (
  selector: string,
  instances: ReadonlyArray<string>,
  tools: ReadonlyMap<string, ReadonlySet<string>>
): Option.Option<string> => {
  const dot = selector.indexOf(".")
  const instance = dot === -1 ? selector : selector.slice(0, dot)
  const tool = dot === -1 ? "" : selector.slice(dot + 1)
  const everyTool = [...tools].flatMap(([name, names]) => [...names].map((original) => `${name}.${original}`))
  if (dot === -1 || tool === "") {
    return Option.some(`${JSON.stringify(selector)} is not <instance>.<tool>${didYouMean(selector, everyTool)}`)
  }
  if (!instances.includes(instance)) {
    return Option.some(
      `no source named ${JSON.stringify(instance)}${didYouMean(selector, everyTool) || suggest(instance, instances, configuredSources)}`
    )
  }
  const served = tools.get(instance)
  if (served === undefined || served.has(tool)) return Option.none()
  const own: Choices = { label: `${instance} has`, none: `${instance} has no tools` }
  return Option.some(
    `source ${instance} has no tool ${JSON.stringify(tool)}${didYouMean(selector, everyTool) || choices(served, own)}`
  )
}

/** `[tools."…"]` tables naming no configured instance, or a tool a running instance does not serve. */
const warnUnknownSelectors = (config: ClawtoolConfig, sources: Sources, catalog: Catalog) =>
  Effect.gen(function* () {
    const tools = yield* knownTools(sources, catalog)
    for (const selector of Object.keys(config.tools).sort()) {
      const problem = selectorProblem(selector, Object.keys(config.sources), tools)
      if (Option.isSome(problem)) {
        yield* Console.error(`warning: [tools.${JSON.stringify(selector)}] matches nothing: ${problem.value}`)
      }
    }
  })

/** HealthLive plus the Config it read (a second, cheap read of the same file), for the selector warnings. */
const HealthWithConfig = (options: Location) =>
  Layer.merge(HealthLive(options), Config.Default.pipe(Layer.provide(ConfigLocation.layer(options))))

const selectorArg = Args.text({ name: "instance.tool" }).pipe(
  Args.withDescription("The tool as <instance>.<tool>, the name the source itself gives it (see: clawtool tools list)")
)

const toolsToggle = (enabled: boolean) =>
  Command.make(enabled ? "enable" : "disable", { config: configForEdit, secrets, selector: selectorArg }, (options) =>
    Effect.gen(function* () {
      const sources = yield* Sources
      yield* settle(sources)
      const catalog = yield* (yield* Registry).catalog
      const { config: loaded } = yield* Config
      const tools = yield* knownTools(sources, catalog)
      const problem = selectorProblem(options.selector, Object.keys(loaded.sources), tools)
      if (Option.isSome(problem)) return yield* new EditError({ detail: problem.value })
      const instance = options.selector.slice(0, options.selector.indexOf("."))
      if (!tools.has(instance)) {
        yield* Console.error(`warning: source ${instance} is not running; the tool name could not be checked`)
      }
      const file = yield* editConfig(options, false, (text, current) =>
        Manage.setToolEnabled(text, Object.keys(current.tools), options.selector, enabled)
      )
      yield* Console.log(`${enabled ? "enabled" : "disabled"} ${options.selector} in ${file}`)
    }).pipe(
      (effect) => Effect.zipRight(requireSecretsFile(options), effect),
      Effect.provide(HealthWithConfig(options)),
      Logger.withMinimumLogLevel(LogLevel.Error),
      reportEdit
    )
  ).pipe(
    Command.withDescription(
      enabled
        ? 'Enable a tool again: sets enabled = true in its [tools."<instance>.<tool>"] table. Starts the sources to check the name.'
        : 'Disable a tool (neither listed nor callable): sets enabled = false in its [tools."<instance>.<tool>"] table, adding the table when missing. Starts the sources to check the name.'
    )
  )

const tools = Command.make("tools").pipe(
  Command.withDescription("Inspect, enable, disable and export the tool catalog clawtool serves."),
  Command.withSubcommands([toolsList, toolsToggle(true), toolsToggle(false), exportTypeScript])
)

const root = Command.make("clawtool").pipe(
  Command.withDescription("One MCP server for all your MCP servers: spawns, supervises and serves configured sources."),
  Command.withSubcommands([serve, connect, health, source, tools, cache, authCommand])
)

/** One example per command, shown under EXAMPLE in its --help (keyed by the command path). */
const examples: Record<string, string> = {
  "": "clawtool serve --config ~/.config/clawtool/config.toml",
  serve: "clawtool serve --config ~/.config/clawtool/config.toml",
  connect: "claude mcp add clawtool -- clawtool connect http://127.0.0.1:8765/mcp",
  health: "clawtool health --json",
  source: "clawtool source list",
  "source list": "clawtool source list --json",
  "source add": "clawtool source add fs --env ROOT=${FS_ROOT} -- npx -y @modelcontextprotocol/server-filesystem /tmp",
  "source remove": "clawtool source remove fs",
  "source enable": "clawtool source enable fs",
  "source disable": "clawtool source disable fs",
  "source set-secret": "clawtool source set-secret github GITHUB_TOKEN < token.txt",
  tools: "clawtool tools list",
  "tools list": "clawtool tools list --json",
  "tools enable": "clawtool tools enable github.create_issue",
  "tools disable": "clawtool tools disable github.delete_repo",
  "tools export-typescript": "clawtool tools export-typescript --output ./clawtool-tools --check",
  cache: "clawtool cache clear",
  auth: "clawtool auth status",
  "auth login": "clawtool auth login linear",
  "auth status": "clawtool auth status --json",
  "auth logout": "clawtool auth logout linear",
  "cache clear": "clawtool cache clear"
}

const cliApp = Command.run(root, { name: "clawtool", version: Version.version })

/**
 * The CLI with readable help (plain text when stdout is not a terminal or NO_COLOR is set, full `clawtool …` usage
 * lines, an example per command) and a `--wizard` that refuses to start without a terminal instead of hanging.
 */
export const run = (argv: ReadonlyArray<string>): Effect.Effect<void, unknown, CliApp.CliApp.Environment> => {
  const usage = (message: string) =>
    Effect.zipRight(Console.error(`clawtool: ${message}`), Effect.fail(new ExitStatus({ code: 2 })))
  const args = argv.slice(2)
  const forced = args.indexOf("--")
  const own = forced === -1 ? args : args.slice(0, forced)
  if (own.includes("--wizard") && process.stdin.isTTY !== true) {
    return usage("--wizard asks questions on a terminal; stdin is not one (give the options instead)")
  }
  const level = extractLogLevel(own)
  if (Either.isLeft(level)) return usage(level.left)
  const rest = [...level.right.args, ...(forced === -1 ? [] : args.slice(forced))]
  const program = withHelpText(cliApp([...argv.slice(0, 2), ...rest]), rest, examples)
  return Option.match(level.right.level, {
    onNone: () => program,
    onSome: (minimum) => Logger.withMinimumLogLevel(program, minimum)
  })
}

const logLevels: Record<string, LogLevel.LogLevel> = {
  all: LogLevel.All,
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None
}

/**
 * `--log-level X` (or `--log-level=X`) anywhere before `--`: @effect/cli only finds it in some positions, and a global
 * flag should work after the subcommand and its options too.
 */
const extractLogLevel = (
  args: ReadonlyArray<string>
): Either.Either<
  { readonly args: ReadonlyArray<string>; readonly level: Option.Option<LogLevel.LogLevel> },
  string
> => {
  const kept: Array<string> = []
  let level = Option.none<LogLevel.LogLevel>()
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg !== "--log-level" && !arg.startsWith("--log-level=")) {
      kept.push(arg)
      continue
    }
    const value = arg === "--log-level" ? args[++i] : arg.slice("--log-level=".length)
    const found = value === undefined ? undefined : logLevels[value]
    if (found === undefined) {
      return Either.left(
        `--log-level expects one of ${Object.keys(logLevels).join(", ")}, got ${value === undefined ? "nothing" : JSON.stringify(value)}`
      )
    }
    level = Option.some(found)
  }
  return Either.right({ args: kept, level })
}
