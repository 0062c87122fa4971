import { Effect, Layer } from "effect"
import { spawn, type ChildProcessByStdio } from "node:child_process"
import type { Writable } from "node:stream"

/**
 * The helper's whole program (ADR-004), POSIX sh: a ~1 MB process, where a `node -e` helper took ~40 MB. It reads
 * `+pgid` / `-pgid` lines from a pipe only clawtool writes; EOF means clawtool is gone (even by SIGKILL, which runs no
 * finalizer), so it SIGTERMs every recorded group, then SIGKILLs them a second later. A group is only recorded while
 * clawtool owns it: `-pgid` follows each reaping, since a pgid can name an unrelated group once it is free again.
 */
const program = `
groups=" "
while IFS= read -r line; do
  id=\${line#?}
  case $id in ""|*[!0-9]*|0|1) continue ;; esac
  case $line in
    +*) case $groups in *" $id "*) ;; *) groups="$groups$id " ;; esac ;;
    -*) case $groups in *" $id "*) groups="\${groups%% $id *} \${groups#* $id }" ;; esac ;;
  esac
done
set -- $groups
[ $# -eq 0 ] && exit 0
for id in "$@"; do kill -s TERM -- "-$id" 2>/dev/null; done
sleep 1
for id in "$@"; do kill -s KILL -- "-$id" 2>/dev/null; done
`

/** Marks the helper in `ps` output: `sh -c … clawtool-reaper <clawtool pid>`. */
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
    const helper = spawn("/bin/sh", ["-c", program, reaperMarker, String(process.pid)], {
      // Its own group: a signal to clawtool's group (Ctrl-C, a host killing the group) must not take it along.
      detached: true,
      // Not the host's pipes: a helper holding clawtool's stdout/stderr would delay the host seeing clawtool close.
      stdio: ["pipe", "ignore", "ignore"],
      // Nothing from clawtool's environment: the helper needs only the shell's builtins and sleep.
      env: { PATH: "/usr/bin:/bin" },
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
