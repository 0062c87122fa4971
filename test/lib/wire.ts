import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { exitOf, freshCacheDir, spawnServe } from "./cli.js"
import { root } from "./sources.js"

/**
 * A host that speaks raw newline-delimited JSON-RPC to `clawtool serve` (no SDK client, which would normalise ids,
 * progress tokens and errors): every stdout line is kept verbatim, responses are matched by id with its JSON type.
 */

export const wireServer = path.join(root, "test/fixtures/wire-server.mjs")

/** A TOML `command = [...]` value running the wire fixture with these flags. */
export const wireCommand = (...flags: ReadonlyArray<string>) => JSON.stringify([process.execPath, wireServer, ...flags])

export type Id = string | number
export type Json = Record<string, any>

export interface WireHost {
  /** Every stdout line so far, verbatim (without its newline). */
  readonly lines: ReadonlyArray<string>
  /** Writes one line (a newline is appended). */
  readonly sendLine: (line: string) => Effect.Effect<void>
  readonly send: (message: Json) => Effect.Effect<void>
  /**
   * The raw line of the first response whose id is `id` (same JSON type: 7 and "7" differ), among the lines from
   * index `from` on (a reused id's earlier answers are skipped).
   */
  readonly responseLine: (id: Id | null, from?: number) => Effect.Effect<string>
  /** Writes a request and returns its response's raw line. */
  readonly request: (id: Id, method: string, params?: Json) => Effect.Effect<string>
  /** Every notification received so far with this method, parsed. */
  readonly notifications: (method: string) => ReadonlyArray<Json>
  /** Every response line with this id (matched by JSON text, so the type counts). */
  readonly responsesTo: (id: Id | null) => ReadonlyArray<string>
  /** Closes stdin and waits for serve to exit and its stdout to end; then `lines` is complete. */
  readonly close: Effect.Effect<{ code: number | null; signal: string | null }>
}

const idKey = (line: string): string | undefined => {
  try {
    const message = JSON.parse(line)
    return typeof message === "object" && message !== null && "id" in message && !("method" in message)
      ? JSON.stringify(message.id)
      : undefined
  } catch {
    return undefined
  }
}

/** Polls (real time) until `find` returns a value; dies naming `what` after `limitMs`. */
const waitFor = <A>(find: () => A | undefined, what: string, limitMs = 30_000) =>
  Effect.gen(function* () {
    const until = Date.now() + limitMs
    for (;;) {
      const found = find()
      if (found !== undefined) return found
      if (Date.now() > until) return yield* Effect.dieMessage(`timed out waiting for ${what}`)
      yield* Effect.sleep("10 millis")
    }
  })

/**
 * `clawtool serve --config <config>` with a raw host, killed with the scope if the test did not close it; its cache
 * folder is removed then.
 */
export const wireHost = (config: string) =>
  Effect.acquireRelease(
    Effect.sync((): WireHost => {
      const cacheDir = freshCacheDir()
      const child = spawnServe(config, cacheDir)
      child.once("exit", () => fs.rmSync(cacheDir, { recursive: true, force: true }))
      child.stderr.resume()
      const lines: Array<string> = []
      let pending = ""
      const ended = new Promise<void>((resolve) => child.stdout.once("end", () => resolve()))
      child.stdout.setEncoding("utf8")
      child.stdout.on("data", (chunk: string) => {
        pending += chunk
        let newline
        while ((newline = pending.indexOf("\n")) !== -1) {
          lines.push(pending.slice(0, newline))
          pending = pending.slice(newline + 1)
        }
      })
      const sendLine = (line: string) => Effect.sync(() => void child.stdin.write(line + "\n"))
      const responseLine = (id: Id | null, from = 0) =>
        waitFor(
          () => lines.slice(from).find((line) => idKey(line) === JSON.stringify(id)),
          `a response with id ${JSON.stringify(id)}`
        )
      const host: WireHost = {
        lines,
        sendLine,
        send: (message) => sendLine(JSON.stringify(message)),
        responseLine,
        request: (id, method, params) =>
          Effect.suspend(() => {
            const from = lines.length
            return Effect.zipRight(
              sendLine(JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) })),
              responseLine(id, from)
            )
          }),
        notifications: (method) =>
          lines.flatMap((line) => {
            try {
              const message = JSON.parse(line)
              return message.method === method && !("id" in message) ? [message] : []
            } catch {
              return []
            }
          }),
        responsesTo: (id) => lines.filter((line) => idKey(line) === JSON.stringify(id)),
        close: Effect.gen(function* () {
          child.stdin.end()
          const exit = yield* exitOf(child)
          yield* Effect.promise(() => ended)
          if (pending !== "") lines.push(pending)
          return exit
        })
      }
      return Object.assign(host, { child })
    }),
    (host) =>
      Effect.gen(function* () {
        const { child } = host as WireHost & { child: ReturnType<typeof spawnServe> }
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
        yield* exitOf(child)
      })
  )

export const protocolVersion = "2025-11-25"

/** initialize (with `id`) and notifications/initialized; returns initialize's raw answer. */
export const handshake = (host: WireHost, id: Id = 0) =>
  Effect.gen(function* () {
    const answer = yield* host.request(id, "initialize", {
      protocolVersion,
      capabilities: {},
      clientInfo: { name: "wire-host", version: "1.0.0" }
    })
    yield* host.send({ jsonrpc: "2.0", method: "notifications/initialized" })
    return answer
  })
