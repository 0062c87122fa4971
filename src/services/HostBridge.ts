import { Context, Effect, Option } from "effect"
import type { JsonObject } from "../domain/Mcp.js"
import { RpcCode, RpcError } from "../domain/Surface.js"

/** A notification a child sent that is meant for the host (logging, resources/updated, tasks/status, …). */
export interface ChildNotification {
  readonly instance: string
  readonly method: string
  readonly params: JsonObject | undefined
}

/** A reverse request (sampling, elicitation, roots) from child `instance` to a host; interrupting it cancels it there. */
export type HostRequest = (
  instance: string,
  method: string,
  params: JsonObject | undefined
) => Effect.Effect<JsonObject, RpcError>

/**
 * What one child's connection needs from the host side. Sources puts it into every LaunchSpec, so a restarted
 * child gets the same capabilities, log level and subscriptions as the first one.
 */
export interface HostPort {
  /**
   * Completes when the host's initialize has been answered (at most `spawnWait` after start), at once without a host:
   * children are spawned after it, so the host's first request is not queued behind twenty process spawns.
   */
  readonly ready: Effect.Effect<void>
  /** The client capabilities to declare to children: the host's sampling/elicitation/roots, nothing else. */
  readonly clientCapabilities: Effect.Effect<JsonObject>
  /** A reverse request (sampling, elicitation, roots) from `instance`, forwarded to the host; interrupting it cancels it there. */
  readonly request: HostRequest
  /** Hands a child's notification to the Gateway (dropped when no host is attached). */
  readonly notify: (notification: ChildNotification) => void
  /** The level the host last set with logging/setLevel, re-applied to children that start later. */
  readonly logLevel: Effect.Effect<string | undefined>
  /** The child-side URIs the host subscribed to on this instance, re-subscribed when the child restarts. */
  readonly subscriptions: (instance: string) => Effect.Effect<ReadonlyArray<string>>
  /**
   * The roots (URIs) of the host a call comes from, for clawtool's own tools: the stdio host, or in the daemon the
   * session whose tools/call this fiber runs (HostSession), never another session's. Asked once per host and again
   * after its roots/list_changed (`forgetRoots`, or the session's own `rootsChanged`); none when that host declared no
   * roots capability or there is no such host.
   */
  readonly callerRoots: Effect.Effect<Option.Option<ReadonlyArray<string>>, RpcError>
  /** The stdio host's roots changed: asked again on next use. */
  readonly forgetRoots: Effect.Effect<void>
  /**
   * State kept per host for clawtool's own tools (the read-before-edit ledger, background runs): one value per `key` for
   * the stdio host, one per session in the daemon (HostSession), dropped when the session ends, after `release` (the
   * session's background runs are killed); `make` builds it on first use. None when the caller has no session to keep
   * it: a stateless daemon request (it ends with its response), or a call whose session has already left. Never a
   * table shared by several callers.
   */
  readonly perCaller: <A>(
    key: string,
    make: () => A,
    release?: (value: A) => Effect.Effect<void>
  ) => Effect.Effect<Option.Option<A>>
}

/**
 * The host side as the lower layers (Sources, Registry, the children) see it, without the SDK: the port HostSessions
 * implements (src/services/HostSessions.ts). Present only in `serve`; Sources falls back to `offlinePort`.
 */
export class HostBridge extends Context.Tag("clawtool/HostBridge")<HostBridge, { readonly port: HostPort }>() {}

/** One perCaller value and what ends it. */
export interface Kept {
  readonly value: unknown
  readonly release: Effect.Effect<void>
}

/** `perCaller` over one store (the stdio host, or a daemon session): the value kept under `key`, made on first use. */
export const keptIn =
  (store: Map<string, Kept>) =>
  <A>(key: string, make: () => A, release?: (value: A) => Effect.Effect<void>): A => {
    let kept = store.get(key)
    if (kept === undefined) {
      const value = make()
      kept = { value, release: release === undefined ? Effect.void : release(value) }
      store.set(key, kept)
    }
    return kept.value as A
  }

/** The client capability each reverse request needs. */
export const reverseCapability: Readonly<Record<string, "sampling" | "elicitation" | "roots">> = {
  "sampling/createMessage": "sampling",
  "elicitation/create": "elicitation",
  "roots/list": "roots"
}

/**
 * What clawtool declares to each child: exactly the host's `sampling`, `elicitation` and `roots` objects (ADR-005).
 * Never `tasks` (clawtool does not relay task-augmented reverse requests) nor `experimental`.
 */
export const childCapabilities = (host: JsonObject): JsonObject =>
  Object.fromEntries(
    (["sampling", "elicitation", "roots"] as const).flatMap((key) =>
      host[key] === undefined ? [] : [[key, host[key]]]
    )
  )

/**
 * Commands without a host (`health`, `tools list`, `tools export-typescript`) declare what a fully capable host
 * would, so they list the largest catalog a `serve` can show (server-everything adds tools for these); a
 * reverse request there gets -32601.
 */
export const offlineCapabilities: JsonObject = { sampling: {}, elicitation: {}, roots: { listChanged: true } }

export const offlinePort: HostPort = {
  ready: Effect.void,
  clientCapabilities: Effect.succeed(offlineCapabilities),
  request: (_instance, method) =>
    Effect.fail(
      new RpcError({
        reason: "Unsupported",
        code: RpcCode.MethodNotFound,
        detail: `${method}: no MCP host is connected (only clawtool serve forwards requests to a host)`
      })
    ),
  notify: () => {},
  logLevel: Effect.succeed(undefined),
  subscriptions: () => Effect.succeed([]),
  callerRoots: Effect.succeed(Option.none()),
  forgetRoots: Effect.void,
  perCaller: (() => {
    const get = keptIn(new Map())
    return ((key, make, release) =>
      Effect.sync(() => Option.some(get(key, make, release)))) satisfies HostPort["perCaller"]
  })()
}
