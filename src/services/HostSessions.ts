import { Context, Effect, Layer, Option } from "effect"
import type { JsonObject } from "../domain/Mcp.js"
import { HostBridge } from "./HostBridge.js"
import { makeShared, type SharedSettings } from "./HostSessions/Shared.js"
import { makeSingle } from "./HostSessions/Single.js"
import type { Sessions } from "./HostSessions/View.js"

export { hostWait, spawnWait } from "./HostSessions/Single.js"
export type { SharedSettings } from "./HostSessions/Shared.js"
export { logLevels, relatedTaskKey, type Left, type Route } from "./HostSessions/Table.js"
export { HostSession, type SessionView, type Sessions } from "./HostSessions/View.js"

/**
 * Daemon mode (`serve --listen`, ADR 020): many host sessions share the children, with these settings (from `[http]`).
 * Absent: one host over stdio.
 */
export class SharedHosts extends Context.Tag("clawtool/SharedHosts")<SharedHosts, SharedSettings>() {}

/** `[http] child_capabilities` as ClientCapabilities objects. */
export const declaredCapabilities = (names: ReadonlyArray<"sampling" | "elicitation" | "roots">): JsonObject =>
  Object.fromEntries(names.map((name) => [name, name === "roots" ? { listChanged: true } : {}]))

/**
 * Everything clawtool keeps per host session (initialize capabilities, log level, subscriptions counted toward the
 * children, calls in flight, tasks, roots, clawtool's own tools' state, idle expiry), without the SDK. The Gateway
 * joins one session per host connection and handles its requests through its SessionView; the lower layers see the
 * hosts through the HostBridge port each layer provides too.
 */
export class HostSessions extends Context.Tag("clawtool/HostSessions")<HostSessions, Sessions>() {
  /** stdio serve: one host. */
  static readonly single: Layer.Layer<HostSessions | HostBridge> = Layer.scopedContext(
    Effect.map(makeSingle, (sessions) =>
      Context.make(HostSessions, sessions).pipe(Context.add(HostBridge, { port: sessions.port }))
    )
  )

  /** The daemon: many hosts share the children. */
  static readonly shared: Layer.Layer<HostSessions | HostBridge, never, SharedHosts> = Layer.scopedContext(
    Effect.map(Effect.flatMap(SharedHosts, makeShared), (sessions) =>
      Context.make(HostSessions, sessions).pipe(Context.add(HostBridge, { port: sessions.port }))
    )
  )

  /** `shared` when SharedHosts is provided (`--listen` or `[http] listen`), else `single`. */
  static readonly Default: Layer.Layer<HostSessions | HostBridge> = Layer.unwrapEffect(
    Effect.map(
      Effect.serviceOption(SharedHosts),
      Option.match({
        onNone: () => HostSessions.single,
        onSome: (settings) => HostSessions.shared.pipe(Layer.provide(Layer.succeed(SharedHosts, settings)))
      })
    )
  )
}
