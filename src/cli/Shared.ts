import { Options } from "@effect/cli"
import { Console, Data, Effect, Either, Logger, LogLevel, Option, Schedule } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import type { ClawtoolConfig } from "../domain/Config.js"
import { ConfigError } from "../domain/Errors.js"
import { choices, type Choices, didYouMean } from "../domain/Suggest.js"
import { HealthLive, type Location } from "../layers/Main.js"
import { ProcessEnv, resolveConfigPaths } from "../services/Config.js"
import type { Sources } from "../services/Sources.js"
import { commitConfig, EditError, readConfigText, validateConfigText } from "./ConfigEdit.js"
import type * as Manage from "./Manage.js"

/** Ends the program with this exit code after the command already said why (e.g. health: a source is down). */
export class ExitStatus extends Data.TaggedError("ExitStatus")<{ readonly code: number }> {}

export const config = Options.text("config").pipe(
  Options.withAlias("c"),
  Options.withPseudoName("FILE"),
  Options.optional,
  Options.withDescription(
    "Config file (TOML, or a Claude Desktop / Cursor / VS Code .json). Default: $CLAWTOOL_CONFIG, else $XDG_CONFIG_HOME/clawtool/config.toml, else ~/.config/clawtool/config.toml"
  )
)
export const secrets = Options.text("secrets").pipe(
  Options.withPseudoName("FILE"),
  Options.optional,
  Options.withDescription("Secrets file. Default: secrets.toml beside the config file")
)
export const json = Options.boolean("json").pipe(Options.withDescription("Print JSON instead of a table"))

/** `--profile NAME`: a `[profiles.<name>]` view instead of the whole catalog (issue 26). */
export const profile = Options.text("profile").pipe(
  Options.withPseudoName("NAME"),
  Options.optional,
  Options.withDescription("A profile of the config ([profiles.NAME]): only what it sees. Default: every tool")
)

/** A profile the config does not define is a usage error (exit 2) naming the ones it does. */
export const checkProfile = (name: Option.Option<string>, loaded: ClawtoolConfig) =>
  Option.isNone(name) || loaded.profiles[name.value] !== undefined
    ? Effect.succeed(Option.getOrUndefined(name))
    : Effect.zipRight(
        Console.error(
          `clawtool: no profile named ${JSON.stringify(name.value)}${didYouMean(name.value, Object.keys(loaded.profiles))}${choices(
            Object.keys(loaded.profiles),
            { label: "known profiles", none: "the config defines no profiles ([profiles.<name>])" }
          )}`
        ),
        Effect.fail(new ExitStatus({ code: 2 }))
      )

export const configForEdit = Options.text("config").pipe(
  Options.withAlias("c"),
  Options.withPseudoName("FILE"),
  Options.optional,
  Options.withDescription(
    "Config file to edit (clawtool's TOML; comments and layout are kept). Default: $CLAWTOOL_CONFIG, else $XDG_CONFIG_HOME/clawtool/config.toml, else ~/.config/clawtool/config.toml"
  )
)

/** A `--secrets` file that does not exist is a usage error, like a missing `--config` (a default one may be absent). */
export const requireSecretsFile = (options: { readonly secrets: Option.Option<string> }) =>
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

/**
 * A command that starts every source first (health, tools list/export/enable/disable): the `--secrets` check, then
 * HealthLive; only errors are logged, since what the command prints carries every source's failure.
 */
export const withStartedSources =
  (options: Location) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.zipRight(requireSecretsFile(options), effect).pipe(
      Effect.provide(HealthLive(options)),
      Logger.withMinimumLogLevel(LogLevel.Error)
    )

/** An EditError is a usage error: say why on stderr and exit 2 (nothing was written). */
export const reportEdit = <A, E, R>(effect: Effect.Effect<A, E | EditError, R>) =>
  Effect.catchIf(
    effect,
    (error): error is EditError => error instanceof EditError,
    (error) => Effect.zipRight(Console.error(`clawtool: ${error.detail}`), Effect.fail(new ExitStatus({ code: 2 })))
  )

export const configPaths = (options: {
  readonly config: Option.Option<string>
  readonly secrets?: Option.Option<string>
}) =>
  Effect.map(ProcessEnv, (env) =>
    resolveConfigPaths({ config: options.config, secrets: options.secrets ?? Option.none() }, env)
  )

/**
 * Reads the config text, applies `edit` (given the text and the current config, which must be valid), validates the
 * result and writes it atomically. Returns the file.
 */
export const editConfig = (
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
export const configuredSources: Choices = { label: "configured sources", none: "no sources are configured" }

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
export const settle = (sources: Sources) => Effect.raceFirst(sources.awaitSettled, showProgress(sources))
