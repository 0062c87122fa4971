import { Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import { Reaper } from "../Reaper.js"
import { type GroupTracker, type RunOptions, ShellRun } from "./BashProcess.js"

/**
 * The background runs of one clawtool: bounded (live and kept), each read incrementally by BashPoll and ended by
 * KillShell; `closeAll` (the registry's finalizer) kills every live group, so no run outlives clawtool.
 */

export const maxLiveRuns = 16
export const maxKeptRuns = 64
/** Per background run: the first and the last bytes kept (the output in between is counted and marked). */
export const backgroundHeadBytes = 256 * 1024
export const backgroundTailBytes = 1024 * 1024

export interface BackgroundRun {
  readonly id: string
  readonly command: string
  readonly cwd: string
  readonly run: ShellRun
  /** How far BashPoll has read: an absolute byte offset (see OutputBuffer.since). */
  readOffset: number
}

export class RunTable {
  private readonly runs = new Map<string, BackgroundRun>()
  private closed = false

  constructor(readonly tracker: GroupTracker) {}

  get live(): number {
    let count = 0
    for (const entry of this.runs.values()) if (entry.run.status === "running") count++
    return count
  }

  /** Starts a run; undefined when `maxLiveRuns` are already running (or clawtool is closing). */
  start(options: Omit<RunOptions, "tracker">): BackgroundRun | undefined {
    if (this.closed || this.live >= maxLiveRuns) return undefined
    this.evict()
    const entry: BackgroundRun = {
      id: `bash_${randomUUID().slice(0, 8)}`,
      command: options.command,
      cwd: options.cwd,
      run: new ShellRun({ ...options, tracker: this.tracker }),
      readOffset: 0
    }
    this.runs.set(entry.id, entry)
    return entry
  }

  get(id: string): BackgroundRun | undefined {
    return this.runs.get(id)
  }

  ids(): ReadonlyArray<string> {
    return [...this.runs.keys()]
  }

  /** Kills every live run and waits (bounded by the runs' own grace) until their groups are gone. */
  async closeAll(): Promise<void> {
    this.closed = true
    const live = [...this.runs.values()].filter((entry) => entry.run.status === "running")
    for (const entry of live) entry.run.stop("killed")
    await Promise.all(live.map((entry) => entry.run.done))
  }

  /** Drops the oldest finished runs beyond `maxKeptRuns - 1`, making room for one more. */
  private evict(): void {
    const finished = [...this.runs.values()].filter((entry) => entry.run.status !== "running")
    let excess = this.runs.size - (maxKeptRuns - 1)
    for (const entry of finished) {
      if (excess <= 0) break
      this.runs.delete(entry.id)
      excess--
    }
  }
}

/**
 * What one caller's Bash tools use: the process-group tracker and that caller's background runs; no table for a caller
 * with no session to own a run (a stateless daemon request), which can start none.
 */
export interface ShellRuns {
  readonly tracker: GroupTracker
  readonly table: RunTable | undefined
}

/** Why a caller without a session (stateless daemon mode) has no background runs. */
export const sessionless = "run_in_background needs a session; stateless mode has none"

/**
 * What the Bash tools share for the life of clawtool: the reaper (every group, foreground or background, is recorded
 * there) and the tables of background runs: `table` for the stdio host, one more per daemon session (`open`, `close`
 * when the session ends; none for a stateless request). Every table still open is closed, its runs killed, when this
 * scope closes (serve exits).
 */
export class BashRuns extends Effect.Service<BashRuns>()("clawtool/BashRuns", {
  scoped: Effect.gen(function* () {
    // Optional so tests of the handlers can go without a helper process (the scope still kills every run).
    const reaper = yield* Effect.serviceOption(Reaper)
    const tracker: GroupTracker = Option.getOrElse(reaper, () => ({ track: () => {}, untrack: () => {} }))
    const tables = new Set<RunTable>()
    const open = (): RunTable => {
      const table = new RunTable(tracker)
      tables.add(table)
      return table
    }
    /** Kills the table's live runs and waits (bounded by their grace) until their groups are gone. */
    const close = (table: RunTable): Effect.Effect<void> =>
      Effect.promise(() => table.closeAll()).pipe(Effect.ensuring(Effect.sync(() => tables.delete(table))))
    const table = open()
    yield* Effect.addFinalizer(() => Effect.promise(() => Promise.all([...tables].map((each) => each.closeAll()))))
    return { tracker, table, open, close }
  }),
  dependencies: [Reaper.Default]
}) {}
