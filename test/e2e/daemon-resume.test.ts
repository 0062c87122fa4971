// A host whose HTTP connection to `clawtool serve --listen` drops in the middle of a tool call resumes with
// Last-Event-ID and gets everything it missed (docs/decisions/026). The drop is real: a TCP relay between the SDK client
// and the daemon destroys every connection at once.
import { assert, beforeAll, describe, it } from "@effect/vitest"
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import * as net from "node:net"
import { ensureBuilt, writeConfig } from "../lib/cli.js"
import { callTool, httpClient, startDaemon, textOf } from "../lib/daemon.js"
import { pollUntil, stubCommand } from "../lib/sources.js"

beforeAll(ensureBuilt, 120_000)

/** A TCP relay to `port` on a free port of its own; `cut()` destroys every connection through it. Closed with the scope. */
const relay = (port: number) =>
  Effect.acquireRelease(
    Effect.async<{ url: URL; cut: () => number; server: net.Server }>((resume) => {
      const sockets = new Set<net.Socket>()
      const track = (socket: net.Socket) => {
        sockets.add(socket)
        socket.once("close", () => sockets.delete(socket))
        socket.on("error", () => {})
      }
      const server = net.createServer((downstream) => {
        const upstream = net.connect(port, "127.0.0.1")
        track(downstream)
        track(upstream)
        downstream.pipe(upstream)
        upstream.pipe(downstream)
      })
      server.listen(0, "127.0.0.1", () => {
        const address = server.address() as net.AddressInfo
        resume(
          Effect.succeed({
            url: new URL(`http://127.0.0.1:${address.port}/mcp`),
            cut: () => {
              const count = sockets.size
              for (const socket of sockets) socket.destroy()
              return count
            },
            server
          })
        )
      })
    }),
    ({ server, cut }) =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
        cut() // close waits for every connection, and the client's pool keeps its sockets alive for seconds
      })
  )

/** A daemon with one stub source (these flags), and a relay in front of it. */
const relayedDaemon = (...stubFlags: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    // The relay's port is not the daemon's: its Host header is allowed by name.
    const daemon = yield* startDaemon(
      writeConfig(`
        [http]
        allowed_hosts = ["127.0.0.1"]

        [sources.stub]
        command = ${stubCommand(...stubFlags)}
      `)
    )
    return { daemon, through: yield* relay(daemon.port) }
  })

describe("clawtool serve --listen: resumable streams", () => {
  it.scopedLive(
    "a tool call whose connection drops after its first progress still gets every progress once and its result",
    () =>
      Effect.gen(function* () {
        const { daemon, through } = yield* relayedDaemon()
        const { client } = yield* httpClient(through.url, {
          reconnection: {
            initialReconnectionDelay: 100,
            maxReconnectionDelay: 500,
            reconnectionDelayGrowFactor: 1.5,
            maxRetries: 5
          }
        })
        const seen: Array<number> = []
        let cuts = 0
        const result = yield* callTool(
          client,
          "stub__slow",
          { ms: 1500, steps: 6 },
          {
            timeout: 15_000,
            onprogress: (progress) => {
              seen.push((progress as { progress: number }).progress)
              // The first progress has arrived: drop every connection (the call's stream and the session's GET stream).
              if (seen.length === 1) cuts = through.cut()
            }
          }
        )
        assert.isAbove(cuts, 0, "connections were cut")
        assert.match(textOf(result), /slept 1500/)
        assert.deepStrictEqual(
          seen,
          [1, 2, 3, 4, 5, 6],
          `every progress exactly once, in order; daemon stderr:\n${daemon.stderr()}`
        )
      }),
    40_000
  )

  it.scopedLive(
    "a notification sent while the session's stream is down arrives once the stream resumes",
    () =>
      Effect.gen(function* () {
        const { daemon, through } = yield* relayedDaemon("--resources", "--subscribe")
        let updates = 0
        // A reconnects a second after the drop: the update below is sent while its stream is down.
        const a = yield* httpClient(through.url, {
          reconnection: {
            initialReconnectionDelay: 1000,
            maxReconnectionDelay: 1000,
            reconnectionDelayGrowFactor: 1,
            maxRetries: 5
          },
          setup: (client) => client.setNotificationHandler(ResourceUpdatedNotificationSchema, () => void updates++)
        })
        const b = yield* httpClient(daemon.url)
        const { resources } = yield* Effect.promise(() => a.client.listResources())
        const uri = resources.find((resource) => resource.uri.includes("info"))?.uri
        assert.isDefined(uri)
        yield* Effect.promise(() => a.client.subscribeResource({ uri: uri! }))
        // A first update on A's stream gives its client an event id to resume from.
        yield* pollUntil(
          Effect.map(callTool(b.client, "stub__touch"), () => updates),
          (count) => count >= 1,
          "A to hear a first update"
        )
        const before = updates
        assert.isAbove(through.cut(), 0)
        yield* callTool(b.client, "stub__touch")
        yield* pollUntil(
          Effect.sync(() => updates),
          (count) => count > before,
          "A to hear the update sent while its stream was down"
        )
      }),
    40_000
  )
})
