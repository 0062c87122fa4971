import { Data, Duration, Option } from "effect"
import type { Connection, LiveSurface } from "../../domain/Connection.js"
import { CallError, type SourceError } from "../../domain/Errors.js"
import { HealthRow, type Status } from "../../domain/Health.js"
import type { JsonObject, Tool } from "../../domain/Mcp.js"
import type { InstanceSurface } from "../../domain/Surface.js"
import type { CachedCatalog } from "../CatalogCache.js"
import type { Diagnostics } from "./Diagnostics.js"
import type { Decision } from "./Policy.js"
import * as Policy from "./Policy.js"

/**
 * One configured instance as the supervisor sees it, and its transitions: pure values, no effects. The seed's
 * `Instance` (name, spawn time, tools, client while running) with the lifecycle the seed kept in its Manager.
 *
 *   Starting ──running──▶ Running ──failed──▶ Down ──restarting──▶ Starting (spawning: a child is spawned)
 *      │                    ├─ surfaceChanged (re-listed tools)
 *      └─fromCache          └─ idle (a lazy source's idle_timeout) ──▶ Idle ──spawning──▶ Starting
 */

/** What every state carries. */
interface Common {
  readonly name: string
  /** Why the instance is not running; kept while a restart is under way, so Health says why it restarts. */
  readonly error: Option.Option<SourceError>
  /**
   * The tools this instance contributes to the catalog. Kept while a restart is pending, so a child that comes back
   * with the same tools changes nothing the host sees; emptied when the instance stops for good or crash-loops.
   */
  readonly tools: ReadonlyArray<Tool>
  /** The names of `tools`, built when the tools change (callTool's lookup). */
  readonly toolNames: ReadonlySet<string>
  /** Spawn time of the current (or last) child. */
  readonly startedAt: Option.Option<Date>
  readonly startupMs: Option.Option<number>
  /** Restarts performed since clawtool started. */
  readonly restarts: number
  /** `tools` came from the persisted catalog and no child of this run has listed them yet. */
  readonly cached: boolean
  /**
   * The persisted catalog's resources, templates and prompts, with the server capabilities they were listed under:
   * served beside the cached tools (same lifetime), until a child of this run lists its own.
   */
  readonly cachedSurface: CachedSurface | undefined
}

/** What the Registry builds an instance's resources, templates and prompts from when no child serves them. */
export interface CachedSurface {
  readonly capabilities: JsonObject
  readonly surface: InstanceSurface
}

export type Instance = Data.TaggedEnum<{
  Starting: Common
  Running: Common & {
    readonly connection: Connection
    /** When the current child finished initialize and tools/list. */
    readonly runningSince: Date
  }
  Down: Common & {
    readonly status: "down" | "unauthenticated" | "crash-loop"
    /** When the next restart is due; none when the instance stays down. */
    readonly nextRetryAt: Option.Option<Date>
  }
  /** A lazy source with no child: not started yet (its catalog is cached) or stopped after idle_timeout. */
  Idle: Common
}>
const { Down, Idle, Running, Starting } = Data.taggedEnum<Instance>()

const noTools: ReadonlyArray<Tool> = []
const noNames: ReadonlySet<string> = new Set()

/** Configured, before its first spawn. */
export const make = (name: string): Instance =>
  Starting({
    name,
    error: Option.none(),
    tools: noTools,
    toolNames: noNames,
    startedAt: Option.none(),
    startupMs: Option.none(),
    restarts: 0,
    cached: false,
    cachedSurface: undefined
  })

const common = (self: Instance): Common => ({
  name: self.name,
  error: self.error,
  tools: self.tools,
  toolNames: self.toolNames,
  startedAt: self.startedAt,
  startupMs: self.startupMs,
  restarts: self.restarts,
  cached: self.cached,
  cachedSurface: self.cachedSurface
})

/** Same tools, field for field: a restart that lists them again keeps the old array, so nothing downstream rebuilds. */
const sameTools = (a: ReadonlyArray<Tool>, b: ReadonlyArray<Tool>) =>
  a === b || (a.length === b.length && JSON.stringify(a) === JSON.stringify(b))

const withTools = (self: Instance, tools: ReadonlyArray<Tool>) =>
  sameTools(self.tools, tools)
    ? { tools: self.tools, toolNames: self.toolNames }
    : { tools, toolNames: new Set(tools.map((tool) => tool.name)) }

export const status = (self: Instance): Status =>
  self._tag === "Starting"
    ? "starting"
    : self._tag === "Running"
      ? "running"
      : self._tag === "Idle"
        ? "idle"
        : self.status

/**
 * The persisted catalog (tools, and the other lists when the entry has them), served until a child lists its own (only
 * before any child of this run has).
 */
export const fromCache = (
  self: Instance,
  tools: ReadonlyArray<Tool>,
  lists: CachedCatalog["lists"] = Option.none()
): Instance => {
  if (self._tag !== "Starting" || Option.isSome(self.startedAt) || self.tools.length > 0) return self
  const fresh = withTools(self, tools)
  return Starting({
    ...common(self),
    ...fresh,
    cached: true,
    cachedSurface: Option.match(lists, {
      onNone: () => undefined,
      onSome: ({ capabilities, ...other }) => ({ capabilities, surface: { tools: fresh.tools, ...other } })
    })
  })
}

/** A lazy source without a child: its tools stay listed; the next request starts it. */
export const idle = (self: Instance): Instance =>
  self._tag === "Down" ? self : Idle({ ...common(self), error: Option.none() })

/** A child is being spawned (the last error stays until it runs). */
export const spawning = (self: Instance, at: Date): Instance =>
  Starting({ ...common(self), startedAt: Option.some(at), startupMs: Option.none() })

/**
 * The child answered initialize and tools/list: the connection and its tools are swapped in one step, never a running
 * instance with the old child's tools, nor one with none.
 */
export const running = (self: Instance, connection: Connection, at: Date): Instance =>
  Running({
    ...common(self),
    ...withTools(self, connection.tools),
    error: Option.none(),
    cached: false,
    cachedSurface: undefined,
    startupMs: Option.map(self.startedAt, (started) => at.getTime() - started.getTime()),
    connection,
    runningSince: at
  })

/**
 * A re-listing (after list_changed) swapped this child's tools; a failed one keeps them and shows its error. Only
 * while this connection is the current one, so a recorded failure is never overwritten.
 */
export const surfaceChanged = (
  self: Instance,
  connection: Connection,
  surface: Pick<LiveSurface, "tools" | "error">
): Instance =>
  self._tag === "Running" && self.connection === connection
    ? Running({ ...self, ...withTools(self, surface.tools), error: Option.fromNullable(surface.error) })
    : self

/** The child failed (or never started) and the policy decided; `at` is when, for the next retry time. */
export const failed = (self: Instance, error: SourceError, decision: Decision, at: Date): Instance =>
  Down({
    ...common(self),
    ...(decision._tag === "Restart"
      ? {}
      : { tools: noTools, toolNames: noNames, cached: false, cachedSurface: undefined }),
    error: Option.some(error),
    status: Policy.unauthenticated(error) ? "unauthenticated" : decision._tag === "CrashLoop" ? "crash-loop" : "down",
    nextRetryAt:
      decision._tag === "Stop" ? Option.none() : Option.some(new Date(at.getTime() + Duration.toMillis(decision.delay)))
  })

/** The wait is over: one more restart, starting now (the reason stays until the new child runs). */
export const restarting = (self: Instance): Instance =>
  self._tag === "Down" ? Starting({ ...common(self), restarts: self.restarts + 1 }) : self

/**
 * A reload changed this instance's spec (ADR 016): its child is stopped and a new one starts from scratch. Its tools
 * stay listed until the new child lists its own, as across a restart, so the host sees one change at most.
 */
export const respecified = (self: Instance): Instance =>
  Starting({
    ...common(self),
    error: Option.none(),
    startedAt: Option.none(),
    startupMs: Option.none(),
    restarts: 0,
    cached: false
  })

/** The child serving calls, if the instance is running. */
export const connectionOf = (self: Instance | undefined): Connection | undefined =>
  self?._tag === "Running" ? self.connection : undefined

const reasonOf = (error: SourceError) => `${error.reason}: ${error.detail}`
const iso = (date: Date) => date.toISOString()

/** The one refusal of a request to an instance that is not running; retryable unless its credentials are missing. */
export const notRunning = (self: Instance, tool: string): CallError =>
  new CallError({
    tool,
    reason: "NotRunning",
    detail:
      `source "${self.name}" is not running (${Option.match(self.error, { onNone: () => status(self), onSome: reasonOf })})` +
      (self._tag === "Down" && Option.isSome(self.nextRetryAt)
        ? `; next restart at ${iso(self.nextRetryAt.value)}`
        : ""),
    retryable: status(self) !== "unauthenticated"
  })

/** A request to an instance that is not configured (or not enabled). */
export const noSuchInstance = (instance: string, tool: string): CallError =>
  new CallError({ tool, reason: "NoSuchInstance", detail: `no source instance named "${instance}"` })

/** A tools/call to a tool the instance does not serve. */
export const noSuchTool = (self: Instance, name: string, tool: string): CallError =>
  new CallError({ tool, reason: "NoSuchTool", detail: `source "${self.name}" has no tool named "${name}"` })

/** The Health row of an instance; `now` is the Clock time (ms) uptime is measured at. */
export const healthRow = (
  self: Instance,
  facts: { readonly package: string; readonly diagnostics: Diagnostics; readonly now: number }
): HealthRow => {
  const lastExit = facts.diagnostics.lastExit
  return new HealthRow({
    name: self.name,
    status: status(self),
    reason: Option.match(self.error, { onNone: () => (self.cached ? "catalog: cached" : ""), onSome: reasonOf }),
    toolCount: self.tools.length,
    package: facts.package,
    // A remote source has no process: its connection's pid is 0.
    pid: self._tag === "Running" && self.connection.pid > 0 ? self.connection.pid : null,
    startedAt: Option.match(self.startedAt, { onNone: () => null, onSome: iso }),
    startupMs: Option.getOrNull(self.startupMs),
    stderrTail: facts.diagnostics.stderrTail,
    restarts: self.restarts,
    lastExit: lastExit === undefined ? null : { code: lastExit.code, signal: lastExit.signal, at: iso(lastExit.at) },
    nextRetryAt: self._tag === "Down" ? Option.match(self.nextRetryAt, { onNone: () => null, onSome: iso }) : null,
    uptimeMs: self._tag === "Running" ? facts.now - self.runningSince.getTime() : null,
    stdoutGarbage: facts.diagnostics.stdoutGarbage,
    era: self._tag === "Running" ? self.connection.era.era : null
  })
}
