#!/usr/bin/env node
// Deep paths, not the barrels: @effect/platform-node's barrel loads cluster, RPC, SQL and undici, @effect/cli's loads
// the YAML/TOML/INI config-file readers; none of it is used here (docs/decisions/008-bundled-bin.md).
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Effect, Exit, Layer } from "effect"
import * as Cli from "./Cli.js"
import { ConfigError } from "./domain/Errors.js"
import { StderrLoggerLive } from "./layers/Logging.js"

/**
 * Exit codes (README, docs/decisions/010): 0 ok (serve: stdin closed, or SIGTERM after a clean shutdown), 1 runtime
 * failure, 2 usage or config error, 130 interrupted by SIGINT.
 */
const exitCode = (error: unknown): Effect.Effect<number> => {
  if (error instanceof Cli.ExitStatus) return Effect.succeed(error.code)
  if (ValidationError.isValidationError(error)) return Effect.succeed(2) // @effect/cli already printed it
  if (error instanceof ConfigError) {
    return Effect.as(
      Effect.sync(() => process.stderr.write(`clawtool: ${error.message}\n`)),
      2
    )
  }
  const message = error instanceof Error ? error.message : String(error)
  return Effect.as(
    Effect.sync(() => process.stderr.write(`clawtool: ${message}\n`)),
    1
  )
}

const program = Cli.run(process.argv).pipe(
  Effect.as(0),
  Effect.catchAll(exitCode),
  Effect.catchAllDefect((defect) =>
    Effect.as(
      Effect.sync(() => process.stderr.write(`clawtool: unexpected failure: ${Cause.pretty(Cause.die(defect))}\n`)),
      1
    )
  ),
  Effect.provide(Layer.mergeAll(NodeContext.layer, StderrLoggerLive))
)

/**
 * Which signal interrupted the program. runMain interrupts the main fiber on SIGINT and SIGTERM alike; SIGTERM is how
 * hosts and service managers ask a server to stop (after closing stdin), so a clean shutdown on it is a success,
 * while SIGINT is a person's Ctrl-C (130, the shell's convention). A second signal finds no listener: Node's default
 * action ends the process at once.
 */
let signal: NodeJS.Signals | undefined
for (const name of ["SIGINT", "SIGTERM"] as const) process.once(name, () => (signal ??= name))

NodeRuntime.runMain(program, {
  disableErrorReporting: true,
  disablePrettyLogger: true,
  // Exit explicitly: an idle stdin listener or a finished child's handle must not keep the process alive.
  teardown: (exit, onExit) => {
    const code = Exit.isSuccess(exit)
      ? (exit.value as number)
      : Cause.isInterruptedOnly(exit.cause)
        ? signal === "SIGTERM"
          ? 0
          : 130
        : 1
    onExit(code)
    process.exit(code)
  }
})
