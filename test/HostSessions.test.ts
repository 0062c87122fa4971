import { LoggingLevelSchema } from "@modelcontextprotocol/sdk/types.js"
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Option, TestClock } from "effect"
import { childCapabilities, offlinePort } from "../src/services/HostBridge.js"
import { HostSessions, logLevels, spawnWait } from "../src/services/HostSessions.js"

/** A host whose reverse requests answer with what they were asked. */
const echo = (instance: string, method: string) => Effect.succeed({ instance, method })

describe("HostSessions.single (stdio: one host)", () => {
  it("children are declared only the host's sampling, elicitation and roots", () => {
    assert.deepStrictEqual(
      childCapabilities({ sampling: { tools: {} }, roots: { listChanged: true }, tasks: {}, experimental: { x: {} } }),
      { sampling: { tools: {} }, roots: { listChanged: true } }
    )
    assert.deepStrictEqual(childCapabilities({}), {})
  })

  it("knows MCP's log levels in the SDK's order", () => {
    assert.deepStrictEqual(logLevels, LoggingLevelSchema.options)
  })

  it.scoped("children wait for the host; reverse requests need the host's capability", () =>
    Effect.gen(function* () {
      const sessions = yield* HostSessions
      const { port } = sessions
      const waiting = yield* Effect.fork(port.clientCapabilities)
      assert.isTrue(Option.isNone(yield* Fiber.poll(waiting)))
      const before = yield* Effect.flip(port.request("a", "roots/list", undefined))
      assert.strictEqual(before.code, -32601)
      const host = yield* sessions.join({ id: "stdio", request: echo })
      yield* host.initialized({ roots: {}, tasks: {} })
      assert.deepStrictEqual(yield* Fiber.join(waiting), { roots: {} })
      assert.deepStrictEqual(yield* port.request("a", "roots/list", undefined), {
        instance: "a",
        method: "roots/list"
      })
      const refused = yield* Effect.flip(port.request("a", "sampling/createMessage", {}))
      assert.strictEqual(refused.code, -32601)
      assert.include(refused.detail, "sampling")
    }).pipe(Effect.provide(HostSessions.single))
  )

  it.scoped("children spawn once the host's initialize is answered, or after spawnWait without one", () =>
    Effect.gen(function* () {
      // TestClock: the gate is observed just short of spawnWait and at it, not after a guessed real-time delay.
      const justBefore = Duration.subtract(spawnWait, Duration.millis(1))
      yield* Effect.gen(function* () {
        const sessions = yield* HostSessions
        const waiting = yield* Effect.fork(sessions.port.ready)
        yield* TestClock.adjust(justBefore)
        assert.isTrue(Option.isNone(yield* Fiber.poll(waiting)))
        const host = yield* sessions.join({ id: "stdio", request: echo })
        yield* host.answered
        yield* Fiber.join(waiting)
      }).pipe(Effect.provide(HostSessions.single))
      // No host at all: the gate opens by itself.
      yield* Effect.gen(function* () {
        const sessions = yield* HostSessions
        const waiting = yield* Effect.fork(sessions.port.ready)
        yield* TestClock.adjust(justBefore)
        assert.isTrue(Option.isNone(yield* Fiber.poll(waiting)))
        yield* TestClock.adjust(Duration.millis(1))
        yield* Fiber.join(waiting)
      }).pipe(Effect.provide(HostSessions.single))
      yield* offlinePort.ready
    })
  )

  it.scoped("remembers the log level and subscriptions for children that start later", () =>
    Effect.gen(function* () {
      const sessions = yield* HostSessions
      const host = yield* sessions.join({ id: "stdio", request: echo })
      const subscribe = (uri: string, on: boolean) => host.subscription(uri, { instance: "a", uri }, on)
      assert.strictEqual(yield* host.setLevel("warning"), "warning")
      yield* subscribe("x://1", true)
      yield* subscribe("x://2", true)
      yield* subscribe("x://1", false)
      assert.strictEqual(yield* sessions.port.logLevel, "warning")
      assert.deepStrictEqual(yield* sessions.port.subscriptions("a"), ["x://2"])
      assert.deepStrictEqual(yield* sessions.port.subscriptions("b"), [])
    }).pipe(Effect.provide(HostSessions.single))
  )

  it.scoped("one host: its child hears every (un)subscribe and its roots change, it gets every update and task", () =>
    Effect.gen(function* () {
      const sessions = yield* HostSessions
      const host = yield* sessions.join({ id: "stdio", request: echo })
      const route = { instance: "a", uri: "x://1" }
      assert.isTrue((yield* host.subscription("x://1", route, true)).tell)
      assert.isTrue((yield* host.subscription("x://1", route, true)).tell)
      // A child's update for a URI the host never subscribed to still reaches it (nothing else could want it).
      assert.isTrue(host.hears("notifications/resources/updated", { uri: "x://2" }))
      yield* host.setLevel("error")
      assert.isFalse(host.hears("notifications/message", { level: "warning" }))
      assert.isTrue(host.hears("notifications/message", { level: "critical" }))
      assert.isTrue(yield* host.rootsChanged)
      yield* host.ownTask("a", "t-1")
      assert.isTrue(yield* host.ownsTask("a", "t-2"))
      // Its state lasts as long as the process.
      assert.isTrue(Option.isNone((yield* host.leave).level))
      assert.deepStrictEqual(yield* sessions.port.subscriptions("a"), ["x://1"])
    }).pipe(Effect.provide(HostSessions.single))
  )

  it.effect("without a host (health, tools list): all three declared, every reverse request refused", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(Object.keys(yield* offlinePort.clientCapabilities).sort(), [
        "elicitation",
        "roots",
        "sampling"
      ])
      const refused = yield* Effect.flip(offlinePort.request("a", "roots/list", undefined))
      assert.strictEqual(refused.code, -32601)
    })
  )
})
