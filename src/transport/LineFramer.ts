/**
 * Splits a byte stream into newline-delimited lines (MCP stdio framing) without re-concatenating the whole
 * buffer on every chunk: a multi-megabyte message arriving in 64 KiB chunks costs one concat, not hundreds.
 * A line longer than `maxLineBytes` is dropped (reported once) so one runaway peer cannot exhaust memory.
 */
export class LineFramer {
  private pending: Array<Buffer> = []
  private pendingBytes = 0
  private overflowing = false

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly onOverflow: (bytes: number) => void,
    private readonly maxLineBytes = 64 * 1024 * 1024
  ) {}

  push(chunk: Buffer): void {
    let start = 0
    let newline = chunk.indexOf(10, start)
    while (newline !== -1) {
      const piece = chunk.subarray(start, newline)
      if (this.overflowing) {
        this.overflowing = false
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
    if (start < chunk.length && !this.overflowing) {
      const rest = chunk.subarray(start)
      this.pending.push(rest)
      this.pendingBytes += rest.length
      if (this.pendingBytes > this.maxLineBytes) {
        this.onOverflow(this.pendingBytes)
        this.pending = []
        this.pendingBytes = 0
        this.overflowing = true
      }
    }
  }

  private emit(bytes: Buffer): void {
    let end = bytes.length
    if (end > 0 && bytes[end - 1] === 13) end -= 1
    if (end === 0) return
    this.onLine(bytes.toString("utf8", 0, end))
  }
}
