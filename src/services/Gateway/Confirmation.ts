import { Duration, Effect, Either, Option } from "effect"
import { CallError } from "../../domain/Errors.js"
import type { JsonObject } from "../../domain/Mcp.js"
import type { SessionView } from "../HostSessions.js"
import type { Confirmation } from "../Registry.js"
import * as Confirm from "../Trust/Confirm.js"

/**
 * `[trust] confirm` on the host edge (ADR 029): the session that made the call is asked (`elicitation/create`) before
 * the call runs; only a yes within `confirm_timeout` lets it through. A host that cannot be asked gets `unconfirmed`.
 * `redact` hides known secrets in the arguments shown, before they are cut (so no part of a secret is shown).
 */
export const confirmed = (
  session: SessionView,
  wire: string,
  args: JsonObject | undefined,
  { selector, target, settings }: Confirmation,
  redact?: (text: string) => string
): Effect.Effect<void, CallError> => {
  const what = Confirm.describeTarget(wire, target)
  const denied = (why: string) =>
    new CallError({
      tool: wire,
      reason: "Denied",
      detail: `${wire} was not run: [trust] confirm ("${selector}") needs the user's yes before each call to ${what}, and ${why}`
    })
  if (!Confirm.canAsk(session.capabilities())) {
    return settings.unconfirmed === "allow"
      ? Effect.void
      : Effect.fail(
          denied(
            `this host cannot be asked (it did not declare the elicitation capability for forms). Set [trust] unconfirmed = "allow" to run such calls unasked, or take the tool out of [trust] confirm`
          )
        )
  }
  const question = Confirm.question(wire, target, Confirm.preview(args, redact))
  // Interrupted at the timeout, the request is cancelled at the host (notifications/cancelled).
  return Effect.either(session.ask("elicitation/create", question)).pipe(
    Effect.timeoutOption(settings.confirm_timeout),
    Effect.flatMap(
      Option.match({
        onNone: () =>
          Effect.fail(
            denied(`no answer came within ${Duration.format(settings.confirm_timeout)} ([trust] confirm_timeout)`)
          ),
        onSome: Either.match({
          onLeft: (error) => Effect.fail(denied(`the host could not ask the user: ${error.detail}`)),
          onRight: (result) => {
            const answer = Confirm.answerOf(result)
            return answer === "yes"
              ? Effect.void
              : Effect.fail(
                  denied(answer === "declined" ? "the user declined it" : "the user dismissed the question (cancel)")
                )
          }
        })
      })
    )
  )
}
