import { Clock, Data, Duration, Effect, Option, Random } from "effect"
import type { SourceConfig } from "../../domain/Config.js"
import type { SourceError } from "../../domain/Errors.js"

/**
 * The restart policy of one instance (ADR-004), as in an OTP supervisor, without children or sleeps: the supervisor
 * hands it the state it returned last time and the failure, and gets back what to do and the next state. Time comes
 * from Effect's Clock and jitter from its Random, so tests drive it with TestClock.
 */

/** What the policy remembers between failures of one instance. */
export interface State {
  /** Clock times (ms) of the restarts granted within the current `restart_window`. */
  readonly recent: ReadonlyArray<number>
  /** Past `max_restarts` within the window: retried every `crash_loop_retry` until a stable run. */
  readonly crashLoop: boolean
  /** Backoff restarts since the last stable run: the exponent of the next delay. */
  readonly attempt: number
}

export const initial: State = { recent: [], crashLoop: false, attempt: 0 }

/** After a failure: stop for good, restart after a backoff delay, or retry a crash-looping instance after a while. */
export type Decision = Data.TaggedEnum<{
  Stop: {}
  Restart: { readonly delay: Duration.Duration }
  CrashLoop: { readonly delay: Duration.Duration }
}>
export const Decision = Data.taggedEnum<Decision>()

/** A failure the policy judges. */
export interface Failure {
  readonly error: SourceError
  /** Clock time (ms) the failed child finished initialize and tools/list; none when it never got that far. */
  readonly runningSince: Option.Option<number>
}

/** A restart cannot fix a source that starts clawtool again with a config above it: it would only fork again. */
export const recursive = (error: SourceError): boolean => error.reason === "Recursion"

/** A restart cannot fix missing secrets or rejected credentials. */
export const unauthenticated = (error: SourceError): boolean =>
  error.reason === "MissingSecrets" || error.reason === "Unauthenticated" || error.auth

/**
 * The delay before backoff restart number `attempt` (0 first): `restart_backoff` doubled per attempt, capped at
 * `restart_backoff_max`, jittered by ±20 % (never above the cap) so children that died together do not restart in
 * lockstep. Whole milliseconds, like the retry times Health shows.
 */
export const backoff = (source: SourceConfig, attempt: number): Effect.Effect<Duration.Duration> => {
  const cap = Duration.toMillis(source.restart_backoff_max)
  const nominal = Math.min(Duration.toMillis(source.restart_backoff) * 2 ** attempt, cap)
  return Effect.map(Random.nextRange(0.8, 1.2), (jitter) =>
    Duration.millis(Math.min(Math.round(nominal * jitter), cap))
  )
}

/**
 * Judges one failure. `restart = "never"`, unauthenticated and recursive failures stop. A run that lasted `restart_window` is
 * stable: it forgets earlier restarts, the crash-loop and the backoff. Past `max_restarts` restarts within the window
 * the instance crash-loops until a stable run.
 */
export const decide = (
  source: SourceConfig,
  state: State,
  failure: Failure
): Effect.Effect<readonly [Decision, State]> =>
  Effect.gen(function* () {
    if (source.restart === "never" || unauthenticated(failure.error) || recursive(failure.error)) {
      return [Decision.Stop(), state] as const
    }
    const now = yield* Clock.currentTimeMillis
    const window = Duration.toMillis(source.restart_window)
    const stable = Option.exists(failure.runningSince, (since) => now - since >= window)
    const base = stable ? initial : state
    const recent = base.recent.filter((at) => now - at < window)
    if (base.crashLoop || recent.length >= source.max_restarts) {
      return [Decision.CrashLoop({ delay: source.crash_loop_retry }), { ...base, recent, crashLoop: true }] as const
    }
    const delay = yield* backoff(source, base.attempt)
    return [
      Decision.Restart({ delay }),
      { recent: [...recent, now], crashLoop: false, attempt: base.attempt + 1 }
    ] as const
  })
