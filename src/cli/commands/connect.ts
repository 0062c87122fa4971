import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Option, Schema } from "effect"
import { ProfileName } from "../../domain/Config.js"
import { ConnectLive } from "../../layers/Main.js"
import { connect as relayToDaemon, defaultDaemonUrl } from "../Connect.js"
import { ExitStatus, profile, requireSecretsFile, secrets } from "../Shared.js"

/** `--profile NAME`: the daemon's /mcp/NAME (its config says which profiles exist; an unknown one is its 404). */
const withProfile = (url: URL, name: Option.Option<string>) => {
  if (Option.isNone(name)) return Effect.succeed(url)
  if (!Schema.is(ProfileName)(name.value)) {
    return Effect.zipRight(
      Console.error(`clawtool: profile names are kebab-case, got ${JSON.stringify(name.value)}`),
      Effect.fail(new ExitStatus({ code: 2 }))
    )
  }
  const profiled = new URL(url)
  profiled.pathname = `${url.pathname.replace(/\/+$/, "")}/${name.value}`
  return Effect.succeed(profiled)
}

/** The daemon URL for `connect`: http(s) only, anything else is a usage error. */
const daemonUrl = (text: string) => {
  let url: URL | undefined
  try {
    url = new URL(text)
  } catch {
    url = undefined
  }
  return url !== undefined && (url.protocol === "http:" || url.protocol === "https:")
    ? Effect.succeed(url)
    : Effect.zipRight(
        Console.error(`clawtool: connect expects an http:// or https:// URL, got ${JSON.stringify(text)}`),
        Effect.fail(new ExitStatus({ code: 2 }))
      )
}

export const connect = Command.make(
  "connect",
  {
    config: Options.text("config").pipe(
      Options.withAlias("c"),
      Options.withPseudoName("FILE"),
      Options.optional,
      Options.withDescription(
        "Only to find secrets.toml beside it (for the token); the daemon reads its own config. Default: as for serve"
      )
    ),
    secrets,
    profile,
    url: Args.text({ name: "URL" }).pipe(
      Args.withDefault(defaultDaemonUrl),
      Args.withDescription(`The daemon's MCP endpoint (clawtool serve --listen). Default: ${defaultDaemonUrl}`)
    )
  },
  (options) =>
    Effect.gen(function* () {
      yield* requireSecretsFile(options)
      const url = yield* Effect.flatMap(daemonUrl(options.url), (base) => withProfile(base, options.profile))
      yield* relayToDaemon(url)
    }).pipe(Effect.provide(ConnectLive(options)))
).pipe(
  Command.withDescription(
    "Serve a clawtool daemon (clawtool serve --listen) to a host over stdio: relays every MCP message to its streamable-HTTP endpoint, so hosts that only spawn processes share one daemon. Sends the token CLAWTOOL_HTTP_TOKEN (secrets.toml [scopes.global], then the environment) as a bearer token. While the daemon is down it answers initialize, fails every call with an error naming the URL, and reconnects when the daemon is back. With --profile NAME it connects to the daemon's /mcp/NAME. Exits when stdin closes."
  )
)
