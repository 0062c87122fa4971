import { Deferred, Duration, Effect, Either, MutableRef, Option, Runtime, Stream } from "effect"
import * as CallPlan from "../domain/CallPlan.js"
import type { ClawtoolConfig } from "../domain/Config.js"
import type { CallOptions } from "../domain/Connection.js"
import { CallError } from "../domain/Errors.js"
import { HealthRow } from "../domain/Health.js"
import type { CallToolRequest, CallToolResult, JsonObject, Tool } from "../domain/Mcp.js"
import { type CatalogView, CurrentToolProvider } from "../domain/ToolProvider.js"
import { prefixOf } from "../domain/Config.js"
import { Audit } from "./Audit.js"
import { Config } from "./Config.js"
import { Pins } from "./Pins.js"
import * as Catalogs from "./Registry/Catalog.js"
import { type Confirmation, confirmationsOf } from "./Registry/Confirmations.js"
import * as Forward from "./Registry/Forward.js"
import * as Surface from "./Registry/Surface.js"
import type { Catalog, InstanceTools } from "./Registry/CatalogTypes.js"
import * as NameBudget from "./Registry/NameBudget.js"
import type * as ToolSearch from "./Registry/ToolSearch.js"
import { Sources } from "./Sources.js"
import * as Confirm from "./Trust/Confirm.js"

export type { Catalog, CatalogEntry } from "./Registry/CatalogTypes.js"
export type { Confirmation } from "./Registry/Confirmations.js"

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

/** A `[trust] confirm` selector naming no configured source is only a warning, at start (`[trust]` is read then). */
export const warnUnknownConfirm = (config: ClawtoolConfig) =>
  Effect.forEach(
    Confirm.unknownInstances(config.trust.confirm, config.sources),
    ({ selector, instance }) =>
      Effect.logWarning(`config: [trust] confirm "${selector}" names no configured source "${instance}"`),
    { discard: true }
  )

/** The same instances with the same tool arrays (Sources keeps an instance's array until its state changes). */
const sameInput = (a: ReadonlyArray<InstanceTools>, b: ReadonlyArray<InstanceTools>) =>
  a.length === b.length && a.every((entry, i) => entry.instance === b[i]!.instance && entry.tools === b[i]!.tools)

/**
 * What the Registry derives and keeps until its inputs change, each with the inputs it was made from (compared by
 * identity): one record, read synchronously because relayCall (ADR 009) routes without an Effect per call.
 */
interface Derived {
  /** The wire names' prefixes, of one config object. */
  readonly prefixes: { readonly config: ClawtoolConfig; readonly prefixes: NameBudget.Prefixes }
  /** The catalog, of the instances' tool arrays and the config it was built from. */
  readonly catalog:
    | {
        readonly input: ReadonlyArray<InstanceTools>
        readonly config: ClawtoolConfig
        /** The pins' verdicts on that input (a new object when an approval or a re-read changed them). */
        readonly trust: unknown
        readonly catalog: Catalog
      }
    | undefined
  /** The listed source tools `[trust] confirm` names, by wire name, of one catalog. */
  readonly confirmations: { readonly catalog: Catalog; readonly byWire: ReadonlyMap<string, Confirmation> } | undefined
  /** The search index, of the catalog hash it carries. */
  readonly index: ToolSearch.Index | undefined
  /** Resources, templates and prompts, of each running child's surface. */
  readonly surface:
    { readonly inputs: ReadonlyArray<Surface.SurfaceInput>; readonly surface: Surface.Surface } | undefined
}

/**
 * The catalog the host sees and the routing back from it: the tool provider's (core tools) beside every running
 * source's tools under budgeted `<instance>__<tool>` names, config gating (`enabled`, hints, alwaysLoad), the seed's
 * pipeline (hints → alwaysLoad → sort last) and a sha256 catalog hash. Core tools reach it only through the
 * provider contract (domain/ToolProvider.ts; CoreTools.Provider in the app's layers).
 */
export class Registry extends Effect.Service<Registry>()("clawtool/Registry", {
  dependencies: [Sources.Default, Config.Default, Pins.Default],
  effect: Effect.gen(function* () {
    const sources = yield* Sources
    // Optional so tests of the Registry alone need none; the app's graph always has it (the dependency above).
    const pins = Option.getOrElse(yield* Effect.serviceOption(Pins), () => Pins.Off)
    const { config, live } = yield* Config
    const provider = yield* CurrentToolProvider
    const manifest = provider.listing
    const coreDisabled = provider.disabled
    const runtime = yield* Effect.runtime<never>()

    yield* warnUnknownSelectors(config)
    yield* warnUnknownConfirm(config)

    // `prefix` per source (issue 12): the wire names' prefix, the instance name unless set. Read from the live config
    // (a reload may change it; ADR 016), rebuilt only when the config object changed.
    const prefixesOf = (from: ClawtoolConfig) =>
      NameBudget.makePrefixes(
        Object.fromEntries(
          Object.entries(from.sources).map(([instance, source]) => [instance, prefixOf(instance, source)])
        )
      )
    const derived = MutableRef.make<Derived>({
      prefixes: { config, prefixes: prefixesOf(config) },
      catalog: undefined,
      confirmations: undefined,
      index: undefined,
      surface: undefined
    })
    const keep = (update: Partial<Derived>) => MutableRef.update(derived, (kept) => ({ ...kept, ...update }))
    const currentPrefixes = () => {
      const current = live.get()
      const kept = MutableRef.get(derived).prefixes
      if (kept.config === current) return kept.prefixes
      const next = prefixesOf(current)
      keep({ prefixes: { config: current, prefixes: next } })
      return next
    }
    const prefixes: NameBudget.Prefixes = {
      of: (instance) => currentPrefixes().of(instance),
      route: (wire) => currentPrefixes().route(wire)
    }

    // The catalog is rebuilt only when some instance's tool list, the config (a reload, ADR 016) or the pins' verdicts
    // (issue 25: judged here, synchronously, so no listing is ever served unjudged) changed; the search index only when
    // the hash did. Tool rules, name_budget and hints come from the live config: no child restarts.
    const catalogNow = (): Catalog => {
      const input = sources.catalogNow()
      const current = live.get()
      const trust = pins.judge(input)
      const built = MutableRef.get(derived).catalog
      if (built !== undefined && built.config === current && built.trust === trust && sameInput(built.input, input)) {
        return built.catalog
      }
      const next = Catalogs.build({
        mode: current.catalog,
        manifest,
        sources: input,
        toolConfig: current.tools,
        budget: current.name_budget,
        coreDisabled,
        prefixes,
        readOnly: new Set(
          Object.entries(current.sources).flatMap(([instance, source]) => (source.read_only ? [instance] : []))
        ),
        trust: trust.byInstance
      })
      keep({ catalog: { input, config: current, trust, catalog: next } })
      return next
    }
    const catalog: Effect.Effect<Catalog> = Effect.sync(catalogNow)

    const search = (query: string, limit: number) =>
      Effect.gen(function* () {
        const current = yield* catalog
        let index = MutableRef.get(derived).index
        if (index === undefined || index.hash !== current.hash) {
          // The index (MiniSearch, the stemmer) loads on the first search: most sessions never search.
          const { build } = yield* Effect.promise(() => import("./Registry/ToolSearch.js"))
          index = build(current, manifest)
          keep({ index })
        }
        return { hash: current.hash, hits: index.search(query, limit) }
      }).pipe(Effect.withSpan("Registry.search", { attributes: { "clawtool.search.limit": limit } }))

    // `[trust] confirm` (ADR 029), read at start: which listed tools need the user's yes, derived once per catalog.
    const confirmMatcher = Confirm.matcher(config.trust.confirm)
    const settings = config.trust
    /** Whether `[trust] confirm` names the tool a wire name calls now (undefined: it runs unasked, or is not listed). */
    const confirmationNow = (wire: string): Confirmation | undefined => {
      if (confirmMatcher.empty) return undefined
      if (manifest.byName.has(wire)) {
        const target: Confirm.Target = { kind: "core", name: wire }
        const selector = confirmMatcher.matching(target)
        return selector === undefined ? undefined : { selector, target, settings }
      }
      const current = catalogNow()
      const kept = MutableRef.get(derived)
      if (kept.confirmations?.catalog === current) return kept.confirmations.byWire.get(wire)
      const byWire = confirmationsOf(confirmMatcher, settings, current, kept.catalog?.input ?? [])
      keep({ confirmations: { catalog: current, byWire } })
      return byWire.get(wire)
    }
    /** As confirmationNow, after the start-up for a name not listed yet (as `call` waits before calling it). */
    const unconfirmed = Effect.succeed(Option.none<Confirmation>())
    const confirmation = (wire: string): Effect.Effect<Option.Option<Confirmation>> =>
      confirmMatcher.empty
        ? unconfirmed
        : Effect.gen(function* () {
            if (!manifest.byName.has(wire) && !(yield* catalog).routes.has(wire)) yield* sources.awaitSettled
            return Option.fromNullable(confirmationNow(wire))
          })
    /**
     * Each source's health with its quarantined tools counted, and a row for the lock file while the pins in effect
     * are not what it holds (not writable, or a re-read rejected).
     */
    const pinnedHealth = Effect.gen(function* () {
      const rows = yield* sources.health
      yield* catalog
      const state = yield* pins.state
      const counted = rows.map((row) => {
        const quarantined = state.quarantined.get(row.name) ?? 0
        return quarantined === 0 || row.kind !== "source" ? row : new HealthRow({ ...row, quarantined })
      })
      return state.problem === undefined ? counted : [...counted, lockFileRow(state.file, state.problem)]
    })
    // Health: every source's row, and the audit log's while it is not written or dropped lines (serve only).
    const audit = yield* Effect.serviceOption(Audit)
    const health = Option.match(audit, {
      onNone: () => pinnedHealth,
      onSome: (log) => Effect.zipWith(log.health, pinnedHealth, (own, rows) => [...own, ...rows])
    })

    /** What the provider's tools (ToolSearch, SourceHealth) read of the catalog. */
    const view: CatalogView = { catalog, health, search }

    // Resources, templates and prompts of the running children, rebuilt only when one child's surface changed.
    const surface: Effect.Effect<Surface.Surface> = Effect.gen(function* () {
      const running = new Map((yield* sources.running).map((child) => [child.instance, child]))
      const builtSurface = MutableRef.get(derived).surface
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
      if (same) return builtSurface.surface
      const rebuilt = { inputs, surface: Surface.build(inputs, prefixes) }
      keep({ surface: rebuilt })
      for (const { wire, kept, dropped } of rebuilt.surface.promptCollisions) {
        yield* Effect.logWarning(`prompt name collision on "${wire}": kept ${kept}; not served: ${dropped.join(", ")}`)
      }
      return rebuilt.surface
    })
    const relayed = Forward.make(sources, surface, prefixes)
    // The host's roots changed: the core tools' roots are read again on next use, and children hear it.
    const forward: typeof relayed = {
      ...relayed,
      rootsChanged: Effect.zipRight(provider.rootsChanged, relayed.rootsChanged)
    }

    /** Exactly what tools/list answers (in search mode, the hot set and CallTool). */
    const list = Effect.fn("Registry.list")(function* () {
      return (yield* catalog).host.tools as ReadonlyArray<Tool>
    })

    /** Why a wire name that is not in the catalog cannot be called. */
    const unroutable = (wire: string, current: Catalog) =>
      Effect.gen(function* () {
        const entry = current.entries.find((candidate) => candidate.wire === wire && !candidate.listed)
        if (entry !== undefined && entry.rule === Catalogs.readOnlyRule(entry.instance)) {
          return yield* new CallError({
            tool: wire,
            reason: "Denied",
            detail: `"${wire}" is refused: source "${entry.instance}" is read-only (${entry.rule} = true), which serves only tools annotated readOnlyHint: true, and "${entry.original}" is not`
          })
        }
        if (entry !== undefined && entry.status === "quarantined") {
          return yield* new CallError({
            tool: wire,
            reason: "Quarantined",
            detail: `"${wire}" is quarantined: ${entry.rule}`
          })
        }
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
        if (manifest.byName.has(wire)) {
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
          return yield* provider.call(wire, request.arguments, view)
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
     * progress asked, no task, no trace context; here CallPlan.forRoute: a listed tool of a running source, not named by
     * `[trust] confirm`): undefined
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
      const plan = CallPlan.forRoute({
        core,
        listed: route !== undefined,
        running: connection !== undefined,
        confirm: confirmationNow(wire) !== undefined
      })
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

    /** Where a wire name goes now, synchronously: a listed source tool's route, "core", or undefined (the audit's). */
    const routeNow = (wire: string) => (manifest.byName.has(wire) ? ("core" as const) : catalogNow().routes.get(wire))

    /** The instance and tool's own name a listed wire name routes to, in the current catalog (none for core tools). */
    const routeOf = (wire: string) => Effect.map(catalog, (current) => Option.fromNullable(current.routes.get(wire)))

    /**
     * What a list request waits for: the sources still starting, at most `list_wait` ("0s": not at all) from the first
     * list, so one source that never answers cannot make a host give up on the whole catalog (and a host listing tools,
     * resources and prompts one after the other waits once). Late sources are announced by list_changed (Gateway).
     */
    const listWaitOver = yield* Deferred.make<void>()
    let listWaitTimeouts = 0
    // A daemon: a host cancelling its first list must not end the wait its other lists share.
    const startListClock = yield* Effect.once(
      Effect.forkDaemon(
        Effect.zipRight(
          // A source serving its persisted catalog is never waited for (its tools are already known).
          Effect.tap(Effect.timeoutOption(sources.awaitListed, config.list_wait), (listed) =>
            Effect.sync(() => {
              if (Option.isNone(listed)) listWaitTimeouts++
            })
          ),
          Deferred.succeed(listWaitOver, undefined)
        )
      )
    )
    const listWait: Effect.Effect<void> = Duration.isZero(config.list_wait)
      ? Effect.void
      : Effect.zipRight(startListClock, Deferred.await(listWaitOver))

    return {
      list,
      listWait,
      /** How many times list_wait ran out before every source listed (the daemon's metrics). */
      listWaitTimeouts: () => listWaitTimeouts,
      call,
      relayCall,
      confirmation,
      instanceOf,
      routeOf,
      routeNow,
      /** Resources, templates and prompts the host sees, with the routing back (`<instance>__` names, URI scheme). */
      surface,
      /** Every MCP method beyond tools, routed to the owning instance. */
      forward,
      /** The full catalog: listed tools, every entry with its rule, collisions, hash and routes. */
      catalog,
      search,
      health,
      /** The pins (issue 25): `tools list`'s TRUST column, the lock file's state. */
      pins,
      changes: Stream.merge(sources.changes, pins.changes),
      awaitSettled: sources.awaitSettled
    } as const
  })
}) {}

/** The lock file's row in Health while its pins are not in effect as written (issue 25). */
const lockFileRow = (file: string, problem: string): HealthRow =>
  new HealthRow({
    kind: "config",
    name: "pins",
    status: "down",
    reason: problem,
    toolCount: 0,
    package: file,
    pid: null,
    startedAt: null,
    startupMs: null,
    stderrTail: []
  })
