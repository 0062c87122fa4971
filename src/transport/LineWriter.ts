import type { Writable } from "node:stream"

const done = Promise.resolve()

/**
 * Newline-framed output that coalesces every line written in one turn of the event loop into one `write`: under
 * concurrency a read of 32 requests becomes one write to the child (and 32 answers one write to the host), not 32
 * system calls. Order is kept; a full pipe makes callers wait for `drain`.
 */
export class LineWriter {
  private buffer = ""
  private scheduled = false
  private drained: Promise<void> | undefined

  constructor(private readonly stream: Writable) {}

  /** Queues `text` (one or more complete lines); resolves once the pipe can take more. */
  write(text: string): Promise<void> {
    this.buffer += text
    if (!this.scheduled) {
      this.scheduled = true
      queueMicrotask(this.flush)
    }
    return this.drained ?? done
  }

  private readonly flush = () => {
    this.scheduled = false
    const text = this.buffer
    this.buffer = ""
    if (!this.stream.writable || this.stream.destroyed) return
    if (!this.stream.write(text) && this.drained === undefined) {
      this.drained = new Promise((resolve) =>
        this.stream.once("drain", () => {
          this.drained = undefined
          resolve()
        })
      )
    }
  }
}
