import { Command } from "@effect/cli"
import { Effect } from "effect"
import { config, ExitStatus, json, requireSecretsFile, secrets } from "../Shared.js"

export const doctor = Command.make("doctor", { config, secrets, json }, (options) =>
  Effect.gen(function* () {
    yield* requireSecretsFile(options)
    // Loaded on first use: init's host parsers come with it (test/StartPath.test.ts).
    const { runDoctor } = yield* Effect.promise(() => import("../Doctor.js"))
    const failed = yield* runDoctor(options)
    if (failed) return yield* new ExitStatus({ code: 1 })
  })
).pipe(
  Command.withDescription(
    "Check the setup and explain each finding, with a fix for each that is not fine: the config and secrets parse, the secrets file's mode, every source starts and lists its tools (with timings), OAuth sources are logged in, which hosts' MCP configs point at clawtool and which still list servers themselves, the daemon answers when [http] listen is set, the cache and state folders are writable, the Node version, ripgrep. No network beyond the configured sources and daemon. Exit 0 when every check passes (warnings allowed), 1 otherwise."
  )
)
