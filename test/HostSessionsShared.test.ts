import { assert, describe, it } from "@effect/vitest"
import { assertNone, assertSome } from "@effect/vitest/utils"
import { Deferred, Duration, Effect, Fiber, Layer, Option, TestClock } from "effect"
import {
  declaredCapabilities,
  HostSession,
  HostSessions,
  relatedTaskKey,
  SharedHosts
} from "../src/services/HostSessions.js"

const sessionIdle = Duration.minutes(1)

const Shared = HostSessions.shared.pipe(
  Layer.provide(
    Layer.succeed(SharedHosts, { childCapabilities: declaredCapabilities(["sampling", "roots"]), sessionIdle })
  )
)

/** A session's request function that answers with its own name. */
const answersAs = (session: string) => (_instance: string, method: string) => Effect.succeed({ session, method })

/** Opens session `id` (answering as itself). */
const join = (id: string, stateless = false) =>
  Effect.flatMap(HostSessions, (sessions) => sessions.join({ id, stateless, request: answersAs(id) }))

describe("HostSessions.shared (the daemon: sessions share the children)", () => {
  it.scoped("children start at once and declare [http] child_capabilities", () =>
    Effect.gen(function* () {
      const { port } = yield* HostSessions
      yield* port.ready
      assert.deepStrictEqual(yield* port.clientCapabilities, { sampling: {}, roots: { listChanged: true } })
    }).pipe(Effect.provide(Shared))
  )

  it.scoped(
    "a reverse request goes to the one session with a call in flight; refused when none, several or undeclared",
    () =>
      Effect.gen(function* () {
        const { port } = yield* HostSessions
        const a = yield* join("a")
        const b = yield* join("b")
        yield* a.initialized({ sampling: {} })
        yield* b.initialized({ roots: {} })
        const none = yield* Effect.flip(port.request("fs", "sampling/createMessage", {}))
        assert.include(none.detail, "no host session has a call in flight")

        const release = yield* Deferred.make<void>()
        const callA = yield* Effect.fork(a.inFlight("fs", Deferred.await(release)))
        yield* Effect.yieldNow()
        assert.deepStrictEqual(yield* port.request("fs", "sampling/createMessage", {}), {
          session: "a",
          method: "sampling/createMessage"
        })
        // Another child: no call in flight there.
        assert.include((yield* Effect.flip(port.request("gh", "roots/list", undefined))).detail, "no host session")

        const callB = yield* Effect.fork(b.inFlight("fs", Deferred.await(release)))
        yield* Effect.yieldNow()
        const ambiguous = yield* Effect.flip(port.request("fs", "sampling/createMessage", {}))
        assert.include(ambiguous.detail, "2 host sessions have calls in flight")

        // The related task names its session, whatever else is in flight.
        yield* b.ownTask("fs", "t-1")
        const related = { _meta: { [relatedTaskKey]: { taskId: "t-1" } } }
        assert.deepStrictEqual(yield* port.request("fs", "roots/list", related), { session: "b", method: "roots/list" })
        // b did not declare sampling.
        const undeclared = yield* Effect.flip(port.request("fs", "sampling/createMessage", related))
        assert.strictEqual(undeclared.code, -32601)
        assert.include(undeclared.detail, "did not declare the sampling capability")

        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(callA)
        yield* Fiber.join(callB)
        assert.include((yield* Effect.flip(port.request("fs", "roots/list", undefined))).detail, "no host session")
      }).pipe(Effect.provide(Shared))
  )

  it.scoped("log level: children get the lowest any session set, recomputed when a session leaves", () =>
    Effect.gen(function* () {
      const { port } = yield* HostSessions
      const a = yield* join("a")
      const b = yield* join("b")
      assert.isUndefined(yield* port.logLevel)
      assert.strictEqual(yield* a.setLevel("error"), "error")
      assert.strictEqual(yield* b.setLevel("info"), "info")
      assert.strictEqual(yield* port.logLevel, "info")
      // Each session filters to its own level.
      assert.isTrue(b.hears("notifications/message", { level: "info" }))
      assert.isFalse(a.hears("notifications/message", { level: "info" }))
      const left = yield* b.leave
      assertSome(left.level, "error")
      assert.strictEqual(yield* port.logLevel, "error")
    }).pipe(Effect.provide(Shared))
  )

  it.scoped("subscriptions: the child hears the first subscribe and the last unsubscribe, also on leave", () =>
    Effect.gen(function* () {
      const { port } = yield* HostSessions
      const a = yield* join("a")
      const b = yield* join("b")
      const subscription = (session: typeof a, on: boolean) =>
        Effect.map(session.subscription("file:///x", { instance: "fs", uri: "file:///x" }, on), ({ tell }) => tell)
      assert.isTrue(yield* subscription(a, true))
      assert.isFalse(yield* subscription(b, true))
      // A repeated subscribe of the same session changes nothing.
      assert.isFalse(yield* subscription(a, true))
      assert.deepStrictEqual(yield* port.subscriptions("fs"), ["file:///x"])
      assert.isFalse(yield* subscription(a, false))
      assert.deepStrictEqual(yield* port.subscriptions("fs"), ["file:///x"])
      // Updates reach only the sessions subscribed to them.
      assert.isTrue(b.hears("notifications/resources/updated", { uri: "file:///x" }))
      assert.isFalse(a.hears("notifications/resources/updated", { uri: "file:///x" }))
      const left = yield* b.leave
      assert.deepStrictEqual(left.released, ["file:///x"])
      assert.deepStrictEqual(yield* port.subscriptions("fs"), [])
    }).pipe(Effect.provide(Shared))
  )

  it.scoped("a subscription the child refused is undone: the next session's subscribe is the first again", () =>
    Effect.gen(function* () {
      const { port } = yield* HostSessions
      const a = yield* join("a")
      const b = yield* join("b")
      const route = { instance: "fs", uri: "file:///x" }
      const refused = yield* a.subscription("file:///x", route, true)
      assert.isTrue(refused.tell)
      yield* refused.undo
      assert.deepStrictEqual(yield* port.subscriptions("fs"), [])
      assert.isFalse(a.hears("notifications/resources/updated", { uri: "file:///x" }))
      assert.isTrue((yield* b.subscription("file:///x", route, true)).tell)
    }).pipe(Effect.provide(Shared))
  )

  it.scoped("tasks are a session's own; a stateless request's are not isolated; a session's roots are its own", () =>
    Effect.gen(function* () {
      const a = yield* join("a")
      const b = yield* join("b")
      const once = yield* join("once", true)
      yield* a.ownTask("fs", "t-1")
      assert.isTrue(yield* a.ownsTask("fs", "t-1"))
      assert.isFalse(yield* b.ownsTask("fs", "t-1"))
      assert.isFalse(yield* a.ownsTask("gh", "t-1"))
      assert.isTrue(yield* once.ownsTask("fs", "t-1"))
      yield* a.leave
      assert.isFalse(yield* b.ownsTask("fs", "t-1"))
      // Shared children are not told that one session's roots changed.
      assert.isFalse(yield* b.rootsChanged)
    }).pipe(Effect.provide(Shared))
  )

  it.scoped("a session with no open request expires after session_idle (on the Clock); one in use does not", () =>
    Effect.gen(function* () {
      const sessions = yield* HostSessions
      const a = yield* join("a")
      const b = yield* join("b")
      const once = yield* join("once", true)
      const expiredA = yield* Effect.fork(a.expired)
      const expiredB = yield* Effect.fork(b.expired)
      const expiredOnce = yield* Effect.fork(once.expired)
      // b has a request open (an SSE stream, a long call).
      const done = yield* sessions.track("b")
      // The sweep runs every quarter of session_idle: at 60 s a is exactly session_idle old, not more.
      yield* TestClock.adjust(Duration.seconds(60))
      assert.isTrue(Option.isNone(yield* Fiber.poll(expiredA)))
      yield* TestClock.adjust(Duration.seconds(15))
      yield* Fiber.join(expiredA)
      assert.isTrue(Option.isNone(yield* Fiber.poll(expiredB)))
      // b's request ends at 75 s: it is used then, and expires a session_idle later.
      yield* done
      yield* TestClock.adjust(Duration.seconds(60))
      assert.isTrue(Option.isNone(yield* Fiber.poll(expiredB)))
      yield* TestClock.adjust(Duration.seconds(15))
      yield* Fiber.join(expiredB)
      // A stateless request ends with its response, never by expiry.
      assert.isTrue(Option.isNone(yield* Fiber.poll(expiredOnce)))
    }).pipe(Effect.provide(Shared))
  )

  it.scoped(
    "perCaller: a session's own value, released when it leaves; none for a stateless request, a gone or no session",
    () =>
      Effect.gen(function* () {
        const { port } = yield* HostSessions
        const a = yield* join("a")
        yield* join("b")
        yield* join("once", true)
        const released: Array<string> = []
        const valueOf = (session: Option.Option<string>) =>
          port
            .perCaller(
              "runs",
              () => ({ owner: session }),
              (value) => Effect.sync(() => released.push(Option.getOrElse(value.owner, () => "?")))
            )
            .pipe(Effect.provideService(HostSession, session))
        const ofA = yield* valueOf(Option.some("a"))
        assertSome(ofA, { owner: Option.some("a") })
        // The same value on the next call of a; b has its own.
        assert.strictEqual(Option.getOrThrow(yield* valueOf(Option.some("a"))), Option.getOrThrow(ofA))
        assertSome(yield* valueOf(Option.some("b")), { owner: Option.some("b") })
        // No shared table for callers without a session: nothing one could leave for another to find.
        assertNone(yield* valueOf(Option.some("once")))
        assertNone(yield* valueOf(Option.some("unknown")))
        assertNone(yield* valueOf(Option.none()))
        yield* (yield* a.leave).release
        assert.deepStrictEqual(released, ["a"])
        assertNone(yield* valueOf(Option.some("a")))
      }).pipe(Effect.provide(Shared))
  )
})
