import { Effect } from "effect"
import { defineTool } from "./Manifest.js"
import { BashOutputSchema } from "./Bash.js"
import { findRun, snapshot, TaskInput } from "./BashPoll.js"

export const BashKill = defineTool({
  name: "BashKill",
  description:
    "Stop a background Bash run: its whole process group gets SIGTERM, then SIGKILL. Returns its last output and how it ended; a run that already ended is left as it is.",
  keywords: ["shell", "bash", "background", "kill", "stop", "terminate", "cancel", "task", "process", "abort"],
  category: "shell",
  usageHint: "Pass the task_id Bash returned; use it for servers and watchers once they are no longer needed.",
  alwaysLoad: false,
  annotations: {
    title: "Stop a background run",
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: true,
    openWorldHint: false
  },
  input: TaskInput,
  output: BashOutputSchema,
  handler: (input, context) =>
    Effect.gen(function* () {
      const entry = yield* findRun("BashKill", context, input.task_id)
      entry.run.stop("killed")
      yield* Effect.promise(() => entry.run.done)
      return yield* snapshot(entry, context)
    })
})
