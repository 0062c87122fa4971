import { assert, describe, it } from "@effect/vitest"
import { assertNone, assertSome } from "@effect/vitest/utils"
import { Deferred, Effect, Fiber, Layer, Option } from "effect"
import {
  declaredCapabilities,
  HostBridge,
  HostSession,
  relatedTaskKey,
  SharedHosts
} from "../src/services/HostBridge.js"

const DaemonBridge = HostBridge.Default.pipe(
  Layer.provide(Layer.succeed(SharedHosts, { childCapabilities: declaredCapabilities(["sampling", "roots"]) }))
)

/** A session's request function that answers with its own name. */
const answersAs = (session: string) => (_instance: string, method: string) => Effect.succeed({ session, method })

describe("HostBridge in daemon mode (sessions share the children)", () => {
  it.scoped("children start at once and declare [http] child_capabilities", () =>
    Effect.gen(function* () {
      const bridge = yield* HostBridge
      yield* bridge.port.ready
      assert.deepStrictEqual(yield* bridge.port.clientCapabilities, { sampling: {}, roots: { listChanged: true } })
    }).pipe(Effect.provide(DaemonBridge))
  )

  it.scoped(
    "a reverse request goes to the one session with a call in flight; refused when none, several or undeclared",
    () =>
      Effect.gen(function* () {
        const bridge = yield* HostBridge
        const { daemon, port } = bridge
        yield* daemon.join("a", answersAs("a"))
        yield* daemon.join("b", answersAs("b"))
        yield* daemon.declare("a", { sampling: {} })
        yield* daemon.declare("b", { roots: {} })
        const none = yield* Effect.flip(port.request("fs", "sampling/createMessage", {}))
        assert.include(none.detail, "no host session has a call in flight")

        const release = yield* Deferred.make<void>()
        const callA = yield* Effect.fork(daemon.inFlight("a", "fs", Deferred.await(release)))
        yield* Effect.yieldNow()
        assert.deepStrictEqual(yield* port.request("fs", "sampling/createMessage", {}), {
          session: "a",
          method: "sampling/createMessage"
        })
        // Another child: no call in flight there.
        assert.include((yield* Effect.flip(port.request("gh", "roots/list", undefined))).detail, "no host session")

        const callB = yield* Effect.fork(daemon.inFlight("b", "fs", Deferred.await(release)))
        yield* Effect.yieldNow()
        const ambiguous = yield* Effect.flip(port.request("fs", "sampling/createMessage", {}))
        assert.include(ambiguous.detail, "2 host sessions have calls in flight")

        // The related task names its session, whatever else is in flight.
        yield* daemon.ownTask("b", "fs", "t-1")
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
      }).pipe(Effect.provide(DaemonBridge))
  )

  it.scoped("log level: children get the lowest any session set, recomputed when a session leaves", () =>
    Effect.gen(function* () {
      const { daemon, port } = yield* HostBridge
      yield* daemon.join("a", answersAs("a"))
      yield* daemon.join("b", answersAs("b"))
      assert.isUndefined(yield* port.logLevel)
      assert.strictEqual(yield* daemon.setLevel("a", "error"), "error")
      assert.strictEqual(yield* daemon.setLevel("b", "info"), "info")
      assert.strictEqual(yield* port.logLevel, "info")
      const left = yield* daemon.leave("b")
      assert.strictEqual(left.level, "error")
      assert.strictEqual(yield* port.logLevel, "error")
    }).pipe(Effect.provide(DaemonBridge))
  )

  it.scoped("subscriptions: the child hears the first subscribe and the last unsubscribe, also on leave", () =>
    Effect.gen(function* () {
      const { daemon, port } = yield* HostBridge
      yield* daemon.join("a", answersAs("a"))
      yield* daemon.join("b", answersAs("b"))
      assert.isTrue(yield* daemon.subscription("a", "fs", "file:///x", true))
      assert.isFalse(yield* daemon.subscription("b", "fs", "file:///x", true))
      // A repeated subscribe of the same session changes nothing.
      assert.isFalse(yield* daemon.subscription("a", "fs", "file:///x", true))
      assert.deepStrictEqual(yield* port.subscriptions("fs"), ["file:///x"])
      assert.isFalse(yield* daemon.subscription("a", "fs", "file:///x", false))
      assert.deepStrictEqual(yield* port.subscriptions("fs"), ["file:///x"])
      const left = yield* daemon.leave("b")
      assert.deepStrictEqual(left.released, [{ instance: "fs", uri: "file:///x" }])
      assert.deepStrictEqual(yield* port.subscriptions("fs"), [])
    }).pipe(Effect.provide(DaemonBridge))
  )

  it.scoped(
    "perCaller: a session's own value, released when it leaves; none for a stateless request, a gone or no session",
    () =>
      Effect.gen(function* () {
        const { daemon, port } = yield* HostBridge
        yield* daemon.join("a", answersAs("a"))
        yield* daemon.join("b", answersAs("b"))
        yield* daemon.join("once", answersAs("once"), true)
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
        yield* (yield* daemon.leave("a")).release
        assert.deepStrictEqual(released, ["a"])
        assertNone(yield* valueOf(Option.some("a")))
      }).pipe(Effect.provide(DaemonBridge))
  )
})
