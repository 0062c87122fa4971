// Gateway/Confirmation (issue 25, ADR 029): the question put to the calling session and its outcomes, under TestClock:
// confirm_timeout is the clock's, and the unanswered question is interrupted (cancelled at the host).
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Either, Exit, Fiber, TestClock } from "effect"
import type { CallError } from "../../src/domain/Errors.js"
import type { JsonObject } from "../../src/domain/Mcp.js"
import { RpcCode, RpcError } from "../../src/domain/Surface.js"
import { confirmed } from "../../src/services/Gateway/Confirmation.js"
import type { SessionView } from "../../src/services/HostSessions.js"
import type { Confirmation } from "../../src/services/Registry.js"

const confirmation = (unconfirmed: "deny" | "allow" = "deny"): Confirmation => ({
  selector: "destructive",
  target: { kind: "source", instance: "fs", tool: { name: "rm", inputSchema: {} } },
  settings: { confirm_timeout: Duration.seconds(30), unconfirmed }
})

/** A session whose host answers `answer` (or never, when undefined), recording what it was asked and any interrupt. */
const sessionWith = (capabilities: JsonObject | undefined, answer?: Effect.Effect<JsonObject, RpcError>) => {
  const seen = { asked: [] as Array<JsonObject>, interrupted: 0 }
  const session = {
    capabilities: () => capabilities,
    ask: (method: string, params: JsonObject) => {
      assert.strictEqual(method, "elicitation/create")
      seen.asked.push(params)
      return (answer ?? Effect.never).pipe(Effect.onInterrupt(() => Effect.sync(() => seen.interrupted++)))
    }
  } as Partial<SessionView> as SessionView
  return { session, seen }
}

const outcome = (session: SessionView, unconfirmed: "deny" | "allow" = "deny") =>
  Effect.either(confirmed(session, "fs__rm", { path: "/x" }, confirmation(unconfirmed)))

const deniedDetail = (result: Either.Either<void, CallError>) => {
  assert.isTrue(Either.isLeft(result))
  if (Either.isRight(result)) return ""
  assert.strictEqual(result.left.reason, "Denied")
  assert.strictEqual(result.left.tool, "fs__rm")
  return result.left.detail
}

describe("Gateway/Confirmation", () => {
  it.effect("no answer within confirm_timeout: Denied, and the question is interrupted at the host", () =>
    Effect.gen(function* () {
      const { session, seen } = sessionWith({ elicitation: {} })
      const fiber = yield* Effect.fork(outcome(session))
      yield* TestClock.adjust("29999 millis")
      assert.isNull(fiber.unsafePoll(), "still waiting for the user 1 ms before confirm_timeout")
      assert.strictEqual(seen.interrupted, 0)
      yield* TestClock.adjust("1 milli")
      const detail = deniedDetail(yield* Fiber.join(fiber))
      assert.include(detail, "no answer came within 30s ([trust] confirm_timeout)")
      assert.strictEqual(seen.interrupted, 1)
      assert.lengthOf(seen.asked, 1)
      assert.include(seen.asked[0]!.message as string, 'fs__rm (tool "rm" of source "fs")')
    })
  )

  it.effect("yes runs; no, cancel, an accept without confirm: true and the host's error refuse, saying which", () =>
    Effect.gen(function* () {
      const answered = (answer: Effect.Effect<JsonObject, RpcError>) =>
        outcome(sessionWith({ elicitation: { form: {} } }, answer).session)
      assert.isTrue(Either.isRight(yield* answered(Effect.succeed({ action: "accept", content: { confirm: true } }))))
      assert.include(deniedDetail(yield* answered(Effect.succeed({ action: "decline" }))), "the user declined it")
      assert.include(
        deniedDetail(yield* answered(Effect.succeed({ action: "accept", content: { confirm: false } }))),
        "the user declined it"
      )
      assert.include(
        deniedDetail(yield* answered(Effect.succeed({ action: "cancel" }))),
        "the user dismissed the question (cancel)"
      )
      const failed = new RpcError({ reason: "Peer", code: RpcCode.InternalError, detail: "form failed to render" })
      assert.include(
        deniedDetail(yield* answered(Effect.fail(failed))),
        "the host could not ask the user: form failed to render"
      )
    })
  )

  it.effect('a host that cannot ask: Denied naming [trust] unconfirmed, or run unasked with "allow"; never asked', () =>
    Effect.gen(function* () {
      for (const capabilities of [undefined, {}, { elicitation: { url: {} } }]) {
        const { session, seen } = sessionWith(capabilities)
        const detail = deniedDetail(yield* outcome(session))
        assert.include(detail, '[trust] confirm ("destructive") needs the user\'s yes before each call')
        assert.include(detail, 'Set [trust] unconfirmed = "allow"')
        assert.isTrue(Exit.isSuccess(yield* Effect.exit(confirmed(session, "fs__rm", {}, confirmation("allow")))))
        assert.lengthOf(seen.asked, 0)
      }
    })
  )
})
