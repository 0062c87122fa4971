/*
 * The audit log's lines waiting for the writer (issue 25, docs/decisions/029): their UTF-8 bytes in reused buffers,
 * which live outside the JavaScript heap, written field by field (AuditLine.encode) without a string per line. The
 * writer appends once per 100 ms (a group commit), and a call record or a line string held that long outlives two
 * young-generation collections and is promoted to the old generation; bench section 10 measured that copying and the
 * collections as most of what the audit log cost a call, and the strings a line was concatenated from as most of what
 * it still allocated. Bytes in a buffer cost the collector nothing, however long they wait.
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

  /**
   * Starts a line of at most `bytes` bytes (an upper bound: the writes that follow never check for room). A line
   * longer than a buffer gets one of its own.
   */
  begin(bytes: number): void {
    if (this.current.length - this.used >= bytes) return
    this.seal()
    if (bytes > chunkBytes) {
      this.current = Buffer.allocUnsafeSlow(bytes)
      return
    }
    this.current = this.spare.pop() ?? Buffer.allocUnsafeSlow(chunkBytes)
    this.owned.push(this.current)
  }

  /** Ends the line begun (the caller wrote its newline). */
  end(): void {
    this.lines++
    // A buffer of its own is not filled further: the next line takes a shared one.
    if (this.current.length > chunkBytes) this.seal()
  }

  /** A whole line of text (its newline included). */
  line(text: string): void {
    this.begin(text.length * 3)
    this.utf8(text)
    this.end()
  }

  /** Text known to be ASCII (keys, digits, hex): copied a character at a time, nothing allocated. */
  ascii(text: string): void {
    const buffer = this.current
    let at = this.used
    for (let i = 0; i < text.length; i++) buffer[at++] = text.charCodeAt(i)
    this.used = at
  }

  /** Any text, as UTF-8 (at most 3 bytes per UTF-16 unit). */
  utf8(text: string): void {
    this.used += this.current.write(text, this.used)
  }

  /** `text` as a JSON string (at most 6 bytes per UTF-16 unit, plus quotes): JSON.stringify's output, byte for byte. */
  json(text: string): void {
    const buffer = this.current
    let at = this.used
    buffer[at++] = 0x22
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i)
      // Controls, quote, backslash and anything past ASCII (surrogates are escaped when lone): JSON.stringify's own.
      if (code < 0x20 || code === 0x22 || code === 0x5c || code > 0x7f) return this.utf8(JSON.stringify(text))
      buffer[at++] = code
    }
    buffer[at++] = 0x22
    this.used = at
  }

  /** A non-negative integer below 2^53 in decimal; anything else as String() writes it. */
  integer(value: number): void {
    if (!(Number.isSafeInteger(value) && value >= 0)) return this.ascii(String(value))
    const buffer = this.current
    let digits = 1
    for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) digits++
    let at = this.used + digits
    this.used = at
    let rest = value
    do {
      buffer[--at] = 0x30 + (rest % 10)
      rest = Math.floor(rest / 10)
    } while (rest > 0)
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
