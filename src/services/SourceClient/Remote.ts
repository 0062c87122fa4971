import { Effect, type Scope } from "effect"
import { SourceError } from "../../domain/Errors.js"
import type { Connection, RemoteLaunchSpec } from "../SourceClient.js"

/** A remote source over streamable HTTP or legacy SSE (ADR 018). */
export const connect = (spec: RemoteLaunchSpec): Effect.Effect<Connection, SourceError, Scope.Scope> =>
  Effect.fail(
    new SourceError({ instance: spec.instance, reason: "Connect", detail: "remote sources are not connected yet" })
  )
