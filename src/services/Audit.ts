import { Clock, Duration, Effect, Fiber, type Scope } from "effect"
import * as Path from "node:path"
import type { AuditConfig } from "../domain/Config/Trust.js"
import { auditRow, type HealthRow } from "../domain/Health.js"
import { stateDir } from "../paths.js"
import { Config, type Env, ProcessEnv } from "./Config.js"
import { Redaction } from "./Redaction.js"
import { AuditBuffer } from "./Trust/AuditBuffer.js"
import * as AuditFile from "./Trust/AuditFile.js"
import { type AuditCall, droppedLine, format, type Redactor } from "./Trust/AuditLine.js"
import { AuditQueue, type QueuedCall } from "./Trust/AuditQueue.js"

/** `[audit] path`, relative to the config file's folder; default `audit.jsonl` in the state folder. */
export const auditPath = (settings: AuditConfig, configFile: string, env: Env): string =>
  settings.path === undefined
    ? Path.join(stateDir(env), "audit.jsonl")
    : Path.resolve(Path.dirname(configFile), settings.path)

/** What one host session's call paths record with: the session's own fields, and the offer. */
export interface AuditRecorder {
  /** The daemon's session id; undefined on stdio. */
  readonly session: string | undefined
  /** The host's clientInfo.name, once it initialized. */
  readonly client: () => string | undefined
  /** The profile the session sees, and the name of the daemon token it came with (issue 26). */
  readonly profile?: string | undefined
  readonly token?: string | undefined
  /** A synchronous, non-blocking offer: when the queue is full the line is dropped and counted. */
  readonly record: (call: AuditCall) => void
  /** Called as a call begins, when something counts calls in flight (the daemon's metrics, services/Metrics.ts). */
  readonly begin?: () => void
}

/** Lines waiting for the writer; past this, lines are dropped (and counted), never waited for. */
export const defaultCapacity = 4096

/** The running audit. */
export interface AuditLog {
  readonly enabled: boolean
  /** The file written (undefined when off): the dashboard's recent calls read its end. */
  readonly file: string | undefined
  /** What one session records with (session: the daemon's id; client: its initialize clientInfo.name); none when off. */
  readonly recorder: (
    session: string | undefined,
    client: () => string | undefined,
    access?: { readonly profile?: string | undefined; readonly token?: string | undefined }
  ) => AuditRecorder | undefined
  /** The audit's Health row while something is wrong (not written, lines dropped); none otherwise. */
  readonly health: Effect.Effect<ReadonlyArray<HealthRow>>
  /** Lines dropped so far because the queue was full. */
  readonly dropped: () => number
}

export interface AuditOptions {
  readonly settings: AuditConfig
  readonly file: string
  /** Where lines go: the rotating file, or a test's sink. */
  readonly sink: Pick<AuditFile.AuditFile, "append"> & Partial<Pick<AuditFile.AuditFile, "close">>
  readonly redact: Redactor | undefined
  readonly capacity?: number
  /**
   * How long the writer waits after a write before it takes the next lines (a group commit): calls then only enqueue,
   * and one append carries every line queued meanwhile. Zero (the default of `make`): each wake-up writes at once.
   */
  readonly flushEvery?: Duration.Duration
}

const describe = (cause: unknown) => {
  const error = cause instanceof Error && cause.cause instanceof Error ? cause.cause : cause
  return error instanceof Error ? error.message : String(error)
}

/**
 * The audit log's queue and writer (scoped): `recorder` hands each session a synchronous offer that stores the call in
 * the queue (Trust/AuditQueue.ts); one writer fiber makes the lines of every call queued since it last woke, as bytes
 * outside the heap (Trust/AuditBuffer.ts), and appends them at once. Nothing on a call's path waits for the file or
 * makes its line: a full queue drops the call and counts it (a `{"dropped": N}` line follows once there is room, and
 * Health shows the count); a file that cannot be written is warned about once and shown in Health, and calls go on.
 * Lines still queued at shutdown are written before the file closes.
 */
export const make = Effect.fn("Audit.make")(function* (
  options: AuditOptions
): Effect.fn.Return<AuditLog, never, Scope.Scope> {
  const { settings, file, sink, redact } = options
  if (!settings.enabled) {
    return { enabled: false, file: undefined, recorder: () => undefined, health: Effect.succeed([]), dropped: () => 0 }
  }
  if (settings.args === "redacted" && redact === undefined) {
    yield* Effect.logWarning(
      `audit: args = "redacted" needs [trust] redact_secrets = true; writing the arguments' hash only`
    )
  }
  const capacity = options.capacity ?? defaultCapacity
  /** The calls recorded since the writer last took them: their lines are made by the writer, in one batch. */
  const queue = new AuditQueue(capacity)
  /** The lines of that batch, as bytes outside the heap until their append is over. */
  const pending = new AuditBuffer()
  let dropped = 0
  let reported = 0
  let problem: string | undefined
  let warned = false
  const ready = yield* Effect.makeLatch(false)

  const addLine = (call: QueuedCall) => {
    try {
      pending.add(format(call, settings.args, redact) + "\n")
    } catch {
      dropped++ // arguments JSON cannot write (nested past the stack): the line is counted as dropped, never thrown
    }
  }

  // The call's whole share of its line: a few stores into the queue (and the writer woken when it was idle).
  const record = (call: AuditCall) => {
    if (!queue.push(call)) {
      dropped++
      return
    }
    if (queue.size === 1) ready.unsafeOpen()
  }

  const write = Effect.gen(function* () {
    queue.drain(addLine)
    const lost = dropped - reported
    if (lost > 0) pending.add(droppedLine(yield* Clock.currentTimeMillis, lost) + "\n")
    const batch = pending.take()
    if (batch.bytes === 0) return
    const written = yield* Effect.either(Effect.tryPromise(() => sink.append(batch.chunks)))
    batch.release()
    if (written._tag === "Right") {
      reported += lost
      problem = undefined
      return
    }
    problem = describe(written.left)
    if (warned) return
    warned = true
    yield* Effect.logWarning(`audit: cannot write ${file} (${problem}); calls go on without being audited`)
  }).pipe(Effect.uninterruptible)

  const flushEvery = options.flushEvery ?? Duration.zero
  // Waits for a line, writes every line there is, then pauses: what is recorded during the write and the pause goes
  // out in the next append, so the pause never caps the rate.
  const writeAndPause = Effect.zipRight(
    Effect.zipRight(ready.await, Effect.zipRight(ready.close, write)),
    Duration.isZero(flushEvery) ? Effect.void : Effect.sleep(flushEvery)
  )
  const writer = yield* Effect.forkScoped(Effect.forever(writeAndPause))
  // Disconnected: a write that hangs (a stalled disk) cannot hold the shutdown past the timeout.
  yield* Effect.addFinalizer(() =>
    Effect.gen(function* () {
      yield* Fiber.interrupt(writer)
      yield* write
      if (sink.close !== undefined) yield* Effect.promise(sink.close)
    }).pipe(Effect.disconnect, Effect.timeout("2 seconds"), Effect.ignore)
  )

  const health = Effect.sync((): ReadonlyArray<HealthRow> => {
    if (problem !== undefined) return [auditRow(file, "down", `not written: ${problem}`)]
    if (dropped > 0) return [auditRow(file, "running", `${dropped} lines dropped: the queue was full`)]
    return []
  })

  return {
    enabled: true,
    file,
    recorder: (session, client, access) => ({ session, client, ...access, record }),
    health,
    dropped: () => dropped
  }
})

/**
 * `[audit]` (issue 25, docs/decisions/029): one JSON line per tools/call, on both call paths (the stdio relay and the
 * SDK path), written off the call's path to the file `path` names, rotated at `max_bytes` keeping `keep` files.
 */
export class Audit extends Effect.Service<Audit>()("clawtool/Audit", {
  dependencies: [Config.Default, Redaction.Default],
  scoped: Effect.gen(function* () {
    const { config, path } = yield* Config
    const redaction = yield* Redaction
    const settings = config.audit
    const file = auditPath(settings, path, yield* ProcessEnv)
    return yield* make({
      settings,
      file,
      sink: AuditFile.open(file, { maxBytes: settings.max_bytes, keep: settings.keep }),
      // One append per 100 ms at most: an append per call cost more CPU than the call itself (bench section 10).
      flushEvery: Duration.millis(100),
      // `args = "redacted"`: the known secrets the host never sees (read per line: learned tokens replace the redactor).
      // With `[trust] redact_secrets = false` there is none, and only the arguments' hash is written.
      redact: config.trust.redact_secrets ? (text) => redaction.current().text(text) : undefined
    })
  })
}) {}
