import { Effect, Layer } from "effect"
import { spawn, type ChildProcessByStdio } from "node:child_process"
import type { Writable } from "node:stream"

/** Between the helper's SIGTERM and SIGKILL of the groups it reaps. */
const killGraceMs = 1000

/**
 * The helper's whole program (ADR-004). It reads `+pgid` / `-pgid` lines from a pipe only clawtool writes; EOF means
 * clawtool is gone (even by SIGKILL, which runs no finalizer), so it SIGTERMs every recorded group, then SIGKILLs them
 * after a grace period. A group is only recorded while clawtool owns it: `-pgid` follows each reaping, since a pgid
 * can name an unrelated group once it is free again.
 */
const program = `
const groups = new Set()
let pending = ""
const signal = (name) => { for (const pgid of groups) { try { process.kill(-pgid, name) } catch {} } }
let reaping = false
const reap = () => {
  if (reaping) return
  reaping = true
  if (groups.size === 0) process.exit(0)
  signal("SIGTERM")
  setTimeout(() => { signal("SIGKILL"); process.exit(0) }, ${killGraceMs})
}
process.stdin.setEncoding("utf8")
process.stdin.on("data", (chunk) => {
  pending += chunk
  let newline
  while ((newline = pending.indexOf("\\n")) !== -1) {
    const line = pending.slice(0, newline)
    pending = pending.slice(newline + 1)
    const pgid = Number(line.slice(1))
    if (!Number.isInteger(pgid) || pgid <= 1) continue
    if (line[0] === "+") groups.add(pgid)
    else if (line[0] === "-") groups.delete(pgid)
  }
})
process.stdin.on("end", reap)
process.stdin.on("close", reap)
process.stdin.on("error", reap)
`

/** Marks the helper in `ps` output: `node -e … clawtool-reaper <clawtool pid>`. */
export const reaperMarker = "clawtool-reaper"

export interface ReaperShape {
  /** Records a process group clawtool now owns (call right after spawn, before anything can fail). */
  readonly track: (pgid: number) => void
  /** Forgets a group once it has been killed. */
  readonly untrack: (pgid: number) => void
}

/**
 * Kills every child process group clawtool started if clawtool dies without running its finalizers (SIGKILL, OOM
 * killer). A scoped layer: closing it ends the helper's stdin, so the helper exits at once (nothing recorded) or reaps
 * what a bounded shutdown left behind. Without the helper (it could not start), supervision works as before.
 */
export class Reaper extends Effect.Service<Reaper>()("clawtool/Reaper", {
  scoped: Effect.gen(function* () {
    // Started with the first child, not with clawtool: a gateway with no sources (and every cold start) pays nothing.
    let helper: Helper | undefined | "not-started" = "not-started"
    const started = (): Helper | undefined => {
      if (helper === "not-started") {
        helper = startHelper()
        if (helper === undefined) {
          process.stderr.write(
            "clawtool: reaper: cannot start the helper; children may outlive a SIGKILL of clawtool\n"
          )
        }
      }
      return helper
    }
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        if (helper !== "not-started" && helper !== undefined && !helper.stdin.destroyed) helper.stdin.end()
      })
    )
    const write = (line: string, start: boolean) => {
      const current = start ? started() : helper
      if (current !== "not-started" && current !== undefined && !current.stdin.destroyed && current.stdin.writable) {
        current.stdin.write(line)
      }
    }
    return {
      track: (pgid) => write(`+${pgid}\n`, true),
      untrack: (pgid) => write(`-${pgid}\n`, false)
    } satisfies ReaperShape
  })
}) {
  /** No helper: for tests that must not spawn one. */
  static readonly layerNoop: Layer.Layer<Reaper> = Layer.succeed(
    Reaper,
    new Reaper({ track: () => {}, untrack: () => {} })
  )
}

// =============================================================================
// Internal
// =============================================================================

type Helper = ChildProcessByStdio<Writable, null, null>

const startHelper = (): Helper | undefined => {
  if (process.platform === "win32") return undefined // no process groups to signal
  try {
    const helper = spawn(process.execPath, ["-e", program, reaperMarker, String(process.pid)], {
      // Its own group: a signal to clawtool's group (Ctrl-C, a host killing the group) must not take it along.
      detached: true,
      // Not the host's pipes: a helper holding clawtool's stdout/stderr would delay the host seeing clawtool close.
      stdio: ["pipe", "ignore", "ignore"],
      // No NODE_OPTIONS or loaders from clawtool's environment: the helper is plain JavaScript.
      env: {},
      windowsHide: true
    })
    helper.on("error", () => {}) // a failed spawn leaves the no-op behaviour; track/untrack writes are dropped
    helper.stdin.on("error", () => {}) // EPIPE if the helper died; nothing to do
    // Neither the helper nor its pipe may keep clawtool's event loop alive.
    helper.unref()
    ;(helper.stdin as unknown as { unref?: () => void }).unref?.()
    return helper
  } catch {
    return undefined
  }
}
