import { Args, Command } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { StaticLive } from "../../layers/Main.js"
import { Config } from "../../services/Config.js"
import { config, ExitStatus, secrets } from "../Shared.js"

const fallback = "http://127.0.0.1:8765"

/** The daemon's origin: the argument, else `[http] listen` (an unspecified address means this machine), else the default. */
const originOf = (given: Option.Option<string>, listen: string | undefined): string | undefined => {
  const text = Option.getOrElse(given, () =>
    listen === undefined ? fallback : `http://${listen.replace(/^(0\.0\.0\.0|\[::\]|::):/, "127.0.0.1:")}`
  )
  if (!URL.canParse(text)) return undefined
  const url = new URL(text)
  return url.protocol === "http:" || url.protocol === "https:" ? url.origin : undefined
}

/** Whether a browser can be shown: $BROWSER set, macOS, or a graphical session on Linux. */
const hasDisplay = (env: NodeJS.ProcessEnv) =>
  env.BROWSER !== undefined || process.platform === "darwin" || Boolean(env.DISPLAY) || Boolean(env.WAYLAND_DISPLAY)

export const ui = Command.make(
  "ui",
  {
    config,
    secrets,
    url: Args.text({ name: "URL" }).pipe(
      Args.optional,
      Args.withDescription(`The daemon's address. Default: [http] listen of the config, else ${fallback}`)
    )
  },
  (options) =>
    Effect.gen(function* () {
      const { config: loaded } = yield* Config
      const origin = originOf(options.url, loaded.http.listen)
      if (origin === undefined) {
        yield* Console.error(
          `clawtool: ui expects an http:// or https:// URL, got ${JSON.stringify(Option.getOrElse(options.url, () => ""))}`
        )
        return yield* new ExitStatus({ code: 2 })
      }
      const page = `${origin}/ui`
      // The daemon answers /healthz without a token: it tells a stopped daemon from a wrong address.
      const up = yield* Effect.promise(() =>
        fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(3000) }).then(
          (response) => response.ok,
          () => false
        )
      )
      if (!up) {
        yield* Console.error(
          `clawtool: no clawtool daemon answers at ${origin} (start one with clawtool serve --listen, or give its URL)`
        )
        return yield* new ExitStatus({ code: 1 })
      }
      yield* Console.log(page)
      if (!hasDisplay(process.env)) return
      // Loaded only here (the OAuth login's browser starter): nothing else of this command needs it.
      const { openBrowser } = yield* Effect.promise(() => import("../../services/OAuth/Login.js"))
      openBrowser(page, process.env, (line) => process.stderr.write(`clawtool: ${line}\n`))
    }).pipe(Effect.provide(StaticLive(options)))
).pipe(
  Command.withDescription(
    "Open the running daemon's dashboard (/ui) in the browser ($BROWSER, else xdg-open / open); prints its URL, which is all it does without a display. The page asks for the daemon's token. Exit 1 when no daemon answers there."
  )
)
