import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Option, TestClock } from "effect"
import { childCapabilities, HostBridge, offlinePort, spawnWait } from "../src/services/HostBridge.js"

describe("HostBridge", () => {
  it("children are declared only the host's sampling, elicitation and roots", () => {
    assert.deepStrictEqual(
      childCapabilities({ sampling: { tools: {} }, roots: { listChanged: true }, tasks: {}, experimental: { x: {} } }),
      { sampling: { tools: {} }, roots: { listChanged: true } }
    )
    assert.deepStrictEqual(childCapabilities({}), {})
  })

  it.scoped("children wait for the host; reverse requests need the host's capability", () =>
    Effect.gen(function* () {
      const bridge = yield* HostBridge
      const waiting = yield* Effect.fork(bridge.port.clientCapabilities)
      assert.isTrue(Option.isNone(yield* Fiber.poll(waiting)))
      const before = yield* Effect.flip(bridge.port.request("a", "roots/list", undefined))
      assert.strictEqual(before.code, -32601)
      yield* bridge.attach({
        capabilities: { roots: {}, tasks: {} },
        request: (instance, method) => Effect.succeed({ instance, method })
      })
      assert.deepStrictEqual(yield* Fiber.join(waiting), { roots: {} })
      assert.deepStrictEqual(yield* bridge.port.request("a", "roots/list", undefined), {
        instance: "a",
        method: "roots/list"
      })
      const refused = yield* Effect.flip(bridge.port.request("a", "sampling/createMessage", {}))
      assert.strictEqual(refused.code, -32601)
      assert.include(refused.detail, "sampling")
    }).pipe(Effect.provide(HostBridge.Default))
  )

  it.scoped("children spawn once the host's initialize is answered, or after spawnWait without one", () =>
    Effect.gen(function* () {
      // TestClock: the gate is observed just short of spawnWait and at it, not after a guessed real-time delay.
      const justBefore = Duration.subtract(spawnWait, Duration.millis(1))
      yield* Effect.gen(function* () {
        const bridge = yield* HostBridge
        const waiting = yield* Effect.fork(bridge.port.ready)
        yield* TestClock.adjust(justBefore)
        assert.isTrue(Option.isNone(yield* Fiber.poll(waiting)))
        yield* bridge.answered
        yield* Fiber.join(waiting)
      }).pipe(Effect.provide(HostBridge.Default))
      // No host at all: the gate opens by itself.
      yield* Effect.gen(function* () {
        const bridge = yield* HostBridge
        const waiting = yield* Effect.fork(bridge.port.ready)
        yield* TestClock.adjust(justBefore)
        assert.isTrue(Option.isNone(yield* Fiber.poll(waiting)))
        yield* TestClock.adjust(Duration.millis(1))
        yield* Fiber.join(waiting)
      }).pipe(Effect.provide(HostBridge.Default))
      yield* offlinePort.ready
    })
  )

  it.scoped("remembers the log level and subscriptions for children that start later", () =>
    Effect.gen(function* () {
      const bridge = yield* HostBridge
      yield* bridge.setLogLevel("warning")
      yield* bridge.remember("a", "x://1", true)
      yield* bridge.remember("a", "x://2", true)
      yield* bridge.remember("a", "x://1", false)
      assert.strictEqual(yield* bridge.port.logLevel, "warning")
      assert.deepStrictEqual(yield* bridge.port.subscriptions("a"), ["x://2"])
      assert.deepStrictEqual(yield* bridge.port.subscriptions("b"), [])
    }).pipe(Effect.provide(HostBridge.Default))
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
