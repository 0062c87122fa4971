/** What is known of a line that was too long to keep: its size, and its first and last bytes (to find its id). */
export interface Overflow {
  readonly bytes: number
  readonly head: string
  readonly tail: string
}

const edgeBytes = 512

/**
 * Splits a byte stream into newline-delimited lines (MCP stdio framing) without re-concatenating the whole
 * buffer on every chunk: a multi-megabyte message arriving in 64 KiB chunks costs one concat, not hundreds.
 * A line longer than `maxLineBytes` is consumed without being kept (at most `maxLineBytes` are ever buffered) and
 * reported once, when its newline arrives, so one runaway peer cannot exhaust memory and its request can be answered.
 */
export class LineFramer {
  private pending: Array<Buffer> = []
  private pendingBytes = 0
  /** Set while a too-long line is being skipped. */
  private overflow: { bytes: number; head: Buffer; tail: Buffer } | undefined

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly onOverflow: (overflow: Overflow) => void,
    private readonly maxLineBytes = 64 * 1024 * 1024
  ) {}

  push(chunk: Buffer): void {
    let start = 0
    let newline = chunk.indexOf(10, start)
    while (newline !== -1) {
      const piece = chunk.subarray(start, newline)
      if (this.overflow !== undefined || this.pendingBytes + piece.length > this.maxLineBytes) {
        this.skip(piece)
        const { bytes, head, tail } = this.overflow!
        this.overflow = undefined
        this.onOverflow({ bytes, head: head.toString("utf8"), tail: tail.toString("utf8") })
      } else if (this.pendingBytes === 0) {
        this.emit(piece)
      } else {
        this.pending.push(piece)
        this.emit(Buffer.concat(this.pending, this.pendingBytes + piece.length))
      }
      this.pending = []
      this.pendingBytes = 0
      start = newline + 1
      newline = chunk.indexOf(10, start)
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start)
      if (this.overflow !== undefined || this.pendingBytes + rest.length > this.maxLineBytes) {
        this.skip(rest)
      } else {
        // A copy when small: a subarray would keep the whole (up to 64 KiB) chunk alive for a few bytes.
        this.pending.push(rest.length < 4096 ? Buffer.from(rest) : rest)
        this.pendingBytes += rest.length
      }
    }
  }

  /** Counts `piece` into the line being skipped (starting it with what was pending), keeping only its edges. */
  private skip(piece: Buffer): void {
    if (this.overflow === undefined) {
      this.overflow = { bytes: 0, head: Buffer.alloc(0), tail: Buffer.alloc(0) }
      for (const kept of this.pending) this.keepEdges(kept)
      this.pending = []
      this.pendingBytes = 0
    }
    this.keepEdges(piece)
  }

  private keepEdges(piece: Buffer): void {
    const overflow = this.overflow!
    overflow.bytes += piece.length
    if (overflow.head.length < edgeBytes) {
      overflow.head = Buffer.concat([overflow.head, piece.subarray(0, edgeBytes - overflow.head.length)])
    }
    const tail = Buffer.concat([overflow.tail, piece.subarray(Math.max(0, piece.length - edgeBytes))])
    overflow.tail = tail.subarray(Math.max(0, tail.length - edgeBytes))
  }

  private emit(bytes: Buffer): void {
    let end = bytes.length
    if (end > 0 && bytes[end - 1] === 13) end -= 1
    if (end === 0) return
    this.onLine(bytes.toString("utf8", 0, end))
  }
}
