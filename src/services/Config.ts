import { Context, Either, Effect, Layer, Option, ParseResult, Schema } from "effect"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Toml from "smol-toml"
import { ClawtoolConfig, InstanceName } from "../domain/Config.js"
import { ConfigError } from "../domain/Errors.js"

/** Where the config came from on the command line; the Config service resolves the rest. */
export class ConfigLocation extends Context.Tag("clawtool/ConfigLocation")<
  ConfigLocation,
  { readonly config: Option.Option<string>; readonly secrets: Option.Option<string> }
>() {
  static readonly layer = (options: {
    readonly config?: Option.Option<string>
    readonly secrets?: Option.Option<string>
  }) =>
    Layer.succeed(ConfigLocation, {
      config: options.config ?? Option.none(),
      secrets: options.secrets ?? Option.none()
    })
}

export type Env = Readonly<Record<string, string | undefined>>

/**
 * The process environment as Config and Secrets see it. A Reference, so production needs no layer (it defaults to
 * `process.env`) and tests swap it with `Effect.provideService(ProcessEnv, { … })` or `Layer.succeed(ProcessEnv, { … })`.
 */
export class ProcessEnv extends Context.Reference<ProcessEnv>()("clawtool/ProcessEnv", {
  defaultValue: (): Env => process.env
}) {}

/** "json" for the mcpServers/servers files of Claude Desktop, Cursor and VS Code; TOML otherwise. */
export type ConfigFormat = "toml" | "json"

export const formatOf = (file: string): ConfigFormat => (file.toLowerCase().endsWith(".json") ? "json" : "toml")

/** Which rule picked the config path, so a missing file can be told apart from a missing default. */
export type ConfigOrigin = "flag" | "env" | "xdg" | "home"

export interface ConfigPaths {
  /** Absolute path of the config file to read (it may not exist). */
  readonly file: string
  readonly origin: ConfigOrigin
  /** Absolute path of secrets.toml: `--secrets`, else beside `file`. */
  readonly secretsFile: string
}

const nonEmpty = (value: string | undefined): value is string => value !== undefined && value !== ""

/** `--config` > `$CLAWTOOL_CONFIG` > `$XDG_CONFIG_HOME/clawtool/config.toml` > `~/.config/clawtool/config.toml`. Pure. */
export const resolveConfigPaths = (
  location: { readonly config: Option.Option<string>; readonly secrets: Option.Option<string> },
  env: Env
): ConfigPaths => {
  const [file, origin]: [string, ConfigOrigin] = Option.isSome(location.config)
    ? [location.config.value, "flag"]
    : nonEmpty(env.CLAWTOOL_CONFIG)
      ? [env.CLAWTOOL_CONFIG, "env"]
      : nonEmpty(env.XDG_CONFIG_HOME)
        ? [Path.join(env.XDG_CONFIG_HOME, "clawtool", "config.toml"), "xdg"]
        : [Path.join(nonEmpty(env.HOME) ? env.HOME : Os.homedir(), ".config", "clawtool", "config.toml"), "home"]
  const absolute = Path.resolve(file)
  return {
    file: absolute,
    origin,
    secretsFile: Path.resolve(
      Option.getOrElse(location.secrets, () => Path.join(Path.dirname(absolute), "secrets.toml"))
    )
  }
}

/**
 * Parses and validates one config text. Pure: `file` only names the file in errors. TOML is clawtool's own shape;
 * JSON is the `mcpServers` (Claude Desktop, Cursor) or `servers` (VS Code) shape, mapped to the same ClawtoolConfig.
 */
export const parseConfig = (
  text: string,
  file: string,
  format: ConfigFormat = formatOf(file)
): Either.Either<ClawtoolConfig, ConfigError> => (format === "json" ? parseJson(text, file) : parseToml(text, file))

/**
 * The loaded configuration. `file` is None when the default file does not exist (then `config` is empty);
 * `secretsFile` is always Some (beside the config file, or `--secrets`); `path` is the config path in effect either way.
 */
export class Config extends Effect.Service<Config>()("clawtool/Config", {
  effect: Effect.gen(function* () {
    const location = yield* ConfigLocation
    const env = yield* ProcessEnv
    return yield* load(resolveConfigPaths(location, env))
  })
}) {
  /** A Config with a fixed value, for tests of services that read it. */
  static readonly layerTest = (
    config: ClawtoolConfig,
    options: { readonly file?: string; readonly secretsFile?: string } = {}
  ): Layer.Layer<Config> =>
    Layer.succeed(
      Config,
      new Config({
        file: Option.fromNullable(options.file),
        secretsFile: Option.fromNullable(options.secretsFile),
        path: options.file ?? "config.toml",
        format: formatOf(options.file ?? "config.toml"),
        config
      })
    )
}

const load = Effect.fn("Config.load")(function* (paths: ConfigPaths) {
  const { file, origin } = paths
  const text = yield* readText(file)
  const format = formatOf(file)
  const base = { path: file, format, secretsFile: Option.some(paths.secretsFile) } as const
  if (Option.isNone(text)) {
    if (origin === "flag" || origin === "env") {
      const given = origin === "flag" ? "--config" : "$CLAWTOOL_CONFIG"
      return yield* new ConfigError({ reason: "NotFound", file, detail: `no such file (given by ${given})` })
    }
    yield* Effect.logDebug(`no config at ${file}; starting with no sources`)
    return { ...base, file: Option.none<string>(), config: ClawtoolConfig.empty }
  }
  const config = yield* parseConfig(text.value, file, format)
  yield* Effect.logDebug(`config ${file}: ${Object.keys(config.sources).length} source(s)`)
  return { ...base, file: Option.some(file), config }
})

// =============================================================================
// Internal (exported for Secrets and tests)
// =============================================================================

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

/** Decodes `input` with unknown keys as errors, turning the FIRST issue into one human ConfigError. */
export const decodeStrict = <A, I>(
  schema: Schema.Schema<A, I>,
  input: unknown,
  context: {
    readonly file: string
    readonly text: string
    readonly format: ConfigFormat
    readonly describe: (path: ReadonlyArray<PropertyKey>) => string | undefined
    /** Rewrites the decoded path into the path the user wrote (JSON sources are decoded in the TOML shape). */
    readonly userPath?: (path: ReadonlyArray<PropertyKey>) => ReadonlyArray<PropertyKey>
  }
): Either.Either<A, ConfigError> =>
  Either.mapLeft(Schema.decodeUnknownEither(schema, { onExcessProperty: "error" })(input), (error) => {
    const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
    const path = issue?.path ?? []
    const shown = context.userPath ? context.userPath(path) : path
    return new ConfigError({
      reason: "Invalid",
      file: context.file,
      line: context.format === "json" ? locateJson(context.text, shown) : locateToml(context.text, shown),
      keyPath: showPath(shown),
      detail: issue === undefined ? "invalid configuration" : humanize(issue, input, context.describe(path))
    })
  })

/** `sources.my-fs.command[1]`; keys that are not bare TOML keys are quoted. */
export const showPath = (path: ReadonlyArray<PropertyKey>): string =>
  path
    .map((key, i) =>
      typeof key === "number"
        ? `[${key}]`
        : `${i === 0 ? "" : "."}${/^[A-Za-z0-9_-]+$/.test(String(key)) ? String(key) : JSON.stringify(String(key))}`
    )
    .join("")

/** `GitHub_Work` → `github-work`: the kebab form suggested for a bad instance name. */
export const kebabCase = (name: string): string =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")

/** Why `name` is not an instance name (None when it is one), with the kebab form as a suggestion when that one is valid. */
export const instanceNameProblem = (name: string): Option.Option<string> =>
  Either.match(Schema.decodeUnknownEither(InstanceName)(name), {
    onRight: () => Option.none(),
    onLeft: (error) => {
      const why = ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.message ?? "not a valid instance name"
      const kebab = kebabCase(name)
      const suggestion =
        kebab !== name && Either.isRight(Schema.decodeUnknownEither(InstanceName)(kebab)) ? `; use "${kebab}"` : ""
      return Option.some(`${why}${suggestion}`)
    }
  })

type Issue = ParseResult.ArrayFormatterIssue

/** One line a person can act on: what was expected and what was found, never a dump of the schema. */
const humanize = (issue: Issue, input: unknown, expected: string | undefined): string => {
  const path = issue.path
  const last = path.at(-1)
  const got = (): string => ` got ${show(valueAt(input, path))}`
  switch (issue._tag) {
    case "Missing":
      return last === 0 ? (expected ?? "must not be empty") : "this required key is missing"
    case "Unexpected": {
      // A record key that fails its key schema is reported as "unexpected": name the rule it broke instead.
      if (path.length === 2 && path[0] === "sources") {
        return Option.getOrElse(instanceNameProblem(String(last)), () => "not a valid instance name")
      }
      if (path.at(-2) === "env") {
        return `${JSON.stringify(String(last))} is not an environment variable name (letters, digits and _, not starting with a digit)`
      }
      const allowed = /expected: (.*)$/.exec(issue.message)?.[1]?.replace(/"/g, "").split(" | ")
      return allowed && allowed.every((key) => /^[A-Za-z0-9_-]+$/.test(key))
        ? `unknown key ${JSON.stringify(String(last))}; known keys are ${allowed.join(", ")}`
        : `unknown key ${JSON.stringify(String(last))}`
    }
    default: {
      // Refinements and transformations in the domain carry their own human messages; keep those.
      if (!/^Expected /.test(issue.message)) return issue.message
      if (expected !== undefined) return `${expected},${got()}`
      const simple = /^Expected (string|number|boolean), actual/.exec(issue.message)?.[1]
      return simple !== undefined ? `expected a ${simple},${got()}` : `has the wrong type,${got()}`
    }
  }
}

const valueAt = (input: unknown, path: ReadonlyArray<PropertyKey>): unknown =>
  path.reduce<unknown>(
    (value, key) =>
      typeof value === "object" && value !== null ? (value as Record<PropertyKey, unknown>)[key] : undefined,
    input
  )

const show = (value: unknown): string => {
  const text =
    value instanceof Date
      ? value.toISOString()
      : Array.isArray(value) && value.length === 0
        ? "an empty list"
        : (JSON.stringify(value) ?? String(value))
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}

const durationHint = `expected a duration like "500ms", "60s", "2m" or "1h"`

/** What each position of config.toml expects, in the words of the file (not of the schema). */
const describeConfig = (path: ReadonlyArray<PropertyKey>): string | undefined => {
  const [root, , key, index] = path
  if (path.length === 0) return "expected a table"
  if (root !== "sources") return undefined
  if (path.length === 1) return "expected a table of sources, like [sources.my-server]"
  if (path.length === 2) return `expected a table with at least a command, like [sources.${String(path[1])}]`
  switch (key) {
    case "command":
      return path.length === 3
        ? `expected a non-empty list of strings, like ["npx", "-y", "some-mcp-server"]`
        : index === 0
          ? `must not be empty: give the program and its arguments, like ["npx", "-y", "some-mcp-server"]`
          : "expected a string"
    case "env":
      return path.length === 3 ? `expected a table of strings, like { KEY = "value" }` : "expected a string"
    case "cwd":
      return "expected a string (a directory)"
    case "enabled":
      return "expected true or false"
    case "startup_timeout":
      return durationHint
    case "env_passthrough":
      return path.length === 3 ? `expected a list of environment variable names, like ["HOME"]` : "expected a string"
  }
  return undefined
}

// --- TOML -------------------------------------------------------------------

const parseToml = (text: string, file: string): Either.Either<ClawtoolConfig, ConfigError> =>
  Either.flatMap(tomlDocument(text, file), (input) =>
    decodeStrict(ClawtoolConfig, input, { file, text, format: "toml", describe: describeConfig })
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

/**
 * Best-effort line of a key path in TOML text: the line of the table header or `key =` whose full key path is the
 * longest prefix of `path`. Array indexes are ignored (the line of the array's key is close enough).
 */
export const locateToml = (text: string, path: ReadonlyArray<PropertyKey>): number | undefined => {
  const target = keysBeforeIndex(path)
  let table: ReadonlyArray<string> = []
  let best: { score: number; line: number } | undefined
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim()
    if (line === "" || line.startsWith("#")) return
    let candidate: ReadonlyArray<string> | undefined
    if (line.startsWith("[")) {
      const open = line.startsWith("[[") ? 2 : 1
      const keys = parseKeys(line, open)
      if (keys === undefined || line[keys.end] !== "]") return
      table = keys.keys
      candidate = table
    } else {
      const keys = parseKeys(line, 0)
      if (keys === undefined || line[keys.end] !== "=") return
      candidate = [...table, ...keys.keys]
    }
    const score = prefixScore(candidate, target)
    if (score !== undefined && (best === undefined || score > best.score)) best = { score, line: i + 1 }
  })
  return best?.line
}

const keysBeforeIndex = (path: ReadonlyArray<PropertyKey>): ReadonlyArray<string> => {
  const firstIndex = path.findIndex((key) => typeof key === "number")
  return (firstIndex === -1 ? path : path.slice(0, firstIndex)).map(String)
}

/** A candidate that is a prefix of the target scores by its length; one the target is a prefix of, just below that. */
const prefixScore = (candidate: ReadonlyArray<string>, target: ReadonlyArray<string>): number | undefined => {
  const shared = Math.min(candidate.length, target.length)
  for (let i = 0; i < shared; i++) if (candidate[i] !== target[i]) return undefined
  return candidate.length <= target.length ? candidate.length * 2 : target.length * 2 - 1
}

/** A dotted TOML key (bare, "basic" or 'literal' parts) starting at `start`; `end` points past trailing blanks. */
const parseKeys = (line: string, start: number): { keys: ReadonlyArray<string>; end: number } | undefined => {
  const keys: Array<string> = []
  let i = start
  const blanks = () => {
    while (line[i] === " " || line[i] === "\t") i++
  }
  for (;;) {
    blanks()
    if (line[i] === '"') {
      const match = /^"(?:[^"\\]|\\.)*"/.exec(line.slice(i))
      if (match === null) return undefined
      try {
        keys.push(JSON.parse(match[0]) as string)
      } catch {
        keys.push(match[0].slice(1, -1))
      }
      i += match[0].length
    } else if (line[i] === "'") {
      const close = line.indexOf("'", i + 1)
      if (close === -1) return undefined
      keys.push(line.slice(i + 1, close))
      i = close + 1
    } else {
      const match = /^[A-Za-z0-9_-]+/.exec(line.slice(i))
      if (match === null) return undefined
      keys.push(match[0])
      i += match[0].length
    }
    blanks()
    if (line[i] !== ".") return { keys, end: i }
    i++
  }
}

// --- JSON (Claude Desktop, Cursor, VS Code) ---------------------------------

/** Keys of an entry that only steer the host's approval UI; they mean nothing to clawtool, so they are ignored. */
const hostOnlyKeys = new Set(["autoApprove", "alwaysAllow"])
const jsonEntryKeys = new Set(["type", "command", "args", "env", "cwd", "disabled"])

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const parseJson = (text: string, file: string): Either.Either<ClawtoolConfig, ConfigError> => {
  const fail = (detail: string, path: ReadonlyArray<PropertyKey> = []) =>
    Either.left(
      new ConfigError({
        reason: "Invalid",
        file,
        line: locateJson(text, path),
        keyPath: showPath(path),
        detail
      })
    )
  let document: unknown
  try {
    document = JSON.parse(text)
  } catch (cause) {
    const message = cause instanceof Error ? cause.message : String(cause)
    const position = /position (\d+)/.exec(message)?.[1]
    const at = position === undefined ? undefined : lineColumn(text, Number(position))
    return Either.left(
      new ConfigError({
        reason: "Syntax",
        file,
        line: at?.line,
        column: at?.column,
        detail: `invalid JSON: ${message.replace(/ in JSON at position \d+.*$/, "")}`
      })
    )
  }
  if (!isObject(document)) return fail(`expected a JSON object with "mcpServers" or "servers"`)
  // Other top-level keys (globalShortcut, inputs, …) belong to the host that owns the file.
  if ("mcpServers" in document && "servers" in document) {
    return fail(`has both "mcpServers" and "servers"; keep one`)
  }
  const root = "mcpServers" in document ? "mcpServers" : "servers" in document ? "servers" : undefined
  if (root === undefined)
    return fail(`expected a JSON object with "mcpServers" (Claude Desktop, Cursor) or "servers" (VS Code)`)
  const servers = document[root]
  if (!isObject(servers))
    return fail(`expected an object of servers, like { "my-server": { "command": "npx" } }`, [root])

  const sources: Record<string, unknown> = {}
  for (const [name, entry] of Object.entries(servers)) {
    const at = (...rest: Array<PropertyKey>) => [root, name, ...rest]
    const nameProblem = instanceNameProblem(name)
    if (Option.isSome(nameProblem)) return fail(nameProblem.value, at())
    if (!isObject(entry)) return fail(`expected an object with a "command"`, at())
    if ((entry.type !== undefined && entry.type !== "stdio") || entry.url !== undefined) {
      const kind = entry.type !== undefined && entry.type !== "stdio" ? `type ${JSON.stringify(entry.type)}` : "a url"
      return fail(`remote servers (${kind}) are not supported yet; only local stdio servers with a "command"`, at())
    }
    const unknown = Object.keys(entry).find((key) => !jsonEntryKeys.has(key) && !hostOnlyKeys.has(key))
    if (unknown !== undefined) {
      return fail(
        `unknown key ${JSON.stringify(unknown)}; known keys are ${[...jsonEntryKeys].join(", ")}`,
        at(unknown)
      )
    }
    if (typeof entry.command !== "string" || entry.command === "") {
      return fail(
        entry.command === undefined
          ? "this entry has no command"
          : `expected a non-empty string, got ${show(entry.command)}`,
        at("command")
      )
    }
    const args = entry.args ?? []
    if (!Array.isArray(args)) return fail(`expected a list of strings, got ${show(args)}`, at("args"))
    if (entry.disabled !== undefined && typeof entry.disabled !== "boolean") {
      return fail(`expected true or false, got ${show(entry.disabled)}`, at("disabled"))
    }
    sources[name] = {
      command: [entry.command, ...args],
      ...(entry.env === undefined ? {} : { env: entry.env }),
      ...(entry.cwd === undefined ? {} : { cwd: entry.cwd }),
      ...(entry.disabled === undefined ? {} : { enabled: !entry.disabled })
    }
  }
  return decodeStrict(
    ClawtoolConfig,
    { sources },
    {
      file,
      text,
      format: "json",
      describe: describeConfig,
      userPath: (path) => jsonPath(root, path)
    }
  )
}

/** The decoded `sources.<name>.command[i]` is `<root>.<name>.command` (i = 0) or `<root>.<name>.args[i - 1]`. */
const jsonPath = (root: string, path: ReadonlyArray<PropertyKey>): ReadonlyArray<PropertyKey> => {
  const [, name, key, ...rest] = path
  if (name === undefined) return [root]
  if (key === undefined) return [root, name]
  if (key === "command" && typeof rest[0] === "number") {
    return rest[0] === 0 ? [root, name, "command"] : [root, name, "args", rest[0] - 1, ...rest.slice(1)]
  }
  return [root, name, key === "enabled" ? "disabled" : key, ...rest]
}

const lineColumn = (text: string, offset: number): { line: number; column: number } => {
  const before = text.slice(0, offset).split("\n")
  return { line: before.length, column: (before.at(-1)?.length ?? 0) + 1 }
}

/** Best-effort line of a key path in JSON text: each `"key":` is searched for after the previous one. */
export const locateJson = (text: string, path: ReadonlyArray<PropertyKey>): number | undefined => {
  let offset: number | undefined
  for (const key of keysBeforeIndex(path)) {
    const escaped = JSON.stringify(key).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
    const match = new RegExp(`${escaped}\\s*:`, "g")
    match.lastIndex = offset ?? 0
    const found = match.exec(text)
    if (found === null) break
    offset = found.index
  }
  return offset === undefined ? undefined : lineColumn(text, offset).line
}
