import { Effect, Either, MutableRef, Option, Runtime, type Stream } from "effect"
import * as CallPlan from "../../domain/CallPlan.js"
import type { CallOptions } from "../../domain/Connection.js"
import { CallError } from "../../domain/Errors.js"
import type { HealthRow } from "../../domain/Health.js"
import type { CallToolRequest, CallToolResult, JsonObject, Tool } from "../../domain/Mcp.js"
import type { CatalogView, ToolProvider } from "../../domain/ToolProvider.js"
import type { Sources } from "../Sources.js"
import { readOnlyRule } from "./Catalog.js"
import type { Catalog } from "./CatalogTypes.js"
import * as CodeNames from "./CodeNames.js"
import type { Confirmation } from "./Confirmations.js"
import * as Forward from "./Forward.js"
import type * as NameBudget from "./NameBudget.js"
import type * as Surface from "./Surface.js"
import type * as ToolSearch from "./ToolSearch.js"

/**
 * What one view of the catalog serves a host session: the whole catalog (no profile), or a profile's (issue 26). Every
 * view routes over the same sources and wire names; a view only sees less. A name outside it is answered as an
 * unknown name is, so a host cannot tell a tool it may not see from one that does not exist.
 */
export interface ViewInput {
  readonly sources: Sources
  readonly provider: ToolProvider
  readonly prefixes: NameBudget.Prefixes
  readonly runtime: Runtime.Runtime<never>
  /** This view's catalog now, synchronously (the relay reads it per call, ADR 009). */
  readonly catalogNow: () => Catalog
  /** A core tool (a name of the provider's listing) this view serves. */
  readonly core: (wire: string) => boolean
  /** A source instance this view sees. */
  readonly sees: (instance: string) => boolean
  /** Whether `[trust] confirm` names a listed tool (the whole catalog's; asked only for names this view serves). */
  readonly confirmationNow: (wire: string) => Confirmation | undefined
  readonly confirmation: (wire: string) => Effect.Effect<Option.Option<Confirmation>>
  readonly surface: Effect.Effect<Surface.Surface>
  readonly health: Effect.Effect<ReadonlyArray<HealthRow>>
  readonly listWait: Effect.Effect<void>
  readonly changes: Stream.Stream<void>
  readonly awaitSettled: Effect.Effect<void>
}

export const make = (input: ViewInput) => {
  const { sources, provider, prefixes, runtime, catalogNow, core } = input
  const manifest = provider.listing
  const coreDisabled = provider.disabled
  const catalog: Effect.Effect<Catalog> = Effect.sync(catalogNow)

  // Code mode (RunCode served here, ADR 035): the names code calls this view's tools by; ToolSearch's hits carry
  // their signatures.
  const codeMode = core("RunCode") && !coreDisabled.has("RunCode")
  const codeNamesOf = CodeNames.memoized<Catalog>()
  const codeNames = Effect.map(catalog, (current) => CodeNames.codeNamesObject(codeNamesOf(current)))

  // The search index of this view, rebuilt when its hash changed.
  const index = MutableRef.make<ToolSearch.Index | undefined>(undefined)
  const search = (query: string, limit: number) =>
    Effect.gen(function* () {
      const current = yield* catalog
      let built = MutableRef.get(index)
      if (built === undefined || built.hash !== current.hash) {
        // The index (MiniSearch, the stemmer) loads on the first search: most sessions never search.
        const { build } = yield* Effect.promise(() => import("./ToolSearch.js"))
        built = build(current, manifest)
        MutableRef.set(index, built)
      }
      const hits = built.search(query, limit)
      return { hash: current.hash, hits: codeMode ? CodeNames.withSignatures(hits, codeNamesOf(current)) : hits }
    }).pipe(Effect.withSpan("Registry.search", { attributes: { "clawtool.search.limit": limit } }))

  /** What the provider's tools (ToolSearch, SourceHealth, RunCode) read of the catalog: this view's. */
  const view: CatalogView = { catalog, health: input.health, search, codeNames }
  const relayed = Forward.make(sources, input.surface, prefixes)
  // The host's roots changed: the core tools' roots are read again on next use, and children hear it.
  const forward: typeof relayed = {
    ...relayed,
    rootsChanged: Effect.zipRight(provider.rootsChanged, relayed.rootsChanged)
  }

  /** Exactly what tools/list answers (in search mode, the hot set and CallTool). */
  const list = Effect.fn("Registry.list")(function* () {
    return (yield* catalog).host.tools as ReadonlyArray<Tool>
  })

  /** Why a wire name that is not in this view's catalog cannot be called. */
  const unroutable = (wire: string, current: Catalog) =>
    Effect.gen(function* () {
      const entry = current.entries.find((candidate) => candidate.wire === wire && !candidate.listed)
      if (entry !== undefined && entry.rule === readOnlyRule(entry.instance)) {
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
      // A stopped instance's tools are not in the catalog: say it is not running, but never call it. An instance this
      // view does not see is no instance at all.
      const instance = Option.filter(
        Option.map(prefixes.route(wire), (route) => route.instance),
        input.sees
      )
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
      if (core(wire)) {
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
   * `[trust] confirm`): undefined otherwise, and the caller takes `call` instead, which also explains every failure.
   * Returns the cancel; `done` is never called synchronously.
   */
  const relayCall = (
    wire: string,
    request: { readonly arguments?: JsonObject | undefined; readonly _meta?: JsonObject | undefined },
    done: (outcome: Either.Either<CallToolResult, CallError>) => void,
    /** The calling host's capabilities, for a modern child's envelope (Connection.relayCall). */
    hostCapabilities?: JsonObject
  ): (() => void) | undefined => {
    const isCore = core(wire)
    const route = isCore ? undefined : catalogNow().routes.get(wire)
    const connection = route === undefined ? undefined : sources.connectionNow(route.instance)
    const plan = CallPlan.forRoute({
      core: isCore,
      listed: route !== undefined,
      running: connection !== undefined,
      confirm: input.confirmationNow(wire) !== undefined
    })
    if (!plan.relay || route === undefined || connection === undefined) return undefined
    const forwarded: CallToolRequest = {
      name: route.tool,
      ...(request.arguments === undefined ? {} : { arguments: request.arguments }),
      ...(request._meta === undefined ? {} : { _meta: request._meta })
    }
    return connection.relayCall(
      forwarded,
      (outcome) => {
        if (Either.isLeft(outcome) || !forward.callResultNeedsMapping(outcome.right)) return done(outcome)
        Runtime.runFork(runtime)(
          Effect.map(forward.mapCallResult(route.instance, outcome.right), (mapped) => done(Either.right(mapped)))
        )
      },
      hostCapabilities
    )
  }

  /** The instance a listed wire name routes to (core tools and unknown names: none, after the start, as for `call`). */
  const instanceOf = (wire: string) =>
    Effect.gen(function* () {
      if (core(wire)) return Option.none<string>()
      const route =
        (yield* catalog).routes.get(wire) ?? (yield* Effect.zipRight(sources.awaitSettled, catalog)).routes.get(wire)
      return Option.fromNullable(route?.instance)
    })

  /** Where a wire name goes now, synchronously: a listed source tool's route, "core", or undefined (the audit's). */
  const routeNow = (wire: string) => (core(wire) ? ("core" as const) : catalogNow().routes.get(wire))

  /** The instance and tool's own name a listed wire name routes to, in the current catalog (none for core tools). */
  const routeOf = (wire: string) => Effect.map(catalog, (current) => Option.fromNullable(current.routes.get(wire)))

  /** `[trust] confirm` for a name this view serves; a name outside it is refused as unknown before anyone is asked. */
  const confirmation = (wire: string): Effect.Effect<Option.Option<Confirmation>> =>
    Effect.map(input.confirmation(wire), (found) =>
      Option.isSome(found) && (core(wire) || catalogNow().routes.has(wire)) ? found : Option.none()
    )

  return {
    list,
    listWait: input.listWait,
    call,
    relayCall,
    confirmation,
    instanceOf,
    routeOf,
    routeNow,
    /** A source instance this view sees (its tasks, resources and prompts are this view's; others are nobody's). */
    sees: input.sees,
    /** Resources, templates and prompts the host sees, with the routing back (`<instance>__` names, URI scheme). */
    surface: input.surface,
    /** Every MCP method beyond tools, routed to the owning instance. */
    forward,
    /** This view's catalog: listed tools, every entry with its rule, collisions, hash and routes. */
    catalog,
    search,
    health: input.health,
    changes: input.changes,
    awaitSettled: input.awaitSettled
  } as const
}

/** One view of the catalog, as the Gateway serves it to a host session. */
export type RegistryView = ReturnType<typeof make>
