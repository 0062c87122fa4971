import { Deferred, Duration, Effect, Either, Option, Runtime } from "effect"
import * as CallPlan from "../domain/CallPlan.js"
import { CallError } from "../domain/Errors.js"
import type { CallToolRequest, CallToolResult, JsonObject, Tool } from "../domain/Mcp.js"
import { prefixOf } from "../domain/Config.js"
import { Config } from "./Config.js"
import * as Catalogs from "./Registry/Catalog.js"
import * as Forward from "./Registry/Forward.js"
import * as Surface from "./Registry/Surface.js"
import type { Catalog, InstanceTools } from "./Registry/Catalog.js"
import { coreSpecs } from "./Registry/CoreTools.js"
import * as Manifest from "./Registry/Manifest.js"
import * as NameBudget from "./Registry/NameBudget.js"
import * as ToolSearch from "./Registry/ToolSearch.js"
import type { CallOptions } from "./SourceClient.js"
import { Sources } from "./Sources.js"

export type { Catalog, CatalogEntry } from "./Registry/Catalog.js"

/** The same instances with the same tool arrays (Sources keeps an instance's array until its state changes). */
const sameInput = (a: ReadonlyArray<InstanceTools>, b: ReadonlyArray<InstanceTools>) =>
  a.length === b.length && a.every((entry, i) => entry.instance === b[i]!.instance && entry.tools === b[i]!.tools)

/**
 * The catalog the host sees and the routing back from it: clawtool's core tools beside every running source's
 * tools under budgeted `<instance>__<tool>` names, config gating (`enabled`, hints, alwaysLoad), the seed's
 * pipeline (hints → alwaysLoad → sort last) and a sha256 catalog hash.
 */
export class Registry extends Effect.Service<Registry>()("clawtool/Registry", {
  dependencies: [Sources.Default, Config.Default],
  effect: Effect.gen(function* () {
    const sources = yield* Sources
    const { config } = yield* Config
    const manifest = yield* Manifest.make(coreSpecs)
    const runtime = yield* Effect.runtime<never>()

    for (const key of Object.keys(config.tools)) {
      const instance = key.slice(0, key.indexOf("."))
      if (config.sources[instance] === undefined) {
        yield* Effect.logWarning(`config: [tools."${key}"] names no configured source "${instance}"`)
      }
    }

    // `prefix` per source (issue 12): the wire names' prefix, the instance name unless set.
    const prefixes = NameBudget.makePrefixes(
      Object.fromEntries(
        Object.entries(config.sources).map(([instance, source]) => [instance, prefixOf(instance, source)])
      )
    )

    // The catalog is rebuilt only when some instance's tool list changed; the search index only when the hash did.
    let built: { readonly input: ReadonlyArray<InstanceTools>; readonly catalog: Catalog } | undefined
    let index: ToolSearch.Index | undefined

    const catalogNow = (): Catalog => {
      const input = sources.catalogNow()
      if (built !== undefined && sameInput(built.input, input)) return built.catalog
      const next = Catalogs.build({
        manifest,
        sources: input,
        toolConfig: config.tools,
        budget: config.name_budget,
        prefixes
      })
      built = { input, catalog: next }
      return next
    }
    const catalog: Effect.Effect<Catalog> = Effect.sync(catalogNow)

    const search = (query: string, limit: number) =>
      Effect.map(catalog, (current) => {
        if (index === undefined || index.hash !== current.hash) index = ToolSearch.build(current, manifest)
        return { hash: current.hash, hits: index.search(query, limit) }
      }).pipe(Effect.withSpan("Registry.search", { attributes: { "clawtool.search.limit": limit } }))

    const context: Manifest.CoreContext = { catalog, health: sources.health, search }

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
    const forward = Forward.make(sources, surface, prefixes)

    /** Exactly what tools/list answers. */
    const list = Effect.fn("Registry.list")(function* () {
      return (yield* catalog).tools as ReadonlyArray<Tool>
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
        const core = manifest.byName.get(wire)
        if (core !== undefined) return yield* core.call(request.arguments, context)
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
