import { Deferred, Duration, Effect, MutableRef, Option, Runtime, Stream } from "effect"
import type { ClawtoolConfig } from "../domain/Config.js"
import { HealthRow, profileRemovedRow } from "../domain/Health.js"
import { CurrentToolProvider } from "../domain/ToolProvider.js"
import { prefixOf } from "../domain/Config.js"
import { Audit } from "./Audit.js"
import { Config } from "./Config.js"
import { Pins } from "./Pins.js"
import { Redaction } from "./Redaction.js"
import * as Catalogs from "./Registry/Catalog.js"
import { type Confirmation, confirmationsOf } from "./Registry/Confirmations.js"
import * as Surface from "./Registry/Surface.js"
import type { Catalog, InstanceTools } from "./Registry/CatalogTypes.js"
import * as NameBudget from "./Registry/NameBudget.js"
import * as Profiles from "./Registry/Profiles.js"
import * as View from "./Registry/View.js"
import { Sources } from "./Sources.js"
import * as Confirm from "./Trust/Confirm.js"

export type { Catalog, CatalogEntry } from "./Registry/CatalogTypes.js"
export type { Confirmation } from "./Registry/Confirmations.js"
export type { RegistryView } from "./Registry/View.js"

/**
 * A `[tools."i.t"]` table for no configured source is only a warning (at start and after each reload); so is what a
 * profile or token names that does not exist (issue 26).
 */
export const warnUnknownSelectors = (config: ClawtoolConfig) =>
  Effect.zipRight(
    Effect.forEach(
      Object.keys(config.tools),
      (key) => {
        const instance = key.slice(0, key.indexOf("."))
        return config.sources[instance] === undefined
          ? Effect.logWarning(`config: [tools."${key}"] names no configured source "${instance}"`)
          : Effect.void
      },
      { discard: true }
    ),
    Effect.forEach(Profiles.problems(config), (problem) => Effect.logWarning(`config: ${problem}`), { discard: true })
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
  dependencies: [Sources.Default, Config.Default, Pins.Default, Redaction.Default],
  effect: Effect.gen(function* () {
    const sources = yield* Sources
    // Optional so tests of the Registry alone need none; the app's graph always has it (the dependency above).
    const pins = Option.getOrElse(yield* Effect.serviceOption(Pins), () => Pins.Off)
    const redaction = yield* Effect.serviceOption(Redaction)
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
      // A child's stderr and the reasons it caused leave toward the host here (SourceHealth, `clawtool health`, which a
      // host's own shell can run, /readyz): the known secrets are replaced, with the redactor of now.
      const redact = Option.getOrUndefined(redaction)?.current()
      const counted = rows.map((row) => {
        const quarantined = state.quarantined.get(row.name) ?? 0
        const seen =
          redact?.active === true
            ? new HealthRow({ ...row, reason: redact.text(row.reason), stderrTail: row.stderrTail.map(redact.text) })
            : row
        return quarantined === 0 || row.kind !== "source" ? seen : new HealthRow({ ...seen, quarantined })
      })
      return state.problem === undefined ? counted : [...counted, lockFileRow(state.file, state.problem)]
    })
    // Health: every source's row, and the audit log's while it is not written or dropped lines (serve only).
    const audit = yield* Effect.serviceOption(Audit)
    const health = Option.match(audit, {
      onNone: () => pinnedHealth,
      onSome: (log) => Effect.zipWith(log.health, pinnedHealth, (own, rows) => [...own, ...rows])
    })

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

    const changes = Stream.merge(sources.changes, pins.changes)
    const viewInput = {
      sources,
      provider,
      prefixes,
      runtime,
      confirmationNow,
      confirmation,
      listWait,
      changes,
      awaitSettled: sources.awaitSettled
    }
    const whole = View.make({
      ...viewInput,
      catalogNow,
      core: (wire) => manifest.byName.has(wire),
      sees: () => true,
      surface,
      health
    })

    // Profiles (issue 26): views over the one catalog, each derived once per catalog (and per config: a reload may
    // change a profile), so a call reads its view's routes as synchronously as the whole catalog's.
    const profileViews = new Map<string, View.RegistryView>()
    const makeProfileView = (name: string): View.RegistryView => {
      let resolved: { readonly config: ClawtoolConfig; readonly profile: Profiles.Profile | undefined } | undefined
      // A profile a reload removed (ADR 031): its sessions keep its last table, resolved against the config in effect
      // (a daemon's sessions of it are ended by the Daemon; a stdio serve's host cannot move, so it is not emptied).
      let last: ClawtoolConfig["profiles"][string] | undefined
      let removed: HealthRow | undefined
      const profileNow = () => {
        const current = live.get()
        if (resolved?.config === current) return resolved.profile
        const table = current.profiles[name] ?? last
        if (current.profiles[name] === undefined && last !== undefined && removed === undefined) {
          removed = profileRemovedRow(name)
          Runtime.runFork(runtime)(Effect.logWarning(removed.reason))
        }
        if (current.profiles[name] !== undefined) removed = undefined
        last = table
        resolved = {
          config: current,
          profile: table === undefined ? undefined : Profiles.resolve(name, table, current)
        }
        return resolved.profile
      }
      let restricted:
        | { readonly whole: Catalog; readonly profile: Profiles.Profile | undefined; readonly catalog: Catalog }
        | undefined
      const profileCatalogNow = (): Catalog => {
        const full = catalogNow()
        const profile = profileNow()
        if (restricted?.whole === full && restricted.profile === profile) return restricted.catalog
        const next =
          profile === undefined
            ? full.restrict(() => false, live.get().catalog)
            : full.restrict(profile.admits, profile.mode ?? live.get().catalog)
        restricted = { whole: full, profile, catalog: next }
        return next
      }
      let surfaceKept:
        { readonly whole: Surface.Surface; readonly profile: unknown; readonly surface: Surface.Surface } | undefined
      const profileSurface = Effect.map(surface, (full) => {
        const profile = profileNow()
        if (surfaceKept?.whole === full && surfaceKept.profile === profile) return surfaceKept.surface
        const inputs = (MutableRef.get(derived).surface?.inputs ?? []).filter(
          (input) => profile?.instances.has(input.instance) ?? false
        )
        surfaceKept = { whole: full, profile, surface: Surface.build(inputs, prefixes) }
        return surfaceKept.surface
      })
      return View.make({
        ...viewInput,
        catalogNow: profileCatalogNow,
        core: (wire) => {
          const provided = manifest.byName.get(wire)
          const profile = profileNow()
          return (
            provided !== undefined &&
            profile !== undefined &&
            profile.admits({ kind: "core", instance: "", original: provided.spec.name, tool: provided.tool })
          )
        },
        sees: (instance) => profileNow()?.instances.has(instance) ?? false,
        surface: profileSurface,
        health: Effect.map(health, (rows) => {
          const profile = profileNow()
          if (profile === undefined) return []
          const own = Profiles.healthOf(profile, rows)
          return removed === undefined ? own : [...own, removed]
        })
      })
    }
    /**
     * What a session sees: the whole catalog, or profile `name`'s view (the same object for every session of it). A
     * profile the config never defined sees nothing (the endpoint that named it checked it first); one a reload removed
     * keeps its last definition, with a warning and a Health row.
     */
    const viewOf = (name?: string): View.RegistryView => {
      if (name === undefined) return whole
      let kept = profileViews.get(name)
      if (kept === undefined) {
        kept = makeProfileView(name)
        profileViews.set(name, kept)
      }
      return kept
    }

    return {
      ...whole,
      /** The whole catalog, whatever view: `tools list` and the pins read it. */
      catalog,
      health,
      viewOf,
      /** The profiles the config defines now. */
      profileNames: () => Object.keys(live.get().profiles),
      /** How many times list_wait ran out before every source listed (the daemon's metrics). */
      listWaitTimeouts: () => listWaitTimeouts,
      /** The pins (issue 25): `tools list`'s TRUST column, the lock file's state. */
      pins
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
