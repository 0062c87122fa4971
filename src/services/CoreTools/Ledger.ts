import * as Crypto from "node:crypto"
import { Effect } from "effect"
import { CallError } from "../../domain/Errors.js"

/** What a Read (or clawtool's own Edit/Write) saw of a file. */
export interface FileStamp {
  readonly mtimeMs: number
  readonly size: number
  readonly sha256: string
}

export const sha256 = (bytes: Uint8Array): string => Crypto.createHash("sha256").update(bytes).digest("hex")

export const stampOf = (stat: { readonly mtimeMs: number; readonly size: number }, bytes: Uint8Array): FileStamp => ({
  mtimeMs: stat.mtimeMs,
  size: stat.size,
  sha256: sha256(bytes)
})

/**
 * Read-before-edit (core-tools reference §1.4): Edit and Write of an existing file need a record of its current
 * content, keyed by real path. Read records it, and so does every Edit/Write after writing, so consecutive edits work
 * without a re-read (the Go original refused the second). One ledger per process: on stdio that is one host session.
 * Writes to one file are serialised by its lock, so two concurrent Edits cannot interleave read → write.
 */
export class Ledger {
  private readonly stamps = new Map<string, FileStamp>()
  private readonly locks = new Map<string, Effect.Semaphore>()

  record(real: string, stamp: FileStamp): void {
    this.stamps.set(real, stamp)
  }

  get(real: string): FileStamp | undefined {
    return this.stamps.get(real)
  }

  forget(real: string): void {
    this.stamps.delete(real)
  }

  /**
   * Whether `real`, now `stat` with these bytes, may be overwritten: a record is needed, and a changed mtime or size
   * is stale only when the content changed too (a `touch` or a checkout of the same content is accepted). The
   * record is refreshed when only the metadata moved.
   */
  check(
    tool: string,
    real: string,
    display: string,
    stat: { readonly mtimeMs: number; readonly size: number },
    bytes: Uint8Array
  ): Effect.Effect<void, CallError> {
    const seen = this.stamps.get(real)
    if (seen === undefined) {
      return Effect.fail(
        new CallError({
          tool,
          reason: "NotRead",
          detail: `${display} has not been read in this session: Read it first, then ${tool} it`
        })
      )
    }
    if (seen.mtimeMs === stat.mtimeMs && seen.size === stat.size) return Effect.void
    const now = stampOf(stat, bytes)
    if (now.sha256 !== seen.sha256) {
      return Effect.fail(
        new CallError({
          tool,
          reason: "StaleRead",
          detail: `${display} was modified since it was read: Read it again, then retry the ${tool}`
        })
      )
    }
    this.stamps.set(real, now)
    return Effect.void
  }

  /** Runs `effect` holding the write lock of `real`. */
  withLock<A, E, R>(real: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
    let lock = this.locks.get(real)
    if (lock === undefined) {
      lock = Effect.unsafeMakeSemaphore(1)
      this.locks.set(real, lock)
    }
    return lock.withPermits(1)(effect)
  }
}
