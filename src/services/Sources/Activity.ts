import { type Clock, Duration, Effect } from "effect"
import type { Connection } from "../../domain/Connection.js"

/**
 * What idle_timeout measures for one instance: the requests in flight to its child and when the last one began or
 * ended, on Effect's Clock (so TestClock drives idle stops). Plain fields, not a Ref: the relay's calls begin and end
 * in plain callbacks, on the per-call hot path.
 */
export class Activity {
  private inFlight = 0
  private lastUsed = 0

  constructor(private readonly clock: Clock.Clock) {}

  /** The instance was asked for (a request begins or ends, or one waits for it to start): its quiet time restarts. */
  touch(): void {
    this.lastUsed = this.clock.unsafeCurrentTimeMillis()
  }

  begin(): void {
    this.inFlight++
    this.touch()
  }

  end(): void {
    this.inFlight--
    this.touch()
  }

  /** Resolves once the child has had no request in flight for `timeout` (counted from now at the earliest). */
  idleFor(timeout: Duration.Duration): Effect.Effect<void> {
    const limit = Duration.toMillis(timeout)
    return Effect.gen(this, function* () {
      this.touch()
      for (;;) {
        const quiet = (yield* this.clock.currentTimeMillis) - this.lastUsed
        if (this.inFlight === 0 && quiet >= limit) return
        yield* Effect.sleep(Duration.millis(Math.max(limit - quiet, 50)))
      }
    })
  }
}

/**
 * The connection with its requests counted (only for sources with an idle_timeout): the relay's calls, tools/call and
 * every forwarded request, each counted until it ends, so a long call is never cut by an idle stop.
 */
export const counted = (connection: Connection, activity: Activity): Connection => {
  const around = <A, E>(effect: Effect.Effect<A, E>) =>
    Effect.ensuring(
      Effect.zipRight(
        Effect.sync(() => activity.begin()),
        effect
      ),
      Effect.sync(() => activity.end())
    )
  return {
    ...connection,
    callTool: (request, options) => around(connection.callTool(request, options)),
    request: (method, params, options) => around(connection.request(method, params, options)),
    relayCall: (request, done, hostCapabilities) => {
      activity.begin()
      let open = true
      const close = () => {
        if (open) {
          open = false
          activity.end()
        }
      }
      const cancel = connection.relayCall(
        request,
        (outcome) => {
          close()
          done(outcome)
        },
        hostCapabilities
      )
      return () => {
        close()
        cancel()
      }
    }
  }
}
