/**
 * The management commands' file side: read the config (or secrets) text, apply a surgical TomlEdit, validate the whole
 * result with the same parser `serve` uses, and only then replace the file atomically (temp file + rename, same mode).
 */
import { Data, Effect, Either, Option, Schema } from "effect"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { writeFileAtomic } from "../atomicWrite.js"
import type { ClawtoolConfig } from "../domain/Config.js"
import { ConfigError } from "../domain/Errors.js"
import { decodeStrict, errno, formatOf, parseConfig, readText, tomlDocument } from "../services/Config.js"
import { SecretStore } from "../services/Secrets.js"

/** A management command that cannot be done; nothing was written. Exit code 2. */
export class EditError extends Data.TaggedError("EditError")<{ readonly detail: string }> {
  override get message() {
    return this.detail
  }
}

/** Parses and validates `text` as a config file (pure; `file` names it in errors and picks TOML or JSON). */
export const validateConfigText = (text: string, file: string): Either.Either<ClawtoolConfig, ConfigError> =>
  parseConfig(text, file)

/** Parses and validates `text` as a secrets file (pure). */
export const validateSecretsText = (text: string, file: string): Either.Either<SecretStore, ConfigError> =>
  Either.flatMap(tomlDocument(text, file), (document) =>
    decodeStrict(SecretStore, document, { file, text, format: "toml", describe: () => undefined })
  )

/** The file's permission bits, or None when it does not exist. */
const modeOf = (file: string) =>
  Effect.tryPromise({ try: () => Fs.stat(file), catch: (cause) => cause }).pipe(
    Effect.map((stat) => Option.some(stat.mode & 0o7777)),
    Effect.catchAll((cause) =>
      errno(cause) === "ENOENT"
        ? Effect.succeed(Option.none<number>())
        : Effect.fail(new EditError({ detail: `cannot stat ${file} (${errno(cause) ?? String(cause)})` }))
    )
  )

/**
 * Writes `text` to `file` all at once (src/atomicWrite.ts: temp file, flushed, renamed over it; a crash leaves the old
 * file or the new one, never half of one), with the mode the file had (or `newMode`, or `forceMode` whatever it had).
 */
export const writeAtomically = (
  file: string,
  text: string,
  options: { readonly newMode?: number; readonly forceMode?: number } = {}
): Effect.Effect<void, EditError> =>
  Effect.gen(function* () {
    const existing = yield* modeOf(file)
    const mode = options.forceMode ?? Option.getOrElse(existing, () => options.newMode ?? 0o644)
    yield* Effect.tryPromise({
      try: async () => {
        await Fs.mkdir(Path.dirname(file), { recursive: true })
        await writeFileAtomic(file, text, { mode })
      },
      catch: (cause) => new EditError({ detail: `cannot write ${file} (${errno(cause) ?? String(cause)})` })
    })
  })

/** The config text to edit; a missing file is an empty one (only `source add` may start a file). */
export const readConfigText = (file: string, options: { readonly mayCreate: boolean }) =>
  Effect.gen(function* () {
    if (formatOf(file) === "json") {
      return yield* new EditError({
        detail: `${file} is a host's JSON file; clawtool edits only its own TOML config (edit the JSON by hand, or use a config.toml)`
      })
    }
    const text = yield* readText(file).pipe(Effect.mapError((error) => new EditError({ detail: error.message })))
    if (Option.isNone(text) && !options.mayCreate) {
      return yield* new EditError({ detail: `config ${file}: no such file` })
    }
    return Option.getOrElse(text, () => "")
  })

/** Validates the edited config text and writes it; an invalid result is refused with the reason and nothing changes. */
export const commitConfig = (file: string, before: string, after: string) =>
  Effect.gen(function* () {
    const checked = validateConfigText(after, file)
    if (Either.isLeft(checked)) {
      return yield* new EditError({
        detail: `refused, ${file} is unchanged: the edited config would be invalid: ${checked.left.message}`
      })
    }
    if (after !== before) yield* writeAtomically(file, after)
    return checked.right
  })

/** Validates the edited secrets text and writes it with mode 0600. */
export const commitSecrets = (file: string, after: string) =>
  Effect.gen(function* () {
    const checked = validateSecretsText(after, file)
    if (Either.isLeft(checked)) {
      return yield* new EditError({
        detail: `refused, ${file} is unchanged: the edited secrets file would be invalid: ${checked.left.message}`
      })
    }
    yield* writeAtomically(file, after, { forceMode: 0o600 })
  })

/** A KEY for secrets and env: the rule the config schema applies. */
export const envNameProblem = (key: string): Option.Option<string> =>
  Either.isRight(Schema.decodeUnknownEither(Schema.String.pipe(Schema.pattern(/^[A-Za-z_][A-Za-z0-9_]*$/)))(key))
    ? Option.none()
    : Option.some(
        `${JSON.stringify(key)} is not an environment variable name (letters, digits and _, not starting with a digit)`
      )
