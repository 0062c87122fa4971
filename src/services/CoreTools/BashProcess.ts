import type { Clock } from "effect"
import { spawn, type ChildProcessByStdio } from "node:child_process"
import { existsSync } from "node:fs"
import type { Readable } from "node:stream"
import { childEnvironment } from "../../domain/Environment.js"

/**
 * One shell command in its own process group (the Bash tool's engine, foreground and background alike): stdout and
 * stderr interleaved into a bounded buffer, the whole group killed (TERM, then KILL) on timeout or on request, and the
 * group handed to the reaper so a SIGKILL of clawtool still kills it. Plain Node: the tools wrap it in Effects.
 */

/** The non-interactive settings every command gets on top of the default-deny environment (ADR 006). */
export const nonInteractive: Readonly<Record<string, string>> = {
  PAGER: "cat",
  GIT_PAGER: "cat",
  GIT_TERMINAL_PROMPT: "0",
  NO_COLOR: "1",
  CLAWTOOL: "1"
}

/** The environment a command sees: the safe set, the operator's passthrough names, then the settings above. */
export const commandEnvironment = (
  parent: Readonly<Record<string, string | undefined>>,
  passthrough: ReadonlyArray<string> = []
): Record<string, string> => childEnvironment(parent, passthrough, nonInteractive)

/** How long a group gets between SIGTERM and SIGKILL. */
export const termGraceMs = 2000
/** After the shell exits, how long its pipes may stay open (a `cmd &` holding them) before the group is killed. */
export const pipeGraceMs = 200

export interface GroupTracker {
  readonly track: (pgid: number) => void
  readonly untrack: (pgid: number) => void
}

/**
 * Interleaved output: the first `headBytes` and a ring of the last `tailBytes`, with the total counted, so a command
 * printing gigabytes costs a fixed amount of memory. Bytes are kept as written; decoding happens once, at the end.
 */
export class OutputBuffer {
  private readonly head: Array<Buffer> = []
  private headLength = 0
  private tail: Array<Buffer> = []
  private tailLength = 0
  /** Every byte ever appended, kept or not. */
  total = 0

  constructor(
    readonly headBytes: number,
    readonly tailBytes: number
  ) {}

  append(chunk: Buffer): void {
    this.total += chunk.length
    let rest = chunk
    if (this.headLength < this.headBytes) {
      const taken = rest.subarray(0, this.headBytes - this.headLength)
      this.head.push(taken)
      this.headLength += taken.length
      rest = rest.subarray(taken.length)
    }
    if (rest.length === 0) return
    this.tail.push(rest)
    this.tailLength += rest.length
    while (this.tailLength - this.tail[0]!.length >= this.tailBytes) {
      this.tailLength -= this.tail.shift()!.length
    }
    if (this.tailLength > this.tailBytes) {
      const over = this.tailLength - this.tailBytes
      this.tail[0] = this.tail[0]!.subarray(over)
      this.tailLength -= over
    }
  }

  /** Bytes that were written but are no longer kept (between the head and the tail). */
  get dropped(): number {
    return this.total - this.headLength - this.tailLength
  }

  /** The kept output as text, with a marker where bytes were dropped. ANSI escapes removed, bad UTF-8 replaced. */
  render(): string {
    return this.since(0)
  }

  /**
   * The output from byte `offset` on (absolute: counted from the first byte ever written), as far as it is kept, with
   * a marker for the bytes dropped in between. Read again from `total` to get only what came since.
   */
  since(offset: number): string {
    const headStart = Math.min(Math.max(offset, 0), this.headLength)
    const head = Buffer.concat(this.head).subarray(headStart)
    const tailStart = this.total - this.tailLength
    const from = Math.max(offset, this.headLength)
    const gap = Math.max(0, tailStart - from)
    const tail = Buffer.concat(this.tail).subarray(Math.max(0, from - tailStart))
    const marker = gap === 0 ? "" : `\n[… ${gap} bytes of output omitted …]\n`
    return decode(head) + marker + decode(tail)
  }
}

// eslint-disable-next-line no-control-regex
const ansi = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g
const decode = (bytes: Buffer): string => new TextDecoder("utf-8").decode(bytes).replace(ansi, "")

export type RunStatus = "running" | "exited" | "killed" | "timedOut"

/** How a run ended. `exitCode` is null when a signal ended the shell. */
export interface RunOutcome {
  readonly status: Exclude<RunStatus, "running">
  readonly exitCode: number | null
  readonly signal: string | null
  readonly durationMs: number
}

export interface RunOptions {
  readonly command: string
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
  /** The caller's Clock (Effect's, read synchronously in the exit callback): what the duration is measured on. */
  readonly clock: Clock.Clock
  /** Undefined: no limit (background runs without an explicit timeout). */
  readonly timeoutMs?: number | undefined
  readonly headBytes: number
  readonly tailBytes: number
  readonly tracker: GroupTracker
  /** For tests: shorter grace periods. */
  readonly termGraceMs?: number
}

/** The shell: bash when present (what agents write for), else POSIX sh. */
export const shell = existsSync("/bin/bash") ? "/bin/bash" : "/bin/sh"

/** Sends a signal to a whole process group; a group that is already gone is not an error. */
export const signalGroup = (pgid: number, signal: NodeJS.Signals): void => {
  try {
    process.kill(-pgid, signal)
  } catch {
    // ESRCH: nothing left in the group.
  }
}

/** A running (or finished) command. Spawning fails synchronously only for a bad cwd or a missing shell. */
export class ShellRun {
  readonly output: OutputBuffer
  private readonly startedMs: number
  readonly pid: number | undefined
  /** Settles once the shell exited and its group is gone (or has been sent SIGKILL). Never rejects. */
  readonly done: Promise<RunOutcome>
  private child: ChildProcessByStdio<null, Readable, Readable>
  private requested: "killed" | "timedOut" | undefined
  private outcome: RunOutcome | undefined
  private timer: NodeJS.Timeout | undefined
  private killTimer: NodeJS.Timeout | undefined
  stdoutBytes = 0
  stderrBytes = 0

  constructor(readonly options: RunOptions) {
    this.output = new OutputBuffer(options.headBytes, options.tailBytes)
    this.startedMs = options.clock.unsafeCurrentTimeMillis()
    this.child = spawn(shell, ["-c", options.command], {
      // setsid: its own session and group (so the whole group can be signalled), and no controlling terminal, so a
      // password prompt (sudo, ssh) fails at once instead of waiting for a keyboard.
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      cwd: options.cwd,
      env: options.env,
      windowsHide: true
    })
    this.pid = this.child.pid
    // Recorded before anything else can happen: from here on a SIGKILL of clawtool still kills the group.
    if (this.pid !== undefined) options.tracker.track(this.pid)
    this.child.stdout.on("data", (chunk: Buffer) => {
      this.stdoutBytes += chunk.length
      this.output.append(chunk)
    })
    this.child.stderr.on("data", (chunk: Buffer) => {
      this.stderrBytes += chunk.length
      this.output.append(chunk)
    })
    if (options.timeoutMs !== undefined) {
      this.timer = setTimeout(() => this.stop("timedOut"), options.timeoutMs)
    }
    this.done = new Promise<RunOutcome>((resolve) => {
      const finish = (exitCode: number | null, signal: string | null) => {
        if (this.outcome !== undefined) return
        clearTimeout(this.timer)
        clearTimeout(this.killTimer)
        // Whatever the shell left behind (`sleep 100 &`) goes with it: nothing of a finished command keeps running.
        if (this.pid !== undefined) {
          signalGroup(this.pid, "SIGKILL")
          options.tracker.untrack(this.pid)
        }
        this.outcome = {
          status: this.requested ?? "exited",
          exitCode,
          signal,
          durationMs: options.clock.unsafeCurrentTimeMillis() - this.startedMs
        }
        resolve(this.outcome)
      }
      this.child.once("error", (cause) => {
        this.output.append(Buffer.from(`clawtool: cannot run the shell: ${cause.message}\n`))
        finish(null, null)
      })
      this.child.once("exit", (code, signal) => {
        // The pipes close when every holder is gone; a background grandchild may hold them for ever.
        let closed = 0
        const grace = setTimeout(() => finish(code, signal), pipeGraceMs)
        const onClose = () => {
          if (++closed === 2) {
            clearTimeout(grace)
            finish(code, signal)
          }
        }
        if (this.child.stdout.readableEnded || this.child.stdout.destroyed) closed++
        else this.child.stdout.once("close", onClose)
        if (this.child.stderr.readableEnded || this.child.stderr.destroyed) closed++
        else this.child.stderr.once("close", onClose)
        if (closed === 2) {
          clearTimeout(grace)
          finish(code, signal)
        }
      })
    })
  }

  get status(): RunStatus {
    return this.outcome?.status ?? "running"
  }

  get result(): RunOutcome | undefined {
    return this.outcome
  }

  /** SIGTERM to the group, SIGKILL after the grace period. Idempotent; a finished run is left as it is. */
  stop(reason: "killed" | "timedOut"): void {
    if (this.outcome !== undefined || this.requested !== undefined || this.pid === undefined) return
    this.requested = reason
    clearTimeout(this.timer)
    const pid = this.pid
    signalGroup(pid, "SIGTERM")
    this.killTimer = setTimeout(() => signalGroup(pid, "SIGKILL"), this.options.termGraceMs ?? termGraceMs)
  }
}

/** The line after a command's output: how it ended, in words an agent acts on. */
export const footer = (outcome: RunOutcome | undefined, timeoutMs: number | undefined): string => {
  if (outcome === undefined) return "[still running]"
  const seconds = `${(outcome.durationMs / 1000).toFixed(1)} s`
  switch (outcome.status) {
    case "timedOut":
      return `[timed out after ${timeoutMs ?? "?"} ms: the process group was killed (${outcome.signal ?? "?"}); raise timeout_ms or use run_in_background]`
    case "killed":
      return `[killed (${outcome.signal ?? "?"}) after ${seconds}]`
    case "exited":
      return outcome.exitCode === null
        ? `[ended by ${outcome.signal ?? "a signal"} after ${seconds}]`
        : `[exit ${outcome.exitCode} · ${seconds}]`
  }
}
