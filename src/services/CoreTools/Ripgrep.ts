import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { Duration, Effect, Option } from "effect"
import { CallError } from "../../domain/Errors.js"

/**
 * ripgrep for Glob and Grep: the binary @vscode/ripgrep ships per platform (no system install needed), else `rg` on
 * PATH. Run with an argv (never a shell), stdout streamed record by record, the process killed when the caller has
 * enough, on timeout and on interruption (the host's cancellation).
 */

const onPath = (name: string): string | undefined => {
  for (const dir of (process.env.PATH ?? "").split(Path.delimiter)) {
    if (dir === "") continue
    const candidate = Path.join(dir, name)
    try {
      NodeFs.accessSync(candidate, NodeFs.constants.X_OK)
      return candidate
    } catch {
      // not here
    }
  }
  return undefined
}

let resolved: string | undefined
/**
 * The rg binary. Resolved from this module's location, so it works from the bundle (dist/clawtool.js and its chunks)
 * as well, since node_modules sits beside dist in an install.
 */
export const rgPath = (): string | undefined => {
  if (resolved !== undefined) return resolved
  const binary = process.platform === "win32" ? "rg.exe" : "rg"
  try {
    const require = createRequire(import.meta.url)
    resolved = require.resolve(`@vscode/ripgrep-${process.platform}-${process.arch}/bin/${binary}`)
  } catch {
    resolved = onPath(binary)
  }
  return resolved
}

export interface RunResult {
  readonly exitCode: number | null
  readonly stderr: string
  /** The caller stopped reading (it had enough); the process was killed. */
  readonly stopped: boolean
  readonly timedOut: boolean
}

/**
 * Runs rg with `args` in `cwd`, handing each `separator`-terminated record of stdout to `onRecord` (false: stop, rg
 * is killed). Fails with BackendMissing when no rg is found.
 */
export const run = (
  tool: string,
  args: ReadonlyArray<string>,
  options: {
    readonly cwd: string
    readonly separator: string
    readonly timeout: Duration.DurationInput
    readonly onRecord: (record: string) => boolean
  }
): Effect.Effect<RunResult, CallError> => {
  const binary = rgPath()
  if (binary === undefined) {
    return Effect.fail(
      new CallError({
        tool,
        reason: "BackendMissing",
        detail: "ripgrep is not available: neither @vscode/ripgrep's binary nor rg on PATH was found"
      })
    )
  }
  const running = Effect.async<Omit<RunResult, "timedOut">, CallError>((resume) => {
    const child = spawn(binary, args, { cwd: options.cwd, stdio: ["ignore", "pipe", "pipe"] })
    let pending = ""
    let stderr = ""
    let stopped = false
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      if (stopped) return
      pending += chunk
      let end = pending.indexOf(options.separator)
      while (end !== -1) {
        const record = pending.slice(0, end)
        pending = pending.slice(end + options.separator.length)
        if (!options.onRecord(record)) {
          stopped = true
          child.kill("SIGKILL")
          return
        }
        end = pending.indexOf(options.separator)
      }
    })
    child.stderr.setEncoding("utf8")
    child.stderr.on("data", (chunk: string) => {
      if (stderr.length < 4000) stderr += chunk
    })
    child.on("error", (cause) =>
      resume(Effect.fail(new CallError({ tool, reason: "Failed", detail: `ripgrep could not run: ${cause.message}` })))
    )
    child.on("close", (exitCode) => {
      if (!stopped && pending !== "") options.onRecord(pending)
      resume(Effect.succeed({ exitCode, stderr: stderr.trim(), stopped }))
    })
    return Effect.sync(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    })
  })
  return Effect.timeoutOption(running, options.timeout).pipe(
    Effect.map(
      Option.match({
        onNone: (): RunResult => ({ exitCode: null, stderr: "", stopped: true, timedOut: true }),
        onSome: (result): RunResult => ({ ...result, timedOut: false })
      })
    )
  )
}

/** rg's `{"text": …}` or `{"bytes": base64}` (not UTF-8), decoded lossily. */
export const textOf = (data: unknown): string => {
  if (typeof data !== "object" || data === null) return ""
  const value = data as { text?: unknown; bytes?: unknown }
  if (typeof value.text === "string") return value.text
  if (typeof value.bytes === "string") return Buffer.from(value.bytes, "base64").toString("utf8")
  return ""
}
