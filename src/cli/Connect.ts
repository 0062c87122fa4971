import { Deferred, Effect, Option } from "effect"
import { CurrentLimits } from "../domain/Limits.js"
import { ConfigLocation, ProcessEnv, resolveConfigPaths } from "../services/Config.js"
import { loadSecrets, lookupSecret } from "../services/Secrets.js"
import { StdioServerTransport } from "../transport/StdioServerTransport.js"
import * as Version from "../version.js"

export const defaultDaemonUrl = "http://127.0.0.1:8765/mcp"

/** The variable the daemon's `[http] token` conventionally refers to; connect looks it up the same way (global scope). */
export const tokenVariable = "CLAWTOOL_HTTP_TOKEN"

/** The daemon's token from secrets.toml `[scopes.global]`, then the environment, as `${CLAWTOOL_HTTP_TOKEN}` resolves. */
const token = Effect.gen(function* () {
  const env = yield* ProcessEnv
  const { secretsFile } = resolveConfigPaths(yield* ConfigLocation, env)
  const store = yield* loadSecrets(secretsFile)
  return Option.getOrUndefined(lookupSecret(store, env, "global", tokenVariable))
})

/**
 * `clawtool connect`, a CLI mode beside serve: a stdio MCP server for hosts that only spawn processes, relaying every
 * message to a clawtool daemon (`serve --listen`) over streamable HTTP (ADR 022), until the host closes stdin. It
 * starts no source and holds no session state: the daemon does.
 */
export const connect = Effect.fn("Connect.run")(function* (url: URL) {
  const limits = yield* CurrentLimits
  const host = new StdioServerTransport(process.stdin, process.stdout, limits)
  const closed = yield* Deferred.make<void>()
  host.onclose = () => Deferred.unsafeDone(closed, Effect.void)
  // The HTTP client transport loads here only: `serve` never needs it.
  const { HttpRelay } = yield* Effect.promise(() => import("../transport/HttpRelay.js"))
  const relay = new HttpRelay(host, {
    url,
    token: yield* token,
    serverInfo: { name: Version.name, version: Version.version },
    log: (line) => process.stderr.write(`clawtool connect: ${line}\n`)
  })
  yield* Effect.acquireRelease(
    Effect.promise(() => relay.start()),
    () => Effect.promise(() => relay.close())
  )
  yield* Deferred.await(closed)
}, Effect.scoped)
