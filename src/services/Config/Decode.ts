import { Console, Effect, Either, Option } from "effect"
import * as Fs from "node:fs/promises"
import * as Toml from "smol-toml"
import { ClawtoolConfig, type DecodedConfig, McpServersJson, type SkippedEntry } from "../../domain/Config.js"
import { ConfigError } from "../../domain/Errors.js"
import { lineColumn } from "./Locate.js"
import { type ConfigFormat, formatOf } from "./Location.js"
import { decodeStrict } from "./Wording.js"

/**
 * Parses and validates one config text. Pure: `file` only names the file in errors. TOML is clawtool's own shape
 * (ClawtoolConfig); JSON is the `mcpServers` (Claude Desktop, Cursor) or `servers` (VS Code) shape, decoded by the
 * McpServersJson transform into the same ClawtoolConfig plus the entries it skipped. Both report through
 * `decodeStrict`.
 */
export const decodeConfig = (
  text: string,
  file: string,
  format: ConfigFormat = formatOf(file)
): Either.Either<DecodedConfig, ConfigError> => (format === "json" ? parseJson(text, file) : parseToml(text, file))

/** `decodeConfig` without the skipped entries. */
export const parseConfig = (
  text: string,
  file: string,
  format: ConfigFormat = formatOf(file)
): Either.Either<ClawtoolConfig, ConfigError> => Either.map(decodeConfig(text, file, format), ({ config }) => config)

/** The warning naming one skipped entry; on stderr, whatever the log level (health and tools list keep only errors). */
export const warnSkipped = (file: string, entries: ReadonlyArray<SkippedEntry>): Effect.Effect<void> =>
  Effect.forEach(
    entries,
    (entry) => Console.error(`warning: config ${file}: entry ${entry.name}: ${entry.reason}; skipped`),
    { discard: true }
  )

/** Reads a UTF-8 file; None when it does not exist, ConfigError Unreadable for any other failure. */
export const readText = (file: string): Effect.Effect<Option.Option<string>, ConfigError> =>
  Effect.tryPromise({
    try: () => Fs.readFile(file, "utf8"),
    catch: (cause) => cause
  }).pipe(
    Effect.map(Option.some),
    Effect.catchAll((cause) =>
      errno(cause) === "ENOENT"
        ? Effect.succeed(Option.none<string>())
        : Effect.fail(
            new ConfigError({
              reason: "Unreadable",
              file,
              detail: `cannot read the file (${errno(cause) ?? String(cause)})`
            })
          )
    )
  )

export const errno = (cause: unknown): string | undefined =>
  typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string"
    ? cause.code
    : undefined

// --- TOML -------------------------------------------------------------------

const parseToml = (text: string, file: string): Either.Either<DecodedConfig, ConfigError> =>
  Either.flatMap(tomlDocument(text, file), (input) =>
    Either.map(decodeStrict(ClawtoolConfig, input, { file, text, format: "toml" }), (config) => ({
      config,
      skipped: []
    }))
  )

/** smol-toml parse, with its syntax error turned into a ConfigError carrying its line and column. */
export const tomlDocument = (text: string, file: string): Either.Either<unknown, ConfigError> =>
  Either.try({
    try: () => Toml.parse(text),
    catch: (cause) =>
      cause instanceof Toml.TomlError
        ? new ConfigError({
            reason: "Syntax",
            file,
            line: cause.line,
            column: cause.column,
            // smol-toml's message is "Invalid TOML document: <why>\n\n<code block>"; keep only <why>.
            detail: `invalid TOML: ${cause.message.replace(/^Invalid TOML document: /, "").split("\n")[0]}`
          })
        : new ConfigError({ reason: "Syntax", file, detail: `invalid TOML: ${String(cause)}` })
  })

// --- JSON (Claude Desktop, Cursor, VS Code) ---------------------------------

/** JSON syntax errors carry their line and column; the shape is the McpServersJson schema's to judge. */
const parseJson = (text: string, file: string): Either.Either<DecodedConfig, ConfigError> =>
  Either.flatMap(jsonDocument(text, file), (input) =>
    decodeStrict(McpServersJson, input, { file, text, format: "json" })
  )

const jsonDocument = (text: string, file: string): Either.Either<unknown, ConfigError> =>
  Either.try({
    try: () => JSON.parse(text) as unknown,
    catch: (cause) => {
      const message = cause instanceof Error ? cause.message : String(cause)
      const position = /position (\d+)/.exec(message)?.[1]
      const at = position === undefined ? undefined : lineColumn(text, Number(position))
      return new ConfigError({
        reason: "Syntax",
        file,
        line: at?.line,
        column: at?.column,
        detail: `invalid JSON: ${message.replace(/ in JSON at position \d+.*$/, "")}`
      })
    }
  })
