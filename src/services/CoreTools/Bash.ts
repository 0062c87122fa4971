import { Effect, Schema } from "effect"
import { CallError } from "../../domain/Errors.js"
import { ProcessEnv } from "../Config.js"
import { defineTool } from "./Manifest.js"
import { fitResult } from "./Budget.js"
import { commandEnvironment, footer, ShellRun } from "./BashProcess.js"
import { backgroundHeadBytes, backgroundTailBytes, maxLiveRuns, sessionless } from "./BashRuns.js"
import * as Roots from "./Roots.js"

export const defaultTimeoutMs = 120_000
export const maxTimeoutMs = 600_000
/** Foreground output kept in memory (the budget then cuts the text to `max_output`). */
const headBytes = 64 * 1024
const tailBytes = 64 * 1024

const BashInput = Schema.Struct({
  command: Schema.String.pipe(
    // The filter first: JSON Schema shows the outermost refinement, which carries the description.
    Schema.filter((command) => !command.includes("\0") || "command must not contain a NUL byte"),
    Schema.pattern(/\S/, { message: () => "command must not be empty" })
  ).annotations({ description: "The shell command (run by bash -c, in its own process group)" }),
  timeout_ms: Schema.optional(
    Schema.Number.pipe(Schema.int(), Schema.between(1000, maxTimeoutMs)).annotations({
      description: `Kill the command's whole process group after this many ms (default ${defaultTimeoutMs} in the foreground; none in the background unless given)`
    })
  ),
  cwd: Schema.optional(
    Schema.String.annotations({ description: "Working directory, inside the allowed roots (default: the first root)" })
  ),
  run_in_background: Schema.optionalWith(
    Schema.Boolean.annotations({
      description: "Start and return at once with a task_id; read its output with BashPoll, stop it with BashKill"
    }),
    { default: () => false }
  ),
  description: Schema.optional(
    Schema.String.pipe(Schema.maxLength(200)).annotations({ description: "What the command does, in a few words" })
  )
})

export const RunStatus = Schema.Literal("running", "exited", "killed", "timedOut")

export const BashOutputSchema = Schema.Struct({
  command: Schema.String,
  cwd: Schema.String,
  status: RunStatus,
  exitCode: Schema.NullOr(Schema.Number),
  signal: Schema.NullOr(Schema.String),
  timedOut: Schema.Boolean,
  durationMs: Schema.NullOr(Schema.Number),
  /** Every byte the command wrote (stdout and stderr), kept or not. */
  outputBytes: Schema.Number,
  stdoutBytes: Schema.Number,
  stderrBytes: Schema.Number,
  /** Part of the output is not in the text (cut to the budget; the marker says where). */
  truncated: Schema.Boolean,
  taskId: Schema.optional(Schema.String)
})

const cutHint = "redirect the output to a file and Read or Grep it, or narrow the command"

export const noShell = (tool: string) =>
  new CallError({ tool, reason: "Failed", detail: `${tool} is not available in this setup (no shell runner)` })

/** spawn throws synchronously for a few argument errors (E2BIG, EINVAL): a typed failure, not a defect. */
const cannotStart = (cause: unknown) =>
  new CallError({
    tool: "Bash",
    reason: "Failed",
    detail: `cannot start the shell: ${cause instanceof Error ? cause.message : String(cause)}`
  })

/** The working directory: inside the roots and a directory. */
const workingDirectory = (cwd: string | undefined, roots: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    if (cwd === undefined) return roots[0] ?? process.cwd()
    const resolved = yield* Roots.resolve("Bash", cwd, roots)
    if (resolved.stat === undefined || !resolved.stat.isDirectory()) {
      return yield* new CallError({
        tool: "Bash",
        reason: resolved.stat === undefined ? "NotFound" : "Failed",
        detail: `cwd ${JSON.stringify(cwd)} is not ${resolved.stat === undefined ? "an existing" : "a"} directory`
      })
    }
    return resolved.real
  })

export const Bash = defineTool({
  name: "Bash",
  description:
    "Run a shell command (bash -c) in its own process group, in a directory inside the allowed roots. stdout and stderr come back interleaved, cut in the middle beyond the output budget; exit code and signal are in the structured result. The whole group is killed on timeout or cancellation (the output so far is returned). The environment is default-deny (no secrets of clawtool's), non-interactive: no TTY, stdin empty, PAGER=cat.",
  keywords: [
    "shell",
    "bash",
    "command",
    "run",
    "execute",
    "terminal",
    "script",
    "build",
    "compile",
    "install",
    "test",
    "git",
    "commit",
    "npm",
    "version",
    "program"
  ],
  category: "shell",
  usageHint:
    "Use for builds, tests, git and other programs; prefer Read/Grep/Glob for looking at files. Set cwd instead of `cd`. For servers, watchers or anything longer than a few minutes pass run_in_background=true, then poll BashPoll with the task_id and stop it with BashKill. Nothing you start outlives the call unless it runs in the background.",
  alwaysLoad: true,
  annotations: {
    title: "Run a shell command",
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: true
  },
  input: BashInput,
  output: BashOutputSchema,
  handler: (input, context) =>
    Effect.gen(function* () {
      const shell = context.shell
      if (shell === undefined) return yield* noShell("Bash")
      const roots = yield* context.roots
      const cwd = yield* workingDirectory(input.cwd, roots)
      const shown = Roots.display(roots, cwd)
      const env = commandEnvironment(yield* ProcessEnv)
      const clock = yield* Effect.clock

      if (input.run_in_background) {
        const table = shell.table
        // Nothing would own the run: its request ends with the response, and no other caller may reach it.
        if (table === undefined) {
          return yield* new CallError({
            tool: "Bash",
            reason: "NoSession",
            detail: `${sessionless}: run the command in the foreground (timeout_ms up to ${maxTimeoutMs}), or connect to a daemon with sessions`
          })
        }
        const entry = yield* Effect.try({
          try: () =>
            table.start({
              command: input.command,
              cwd,
              env,
              clock,
              timeoutMs: input.timeout_ms,
              headBytes: backgroundHeadBytes,
              tailBytes: backgroundTailBytes
            }),
          catch: cannotStart
        })
        if (entry === undefined) {
          return yield* new CallError({
            tool: "Bash",
            reason: "Failed",
            detail: `${maxLiveRuns} background runs are already running (at most ${maxLiveRuns}); stop one with BashKill first`
          })
        }
        const structured = {
          command: input.command,
          cwd: shown,
          status: "running" as const,
          exitCode: null,
          signal: null,
          timedOut: false,
          durationMs: null,
          outputBytes: 0,
          stdoutBytes: 0,
          stderrBytes: 0,
          truncated: false,
          taskId: entry.id
        }
        const text = `started in the background as ${entry.id} (cwd ${shown}); read its output with BashPoll task_id=${entry.id}, stop it with BashKill`
        return { text, structured }
      }

      const timeoutMs = input.timeout_ms ?? defaultTimeoutMs
      const run = yield* Effect.try({
        try: () =>
          new ShellRun({
            command: input.command,
            cwd,
            env,
            clock,
            timeoutMs,
            headBytes,
            tailBytes,
            tracker: shell.tracker
          }),
        catch: cannotStart
      })
      // Cancellation (the host's notifications/cancelled interrupts the handler): the group goes, TERM then KILL.
      const outcome = yield* Effect.promise(() => run.done).pipe(
        Effect.onInterrupt(() =>
          Effect.promise(() => {
            run.stop("killed")
            return run.done
          })
        )
      )
      const output = run.output.render()
      const text = `${output === "" ? "(no output)\n" : output.endsWith("\n") ? output : `${output}\n`}${footer(outcome, timeoutMs)}`
      const structured = {
        command: input.command,
        cwd: shown,
        status: outcome.status,
        exitCode: outcome.exitCode,
        signal: outcome.signal,
        timedOut: outcome.status === "timedOut",
        durationMs: outcome.durationMs,
        outputBytes: run.output.total,
        stdoutBytes: run.stdoutBytes,
        stderrBytes: run.stderrBytes,
        truncated: run.output.dropped > 0
      }
      const fitted = fitResult({ text, structured }, context.maxOutput, cutHint)
      return fitted.text === text ? fitted : { text: fitted.text, structured: { ...structured, truncated: true } }
    })
})
