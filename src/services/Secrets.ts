import { Array as Arr, Effect, Layer, Option, Order, Schema } from "effect"
import * as Fs from "node:fs/promises"
import type { SourceConfig } from "../domain/Config.js"
import { Config, decodeStrict, type Env, errno, ProcessEnv, readText, tomlDocument } from "./Config.js"

/** secrets.toml: `[scopes.<instance>]` and `[scopes.global]` tables of `KEY = "value"`. */
export class SecretStore extends Schema.Class<SecretStore>("SecretStore")({
  scopes: Schema.optionalWith(
    Schema.Record({ key: Schema.String, value: Schema.Record({ key: Schema.String, value: Schema.String }) }),
    { default: () => ({}) }
  )
}) {
  static readonly empty = new SecretStore({ scopes: {} })
}

/** A source's command, env and headers with every `${VAR}` filled in. */
export interface ResolvedSource {
  /** Empty for a remote source. */
  readonly command: ReadonlyArray<string>
  /** The source's `env` table, expanded (an overlay: the child's base env is the Sources service's business). */
  readonly env: Readonly<Record<string, string>>
  /** A remote source's `headers`, expanded: secrets, never to be logged or shown. */
  readonly headers: Readonly<Record<string, string>>
  /** Names of the unresolved `${VAR}`s (not env keys), sorted and de-duplicated. Empty means ready. */
  readonly missing: ReadonlyArray<string>
}

/** One row of `clawtool source list`: whether an instance could start, decided without spawning it. */
export interface SourceReadiness {
  readonly instance: string
  readonly enabled: boolean
  readonly ready: boolean
  readonly missing: ReadonlyArray<string>
}

/** The only reference form (as in Go): no `$VAR`, no defaults, no escapes, no recursion; a malformed `${` stays verbatim. */
const reference = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g

/** instance scope, then `global`, then the process env. A stored "" counts as set; an empty env var does not (as in Go). */
export const lookupSecret = (store: SecretStore, env: Env, instance: string, name: string): Option.Option<string> => {
  const stored = store.scopes[instance]?.[name] ?? store.scopes["global"]?.[name]
  if (stored !== undefined) return Option.some(stored)
  const fromEnv = env[name]
  return fromEnv === undefined || fromEnv === "" ? Option.none() : Option.some(fromEnv)
}

/** Expands every `${VAR}` in `template`; an unresolved reference becomes "" and its name is reported. */
export const expand = (
  template: string,
  lookup: (name: string) => Option.Option<string>
): { readonly value: string; readonly missing: ReadonlyArray<string> } => {
  const missing: Array<string> = []
  const value = template.replace(reference, (_, name: string) =>
    Option.getOrElse(lookup(name), () => {
      missing.push(name)
      return ""
    })
  )
  return { value, missing }
}

/** Pure core of `Secrets.resolve`: the env map is a parameter so tests need no process state. */
export const resolveSource = (
  store: SecretStore,
  env: Env,
  instance: string,
  source: Pick<SourceConfig, "command" | "env"> & Partial<Pick<SourceConfig, "headers">>
): ResolvedSource => {
  const lookup = (name: string) => lookupSecret(store, env, instance, name)
  const missing: Array<string> = []
  const fill = (template: string) => {
    const expanded = expand(template, lookup)
    missing.push(...expanded.missing)
    return expanded.value
  }
  const command = Arr.map(source.command ?? [], fill)
  const fillAll = (table: Readonly<Record<string, string>>) =>
    Object.fromEntries(Object.entries(table).map(([key, value]) => [key, fill(value)]))
  const resolvedEnv = fillAll(source.env)
  const headers = fillAll(source.headers ?? {})
  return { command, env: resolvedEnv, headers, missing: Arr.sort(Arr.dedupe(missing), Order.string) }
}

/** The secrets service shape, built from a store and an env; `Secrets.layerTest` uses it directly. */
export const makeSecrets = (
  store: SecretStore,
  env: Env,
  sources: Readonly<Record<string, SourceConfig>>,
  file: Option.Option<string> = Option.none()
) => {
  const resolve = (instance: string, source: SourceConfig): ResolvedSource =>
    resolveSource(store, env, instance, source)
  return {
    /** The secrets file that was read (None in tests). */
    file,
    store,
    /** Sync and pure: expands `${VAR}` in `command` elements, `env` values and `headers` values for `instance`. */
    resolve,
    /** Sync: instance scope, then global, then the non-empty process env. */
    lookup: (instance: string, name: string): Option.Option<string> => lookupSecret(store, env, instance, name),
    /** Sync: every configured source, sorted by instance, with what it still lacks. Spawns nothing. */
    readiness: (): ReadonlyArray<SourceReadiness> =>
      Object.keys(sources)
        .sort()
        .map((instance) => {
          const source = sources[instance]!
          const { missing } = resolve(instance, source)
          return { instance, enabled: source.enabled, ready: missing.length === 0, missing }
        })
  } as const
}

/**
 * Secrets from `Config.secretsFile` (a missing file is an empty store), resolving `${VAR}` against them and the
 * process env (`ProcessEnv`, `process.env` unless a test provides one).
 */
export class Secrets extends Effect.Service<Secrets>()("clawtool/Secrets", {
  effect: Effect.gen(function* () {
    const { config, secretsFile } = yield* Config
    const env = yield* ProcessEnv
    const store = Option.isSome(secretsFile) ? yield* loadSecrets(secretsFile.value) : SecretStore.empty
    return makeSecrets(store, env, config.sources, secretsFile)
  }),
  dependencies: [Config.Default]
}) {
  /** Secrets over a fixed store and env, for tests of services that read it. */
  static readonly layerTest = (options: {
    readonly scopes?: Record<string, Record<string, string>>
    readonly env?: Env
    readonly sources?: Readonly<Record<string, SourceConfig>>
  }): Layer.Layer<Secrets> =>
    Layer.succeed(
      Secrets,
      new Secrets(
        makeSecrets(new SecretStore({ scopes: options.scopes ?? {} }), options.env ?? {}, options.sources ?? {})
      )
    )
}

/** Reads and validates secrets.toml, warning when group or others may read it. */
export const loadSecrets = Effect.fn("Secrets.load")(function* (file: string) {
  const text = yield* readText(file)
  if (Option.isNone(text)) return SecretStore.empty
  yield* warnIfShared(file)
  const document = yield* tomlDocument(text.value, file)
  return yield* decodeStrict(SecretStore, document, {
    file,
    text: text.value,
    format: "toml",
    describe: describeSecrets
  })
})

const warnIfShared = (file: string) =>
  Effect.tryPromise(() => Fs.stat(file)).pipe(
    Effect.flatMap((stat) =>
      process.platform !== "win32" && (stat.mode & 0o077) !== 0
        ? Effect.logWarning(
            `secrets file ${file} can be read or changed by group or others (mode ${(stat.mode & 0o777).toString(8)}); run: chmod 600 ${file}`
          )
        : Effect.void
    ),
    // The content was just read; a failing stat only costs the warning.
    Effect.catchAll((error) => Effect.logDebug(`cannot stat ${file}: ${errno(error.error) ?? String(error.error)}`))
  )

const describeSecrets = (path: ReadonlyArray<PropertyKey>): string | undefined => {
  if (path.length === 0) return "expected a table"
  if (path[0] !== "scopes") return undefined
  if (path.length === 1) return "expected a table of scopes, like [scopes.global]"
  if (path.length === 2) return `expected a table of KEY = "value" strings, like [scopes.${String(path[1])}]`
  return "expected a string"
}
