import { Deferred, Effect, Either, Option } from "effect"
import type { JsonObject } from "../../domain/Mcp.js"
import { RpcCode, RpcError } from "../../domain/Surface.js"
import { type HostRequest, type Kept, reverseCapability } from "../HostBridge.js"

/** MCP's log levels, least severe first (the SDK's LoggingLevelSchema; test/HostSessions.test.ts keeps them equal). */
export const logLevels: ReadonlyArray<string> = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency"
]

/** The `_meta` key a child's request uses to name the task it belongs to. */
export const relatedTaskKey = "io.modelcontextprotocol/related-task"

/** A resource on a child: its instance and the child-side URI. */
export interface Route {
  readonly instance: string
  readonly uri: string
}

/** What the host last saw of each list kind (the key of its last answer or list_changed): see the Gateway. */
export interface Seen {
  tools?: string
  resources?: string
  prompts?: string
}

/** One host session: everything clawtool keeps for one host, in one place (ADR 020). */
export interface Session {
  readonly id: string
  /** One stateless HTTP request: no state for clawtool's own tools, no notifications, never expires (it ends with its response). */
  readonly stateless: boolean
  /** A reverse request to this host. */
  readonly request: HostRequest
  /** The profile it sees (issue 26), chosen by its endpoint or `serve --profile`; undefined: the whole catalog. */
  readonly profile: string | undefined
  /** The name of the `[http.tokens]` token it came with (never the token), for logs and the audit log. */
  readonly token: string | undefined
  /** Its initialize's client capabilities; undefined until then (a stateless request never has any). */
  capabilities: JsonObject | undefined
  /** What it set with logging/setLevel. */
  level: string | undefined
  /** Its roots (URIs) as last listed: undefined until asked, and again after its roots/list_changed. */
  roots: Option.Option<ReadonlyArray<string>> | undefined
  /** Calls and forwarded requests in flight, by instance: a child's reverse request goes to the one session with one. */
  readonly inFlight: Map<string, number>
  /** The host-side URIs it subscribed to, with their route: its resources/updated filter. */
  readonly subscriptions: Map<string, Route>
  /** Its own state for clawtool's own tools (perCaller). */
  readonly kept: Map<string, Kept>
  readonly seen: Seen
  /** Requests still open on it (an open GET stream counts): a session in use never expires. */
  open: number
  /** When it was last used (Clock millis). */
  lastSeen: number
  /** Done when it has been idle for too long: the Gateway then closes it. */
  readonly expired: Deferred.Deferred<void>
}

/** What a session's end leaves to do at the children. */
export interface Left {
  /** Ends what clawtool's own tools kept for it (its background runs are killed). */
  readonly release: Effect.Effect<void>
  /** The level children should have now, when the session had set one and some session still has one. */
  readonly level: Option.Option<string>
  /** The host-side URIs nobody is subscribed to any more: the child hears unsubscribe. */
  readonly released: ReadonlyArray<string>
}

export const nothingLeft: Left = { release: Effect.void, level: Option.none(), released: [] }

const key = (instance: string, id: string) => `${instance}\n${id}`

/** The task a child's request belongs to (`_meta` related-task), if it names one. */
const relatedTask = (params: JsonObject | undefined): string | undefined => {
  const meta = params?._meta
  const related = typeof meta === "object" && meta !== null ? (meta as JsonObject)[relatedTaskKey] : undefined
  const taskId = typeof related === "object" && related !== null ? (related as JsonObject).taskId : undefined
  return typeof taskId === "string" ? taskId : undefined
}

const refusal = (code: number, detail: string) => new RpcError({ reason: "Unsupported", code, detail })

/**
 * The host sessions and what they share about the children: subscriptions counted per child URI, and which session
 * created each child task. Plain synchronous state: the HostSessions layers wrap each step in one Effect.
 */
export class Table {
  readonly sessions = new Map<string, Session>()
  /** Sessions subscribed to each `instance\nuri`: the child hears subscribe on the first, unsubscribe on the last. */
  private readonly subscribers = new Map<string, number>()
  /** Which session created each child task (`instance\nchild task id`): its reverse requests go there. */
  private readonly taskOwners = new Map<string, string>()

  add(session: Session): void {
    this.sessions.set(session.id, session)
  }

  /** The lowest level any session asked for: children serve every session, and each session filters to its own. */
  lowestLevel(): string | undefined {
    let lowest: string | undefined
    for (const { level } of this.sessions.values()) {
      if (level !== undefined && (lowest === undefined || logLevels.indexOf(level) < logLevels.indexOf(lowest))) {
        lowest = level
      }
    }
    return lowest
  }

  /**
   * Records `session`'s (un)subscription of `uri` (routed to `route`). `edge` is true when the child's count went from
   * none to one or back (the child must hear it); `undo` restores both as they were, for a child that refused.
   */
  subscription(session: Session, uri: string, route: Route, on: boolean) {
    const had = session.subscriptions.get(uri)
    const child = key(route.instance, route.uri)
    const count = this.subscribers.get(child) ?? 0
    const changed = (had !== undefined) !== on
    const setCount = (to: number) => (to > 0 ? this.subscribers.set(child, to) : this.subscribers.delete(child))
    if (changed) {
      if (on) session.subscriptions.set(uri, route)
      else session.subscriptions.delete(uri)
      setCount(count + (on ? 1 : -1))
    }
    return {
      edge: changed && (on ? count === 0 : count === 1),
      undo: () => {
        if (!changed) return
        if (had === undefined) session.subscriptions.delete(uri)
        else session.subscriptions.set(uri, had)
        setCount(count)
      }
    }
  }

  /** The child-side URIs any session is subscribed to on `instance` (a restarted child is subscribed again). */
  childSubscriptions(instance: string): ReadonlyArray<string> {
    return [...this.subscribers.keys()].flatMap((entry) => {
      const [owner, uri] = entry.split("\n") as [string, string]
      return owner === instance ? [uri] : []
    })
  }

  ownTask(id: string, instance: string, taskId: string): void {
    this.taskOwners.set(key(instance, taskId), id)
  }

  ownsTask(id: string, instance: string, taskId: string): boolean {
    return this.taskOwners.get(key(instance, taskId)) === id
  }

  /**
   * Where a child's reverse request goes: the session owning its related task (`_meta` related-task) when known, else
   * the one session with a request in flight on that child; anything else is refused with why.
   */
  routeReverse(instance: string, method: string, params: JsonObject | undefined): Either.Either<Session, RpcError> {
    const task = relatedTask(params)
    const taskOwner = task === undefined ? undefined : this.sessions.get(this.taskOwners.get(key(instance, task)) ?? "")
    const owners =
      taskOwner !== undefined
        ? [taskOwner]
        : [...this.sessions.values()].filter((session) => (session.inFlight.get(instance) ?? 0) > 0)
    if (owners.length === 0) {
      return Either.left(
        refusal(RpcCode.InternalError, `${method}: no host session has a call in flight on "${instance}"`)
      )
    }
    if (owners.length > 1) {
      return Either.left(
        refusal(
          RpcCode.InternalError,
          `${method}: ${owners.length} host sessions have calls in flight on "${instance}", so it cannot be routed`
        )
      )
    }
    const owner = owners[0]!
    const capability = reverseCapability[method]
    if (capability !== undefined && owner.capabilities?.[capability] === undefined) {
      return Either.left(
        refusal(
          RpcCode.MethodNotFound,
          `${method}: the host session with the call in flight did not declare the ${capability} capability`
        )
      )
    }
    return Either.right(owner)
  }

  /** The session is gone: its tasks and subscriptions are dropped; what that leaves to do at the children. */
  leave(id: string): Left {
    const session = this.sessions.get(id)
    if (session === undefined) return nothingLeft
    this.sessions.delete(id)
    for (const [task, owner] of this.taskOwners) if (owner === id) this.taskOwners.delete(task)
    const released: Array<string> = []
    for (const [uri, route] of session.subscriptions) {
      const child = key(route.instance, route.uri)
      const count = (this.subscribers.get(child) ?? 1) - 1
      if (count > 0) this.subscribers.set(child, count)
      else {
        this.subscribers.delete(child)
        released.push(uri)
      }
    }
    const level = this.lowestLevel()
    return {
      release: Effect.forEach([...session.kept.values()], (kept) => kept.release, { discard: true }),
      level: session.level === undefined ? Option.none() : Option.fromNullable(level),
      released
    }
  }

  /** Sessions with no request open that were last used more than `idleMillis` before `now`. */
  idle(now: number, idleMillis: number): ReadonlyArray<Session> {
    return [...this.sessions.values()].filter(
      (session) => !session.stateless && session.open <= 0 && now - session.lastSeen > idleMillis
    )
  }
}
