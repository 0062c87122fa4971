// The Gateway in-process (issue 24): one host session over an in-memory transport pair, an SDK Client as the host,
// real Registry and Sources over fake children the test holds, under TestClock. list_wait, the list_changed debounce and
// idle_timeout are driven by the clock, without real sleeps; real I/O (the transport's promises) is waited for by
// turns of the event loop, bounded, never by time.
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import {
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema
} from "@modelcontextprotocol/sdk/types.js"
import { Chunk, Clock, Deferred, Duration, Effect, Fiber, Layer, Queue, type Scope, Stream, TestClock } from "effect"
import type { Connection, ExitInfo, LiveSurface } from "../src/domain/Connection.js"
import type { HealthRow } from "../src/domain/Health.js"
import type { Tool } from "../src/domain/Mcp.js"
import type { Prompt, Resource } from "../src/domain/Surface.js"
import { type CachedCatalog, CatalogCache } from "../src/services/CatalogCache.js"
import { Config } from "../src/services/Config.js"
import { CoreTools } from "../src/services/CoreTools.js"
import { Gateway } from "../src/services/Gateway.js"
import { HostSessions } from "../src/services/HostSessions.js"
import { Registry } from "../src/services/Registry.js"
import { Secrets } from "../src/services/Secrets.js"
import { SourceClient } from "../src/services/SourceClient/SourceClient.js"
import type { LaunchSpec } from "../src/services/SourceClient/LaunchSpec.js"
import { Sources } from "../src/services/Sources.js"
import { Redaction } from "../src/services/Redaction.js"
import { Tracing } from "../src/services/Tracing.js"
import { configFrom } from "./lib/sources.js"

const tool = (name: string): Tool => ({ name, inputSchema: { type: "object" } })

/** What a fake child serves. */
interface Served {
  readonly tools: ReadonlyArray<Tool>
  readonly resources?: ReadonlyArray<Resource>
  readonly prompts?: ReadonlyArray<Prompt>
}

const surfaceOf = (served: Served): LiveSurface => ({
  tools: served.tools,
  resources: served.resources ?? [],
  resourceTemplates: [],
  prompts: served.prompts ?? [],
  error: undefined
})

/**
 * Children that are not processes: each connect waits for the instance's gate (if the test set one), then serves what
 * `serves` says at that moment; its surface changes are its first listing, then each `relist` (as after its own
 * list_changed). Each child's scope end (an idle stop, the shutdown) is recorded.
 */
const fakeChildren = (serves: Record<string, Served>) => {
  const gates = new Map<string, Deferred.Deferred<void>>()
  const children: Array<{ readonly instance: string; stopped: boolean; readonly relist: Queue.Queue<LiveSurface> }> = []
  const connect = (spec: LaunchSpec) =>
    Effect.gen(function* () {
      const gate = gates.get(spec.instance)
      if (gate !== undefined) yield* Deferred.await(gate)
      const served = serves[spec.instance] ?? { tools: [tool("echo")] }
      let current = surfaceOf(served)
      const relist = yield* Queue.unbounded<LiveSurface>()
      const child = { instance: spec.instance, stopped: false, relist }
      children.push(child)
      yield* Effect.addFinalizer(() => Effect.sync(() => (child.stopped = true)))
      const exited = yield* Deferred.make<ExitInfo>()
      return {
        instance: spec.instance,
        pid: 1000 + children.length,
        protocolVersion: "2025-11-25",
        era: { era: "legacy" },
        serverInfo: { name: "fake", version: "1" },
        capabilities: { tools: {}, resources: {}, prompts: {} },
        clientCapabilities: {},
        tools: served.tools,
        surface: Effect.sync(() => current),
        surfaceChanges: Stream.concat(Stream.succeed(current), Stream.fromQueue(relist)).pipe(
          Stream.tap((next) => Effect.sync(() => (current = next)))
        ),
        callTool: (request) =>
          Effect.succeed({ content: [{ type: "text", text: `${spec.instance}:${request.name}` }] }),
        exited: Deferred.await(exited)
      } as Partial<Connection> as Connection
    })
  const client = new SourceClient({ connect: (spec) => connect(spec as LaunchSpec) })
  return {
    children,
    client,
    /** Holds the next start of `instance` until the returned Deferred is completed. */
    hold: (instance: string) =>
      Effect.tap(Deferred.make<void>(), (gate) => Effect.sync(() => gates.set(instance, gate))),
    /** The instance's current child lists `served` (a new array each time, as a child's fresh listing is). */
    relist: (instance: string, served: Served) =>
      Queue.offer(children.filter((child) => child.instance === instance).at(-1)!.relist, surfaceOf(served))
  }
}

/** The Gateway as `serve` builds it (HostSessions, and its HostBridge port shared by Sources, Registry and the Gateway), over the fake children. */
const gatewayLayer = (toml: string, client: SourceClient, cache = CatalogCache.Test()) => {
  const config = configFrom(toml)
  const configLayer = Config.layerTest(config)
  const secrets = Secrets.layerTest({ env: {}, sources: config.sources })
  const sources = Sources.DefaultWithoutDependencies.pipe(
    Layer.provide(Layer.mergeAll(configLayer, secrets, Layer.succeed(SourceClient, client), cache))
  )
  const registry = Registry.DefaultWithoutDependencies.pipe(
    Layer.provide(CoreTools.ProviderWithoutDependencies),
    Layer.provide(Layer.merge(sources, configLayer))
  )
  return Gateway.DefaultWithoutDependencies.pipe(
    Layer.provide(
      Layer.mergeAll(
        registry,
        Tracing.Default,
        Redaction.DefaultWithoutDependencies.pipe(Layer.provide(Layer.merge(configLayer, secrets)))
      )
    ),
    Layer.provideMerge(HostSessions.Default)
  )
}

/** One turn of Node's event loop: the in-memory transport and the SDK run on promises, not on the (test) clock. */
const turn = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))

/** Enough turns for anything already under way to arrive: what "nothing came" is checked after. */
const drain = Effect.repeatN(turn, 50)

/** Turns until `check` holds, at most 2,000 of them: failing, it says what it waited for. */
const until = (check: Effect.Effect<boolean>, what: string) =>
  Effect.gen(function* () {
    for (let turns = 0; turns < 2_000; turns++) {
      if (yield* check) return
      yield* turn
    }
    return yield* Effect.dieMessage(`never happened: ${what}`)
  })

/** Until something sleeps until `afterMillis` from now on the TestClock: the timer a step of the test adjusts past. */
const timerIn = (afterMillis: number, what: string) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    until(
      Effect.map(TestClock.sleeps(), (sleeps) => Chunk.some(sleeps, (at) => at === now + afterMillis)),
      `a timer in ${afterMillis} ms: ${what}`
    )
  )

/** One host session (an SDK Client over an in-memory pair) on the Gateway; it counts the list_changed it gets. */
const hostSession = Effect.gen(function* () {
  const gateway = yield* Gateway
  const [hostSide, gatewaySide] = InMemoryTransport.createLinkedPair()
  yield* gateway.session(gatewaySide)
  const client = new Client({ name: "host", version: "1" }, { capabilities: {} })
  const notices = { tools: 0, resources: 0, prompts: 0 }
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void notices.tools++)
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void notices.resources++)
  client.setNotificationHandler(PromptListChangedNotificationSchema, () => void notices.prompts++)
  yield* Effect.acquireRelease(
    Effect.promise(() => client.connect(hostSide)),
    () => Effect.promise(() => client.close())
  )
  const rowOf = (name: string) =>
    Effect.map(gateway.health, (rows) => rows.find((row) => row.name === name) as HealthRow)
  return {
    client,
    notices,
    rowOf,
    /** Until the instance's Health row satisfies `check`. */
    untilRow: (name: string, check: (row: HealthRow) => boolean, what: string) =>
      until(Effect.map(rowOf(name), check), `${name} ${what}`),
    toolNames: Effect.map(
      Effect.promise(() => client.listTools()),
      ({ tools }) => tools.map((listed) => listed.name)
    ),
    /** Every list the host can ask for, by name or URI. */
    lists: Effect.promise(async () => ({
      tools: (await client.listTools()).tools.map((listed) => listed.name),
      resources: (await client.listResources()).resources.map((listed) => listed.uri),
      prompts: (await client.listPrompts()).prompts.map((listed) => listed.name)
    }))
  }
})

describe("Gateway, one session in-process (TestClock)", () => {
  it.scoped(
    "a list waits for a starting source at most list_wait, then answers what is there; the late source is announced once per kind the host listed",
    () => {
      const fake = fakeChildren({
        ok: { tools: [tool("echo")] },
        slow: {
          tools: [tool("hello")],
          resources: [{ uri: "late://info", name: "info" }],
          prompts: [{ name: "greet" }]
        }
      })
      return Effect.gen(function* () {
        const slowStarted = yield* fake.hold("slow")
        const host = yield* hostSession
        yield* host.untilRow("ok", (row) => row.status === "running", "running")
        const list = yield* Effect.fork(host.toolNames)
        yield* drain
        yield* TestClock.adjust("2999 millis")
        yield* drain
        assert.isNull(list.unsafePoll(), "the list still waits for slow within list_wait")
        yield* TestClock.adjust("1 milli")
        yield* until(
          Effect.sync(() => list.unsafePoll() !== null),
          "the list answered at list_wait"
        )
        const before = yield* Fiber.join(list)
        assert.include(before, "ok__echo")
        assert.notInclude(before, "slow__hello")
        assert.deepStrictEqual((yield* Effect.promise(() => host.client.listPrompts())).prompts, [])

        // slow comes up: after the debounce, one notice for tools and one for prompts; resources were never listed.
        yield* Deferred.succeed(slowStarted, undefined)
        yield* host.untilRow("slow", (row) => row.status === "running", "running")
        yield* drain
        assert.deepStrictEqual(host.notices, { tools: 0, resources: 0, prompts: 0 }, "not before the debounce")
        yield* TestClock.adjust("50 millis")
        yield* until(
          Effect.sync(() => host.notices.tools === 1 && host.notices.prompts === 1),
          "list_changed for tools and prompts"
        )
        yield* TestClock.adjust("1 second")
        yield* drain
        assert.deepStrictEqual(host.notices, { tools: 1, resources: 0, prompts: 1 })
        assert.includeMembers(yield* host.toolNames, ["ok__echo", "slow__hello"])
        const { prompts } = yield* Effect.promise(() => host.client.listPrompts())
        assert.deepStrictEqual(
          prompts.map((prompt) => prompt.name),
          ["slow__greet"]
        )
      }).pipe(
        Effect.provide(
          gatewayLayer(
            `list_wait = "3s"\n[sources.ok]\ncommand = ["fake"]\n[sources.slow]\ncommand = ["fake"]\n`,
            fake.client
          )
        )
      )
    }
  )

  it.scoped(
    "changes within the 50 ms debounce give one tools/list_changed, sent only after the window; an identical listing gives none",
    () => {
      const fake = fakeChildren({ fs: { tools: [tool("echo")] } })
      const listing = (...names: ReadonlyArray<string>) => ({ tools: names.map(tool) })
      return Effect.gen(function* () {
        const host = yield* hostSession
        yield* host.untilRow("fs", (row) => row.status === "running", "running")
        assert.include(yield* host.toolNames, "fs__echo")
        // The start itself, listed by the host after it, is not announced.
        yield* TestClock.adjust("1 second")
        yield* drain
        assert.deepStrictEqual(host.notices, { tools: 0, resources: 0, prompts: 0 })

        // A fresh listing with the same tools (a restart bringing the same catalog back): nothing is announced.
        yield* fake.relist("fs", listing("echo"))
        yield* drain
        yield* TestClock.adjust("1 second")
        yield* drain
        assert.strictEqual(host.notices.tools, 0)

        // Three listings 20 ms apart: each restarts the window, so nothing before 50 ms after the last.
        yield* fake.relist("fs", listing("echo", "a"))
        yield* host.untilRow("fs", (row) => row.toolCount === 2, "listing a")
        yield* TestClock.adjust("20 millis")
        yield* fake.relist("fs", listing("echo", "a", "b"))
        yield* host.untilRow("fs", (row) => row.toolCount === 3, "listing b")
        yield* TestClock.adjust("20 millis")
        yield* fake.relist("fs", listing("echo", "a", "b", "c"))
        yield* host.untilRow("fs", (row) => row.toolCount === 4, "listing c")
        yield* drain
        assert.strictEqual(host.notices.tools, 0, "nothing within the window")
        yield* TestClock.adjust("49 millis")
        yield* drain
        assert.strictEqual(host.notices.tools, 0, "nothing 1 ms before the window ends")
        yield* TestClock.adjust("1 milli")
        yield* until(
          Effect.sync(() => host.notices.tools >= 1),
          "tools/list_changed at the end of the window"
        )
        yield* TestClock.adjust("1 second")
        yield* drain
        assert.deepStrictEqual(host.notices, { tools: 1, resources: 0, prompts: 0 })
        assert.includeMembers(yield* host.toolNames, ["fs__echo", "fs__a", "fs__b", "fs__c"])
      }).pipe(Effect.provide(gatewayLayer(`list_wait = "0s"\n[sources.fs]\ncommand = ["fake"]\n`, fake.client)))
    }
  )

  it.scoped(
    "a lazy source's child stops after idle_timeout with no request; a call restarts the count, and the next call wakes it",
    () => {
      const fake = fakeChildren({ lazy: { tools: [tool("echo")] } })
      const minute = Duration.toMillis("1 minute")
      return Effect.gen(function* () {
        const host = yield* hostSession
        const call = Effect.promise(() => host.client.callTool({ name: "lazy__echo", arguments: {} }))
        // Without a cached catalog a lazy source starts once to learn it, then the idle count begins.
        yield* host.untilRow("lazy", (row) => row.status === "running", "running")
        yield* timerIn(minute, "idle_timeout")
        yield* TestClock.adjust("30 seconds")
        assert.deepStrictEqual((yield* call).content, [{ type: "text", text: "lazy:echo" }])

        // One idle_timeout after the start, but only half of one after the call: still running.
        yield* TestClock.adjust("30 seconds")
        yield* drain
        assert.strictEqual((yield* host.rowOf("lazy")).status, "running")
        assert.isFalse(fake.children[0]!.stopped)

        // One idle_timeout after the call: stopped; its tools stay listed.
        yield* TestClock.adjust("30 seconds")
        yield* host.untilRow("lazy", (row) => row.status === "idle", "idle after idle_timeout")
        yield* until(
          Effect.sync(() => fake.children[0]!.stopped),
          "the idle child's scope closed"
        )
        assert.include(yield* host.toolNames, "lazy__echo")

        // The next call starts a new child and is answered by it.
        assert.deepStrictEqual((yield* call).content, [{ type: "text", text: "lazy:echo" }])
        assert.strictEqual(fake.children.length, 2)
        assert.isFalse(fake.children[1]!.stopped)
      }).pipe(
        Effect.provide(
          gatewayLayer(`[sources.lazy]\ncommand = ["fake"]\nstart = "lazy"\nidle_timeout = "1m"\n`, fake.client)
        )
      )
    }
  )

  it.scoped(
    "a source serving its cached catalog: no list_changed when its child lists the same, one per kind when it lists differently",
    () => {
      const served = {
        src: { tools: [tool("echo")], resources: [{ uri: "late://info", name: "info" }], prompts: [{ name: "greet" }] }
      }
      const fake = fakeChildren(served)
      const entries = new Map<string, CachedCatalog>()
      const inSession = <A>(body: Effect.Effect<A, never, Gateway | Scope.Scope>) =>
        body.pipe(
          Effect.scoped,
          Effect.provide(
            gatewayLayer(
              `list_wait = "60s"\n[sources.src]\ncommand = ["fake"]\n`,
              fake.client,
              CatalogCache.Test(entries)
            )
          )
        )
      /** A warm session: the host lists while the child is held, then the child comes up. */
      const warm = Effect.gen(function* () {
        const started = yield* fake.hold("src")
        const host = yield* hostSession
        const listed = yield* host.lists
        const row = yield* host.rowOf("src")
        assert.deepStrictEqual([row.status, row.reason], ["starting", "catalog: cached"])
        yield* Deferred.succeed(started, undefined)
        // The child spawns once the host's first lists are answered (at most 500 ms after initialize, ADR 014).
        yield* TestClock.adjust("500 millis")
        yield* host.untilRow("src", (row) => row.status === "running", "running")
        yield* drain
        assert.deepStrictEqual(host.notices, { tools: 0, resources: 0, prompts: 0 }, "not before the debounce")
        return { host, listed }
      })

      return Effect.gen(function* () {
        const cold = yield* inSession(
          Effect.gen(function* () {
            const host = yield* hostSession
            yield* host.untilRow("src", (row) => row.status === "running", "running")
            yield* until(
              Effect.sync(() => entries.size === 1),
              "the catalog stored"
            )
            return yield* host.lists
          })
        )
        assert.include(cold.tools, "src__echo")
        assert.deepStrictEqual([cold.resources, cold.prompts], [["late://info"], ["src__greet"]])

        yield* inSession(
          Effect.gen(function* () {
            const { host, listed } = yield* warm
            assert.deepStrictEqual(listed, cold)
            yield* TestClock.adjust("1 second")
            yield* drain
            assert.deepStrictEqual(host.notices, { tools: 0, resources: 0, prompts: 0 })
            assert.deepStrictEqual(yield* host.lists, cold)
          })
        )

        // The same spec, another listing (a new release behind the same command line).
        served.src = { tools: [tool("echo"), tool("extra")], resources: [], prompts: [{ name: "other" }] }
        yield* inSession(
          Effect.gen(function* () {
            const { host, listed } = yield* warm
            assert.deepStrictEqual(listed, cold)
            yield* TestClock.adjust("50 millis")
            yield* until(
              Effect.sync(() => host.notices.tools >= 1 && host.notices.resources >= 1 && host.notices.prompts >= 1),
              "list_changed for every kind"
            )
            yield* TestClock.adjust("1 second")
            yield* drain
            assert.deepStrictEqual(host.notices, { tools: 1, resources: 1, prompts: 1 })
            const fresh = yield* host.lists
            assert.include(fresh.tools, "src__extra")
            assert.deepStrictEqual([fresh.resources, fresh.prompts], [[], ["src__other"]])
          })
        )
      })
    }
  )
})
