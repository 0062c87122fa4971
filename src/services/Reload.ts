import { Duration, Effect, Either, Option, Stream } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import type { HttpConfig } from "../domain/Config.js"
import * as ConfigDiff from "../domain/ConfigDiff.js"
import { Config, ProcessEnv, warnSkipped } from "./Config.js"
import { Pins } from "./Pins.js"
import { warnUnknownSelectors } from "./Registry.js"
import { Redaction } from "./Redaction.js"
import { loadSecrets, makeSecrets, SecretStore } from "./Secrets.js"
import { Sources } from "./Sources.js"
import * as Tokens from "./Daemon/Tokens.js"
import { ConfigError } from "../domain/Errors.js"

/** Editors save in bursts (write, rename, chmod): one reload for all of it. */
const debounce = Duration.millis(250)

/** Settings read once at start: a reload that changes them says so instead of pretending. */
const atStartOnly = ["limits", "observability", "list_wait", "roots", "core_tools", "http", "trust", "audit"]

/**
 * Hot reload for `serve` (ADR 016): watches the config file and the secrets file (their folders, so a save by rename
 * and a file briefly missing are seen) and SIGHUP; each settled burst re-reads both from the paths as given and hands
 * the new config to Sources, which applies it per instance. An invalid config or secrets file is rejected as a whole:
 * the running set stays as it was and Health shows why until a later reload succeeds.
 */
export class Reload extends Effect.Service<Reload>()("clawtool/Reload", {
  dependencies: [Config.Default, Sources.Default, Redaction.Default, Pins.Default],
  scoped: Effect.gen(function* () {
    const { path: configPath, reread, secretsFile, skipped: skippedAtStart, live } = yield* Config
    const sources = yield* Sources
    const redaction = yield* Redaction
    const pins = yield* Pins
    const env = yield* ProcessEnv

    // Each skipped entry is warned about once per serve: again only when it is skipped for a new reason.
    let warned = skippedAtStart
    const read = Effect.gen(function* () {
      const { config: next, skipped } = yield* reread
      const store = Option.isSome(secretsFile) ? yield* loadSecrets(secretsFile.value) : SecretStore.empty
      const secrets = makeSecrets(store, env, next.sources, secretsFile)
      // New daemon tokens that cannot be resolved reject the reload, as they stop a daemon's start (ADR 031).
      if (tokensOf(live.get().http) !== tokensOf(next.http)) {
        yield* Tokens.resolve(
          next.http,
          (name) => secrets.lookup("global", name),
          (keyPath, detail) => new ConfigError({ reason: "Invalid", file: configPath, keyPath, detail })
        )
      }
      return { next, skipped, secrets }
    })

    /** One reload: read, then apply or reject. Never fails: a rejection is logged and shown in Health. */
    const reload = read.pipe(
      Effect.matchEffect({
        onFailure: (error) =>
          Effect.zipRight(
            Effect.logError(`config reload rejected, the running sources are unchanged: ${error.message}`),
            sources.reportReload(Either.left(error.message))
          ),
        onSuccess: ({ next, skipped, secrets }) =>
          Effect.gen(function* () {
            const before = warned
            warned = skipped
            yield* warnSkipped(
              configPath,
              skipped.filter((entry) => !before.some((old) => old.name === entry.name && old.reason === entry.reason))
            )
            yield* sources.reportReload(Either.right(skipped))
            // Known before a restarted child can answer with a new secret.
            yield* redaction.reconfigure(next, secrets.store, secrets.lookup)
            const previous = live.get()
            const changes = yield* sources.reconfigure(next, secrets.resolve)
            // The daemon's tokens follow every applied reload: one that changed only a secret they name too (ADR 031).
            yield* live.reloaded(next, (name) => secrets.lookup("global", name))
            if (ConfigDiff.isEmpty(changes)) return yield* Effect.logInfo("config reloaded: nothing changed")
            yield* warnUnknownSelectors(next)
            // The daemon's tokens follow the reload (ADR 031); the rest of [http] does not.
            const later = changes.settings.filter(
              (key) => atStartOnly.includes(key) && (key !== "http" || !onlyTokens(previous.http, next.http))
            )
            if (later.length > 0) {
              yield* Effect.logWarning(`config: ${later.join(", ")} changed; takes effect when serve restarts`)
            }
            yield* Effect.logInfo(
              `config reloaded: started [${changes.start.join(", ")}], stopped [${changes.stop.join(", ")}], ` +
                `restarted [${changes.restart.join(", ")}], kept [${changes.keep.join(", ")}]` +
                (changes.retag.length > 0 ? `; tags changed (no restart): ${changes.retag.join(", ")}` : "") +
                (changes.settings.length > 0 ? `; settings changed: ${changes.settings.join(", ")}` : "")
            )
          })
      }),
      Effect.withSpan("Reload.reload")
    )

    const watched = yield* watchTargets([configPath, ...Option.toArray(secretsFile)])
    yield* Stream.merge(watched, sighups).pipe(
      Stream.debounce(debounce),
      Stream.runForEach(() => reload),
      Effect.forkScoped
    )
    // The lock file (issue 25) is watched the same way, and re-read on SIGHUP too (a watch that could not be set up, or
    // whose folder was replaced): an approval takes effect without a restart.
    yield* Stream.merge(yield* watchTargets([pins.file]), sighups).pipe(
      Stream.debounce(debounce),
      Stream.runForEach(() => pins.reread),
      Effect.forkScoped
    )
    return { reload } as const
  })
}) {}

/** `[http] token` and `[http.tokens]` as compared text (what a running daemon re-reads). */
const tokensOf = (http: HttpConfig) => ConfigDiff.canonical({ token: http.token, tokens: http.tokens })

/** Whether two `[http]` tables differ only in `token` and `tokens`. */
const onlyTokens = (before: HttpConfig, after: HttpConfig) => {
  const { token: _a, tokens: _b, ...rest } = before
  const { token: _c, tokens: _d, ...restAfter } = after
  return ConfigDiff.canonical(rest) === ConfigDiff.canonical(restAfter)
}

/** Every SIGHUP (which no longer ends the process while this stream runs). */
const sighups: Stream.Stream<void> = Stream.async<void>((emit) => {
  const onSignal = () => void emit.single(undefined)
  process.on("SIGHUP", onSignal)
  return Effect.sync(() => process.off("SIGHUP", onSignal))
})

/**
 * Changes to these files, seen through their folders (an editor's rename-save replaces the file's inode; a watch on
 * the file itself would go deaf). A symlinked file is watched at its link and at its target.
 */
const watchTargets = (files: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const targets = new Set<string>()
    for (const file of files) {
      targets.add(file)
      const real = yield* Effect.orElseSucceed(
        Effect.try(() => Fs.realpathSync(file)),
        () => file
      )
      targets.add(real)
    }
    const folders = new Map<string, Set<string>>()
    for (const target of targets) {
      const names = folders.get(Path.dirname(target)) ?? new Set<string>()
      names.add(Path.basename(target))
      folders.set(Path.dirname(target), names)
    }
    return Stream.mergeAll(
      [...folders].map(([folder, names]) => watchFolder(folder, names)),
      { concurrency: "unbounded" }
    )
  })

const watchFolder = (folder: string, names: ReadonlySet<string>): Stream.Stream<void> =>
  Stream.asyncScoped<void>((emit) =>
    Effect.acquireRelease(
      Effect.try(() =>
        Fs.watch(folder, { persistent: false }, (_event, name) => {
          // Some platforms give no name: then any change in the folder may be ours.
          if (name === null || names.has(name.toString())) void emit.single(undefined)
        })
      ),
      (watcher) => Effect.sync(() => watcher.close())
    ).pipe(
      // A folder that goes away ends its watch; SIGHUP still reloads.
      Effect.tap((watcher) => Effect.sync(() => watcher.on("error", () => watcher.close()))),
      Effect.catchAll((error) =>
        Effect.logDebug(`cannot watch ${folder} for config changes (${String(error.error)}); SIGHUP reloads`)
      )
    )
  )
