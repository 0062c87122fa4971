/*
 * The audit log's lines between the writer making them and their append (issue 25, docs/decisions/029): their UTF-8
 * bytes in reused buffers, which live outside the JavaScript heap. A batch's lines are made one by one (Audit.ts
 * `write`), and each line's string dies as soon as it is copied here, whatever a scavenge during the batch or the
 * append's wait would have promoted; bytes in a buffer cost the collector nothing, however long they wait.
 */

/** Bytes per buffer; a longer line (`args = "full"` with large arguments) gets a buffer of its own. */
export const chunkBytes = 64 * 1024
/** Buffers kept for reuse once written; more are left to the collector (a burst allocated them). */
const spareLimit = 8
const empty = Buffer.alloc(0)

/** What the writer takes at once: the bytes in order, and how to hand the buffers back once they are written. */
export interface Batch {
  readonly chunks: ReadonlyArray<Uint8Array>
  readonly bytes: number
  /** The buffers may be reused: call once the write is over (done or failed), never before. */
  readonly release: () => void
}

export class AuditBuffer {
  /** Lines ended since the last take. */
  lines = 0
  private filled: Array<Buffer> = []
  private owned: Array<Buffer> = []
  private current: Buffer = empty
  private used = 0
  private readonly spare: Array<Buffer> = []

  /** Appends a line (its newline included) as UTF-8. */
  add(line: string): void {
    this.lines++
    const room = this.current.length - this.used
    // A UTF-16 code unit is at most 3 bytes of UTF-8: the exact count is only needed near a buffer's end.
    if (room < line.length * 3 && room < Buffer.byteLength(line)) {
      this.seal()
      if (Buffer.byteLength(line) > chunkBytes) {
        this.filled.push(Buffer.from(line))
        return
      }
      this.current = this.spare.pop() ?? Buffer.allocUnsafeSlow(chunkBytes)
      this.owned.push(this.current)
    }
    this.used += this.current.write(line, this.used)
  }

  /** Everything added since the last take, in order. */
  take(): Batch {
    this.seal()
    const chunks = this.filled
    const owned = this.owned
    this.filled = []
    this.owned = []
    this.lines = 0
    let bytes = 0
    for (const chunk of chunks) bytes += chunk.length
    return {
      chunks,
      bytes,
      release: () => {
        for (const buffer of owned) if (this.spare.length < spareLimit) this.spare.push(buffer)
      }
    }
  }

  /** The current buffer's bytes so far join the filled ones; the next line takes another buffer. */
  private seal(): void {
    if (this.used > 0) this.filled.push(this.current.subarray(0, this.used))
    this.current = empty
    this.used = 0
  }
}
