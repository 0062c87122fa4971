import { Deferred, Duration, Effect } from "effect"
import type { ExitInfo } from "../../domain/Connection.js"
import { envelopeOf, type EraVerdict, legacyVerdict, modernVersion, verdictOf } from "../../domain/Era.js"
import type { JsonObject } from "../../domain/Mcp.js"
import type { SpawnedChild } from "../../transport/ChildProcessTransport.js"
import { LineFramer } from "../../transport/LineFramer.js"
import * as Version from "../../version.js"

/**
 * The era probe of a local source (ADR 033): `server/discover` with the modern envelope, sent to the session's own
 * child before anything else, read from its stdout before the transport starts. A DiscoverResult naming 2026-07-28 is
 * modern (the same process then goes on modern, with that answer adopted); an error, another answer or silence until
 * `timeout` is legacy (`initialize` follows on the same process: no second spawn for the common case). A child that
 * exits on the probe (rmcp-based servers exit on any request before `initialize`) fails with `exited`: Sources starts
 * it again as legacy, without a probe, and the verdict is kept with the catalog, so it is never probed again.
 * clawtool drains the child's stderr all along, so a server logging a screenful cannot block on the probe.
 */

/** The probe's id: under the relay's prefix, so a late answer (after the timeout) is dropped by the relay, not the SDK. */
const probeId = "clawtool-probe"

/** How long a silent server may take before it counts as legacy (a legacy server usually answers -32601 at once). */
export const defaultProbeTimeout = Duration.seconds(5)

/** The probe request (its envelope declares `capabilities`). */
const probeRequest = (capabilities: JsonObject) => ({
  jsonrpc: "2.0",
  id: probeId,
  method: "server/discover",
  params: { _meta: envelopeOf(capabilities, { name: Version.name, version: Version.version }) }
})

export const probeInPlace = (
  child: SpawnedChild,
  exited: Deferred.Deferred<ExitInfo>,
  capabilities: JsonObject,
  /** What is not JSON on stdout meanwhile is garbage, as the transport would report it (Health's stdoutGarbage). */
  onGarbage: (line: string) => void,
  timeout: Duration.Duration = defaultProbeTimeout
): Effect.Effect<EraVerdict, ExitInfo> => {
  const answer = Effect.async<EraVerdict>((resume) => {
    const framer = new LineFramer(
      (line) => {
        let message: unknown
        try {
          message = JSON.parse(line)
        } catch {
          return onGarbage(line)
        }
        if (typeof message === "object" && message !== null && (message as { id?: unknown }).id === probeId) {
          stop()
          resume(Effect.succeed(verdictOf(message)))
        }
      },
      () => {},
      1024 * 1024
    )
    const onData = (chunk: Buffer) => framer.push(chunk)
    const stop = () => void child.stdout.off("data", onData)
    child.stdout.on("data", onData)
    child.stdin.write(`${JSON.stringify(probeRequest(capabilities))}\n`)
    return Effect.sync(stop)
  })
  return Effect.raceFirst(
    answer.pipe(Effect.timeoutTo({ duration: timeout, onTimeout: () => legacyVerdict, onSuccess: (v) => v })),
    Effect.flatMap(Deferred.await(exited), Effect.fail)
  )
}

/** The probe's answer in a response body: JSON, or the first SSE event that answers it. */
const answerIn = (body: string): unknown => {
  const trimmed = body.trim()
  if (trimmed.startsWith("{")) return JSON.parse(trimmed)
  for (const line of body.split("\n")) {
    if (!line.startsWith("data:")) continue
    const message = JSON.parse(line.slice(5)) as { id?: unknown }
    if (message.id === probeId) return message
  }
  return undefined
}

/**
 * The era probe of a remote source (ADR 033): `server/discover` POSTed with the envelope and the era's headers. A
 * DiscoverResult naming 2026-07-28 is modern; an HTTP refusal (4xx, a 401 included: the legacy attempt then reports
 * it with its login hint), a JSON-RPC error, another answer, a network failure or silence until `timeout` is legacy,
 * and the legacy attempt that follows says what is wrong, if anything.
 */
export const probeRemote = (
  url: string,
  headers: Readonly<Record<string, string>>,
  fetchImpl: (url: string, init: RequestInit) => Promise<Response>,
  capabilities: JsonObject,
  timeout: Duration.Duration = defaultProbeTimeout
): Effect.Effect<EraVerdict> =>
  Effect.tryPromise(async (signal) => {
    const response = await fetchImpl(url, {
      method: "POST",
      headers: {
        ...headers,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-method": "server/discover",
        "mcp-protocol-version": modernVersion
      },
      body: JSON.stringify(probeRequest(capabilities)),
      signal
    })
    const body = await response.text()
    return response.ok ? verdictOf(answerIn(body)) : legacyVerdict
  }).pipe(
    Effect.timeoutTo({ duration: timeout, onTimeout: () => legacyVerdict, onSuccess: (v) => v }),
    Effect.orElseSucceed(() => legacyVerdict)
  )
