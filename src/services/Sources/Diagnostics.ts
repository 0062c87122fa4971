import type { ExitInfo } from "../../domain/Connection.js"

export const stderrTailLines = 100

/**
 * What the children of one instance left behind, across restarts: the last stderr lines, the count of stdout lines
 * that were not JSON-RPC, the last exit. Written by the child's callbacks, read by Health; kept apart from the
 * instance state on purpose: a stderr line is never a reason to notify anyone.
 */
export class Diagnostics {
  private readonly lines: Array<string> = []
  stdoutGarbage = 0
  lastExit: ExitInfo | undefined

  stderr(line: string) {
    this.lines.push(line)
    if (this.lines.length > stderrTailLines) this.lines.splice(0, this.lines.length - stderrTailLines)
  }

  garbage(line: string) {
    this.stdoutGarbage++
    this.stderr(`[stdout, not JSON-RPC] ${line.length > 200 ? `${line.slice(0, 200)}…` : line}`)
  }

  get stderrTail(): ReadonlyArray<string> {
    return [...this.lines]
  }
}
