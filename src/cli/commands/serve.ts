import { Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { DaemonLive, listenAddress } from "../../layers/Main.js"
import { Config, ProcessEnv } from "../../services/Config.js"
import { Daemon } from "../../services/Daemon.js"
import { Gateway } from "../../services/Gateway.js"
import { checkProfile, config, ExitStatus, profile, requireSecretsFile, secrets } from "../Shared.js"

const listen = Options.text("listen").pipe(
  Options.withDescription(
    "HOST:PORT: serve MCP streamable HTTP at http://HOST:PORT/mcp for many hosts at once instead of stdio (overrides [http] listen)"
  ),
  Options.optional
)

export const serve = Command.make("serve", { config, secrets, listen, profile }, (options) =>
  Effect.zipRight(
    requireSecretsFile(options),
    Effect.gen(function* () {
      const address = yield* listenAddress(options.listen)
      const env = yield* ProcessEnv
      const named = Option.orElse(options.profile, () =>
        Option.filter(Option.fromNullable(env.CLAWTOOL_PROFILE), (name) => name !== "")
      )
      if (Option.isSome(address)) {
        if (Option.isSome(named)) {
          yield* Console.error(
            "clawtool: --profile (or CLAWTOOL_PROFILE) is for stdio serve; the daemon serves each profile at /mcp/<profile>"
          )
          return yield* new ExitStatus({ code: 2 })
        }
        return yield* Effect.flatMap(Daemon, (daemon) => daemon.serve(address.value))
      }
      const chosen = yield* checkProfile(named, (yield* Config).config)
      return yield* Effect.flatMap(Gateway, (gateway) => gateway.serve(chosen))
    }).pipe(Effect.provide(DaemonLive(options, options.listen)))
  )
).pipe(
  Command.withDescription(
    "Serve every configured source as one MCP server over stdio (what an MCP host runs; exits when stdin closes), or with --listen over HTTP for many hosts (until SIGTERM). With --profile (or CLAWTOOL_PROFILE) the host sees only that profile; the daemon serves each profile at /mcp/<profile>."
  )
)
