import { Effect, ExecutionStrategy, Exit, Scope } from "effect"
import type { Connection } from "../../domain/Connection.js"
import { type EraVerdict, legacyVerdict } from "../../domain/Era.js"
import type { SourceError } from "../../domain/Errors.js"

/**
 * One start of a source in the right era (ADR 033). On the verdict kept with the catalog first: when that fails (a
 * legacy verdict meets a server that now answers `initialize` with -32022, a modern one a server that no longer speaks
 * 2026-07-28), that child is ended at once and the source started again with a probe, in the same start, so a stale
 * verdict never sticks (the next persist writes the new one). A child that exits on the probe is started again at
 * once as legacy, without one.
 */
export const connectOnVerdict = (
  connect: (knownEra: EraVerdict | undefined) => Effect.Effect<Connection, SourceError, Scope.Scope>,
  kept: EraVerdict | undefined
): Effect.Effect<Connection, SourceError, Scope.Scope> => {
  /** An attempt in its own scope, closed (its child ended) as soon as it fails. */
  const attempt = (knownEra: EraVerdict | undefined) =>
    Effect.flatMap(Effect.scope, (outer) =>
      Effect.flatMap(Scope.fork(outer, ExecutionStrategy.sequential), (scope) =>
        connect(knownEra).pipe(
          Scope.extend(scope),
          Effect.onError(() => Scope.close(scope, Exit.void))
        )
      )
    )
  const probed = attempt(undefined).pipe(
    Effect.catchIf(
      (error) => error.reason === "EraProbe",
      (error) => Effect.zipRight(Effect.logInfo(error.message), attempt(legacyVerdict))
    )
  )
  if (kept === undefined) return probed
  return attempt(kept).pipe(
    Effect.catchAll((error) =>
      Effect.zipRight(
        Effect.logInfo(
          `source ${error.instance}: the kept ${kept.era} verdict failed (${error.detail}); probing again`
        ),
        probed
      )
    )
  )
}
