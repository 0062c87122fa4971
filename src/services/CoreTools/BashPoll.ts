import { Effect, Schema } from "effect"
import { CallError } from "../../domain/Errors.js"
import { type CoreContext, defineTool } from "./Manifest.js"
import { BashOutputSchema, noShell } from "./Bash.js"
import { fitResult } from "./Budget.js"
import { footer } from "./BashProcess.js"
import { type BackgroundRun, sessionless } from "./BashRuns.js"
import * as Roots from "./Roots.js"

export const TaskInput = Schema.Struct({
  task_id: Schema.String.pipe(Schema.pattern(/\S/)).annotations({
    description: "The task_id Bash returned for a run_in_background command"
  })
})

/** The caller's background run named `taskId`, or a NotFound error listing the caller's own (and nobody else's). */
export const findRun = (tool: string, context: CoreContext, taskId: string) =>
  Effect.gen(function* () {
    const shell = context.shell
    if (shell === undefined) return yield* noShell(tool)
    const table = shell.table
    const entry = table?.get(taskId)
    if (entry !== undefined) return entry
    const known = table === undefined ? sessionless : `known: ${table.ids().join(", ") || "none"}`
    return yield* new CallError({
      tool,
      reason: "NotFound",
      detail: `no background run ${JSON.stringify(taskId)} (${known})`
    })
  })

/** What a background run wrote since the last read, and how it stands; the read position moves to the end. */
export const snapshot = (entry: BackgroundRun, context: CoreContext) =>
  Effect.gen(function* () {
    const roots = yield* context.roots
    const { run } = entry
    const outcome = run.result
    const total = run.output.total
    const fresh = run.output.since(entry.readOffset)
    const from = entry.readOffset
    entry.readOffset = total
    const text = `${fresh === "" ? `(no new output since byte ${from})\n` : fresh.endsWith("\n") ? fresh : `${fresh}\n`}${footer(outcome, run.options.timeoutMs)}`
    const structured = {
      command: entry.command,
      cwd: Roots.display(roots, entry.cwd),
      status: run.status,
      exitCode: outcome?.exitCode ?? null,
      signal: outcome?.signal ?? null,
      timedOut: outcome?.status === "timedOut",
      durationMs: outcome?.durationMs ?? null,
      outputBytes: total,
      stdoutBytes: run.stdoutBytes,
      stderrBytes: run.stderrBytes,
      truncated: run.output.dropped > 0 && from < total - run.output.tailBytes,
      taskId: entry.id
    }
    const fitted = fitResult({ text, structured }, context.maxOutput, "call BashPoll more often to read smaller parts")
    return fitted.text === text ? fitted : { text: fitted.text, structured: { ...structured, truncated: true } }
  })

export const BashPoll = defineTool({
  name: "BashPoll",
  description:
    "Read what a background Bash run (run_in_background) wrote since the last read, with its status: running, exited (exit code), killed or timedOut.",
  keywords: ["shell", "bash", "background", "output", "logs", "poll", "status", "task", "check", "progress", "running"],
  category: "shell",
  usageHint:
    "Pass the task_id Bash returned. Each call returns only the new output, so poll it while the run works; a finished run reports its exit code.",
  alwaysLoad: false,
  annotations: { title: "Background run output", readOnlyHint: true, openWorldHint: false },
  input: TaskInput,
  output: BashOutputSchema,
  handler: (input, context) =>
    Effect.flatMap(findRun("BashPoll", context, input.task_id), (entry) => snapshot(entry, context))
})
