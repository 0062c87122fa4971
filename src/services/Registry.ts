import * as Path from "node:path"
import { Deferred, Duration, Effect, Either, Option, Runtime } from "effect"
import * as CallPlan from "../domain/CallPlan.js"
import type { ClawtoolConfig } from "../domain/Config.js"
import type { CallOptions } from "../domain/Connection.js"
import { CallError } from "../domain/Errors.js"
import type { CallToolRequest, CallToolResult, JsonObject, Tool } from "../domain/Mcp.js"
import { prefixOf } from "../domain/Config.js"
import { Config } from "./Config.js"
import * as Catalogs from "./Registry/Catalog.js"
import * as Forward from "./Registry/Forward.js"
import * as Surface from "./Registry/Surface.js"
import type { Catalog, InstanceTools } from "./Registry/CatalogTypes.js"
import { coreGate, coreSpecs } from "./CoreTools.js"
import { BashRuns } from "./CoreTools/BashRuns.js"
import { Ledger } from "./CoreTools/Ledger.js"
import * as CoreRoots from "./CoreTools/Roots.js"
import * as Manifest from "./Registry/Manifest.js"
import * as NameBudget from "./Registry/NameBudget.js"
import type * as ToolSearch from "./Registry/ToolSearch.js"
import { HostBridge } from "./HostBridge.js"
import { Secrets } from "./Secrets.js"
import { Sources } from "./Sources.js"

export type { Catalog, CatalogEntry } from "./Registry/CatalogTypes.js"

/** A `[tools."i.t"]` table for no configured source is only a warning (at start and after each reload). */
export const warnUnknownSelectors = (config: ClawtoolConfig) =>
  Effect.forEach(
    Object.keys(config.tools),
    (key) => {
      const instance = key.slice(0, key.indexOf("."))
      return config.sources[instance] === undefined
        ? Effect.logWarning(`config: [tools."${key}"] names no configured source "${instance}"`)
        : Effect.void
    },
    { discard: true }
  )

/** The same instances with the same tool arrays (Sources keeps an instance's array until its state changes). */
const sameInput = (a: ReadonlyArray<InstanceTools>, b: ReadonlyArray<InstanceTools>) =>
  a.length === b.length && a.every((entry, i) => entry.instance === b[i]!.instance && entry.tools === b[i]!.tools)

/**
 * The catalog the host sees and the routing back from it: clawtool's core tools beside every running source's
 * tools under budgeted `<instance>__<tool>` names, config gating (`enabled`, hints, alwaysLoad), the seed's
 * pipeline (hints → alwaysLoad → sort last) and a sha256 catalog hash.
 */
export class Registry extends Effect.Service<Registry>()("clawtool/Registry", {
  dependencies: [Sources.Default, Config.Default, Secrets.Default, BashRuns.Default],
  effect: Effect.gen(function* () {
    const sources = yield* Sources
    const configService = yield* Config
    const { config, live } = configService
    const secrets = yield* Effect.serviceOption(Secrets)
    const shell = Option.getOrUndefined(yield* Effect.serviceOption(BashRuns))
    const manifest = yield* Manifest.make(coreSpecs)
    // Core tools see only the global scope and the environment (no instance is named ""); tests without the Secrets
    // service see the environment.
    const secret = (name: string) =>
      Option.match(secrets, {
        onSome: (service) => service.lookup("", name),
        onNone: () => Option.fromNullable(process.env[name]).pipe(Option.filter((value) => value !== ""))
      })
    const coreDisabled = coreGate(coreSpecs, { settings: config.core_tools, secret })
    const roots = yield* coreRoots(config.roots, Path.dirname(configService.path))
    const runtime = yield* Effect.runtime<never>()

    yield* warnUnknownSelectors(config)

    // `prefix` per source (issue 12): the wire names' prefix, the instance name unless set. Read from the live config
    // (a reload may change it; ADR 016), rebuilt only when the config object changed.
    const prefixesOf = (from: ClawtoolConfig) =>
      NameBudget.makePrefixes(
        Object.fromEntries(
          Object.entries(from.sources).map(([instance, source]) => [instance, prefixOf(instance, source)])
        )
      )
    let prefixTable = { config: config, prefixes: prefixesOf(config) }
    const currentPrefixes = () => {
      const current = live.get()
      if (prefixTable.config !== current) prefixTable = { config: current, prefixes: prefixesOf(current) }
      return prefixTable.prefixes
    }
    const prefixes: NameBudget.Prefixes = {
      of: (instance) => currentPrefixes().of(instance),
      route: (wire) => currentPrefixes().route(wire)
    }

    // The catalog is rebuilt only when some instance's tool list or the config (a reload, ADR 016) changed; the search
    // index only when the hash did. Tool rules, name_budget and hints come from the live config: no child restarts.
    let built:
      | {
          readonly input: ReadonlyArray<InstanceTools>
          readonly config: ClawtoolConfig
          readonly catalog: Catalog
        }
      | undefined
    let index: ToolSearch.Index | undefined

    const catalogNow = (): Catalog => {
      const input = sources.catalogNow()
      const current = live.get()
      if (built !== undefined && built.config === current && sameInput(built.input, input)) return built.catalog
      const next = Catalogs.build({
        mode: current.catalog,
        manifest,
        sources: input,
        toolConfig: current.tools,
        budget: current.name_budget,
        coreDisabled,
        prefixes
      })
      built = { input, config: current, catalog: next }
      return next
    }
    const catalog: Effect.Effect<Catalog> = Effect.sync(catalogNow)

    const search = (query: string, limit: number) =>
      Effect.gen(function* () {
        const current = yield* catalog
        if (index === undefined || index.hash !== current.hash) {
          // The index (MiniSearch, the stemmer) loads on the first search: most sessions never search.
          const { build } = yield* Effect.promise(() => import("./Registry/ToolSearch.js"))
          index = build(current, manifest)
        }
        return { hash: current.hash, hits: index.search(query, limit) }
      }).pipe(Effect.withSpan("Registry.search", { attributes: { "clawtool.search.limit": limit } }))

    const context: Manifest.CoreContext = {
      catalog,
      health: sources.health,
      search,
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
    const host = Option.map(yield* Effect.serviceOption(HostBridge), (bridge) => bridge.port)
    const callerContext: Effect.Effect<Manifest.CoreContext> = Option.match(host, {
      onNone: () => Effect.succeed(context),
      onSome: (port) =>
        Effect.map(
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
          }),
          (own): Manifest.CoreContext => ({ ...context, ...own })
        )
    })

    // Resources, templates and prompts of the running children, rebuilt only when one child's surface changed.
    let builtSurface:
      { readonly inputs: ReadonlyArray<Surface.SurfaceInput>; readonly surface: Surface.Surface } | undefined
    const surface: Effect.Effect<Surface.Surface> = Effect.gen(function* () {
      const running = new Map((yield* sources.running).map((child) => [child.instance, child]))
      // Like its tools, a restarting instance keeps its last surface listed (requests to it fail as not running), so
      // a restart that brings the same catalog back announces nothing.
      const listed = (yield* sources.catalog).map((entry) => entry.instance)
      const inputs = yield* Effect.forEach(listed, (instance) => {
        const child = running.get(instance)
        if (child !== undefined) {
          return Effect.map(child.surface, (live) => [{ instance, capabilities: child.capabilities, surface: live }])
        }
        // A source serving its persisted catalog lists its cached resources, templates and prompts too.
        const cached = sources.cachedSurface?.(instance)
        if (cached !== undefined) return Effect.succeed([{ instance, ...cached }])
        const kept = builtSurface?.inputs.find((input) => input.instance === instance)
        return Effect.succeed(kept === undefined ? [] : [kept])
      }).pipe(Effect.map((lists) => lists.flat()))
      const same =
        builtSurface !== undefined &&
        builtSurface.inputs.length === inputs.length &&
        builtSurface.inputs.every(
          (input, i) =>
            input.instance === inputs[i]!.instance &&
            input.capabilities === inputs[i]!.capabilities &&
            input.surface === inputs[i]!.surface
        )
      if (!same) {
        builtSurface = { inputs, surface: Surface.build(inputs, prefixes) }
        for (const { wire, kept, dropped } of builtSurface.surface.promptCollisions) {
          yield* Effect.logWarning(
            `prompt name collision on "${wire}": kept ${kept}; not served: ${dropped.join(", ")}`
          )
        }
      }
      return builtSurface!.surface
    })
    const relayed = Forward.make(sources, surface, prefixes)
    // The host's roots changed: the core tools' roots are read again on next use, and children hear it.
    const forward: typeof relayed = {
      ...relayed,
      rootsChanged: Effect.zipRight(roots.invalidate, relayed.rootsChanged)
    }

    /** Exactly what tools/list answers (in search mode, the hot set and CallTool). */
    const list = Effect.fn("Registry.list")(function* () {
      return (yield* catalog).host.tools as ReadonlyArray<Tool>
    })

    /** Why a wire name that is not in the catalog cannot be called. */
    const unroutable = (wire: string, current: Catalog) =>
      Effect.gen(function* () {
        const entry = current.entries.find((candidate) => candidate.wire === wire && !candidate.listed)
        if (entry !== undefined) {
          return yield* new CallError({
            tool: wire,
            reason: "NoSuchTool",
            detail:
              entry.status === "collision"
                ? `"${wire}" is not served: ${entry.instance}.${entry.original} lost a name ${entry.rule}`
                : `"${wire}" is disabled by the config (${entry.rule} = false)`
          })
        }
        // A stopped instance's tools are not in the catalog: say it is not running, but never call it.
        const instance = Option.map(prefixes.route(wire), (route) => route.instance)
        // Sources words the refusal (one wording for every request to a stopped instance); only the tool is ours.
        const reached = Option.isSome(instance) ? yield* Effect.either(sources.connection(instance.value)) : undefined
        if (reached !== undefined && Either.isLeft(reached) && reached.left.reason === "NotRunning") {
          const { detail, retryable } = reached.left
          return yield* new CallError({ tool: wire, reason: "NotRunning", detail, retryable })
        }
        return yield* new CallError({
          tool: wire,
          reason: "NoSuchTool",
          detail:
            Option.isSome(instance) && sources.names.includes(instance.value)
              ? `source "${instance.value}" has no tool listed as "${wire}"`
              : `unknown tool "${wire}"`
        })
      })

    /** The per-call hot path: no span of its own (Tracing.toolCall's spans cover the call when they are wanted). */
    const call = (
      wire: string,
      request: {
        readonly arguments?: JsonObject | undefined
        readonly _meta?: JsonObject | undefined
        /** Task augmentation (protocol 2025-11-25), relayed as sent; the result's task id becomes the host's. */
        readonly task?: JsonObject | undefined
      },
      options?: CallOptions
    ): Effect.Effect<CallToolResult, CallError> =>
      Effect.gen(function* () {
        // The Gateway routes CallTool as its target already (CallPlan.parse); this is for callers of the Registry.
        if (wire === CallPlan.callToolName) {
          const target = CallPlan.callToolTarget(request.arguments)
          if (!target.ok) {
            return yield* new CallError({ tool: wire, reason: "InvalidArguments", detail: target.invalid })
          }
          return yield* call(target.name, { ...request, arguments: target.arguments }, options)
        }
        const core = manifest.byName.get(wire)
        if (core !== undefined) {
          const rule = coreDisabled.get(wire)
          if (rule !== undefined) {
            return yield* new CallError({
              tool: wire,
              reason: "NoSuchTool",
              detail: rule.startsWith("core_tools.")
                ? `"${wire}" is disabled by the config (${rule} = false)`
                : `"${wire}" is not served: ${rule}`
            })
          }
          return yield* core.call(request.arguments, yield* callerContext)
        }
        let current = yield* catalog
        let route = current.routes.get(wire)
        if (route === undefined) {
          // A call can race the start-up (a host that remembers names from a previous session): an unknown name
          // waits until every source has settled (bounded by their startup timeouts) before it is declared unknown.
          yield* sources.awaitSettled
          current = yield* catalog
          route = current.routes.get(wire)
        }
        if (route === undefined) return yield* unroutable(wire, current)
        // A listed tool of a source still starting (a restart, a cached catalog): it waits for that source alone.
        if (sources.connectionNow(route.instance) === undefined) yield* sources.awaitInstance(route.instance)
        const result = yield* sources.callTool(
          route.instance,
          {
            name: route.tool,
            ...(request.arguments === undefined ? {} : { arguments: request.arguments }),
            ...(request._meta === undefined ? {} : { _meta: request._meta }),
            ...(request.task === undefined ? {} : { task: request.task })
          } as CallToolRequest,
          options
        )
        // Task ids and clashing resource URIs in the result become the host's.
        return yield* forward.mapCallResult(route.instance, result)
      })

    /**
     * `call` without an Effect per call (ADR 009), for a call CallPlan lets through (the Gateway checked its side: no
     * progress asked, no task, no trace context; here CallPlan.forRoute: a listed tool of a running source): undefined
     * otherwise, and the caller takes `call` instead, which also explains every failure. Returns the cancel; `done` is never called synchronously.
     */
    const relayCall = (
      wire: string,
      request: { readonly arguments?: JsonObject | undefined; readonly _meta?: JsonObject | undefined },
      done: (outcome: Either.Either<CallToolResult, CallError>) => void
    ): (() => void) | undefined => {
      const core = manifest.byName.has(wire)
      const route = core ? undefined : catalogNow().routes.get(wire)
      const connection = route === undefined ? undefined : sources.connectionNow(route.instance)
      const plan = CallPlan.forRoute({ core, listed: route !== undefined, running: connection !== undefined })
      if (!plan.relay || route === undefined || connection === undefined) return undefined
      const forwarded: CallToolRequest = {
        name: route.tool,
        ...(request.arguments === undefined ? {} : { arguments: request.arguments }),
        ...(request._meta === undefined ? {} : { _meta: request._meta })
      }
      return connection.relayCall(forwarded, (outcome) => {
        if (Either.isLeft(outcome) || !forward.callResultNeedsMapping(outcome.right)) return done(outcome)
        Runtime.runFork(runtime)(
          Effect.map(forward.mapCallResult(route.instance, outcome.right), (mapped) => done(Either.right(mapped)))
        )
      })
    }

    /** The instance a listed wire name routes to (core tools and unknown names: none, after the start, as for `call`). */
    const instanceOf = (wire: string) =>
      Effect.gen(function* () {
        if (manifest.byName.has(wire)) return Option.none<string>()
        const route =
          (yield* catalog).routes.get(wire) ?? (yield* Effect.zipRight(sources.awaitSettled, catalog)).routes.get(wire)
        return Option.fromNullable(route?.instance)
      })

    /** The instance and tool's own name a listed wire name routes to, in the current catalog (none for core tools). */
    const routeOf = (wire: string) => Effect.map(catalog, (current) => Option.fromNullable(current.routes.get(wire)))

    /**
     * What a list request waits for: the sources still starting, at most `list_wait` ("0s": not at all) from the first
     * list, so one source that never answers cannot make a host give up on the whole catalog (and a host listing tools,
     * resources and prompts one after the other waits once). Late sources are announced by list_changed (Gateway).
     */
    const listWaitOver = yield* Deferred.make<void>()
    let listClock = false
    const listWait: Effect.Effect<void> = Duration.isZero(config.list_wait)
      ? Effect.void
      : Effect.suspend(() => {
          if (listClock) return Deferred.await(listWaitOver)
          listClock = true
          // A daemon: a host cancelling its first list must not end the wait its other lists share.
          const clock = Effect.zipRight(
            // A source serving its persisted catalog is never waited for (its tools are already known).
            Effect.timeoutOption(sources.awaitListed, config.list_wait),
            Deferred.succeed(listWaitOver, undefined)
          )
          return Effect.zipRight(Effect.forkDaemon(clock), Deferred.await(listWaitOver))
        })

    return {
      list,
      listWait,
      call,
      relayCall,
      instanceOf,
      routeOf,
      /** Resources, templates and prompts the host sees, with the routing back (`<instance>__` names, URI scheme). */
      surface,
      /** Every MCP method beyond tools, routed to the owning instance. */
      forward,
      /** The full catalog: listed tools, every entry with its rule, collisions, hash and routes. */
      catalog,
      manifest,
      search,
      health: sources.health,
      changes: sources.changes,
      awaitSettled: sources.awaitSettled
    } as const
  })
}) {}

/**
 * The core tools' roots (core-tools reference §1.3): the host's MCP roots when it declared the `roots` capability,
 * asked once and again after roots/list_changed; else the config's `roots` (relative to the config's folder); else
 * the directory clawtool started in. Roots that do not exist are dropped with a warning.
 */
const coreRoots = (configured: ReadonlyArray<string>, configDir: string) =>
  Effect.gen(function* () {
    const startDir = process.cwd()
    const fallback = yield* CoreRoots.normalize(configured.length > 0 ? configured : [startDir], configDir)
    for (const line of fallback.dropped) yield* Effect.logWarning(`config: roots: dropped ${line}`)
    const port = Option.map(yield* Effect.serviceOption(HostBridge), (bridge) => bridge.port)
    // The host's URIs as real folders, once per answer: the bridge keeps one answer per host until its roots change.
    const normalized = new WeakMap<ReadonlyArray<string>, ReadonlyArray<string>>()
    const fromHost = (uris: ReadonlyArray<string>) =>
      Effect.suspend(() => {
        const known = normalized.get(uris)
        if (known !== undefined) return Effect.succeed(known)
        return Effect.gen(function* () {
          const { roots, dropped } = yield* CoreRoots.normalize(uris, startDir)
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
