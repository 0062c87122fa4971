import { Duration, Effect, Option } from "effect"
import { isRemote, type SourceConfig, type SourceTarget } from "../../domain/Config.js"
import { childEnvironment } from "../../domain/Environment.js"
import type { EraVerdict } from "../../domain/Era.js"
import { SourceError } from "../../domain/Errors.js"
import type { JsonObject } from "../../domain/Mcp.js"
import { keyOf } from "../CatalogCache.js"
import type { Env } from "../Config.js"
import type { HostPort } from "../HostBridge.js"
import type { ResolvedSource } from "../Secrets.js"
import type { LaunchSpec, RemoteLaunchSpec } from "../SourceClient/LaunchSpec.js"
import { loginCommand, type RemoteAuth, type SourceAuthProvider } from "../SourceClient/RemoteAuth.js"
import type { Diagnostics } from "./Diagnostics.js"

/**
 * What one instance's child is started with: its environment (default-deny over clawtool's own, ProcessEnv), its
 * persisted catalog's key, and the LaunchSpec SourceClient connects with. Pure but for the OAuth provider lookup.
 */

/** The child's final environment and the persisted catalog's key; the key is absent while secrets are missing. */
export interface Launch {
  readonly resolved: ResolvedSource
  readonly env: Readonly<Record<string, string>>
  readonly key: string | undefined
}

/**
 * `parent` is clawtool's environment as ProcessEnv gives it: only its safe set and the source's `env_passthrough`
 * names reach the child, under the resolved `env`. A remote source has no child environment.
 */
export const launchOf = (
  source: SourceConfig,
  resolved: ResolvedSource,
  parent: Env,
  capabilities: JsonObject
): Launch => {
  const remote = isRemote(source)
  const env = remote ? {} : childEnvironment(parent, source.env_passthrough, resolved.env)
  const key =
    resolved.missing.length > 0
      ? undefined
      : keyOf({
          command: resolved.command,
          cwd: source.cwd,
          env,
          capabilities,
          ...(remote ? { remote: { url: source.url, transport: source.transport, headers: resolved.headers } } : {})
        })
  return { resolved, env, key }
}

/** The OAuth provider of a remote source with `oauth` set; without a RemoteAuth service it cannot log in. */
export const authProviderOf = (
  remoteAuth: Option.Option<RemoteAuth["Type"]>,
  name: string,
  target: Extract<SourceTarget, { _tag: "Remote" }>
): Effect.Effect<SourceAuthProvider | undefined, SourceError> =>
  Option.match(target.oauth, {
    onNone: () => Effect.succeed(undefined),
    onSome: (oauth) =>
      Option.match(remoteAuth, {
        onNone: () =>
          Effect.fail(
            new SourceError({
              instance: name,
              reason: "Unauthenticated",
              detail: `this source uses OAuth; run: ${loginCommand(name)}`
            })
          ),
        onSome: (auth) => auth.provider(name, target.url, oauth)
      })
  })

/** What SourceClient connects with: a child (its output feeding the instance's Diagnostics) or a remote server. */
export const specOf = (
  name: string,
  source: SourceConfig,
  facts: {
    readonly launch: Launch
    readonly target: SourceTarget
    readonly host: HostPort
    readonly diagnostics: Diagnostics
    readonly authProvider: SourceAuthProvider | undefined
    /** The era verdict to adopt instead of a probe (`protocol = "auto"` only). */
    readonly knownEra?: EraVerdict | undefined
  }
): LaunchSpec | RemoteLaunchSpec => {
  const { diagnostics, host, target } = facts
  const era = {
    protocol: source.protocol,
    knownEra: facts.knownEra,
    // A silent server counts as legacy after a third of its startup_timeout, at most 5 s (probed once, then cached).
    probeTimeout: Duration.min(Duration.seconds(5), Duration.unsafeDivide(source.startup_timeout, 3))
  }
  return target._tag === "Remote"
    ? {
        instance: name,
        url: target.url,
        transport: target.transport,
        headers: facts.launch.resolved.headers,
        authProvider: facts.authProvider,
        callTimeout: source.call_timeout,
        host,
        ...era
      }
    : {
        instance: name,
        command: target.command,
        env: facts.launch.env,
        cwd: source.cwd,
        callTimeout: source.call_timeout,
        host,
        ...era,
        onStderrLine: (line) => diagnostics.stderr(line),
        onGarbage: (line) => diagnostics.garbage(line),
        onExit: (exit) => {
          diagnostics.lastExit = exit
        }
      }
}
