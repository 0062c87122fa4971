import {
  Array as Arr,
  Console,
  Context,
  Either,
  Effect,
  Layer,
  MutableRef,
  Option,
  ParseResult,
  Schema,
  SchemaAST as AST
} from "effect"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import * as Toml from "smol-toml"
import {
  ClawtoolConfig,
  type DecodedConfig,
  kebabCase,
  McpServersJson,
  type SkippedEntry,
  SourceConfig
} from "../domain/Config.js"
import { type ConfigChainShape, configChainVariable, parseConfigChain } from "../domain/Environment.js"
import { ConfigError } from "../domain/Errors.js"
import { defaultConfigFile } from "../paths.js"

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

/** `--config` > the default config file (paths.ts: `$CLAWTOOL_CONFIG` > `$XDG_CONFIG_HOME/…` > `~/.config/…`). Pure. */
export const resolveConfigPaths = (
  location: { readonly config: Option.Option<string>; readonly secrets: Option.Option<string> },
  env: Env
): ConfigPaths => {
  const { file, origin }: { readonly file: string; readonly origin: ConfigOrigin } = Option.isSome(location.config)
    ? { file: location.config.value, origin: "flag" }
    : defaultConfigFile(env)
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

/**
 * The loaded configuration. `file` is None when the default file does not exist (then `config` is empty);
 * `secretsFile` is always Some (beside the config file, or `--secrets`); `path` is the config path in effect either way.
 * `skipped`: the entries of a host's JSON file clawtool cannot use, each warned about once here, when it is read.
 * `chain` places it among the clawtools above (ADR 013): when one of them already serves this file, `config` has no
 * sources, so this clawtool starts none and its Gateway refuses `initialize`.
 */
export class Config extends Effect.Service<Config>()("clawtool/Config", {
  effect: Effect.gen(function* () {
    const location = yield* ConfigLocation
    const env = yield* ProcessEnv
    const paths = resolveConfigPaths(location, env)
    const inherited = parseConfigChain(env[configChainVariable])
    const loaded = yield* load(paths, inherited)
    yield* warnSkipped(loaded.path, loaded.skipped)
    return {
      ...loaded,
      live: yield* makeLive(loaded.config),
      /**
       * The config file read again from the path as given (a re-pointed symlink is followed), for a reload (ADR 016).
       * Unlike at start, a missing file is an error: a file being replaced must not stop every source. Its skipped
       * entries are not warned about here: Reload names those that are new.
       */
      reread: Effect.map(load(paths, inherited, { missingIsError: true }), ({ config, skipped }): DecodedConfig => ({
        config,
        skipped
      }))
    }
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
        chain: { files: [], repeated: Option.none() },
        config,
        skipped: [],
        live: Effect.runSync(makeLive(config)),
        reread: Effect.succeed({ config, skipped: [] })
      })
    )
}

/**
 * The config in effect while `serve` runs: `config` as read at start, then each reload's (ADR 016). Read
 * synchronously by the catalog; one-shot commands never see it change.
 */
export interface LiveConfig {
  readonly get: () => ClawtoolConfig
  readonly set: (next: ClawtoolConfig) => Effect.Effect<void>
}

const makeLive = (initial: ClawtoolConfig): Effect.Effect<LiveConfig> =>
  Effect.sync(() => {
    const current = MutableRef.make(initial)
    return { get: () => current.current, set: (next) => Effect.sync(() => MutableRef.set(current, next)) }
  })

const load = Effect.fn("Config.load")(function* (
  paths: ConfigPaths,
  inherited: ReadonlyArray<string>,
  options: { readonly missingIsError?: boolean } = {}
) {
  const { file, origin } = paths
  const text = yield* readText(file)
  const format = formatOf(file)
  const chain = yield* placeInChain(file, inherited)
  const base = { path: file, format, secretsFile: Option.some(paths.secretsFile), chain } as const
  if (Option.isNone(text)) {
    if (options.missingIsError === true) {
      return yield* new ConfigError({ reason: "NotFound", file, detail: "no such file (it was removed or renamed)" })
    }
    if (origin === "flag" || origin === "env") {
      const given = origin === "flag" ? "--config" : "$CLAWTOOL_CONFIG"
      return yield* new ConfigError({ reason: "NotFound", file, detail: `no such file (given by ${given})` })
    }
    yield* Effect.logDebug(`no config at ${file}; starting with no sources`)
    return { ...base, file: Option.none<string>(), config: ClawtoolConfig.empty, skipped: [] }
  }
  const decoded = yield* decodeConfig(text.value, file, format)
  const config = resolveRelativePaths(decoded.config, Path.dirname(file))
  if (Option.isSome(chain.repeated)) {
    yield* Effect.logWarning(
      `config ${chain.repeated.value} is already served by a clawtool above this one (${configChainVariable}): starting none of its sources`
    )
    return { ...base, file: Option.some(file), config: new ClawtoolConfig({ ...config, sources: {} }), skipped: [] }
  }
  yield* Effect.logDebug(`config ${file}: ${Object.keys(config.sources).length} source(s)`)
  return { ...base, file: Option.some(file), config, skipped: decoded.skipped }
})

/**
 * This config's place among the clawtools above it: files compare by real path, so a symlink or another spelling of
 * the same file is the same config.
 */
const placeInChain = (file: string, inherited: ReadonlyArray<string>): Effect.Effect<ConfigChainShape> =>
  Effect.map(
    Effect.orElseSucceed(
      Effect.tryPromise(() => Fs.realpath(file)),
      () => file
    ),
    (self) =>
      inherited.includes(self)
        ? { files: inherited, repeated: Option.some(self) }
        : { files: [...inherited, self], repeated: Option.none() }
  )

/** `./x` and `../x`, also with Windows separators. */
const isDotRelative = (part: string): boolean => /^\.\.?[\\/]/.test(part)

/**
 * Elements of `command` that start with `./` or `../`, and a relative `cwd`, resolved against the config file's
 * folder, as hosts do with their own config files: the config works from whatever folder clawtool is started in.
 * Bare names (`node`, `server.js`) are left to the child's PATH and cwd. Pure.
 */
export const resolveRelativePaths = (config: ClawtoolConfig, dir: string): ClawtoolConfig => {
  const resolve = (part: string) => (isDotRelative(part) ? Path.resolve(dir, part) : part)
  return new ClawtoolConfig({
    ...config,
    sources: Object.fromEntries(
      Object.entries(config.sources).map(([name, source]) => {
        if (source.command === undefined) return [name, source]
        const [bin, ...args] = source.command
        return [
          name,
          new SourceConfig({
            ...source,
            command: [resolve(bin), ...args.map(resolve)],
            ...(source.cwd === undefined ? {} : { cwd: Path.resolve(dir, source.cwd) })
          })
        ]
      })
    )
  })
}

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

/**
 * Decodes `input` with unknown keys as errors, turning the FIRST issue into one ConfigError at its file, line and key
 * path. The words come from the schema's annotations (see src/domain/Config.ts), read through Effect's ArrayFormatter.
 */
export const decodeStrict = <A, I>(
  schema: Schema.Schema<A, I>,
  input: unknown,
  context: {
    readonly file: string
    readonly text: string
    readonly format: ConfigFormat
    /** What a position expects when its schema has no description; for schemas not annotated yet (secrets.toml). */
    readonly describe?: (path: ReadonlyArray<PropertyKey>) => string | undefined
  }
): Either.Either<A, ConfigError> =>
  Either.mapLeft(Schema.decodeUnknownEither(schema, { onExcessProperty: "error" })(input), (error) => {
    const problem = firstProblem(error.issue, context)
    return new ConfigError({
      reason: "Invalid",
      file: context.file,
      line: context.format === "json" ? locateJson(context.text, problem.path) : locateToml(context.text, problem.path),
      keyPath: showPath(problem.path),
      detail: problem.message
    })
  })

/** `sources.my-fs.command[1]`; keys that are not bare TOML keys are quoted. */
export const showPath = (path: ReadonlyArray<PropertyKey>): string =>
  path
    .map((key, i) =>
      typeof key === "number"
        ? `[${key}]`
        : `${i === 0 ? "" : "."}${isBareKey(String(key)) ? String(key) : JSON.stringify(String(key))}`
    )
    .join("")

const isBareKey = (key: string): boolean => /^[A-Za-z0-9_-]+$/.test(key)

export { kebabCase }

// --- From a ParseIssue to one sentence ----------------------------------------

interface Wording {
  readonly format: ConfigFormat
  readonly describe?: ((path: ReadonlyArray<PropertyKey>) => string | undefined) | undefined
}

/**
 * The first issue with its key path and message. Effect's ArrayFormatter walks the tree and applies the schema's
 * `message` and `missingMessage` annotations by its own rules; `withWording` first gives every issue that has no
 * annotated message one built from the schema (description, examples, the struct's keys) instead of Effect's
 * schema-dump default.
 */
const firstProblem = (
  issue: ParseResult.ParseIssue,
  wording: Wording
): { readonly path: ReadonlyArray<PropertyKey>; readonly message: string } =>
  ParseResult.ArrayFormatter.formatIssueSync(withWording(issue, wording, [], undefined, undefined))[0] ?? {
    path: [],
    message: "invalid configuration"
  }

/** What a position expects: a schema's `description` and first `examples` entry. */
interface Expectation {
  readonly description: string
  readonly example: Option.Option<unknown>
}

/** A class keeps its own annotations on a surrogate of its transformation. */
const expectationOf = (ast: AST.Annotated): Expectation | undefined =>
  Option.match(AST.getDescriptionAnnotation(ast), {
    onNone: () => Option.match(AST.getSurrogateAnnotation(ast), { onNone: () => undefined, onSome: expectationOf }),
    onSome: (description) => ({
      description,
      example: Option.flatMap(AST.getExamplesAnnotation(ast), Arr.head)
    })
  })

/**
 * Rebuilds the issue tree with a message on every Type, Missing and Unexpected issue. `described` is the expectation
 * of a transformation (a class, a duration) whose input was rejected at the same key: it speaks for the whole value,
 * so it wins over the plain "a string" of its encoded side. `container` is the struct or record holding the key.
 */
const withWording = (
  issue: ParseResult.ParseIssue,
  wording: Wording,
  path: ReadonlyArray<PropertyKey>,
  described: Expectation | undefined,
  container: AST.AST | undefined
): ParseResult.ParseIssue => {
  switch (issue._tag) {
    case "Pointer": {
      const inner = [...path, ...(Array.isArray(issue.path) ? issue.path : [issue.path])]
      return new ParseResult.Pointer(
        issue.path,
        issue.actual,
        withWording(issue.issue, wording, inner, undefined, container)
      )
    }
    case "Refinement":
      // A refinement's own description states its predicate; it cannot describe a value its `from` rejected.
      return new ParseResult.Refinement(
        issue.ast,
        issue.actual,
        issue.kind,
        withWording(issue.issue, wording, path, issue.kind === "From" ? described : undefined, container)
      )
    case "Transformation":
      return new ParseResult.Transformation(
        issue.ast,
        issue.actual,
        issue.kind,
        withWording(
          issue.issue,
          wording,
          path,
          issue.kind === "Encoded" ? (expectationOf(issue.ast) ?? described) : undefined,
          container
        )
      )
    case "Composite": {
      const issues = Array.isArray(issue.issues) ? issue.issues : [issue.issues]
      if (AST.isUnion(issue.ast)) {
        // An optional key also accepts `undefined`, which no TOML or JSON user can write: leave that member out.
        const choices = issues.filter((member) => !(member._tag === "Type" && AST.isUndefinedKeyword(member.ast)))
        if (choices.length === 1) return withWording(choices[0]!, wording, path, described, container)
        // A value matching no member of a union of scalars gets one sentence, not one per member.
        if (choices.every((member) => member._tag === "Type")) {
          return new ParseResult.Type(
            issue.ast,
            issue.actual,
            expected(issue.ast, issue.actual, path, described, wording)
          )
        }
      }
      const rebuilt = issues.map((inner) => withWording(inner, wording, path, described, issue.ast))
      return new ParseResult.Composite(
        issue.ast,
        issue.actual,
        Arr.isNonEmptyArray(rebuilt) ? rebuilt : issue.issues,
        issue.output
      )
    }
    case "Type":
      return issue.message !== undefined
        ? issue
        : new ParseResult.Type(issue.ast, issue.actual, expected(issue.ast, issue.actual, path, described, wording))
    case "Missing": {
      const key = path.at(-1)
      const message =
        typeof key !== "number"
          ? "this required key is missing"
          : key === 0
            ? "must not be empty"
            : "an item is missing"
      return new ParseResult.Missing(issue.ast, issue.message ?? message)
    }
    case "Unexpected":
      return new ParseResult.Unexpected(issue.actual, unexpected(path.at(-1), container, wording))
    case "Forbidden":
      return issue
  }
}

/** `expected <what the schema describes>[, like <example>], got <value>`. */
const expected = (
  ast: AST.AST,
  actual: unknown,
  path: ReadonlyArray<PropertyKey>,
  described: Expectation | undefined,
  wording: Wording
): string => {
  const legacy = wording.describe?.(path)
  if (described === undefined && legacy !== undefined) return `${legacy}, got ${show(actual)}`
  const expectation = described ?? expectationOf(ast)
  const what = expectation?.description ?? structural(ast, wording.format)
  const example = Option.match(expectation?.example ?? Option.none(), {
    onSome: (value) => `, like ${render(value, wording.format)}`,
    // In TOML a table is written as its header: say which one.
    onNone: () => (wording.format === "toml" && path.length > 0 && isStruct(ast) ? `, like [${showPath(path)}]` : "")
  })
  return `expected ${what}${example}, got ${show(actual)}`
}

/** What an undescribed schema node accepts, in the file's words. */
const structural = (ast: AST.AST, format: ConfigFormat): string => {
  switch (ast._tag) {
    case "Literal":
      return JSON.stringify(ast.literal)
    case "Union": {
      const members = ast.types
        .filter((member) => !AST.isUndefinedKeyword(member))
        .map((member) => expectationOf(member)?.description ?? structural(member, format))
      return members.length === 1 ? members[0]! : `${members.slice(0, -1).join(", ")} or ${members.at(-1)}`
    }
    case "TupleType":
      return format === "toml" ? "a list" : "an array"
    case "TypeLiteral":
      return format === "toml" ? "a table" : "an object"
    case "Refinement":
      return structural(ast.from, format)
    case "Transformation":
      return structural(ast.from, format)
    default:
      return Option.getOrElse(AST.getDescriptionAnnotation(ast), () => "a valid value")
  }
}

const isStruct = (ast: AST.AST): boolean =>
  AST.isTypeLiteral(ast) && ast.propertySignatures.length > 0 && ast.indexSignatures.length === 0

/** An unknown key of a struct lists the known ones; a record key that breaks its key schema says why. */
const unexpected = (key: PropertyKey | undefined, container: AST.AST | undefined, wording: Wording): string => {
  const name = JSON.stringify(String(key))
  if (container === undefined || !AST.isTypeLiteral(container)) return `unexpected ${name}`
  for (const signature of container.indexSignatures) {
    const rejected = ParseResult.decodeUnknownEither(Schema.make(signature.parameter))(key)
    if (Either.isLeft(rejected)) return firstProblem(rejected.left, wording).message
  }
  const known = container.propertySignatures.map((signature) => String(signature.name))
  return known.length > 0 && known.every(isBareKey)
    ? `unknown key ${name}; known keys are ${known.join(", ")}`
    : `unknown key ${name}`
}

/** An example value as the user would write it in this file. */
const render = (value: unknown, format: ConfigFormat): string => {
  if (Array.isArray(value)) return `[${value.map((item) => render(item, format)).join(", ")}]`
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value).map(([key, item]) =>
      format === "toml"
        ? `${isBareKey(key) ? key : JSON.stringify(key)} = ${render(item, format)}`
        : `${JSON.stringify(key)}: ${render(item, format)}`
    )
    return `{ ${entries.join(", ")} }`
  }
  return JSON.stringify(value) ?? String(value)
}

const show = (value: unknown): string => {
  const text =
    value instanceof Date
      ? value.toISOString()
      : Array.isArray(value) && value.length === 0
        ? "an empty list"
        : (JSON.stringify(value) ?? String(value))
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}

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
export const parseKeys = (line: string, start: number): { keys: ReadonlyArray<string>; end: number } | undefined => {
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
