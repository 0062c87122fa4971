import { Effect, Either, MutableRef, Option, PubSub, Runtime, Stream } from "effect"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { writeFileAtomic } from "../atomicWrite.js"
import type { TrustConfig } from "../domain/Config/Trust.js"
import { ConfigError } from "../domain/Errors.js"
import { Config, errno } from "./Config.js"
import type { InstanceTools } from "./Registry/CatalogTypes.js"
import * as Core from "./Trust/Pins.js"

/** The lock file's path: `[trust] pins` from the config's folder, else `clawtool.lock` beside the config file. */
export const lockPathOf = (configPath: string, trust: Pick<TrustConfig, "pins">): string =>
  Path.resolve(Path.dirname(configPath), trust.pins ?? "clawtool.lock")

/** What Health and `trust status` say of the lock file. */
export interface PinsState {
  readonly file: string
  readonly pinned: number
  /** Held tools per instance. */
  readonly quarantined: ReadonlyMap<string, number>
  /** Why the file and the pins in effect differ: not written (`pins not persisted: …`) or a rejected re-read. */
  readonly problem: string | undefined
}

/**
 * Pins and quarantine (issue 25, ADR 029): the lock file read at start (a corrupt one is a ConfigError: exit 2), the
 * verdict on every listing (synchronous, for the catalog the relay reads; memoised by the listing and the lock), new
 * pins and pending definitions written off the path (atomically, 0600, only when something changed, so a read-only
 * lock file that covers everything is never written), and the file re-read on `reread` (serve watches it: Reload).
 */
export class Pins extends Effect.Service<Pins>()("clawtool/Pins", {
  dependencies: [Config.Default],
  scoped: Effect.gen(function* () {
    const { path: configPath, config, file: configFile } = yield* Config
    const file = lockPathOf(configPath, config.trust)
    const policy: Core.Policy = config.trust
    const runtime = yield* Effect.runtime<never>()
    const run = Runtime.runFork(runtime)

    const read = Effect.flatMap(readLockText(file), (text) =>
      Option.match(text, {
        onNone: () => Effect.succeed({ lock: Core.emptyLock, text: undefined as string | undefined }),
        onSome: (text) => Effect.map(Core.parseLock(text, file), (lock) => ({ lock, text: text as string | undefined }))
      })
    )
    const initial = yield* read
    const lock = MutableRef.make(initial.lock)
    /** The file's text as last read or written: a re-read of our own write changes nothing. */
    let onDisk = initial.text
    let problem: string | undefined
    let judged: { readonly input: ReadonlyArray<InstanceTools>; readonly judgement: Core.Judgement } | undefined
    const warned = new Set<string>()
    const changed = yield* PubSub.sliding<void>(1)

    const write = Effect.suspend(() => {
      // No config file: nothing configured to pin, and no folder of the user's to write into.
      if (Option.isNone(configFile)) return Effect.void
      const text = Core.formatLock(MutableRef.get(lock))
      if (text === onDisk) return Effect.void
      // Compare before writing: a file another clawtool wrote since it was last read (`trust approve`) is taken first,
      // not overwritten; the next listing records what is still pending on top of it.
      return Effect.flatMap(Effect.either(readLockText(file)), (found) =>
        Either.isRight(found) && Option.getOrUndefined(found.right) !== onDisk
          ? Effect.suspend(() => reread)
          : writeNow(text)
      )
    })
    const writeNow = (text: string) =>
      Effect.tryPromise(() => writeFileAtomic(file, text, { mode: 0o600 })).pipe(
        Effect.tap(() => {
          onDisk = text
          if (problem?.startsWith("pins not persisted") === true) problem = undefined
        }),
        Effect.catchAll((error) => {
          const first = problem === undefined
          problem = `pins not persisted: cannot write ${file} (${errno(error.error) ?? String(error.error)}); they hold until serve stops`
          return first ? Effect.logWarning(problem) : Effect.void
        })
      )
    const writing = yield* Effect.makeSemaphore(1)
    const persist = writing.withPermits(1)(write)
    // The last listing's pins reach the file even when a one-shot command ends right after it.
    yield* Effect.addFinalizer(() => persist)

    /** The verdicts on this listing, synchronously; new pins and pending entries are written in the background. */
    const judge = (input: ReadonlyArray<InstanceTools>): Core.Judgement => {
      const current = MutableRef.get(lock)
      if (judged !== undefined && judged.judgement.lock === current && sameInput(judged.input, input)) {
        return judged.judgement
      }
      const judgement = Core.judge(input, current, policy, judged?.judgement)
      judged = { input, judgement }
      for (const warning of judgement.warnings) {
        if (warned.has(warning.key)) continue
        warned.add(warning.key)
        run(Effect.logWarning(`trust: ${warning.text}`))
      }
      if (judgement.lock !== current) {
        MutableRef.set(lock, judgement.lock)
        run(persist)
      }
      return judgement
    }

    /** The file read again (serve watches it): applied when valid and different, else rejected and said so. */
    const reread = read.pipe(
      Effect.matchEffect({
        onFailure: (error) =>
          Effect.zipRight(
            Effect.sync(() => {
              problem = `lock file rejected, the running pins stay: ${error.message}`
            }),
            Effect.logError(`trust: lock file rejected, the running pins stay: ${error.message}`)
          ),
        onSuccess: (next) =>
          Effect.gen(function* () {
            if (problem?.startsWith("lock file rejected") === true) problem = undefined
            if (next.text === onDisk) return
            onDisk = next.text
            MutableRef.set(lock, next.lock)
            yield* Effect.logInfo(`trust: ${file} read again`)
            yield* PubSub.publish(changed, undefined)
          })
      }),
      Effect.withSpan("Pins.reread")
    )

    const state = Effect.sync((): PinsState => {
      const current = MutableRef.get(lock)
      let pinned = 0
      for (const tools of current.pins.values()) pinned += tools.size
      const quarantined = new Map<string, number>()
      for (const [instance, verdicts] of judged?.judgement.byInstance ?? []) {
        if (verdicts.held.size > 0) quarantined.set(instance, verdicts.held.size)
      }
      return { file, pinned, quarantined, problem }
    })

    return {
      file,
      judge,
      reread,
      state,
      /** The lock as in effect now (what `trust` commands read from the file). */
      lock: () => MutableRef.get(lock),
      /** Emits when a re-read changed the pins (the catalog is rebuilt; hosts get list_changed). */
      changes: Stream.fromPubSub(changed)
    } as const
  })
}) {
  /** Pins that judge nothing (every tool listed, no file): for a Registry built without them (tests of it alone). */
  static readonly Off: Pins = Pins.make({
    file: "clawtool.lock",
    judge: () => noVerdicts,
    reread: Effect.void,
    state: Effect.succeed({ file: "clawtool.lock", pinned: 0, quarantined: new Map(), problem: undefined }),
    lock: () => Core.emptyLock,
    changes: Stream.empty
  })
}

const noVerdicts: Core.Judgement = { byInstance: new Map(), lock: Core.emptyLock, warnings: [] }

const sameInput = (a: ReadonlyArray<InstanceTools>, b: ReadonlyArray<InstanceTools>) =>
  a.length === b.length && a.every((entry, i) => entry.instance === b[i]!.instance && entry.tools === b[i]!.tools)

/** The lock file read for the `trust` commands; a corrupt file is the ConfigError parseLock gives. */
export const readLock = (file: string) =>
  Effect.flatMap(readLockText(file), (text) =>
    Option.match(text, {
      onNone: () => Effect.succeed(Core.emptyLock),
      onSome: (text) => Either.match(Core.parseLock(text, file), { onLeft: Effect.fail, onRight: Effect.succeed })
    })
  )

/**
 * The lock file's text, none when there is none yet: missing, or a path through something that is not a folder (the
 * pins are then kept in memory and Health says they are not persisted). Anything else unreadable is a config error.
 */
const readLockText = (file: string): Effect.Effect<Option.Option<string>, ConfigError> =>
  Effect.tryPromise({ try: () => Fs.readFile(file, "utf8"), catch: (cause) => cause }).pipe(
    Effect.map(Option.some),
    Effect.catchAll((cause) => {
      const code = errno(cause)
      return code === "ENOENT" || code === "ENOTDIR"
        ? Effect.succeed(Option.none<string>())
        : Effect.fail(
            new ConfigError({
              reason: "Unreadable",
              file,
              detail: `cannot read the lock file (${code ?? String(cause)})`
            })
          )
    })
  )
