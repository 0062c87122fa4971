import { Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { DaemonLive, listenAddress } from "../../layers/Main.js"
import { Daemon } from "../../services/Daemon.js"
import { Gateway } from "../../services/Gateway.js"
import { config, requireSecretsFile, secrets } from "../Shared.js"

const listen = Options.text("listen").pipe(
  Options.withDescription(
    "HOST:PORT: serve MCP streamable HTTP at http://HOST:PORT/mcp for many hosts at once instead of stdio (overrides [http] listen)"
  ),
  Options.optional
)

export const serve = Command.make("serve", { config, secrets, listen }, (options) =>
  Effect.zipRight(
    requireSecretsFile(options),
    Effect.gen(function* () {
      const address = yield* listenAddress(options.listen)
      if (Option.isSome(address)) return yield* Effect.flatMap(Daemon, (daemon) => daemon.serve(address.value))
      return yield* Effect.flatMap(Gateway, (gateway) => gateway.serve())
    }).pipe(Effect.provide(DaemonLive(options, options.listen)))
  )
).pipe(
  Command.withDescription(
    "Serve every configured source as one MCP server over stdio (what an MCP host runs; exits when stdin closes), or with --listen over HTTP for many hosts (until SIGTERM)."
  )
)
