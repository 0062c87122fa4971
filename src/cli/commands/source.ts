import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Either, Option } from "effect"
import * as Fs from "node:fs"
import type { ClawtoolConfig } from "../../domain/Config.js"
import { packageOfSource } from "../../domain/Health.js"
import { choices, didYouMean, suggest } from "../../domain/Suggest.js"
import { StaticLive } from "../../layers/Main.js"
import { Config, readText } from "../../services/Config.js"
import { renderTable } from "../../text.js"
import { Secrets } from "../../services/Secrets.js"
import { commitSecrets, EditError, validateConfigText } from "../ConfigEdit.js"
import * as Manage from "../Manage.js"
import {
  config,
  configForEdit,
  configPaths,
  configuredSources,
  editConfig,
  json,
  reportEdit,
  requireSecretsFile,
  secrets
} from "../Shared.js"

/** A wrong source name is answered with the close names, else the configured ones. */
const knownSources = (config: ClawtoolConfig, name: string) =>
  suggest(name, Object.keys(config.sources), configuredSources)

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

export const source = Command.make("source").pipe(
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
