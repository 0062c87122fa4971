import * as Path from "node:path"
import { Effect, Layer, Option } from "effect"
import { type CoreToolName, isCoreToolName } from "../domain/Config.js"
import { CallError } from "../domain/Errors.js"
import type { JsonObject } from "../domain/Mcp.js"
import { type CatalogView, CurrentToolProvider, type ToolProvider } from "../domain/ToolProvider.js"
import { Config, ProcessEnv } from "./Config.js"
import { Bash } from "./CoreTools/Bash.js"
import { BashKill } from "./CoreTools/BashKill.js"
import { BashPoll } from "./CoreTools/BashPoll.js"
import { BashRuns } from "./CoreTools/BashRuns.js"
import { SourceHealth, ToolSearch } from "./CoreTools/Discovery.js"
import { Edit } from "./CoreTools/Edit.js"
import { Glob } from "./CoreTools/Glob.js"
import { Grep } from "./CoreTools/Grep.js"
import { Ledger } from "./CoreTools/Ledger.js"
import * as Manifest from "./CoreTools/Manifest.js"
import { Read } from "./CoreTools/Read.js"
import { RunCode } from "./CoreTools/RunCode.js"
import * as Roots from "./CoreTools/Roots.js"
import { WebFetch } from "./CoreTools/WebFetch.js"
import { WebSearch } from "./CoreTools/WebSearch.js"
import { Write } from "./CoreTools/Write.js"
import { HostBridge, type HostPort } from "./HostBridge.js"
import { Secrets } from "./Secrets.js"

/**
 * clawtool's own tools. Order here is insertion order of the manifest; the wire order is the sort's.
 * The Go hot set is Bash, Read, Edit, Glob, Grep, WebFetch, WebSearch, ToolSearch: of those, ToolSearch exists here.
 */

/** The registry's own tools, never switched off (tests of the catalog machinery use these alone). */
export const registrySpecs: ReadonlyArray<Manifest.AnyToolSpec> = [ToolSearch, SourceHealth]

/** The manifest clawtool serves: the registry's own tools, then the core tools (`[core_tools]` gates those). */
export const coreSpecs: ReadonlyArray<Manifest.AnyToolSpec> = [
  ...registrySpecs,
  Bash,
  BashPoll,
  BashKill,
  Read,
  Edit,
  Write,
  Glob,
  Grep,
  WebFetch,
  WebSearch,
  RunCode
]

/**
 * Core tools not served in this setup, each with the rule that decided (shown by `tools list`): `[core_tools]
 * enabled = false` (all eight), `[core_tools.<Name>] enabled = false` (one), or the spec's own `unavailable` (a
 * missing key). ToolSearch and SourceHealth, the registry's own, are never switched off.
 */
/** Tools that come and go with a core tool: Bash's background-run companions. */
const companions: Readonly<Record<string, CoreToolName>> = { BashPoll: "Bash", BashKill: "Bash" }

export const coreGate = (
  specs: ReadonlyArray<Manifest.AnyToolSpec>,
  setup: Manifest.CoreSetup
): ReadonlyMap<string, string> => {
  const off = new Map<string, string>()
  for (const spec of specs) {
    const gate = isCoreToolName(spec.name) ? spec.name : companions[spec.name]
    if (gate === undefined) continue
    const rule = !setup.settings.enabled
      ? "core_tools.enabled"
      : !setup.settings[gate].enabled
        ? `core_tools.${gate}.enabled`
        : spec.unavailable?.(setup)
    if (rule !== undefined) off.set(spec.name, rule)
  }
  return off
}

/**
 * The core tools as one service, served by the Registry through the tool-provider contract (domain/ToolProvider.ts):
 * their manifest and `[core_tools]` gate, and what they keep: the roots file tools may touch, each host session's
 * read-before-edit ledger and background Bash runs (BashRuns, whose scope kills every run when clawtool stops).
 */
export class CoreTools extends Effect.Service<CoreTools>()("clawtool/CoreTools", {
  dependencies: [Config.Default, Secrets.Default, BashRuns.Default],
  scoped: Effect.gen(function* () {
    const configService = yield* Config
    const { config } = configService
    const secrets = yield* Effect.serviceOption(Secrets)
    const env = yield* ProcessEnv
    const shell = Option.getOrUndefined(yield* Effect.serviceOption(BashRuns))
    const listing = yield* Manifest.make(coreSpecs)
    // Core tools see only the global scope and the environment (no instance is named ""); tests without the Secrets
    // service see the environment.
    const secret = (name: string) =>
      Option.match(secrets, {
        onSome: (service) => service.lookup("", name),
        onNone: () => Option.fromNullable(env[name]).pipe(Option.filter((value) => value !== ""))
      })
    const disabled = coreGate(coreSpecs, { settings: config.core_tools, secret })
    const host = Option.map(yield* Effect.serviceOption(HostBridge), (bridge) => bridge.port)
    const roots = yield* hostRoots(config.roots, Path.dirname(configService.path), host)

    const shared = {
      roots: roots.current,
      maxOutput: config.core_tools.max_output,
      settings: config.core_tools,
      ledger: new Ledger(),
      secret,
      shell
    }
    // The read-before-edit ledger and the background runs are the calling host's: in the daemon, a file one session
    // read does not count as read by another, and a session neither sees nor stops another's runs (its own are killed
    // when it ends). A caller with no session (a stateless request) gets a ledger of its own call and no runs at all.
    const callerState: Effect.Effect<Pick<Manifest.CoreContext, "ledger" | "shell">> = Option.match(host, {
      onNone: () => Effect.succeed(shared),
      onSome: (port) =>
        Effect.all({
          ledger: Effect.map(
            port.perCaller("ledger", () => new Ledger()),
            Option.getOrElse(() => new Ledger())
          ),
          shell:
            shell === undefined
              ? Effect.succeed(undefined)
              : Effect.map(
                  port.perCaller(
                    "bash-runs",
                    () => shell.open(),
                    (table) => shell.close(table)
                  ),
                  (table) => ({ tracker: shell.tracker, table: Option.getOrUndefined(table) })
                )
        })
    })

    const call = Effect.fn("CoreTools.call")(function* (name: string, args: JsonObject | undefined, view: CatalogView) {
      yield* Effect.annotateCurrentSpan("gen_ai.tool.name", name)
      const core = listing.byName.get(name)
      if (core === undefined) {
        return yield* new CallError({ tool: name, reason: "NoSuchTool", detail: `unknown tool "${name}"` })
      }
      const own = yield* callerState
      return yield* core.call(args, { ...view, ...shared, ...own })
    })

    return { listing, disabled, call, rootsChanged: roots.invalidate } satisfies ToolProvider
  })
}) {
  /** CoreTools as the Registry's tool provider (src/layers/ wires it). */
  static readonly Provider = Layer.effect(CurrentToolProvider, CoreTools).pipe(Layer.provide(CoreTools.Default))

  /** The provider over the Config (and optional Secrets, BashRuns, HostBridge) the caller provides: for tests. */
  static readonly ProviderWithoutDependencies = Layer.effect(CurrentToolProvider, CoreTools).pipe(
    Layer.provide(CoreTools.DefaultWithoutDependencies)
  )
}

/**
 * The core tools' roots (core-tools reference §1.3): the host's MCP roots when it declared the `roots` capability,
 * asked once and again after roots/list_changed; else the config's `roots` (relative to the config's folder); else
 * the directory clawtool started in. Roots that do not exist are dropped with a warning.
 */
const hostRoots = (configured: ReadonlyArray<string>, configDir: string, port: Option.Option<HostPort>) =>
  Effect.gen(function* () {
    const startDir = process.cwd()
    const fallback = yield* Roots.normalize(configured.length > 0 ? configured : [startDir], configDir)
    for (const line of fallback.dropped) yield* Effect.logWarning(`config: roots: dropped ${line}`)
    // The host's URIs as real folders, once per answer: the bridge keeps one answer per host until its roots change.
    const normalized = new WeakMap<ReadonlyArray<string>, ReadonlyArray<string>>()
    const fromHost = (uris: ReadonlyArray<string>) =>
      Effect.suspend(() => {
        const known = normalized.get(uris)
        if (known !== undefined) return Effect.succeed(known)
        return Effect.gen(function* () {
          const { roots, dropped } = yield* Roots.normalize(uris, startDir)
          for (const line of dropped) yield* Effect.logWarning(`host roots: dropped ${line}`)
          // A host that lists no root that exists here: the configured roots.
          const used = roots.length === 0 ? fallback.roots : roots
          normalized.set(uris, used)
          return used
        })
      })
    const current: Effect.Effect<ReadonlyArray<string>> = Option.match(port, {
      onNone: () => Effect.succeed(fallback.roots),
      onSome: (host) =>
        host.callerRoots.pipe(
          Effect.flatMap(Option.match({ onNone: () => Effect.succeed(fallback.roots), onSome: fromHost })),
          // Not kept: the next call asks again.
          Effect.catchAll((error) =>
            Effect.as(
              Effect.logWarning(`roots/list failed (${error.detail}); using the configured roots`),
              fallback.roots
            )
          )
        )
    })
    return {
      current,
      invalidate: Option.match(port, { onNone: () => Effect.void, onSome: (host) => host.forgetRoots })
    } as const
  })
