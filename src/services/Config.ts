import { Effect, Layer, MutableRef, Option, type Scope } from "effect"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { ClawtoolConfig, type DecodedConfig, SourceConfig } from "../domain/Config.js"
import { type ConfigChainShape, configChainVariable, parseConfigChain } from "../domain/Environment.js"
import { ConfigError } from "../domain/Errors.js"
import { decodeConfig, readText, warnSkipped } from "./Config/Decode.js"
import { type ConfigPaths, ConfigLocation, formatOf, ProcessEnv, resolveConfigPaths } from "./Config/Location.js"

/*
 * The Config service: the file found, read, placed in the chain of clawtools and kept live for reloads. Its parts, each
 * importing only those listed before it: Config/Location (ProcessEnv, which file), Config/Locate (the line of a key
 * path in TOML or JSON text), Config/Wording (a ParseIssue as one sentence at its key), Config/Decode (text to
 * ClawtoolConfig). Their public names are re-exported here for the rest of clawtool; none of them imports this file.
 */
export { kebabCase } from "../domain/Config.js"
export { decodeConfig, errno, parseConfig, readText, tomlDocument, warnSkipped } from "./Config/Decode.js"
export { locateJson, locateToml, parseKeys } from "./Config/Locate.js"
export {
  type ConfigFormat,
  ConfigLocation,
  type ConfigOrigin,
  type ConfigPaths,
  type Env,
  formatOf,
  ProcessEnv,
  resolveConfigPaths
} from "./Config/Location.js"
export { decodeStrict, showPath } from "./Config/Wording.js"

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
export type ReloadListener = (next: ClawtoolConfig, lookup: (name: string) => Option.Option<string>) => void

export interface LiveConfig {
  readonly get: () => ClawtoolConfig
  readonly set: (next: ClawtoolConfig) => Effect.Effect<void>
  /**
   * Calls `listener` after each applied reload (Reload.ts), a secrets.toml-only one included, with the config in effect
   * and its global secrets as that reload read them (the daemon re-resolves its tokens), for the scope's life.
   */
  readonly onReload: (listener: ReloadListener) => Effect.Effect<void, never, Scope.Scope>
  readonly reloaded: (next: ClawtoolConfig, lookup: (name: string) => Option.Option<string>) => Effect.Effect<void>
}

const makeLive = (initial: ClawtoolConfig): Effect.Effect<LiveConfig> =>
  Effect.sync(() => {
    const current = MutableRef.make(initial)
    const listeners = new Set<ReloadListener>()
    return {
      get: () => current.current,
      set: (next) => Effect.sync(() => MutableRef.set(current, next)),
      reloaded: (next, lookup) =>
        Effect.sync(() => {
          for (const listener of listeners) listener(next, lookup)
        }),
      onReload: (listener) =>
        Effect.acquireRelease(
          Effect.sync(() => void listeners.add(listener)),
          () => Effect.sync(() => void listeners.delete(listener))
        )
    }
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
