import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { McpError } from "@modelcontextprotocol/sdk/types.js"
import { Cause, Deferred, Duration, Effect, Either, Exit, Fiber, Option, Runtime, type Scope } from "effect"
import { spawn } from "node:child_process"
import type { CallOptions, Connection, ExitInfo } from "../../domain/Connection.js"
import { ConfigChain, repeatedConfigOf, withConfigChain } from "../../domain/Environment.js"
import { envelopeOf, type EraVerdict, legacyVerdict, modernVersion, startingVerdict } from "../../domain/Era.js"
import { CallError, SourceError } from "../../domain/Errors.js"
import { CurrentLimits } from "../../domain/Limits.js"
import type { CallToolRequest, CallToolResult } from "../../domain/Mcp.js"
import { ChildProcessTransport, type SpawnedChild } from "../../transport/ChildProcessTransport.js"
import { LineFramer } from "../../transport/LineFramer.js"
import { clientInternals } from "../../transport/Sdk.js"
import { noTimeout } from "../../transport/SdkShape.js"
import { unvalidated } from "../../transport/Unvalidated.js"
import * as Version from "../../version.js"
import { Reaper, type ReaperShape } from "../Reaper.js"
import type { ModernClient } from "./Modern.js"
import { probeInPlace } from "./Probe.js"
import * as Relay from "./Relay.js"
import { isRemoteSpec, type LaunchSpec, type RemoteLaunchSpec } from "./LaunchSpec.js"
import { isOwnTimeout, sdkListTools, sdkToolCall, serverOf } from "./SdkCall.js"
import * as Surface from "./Surface.js"

/** JSON-RPC error codes by which a child says "your credentials are wrong"; never guessed from message text. */
export const authErrorCodes: ReadonlySet<number> = new Set([401, 403])

// Loose result schemas: the proxy relays what the child sent (unknown and future fields included) and
// leaves output-schema validation to the host, which owns the contract (effect-style P9).

const killGroup = (pid: number, signal: NodeJS.Signals) => {
  try {
    process.kill(-pid, signal)
  } catch {
    // ESRCH: the group is already gone.
  }
}

const describeExit = (exit: ExitInfo) =>
  exit.signal === null ? `exited with code ${exit.code}` : `killed by signal ${exit.signal}`

/** Shutdown grace periods: EOF first, then SIGTERM to the group, then SIGKILL. Bounded per child; children close concurrently. */
export const shutdownGrace = {
  eof: Duration.millis(800),
  term: Duration.millis(700),
  kill: Duration.millis(500)
} as const

/**
 * One child MCP server: spawn in its own process group, initialize, list tools, call tools. The only
 * service besides Gateway that touches the MCP SDK.
 */
export class SourceClient extends Effect.Service<SourceClient>()("clawtool/SourceClient", {
  dependencies: [Reaper.Default],
  effect: Effect.map(Reaper, (reaper) => ({
    connect: (spec: LaunchSpec | RemoteLaunchSpec): Effect.Effect<Connection, SourceError, Scope.Scope> =>
      isRemoteSpec(spec)
        ? // The HTTP and SSE client transports (and their EventSource) load with the first remote source only.
          Effect.flatMap(
            Effect.promise(() => import("./Remote.js")),
            (Remote) => Remote.connect(spec)
          )
        : connect(spec, reaper)
  }))
}) {}

const connect = Effect.fn("SourceClient.connect")(function* (spec: LaunchSpec, reaper: ReaperShape) {
  const fail = (reason: SourceError["reason"], detail: string, extra: { auth?: boolean; cause?: unknown } = {}) =>
    new SourceError({ instance: spec.instance, reason, detail, ...extra })

  const chain = yield* ConfigChain
  const runtime = yield* Effect.runtime<never>()
  const exited = yield* Deferred.make<ExitInfo>()
  // Acquire only spawns (fast, uninterruptible); the handshake below stays interruptible so timeouts work (P4).
  // The config chain marker passes default-deny here, at the last step, so no config entry can drop it (ADR 013).
  const launched = { ...spec, env: withConfigChain(spec.env, chain.files) }
  const child = yield* Effect.acquireRelease(spawnChild(launched, exited, reaper), (child) => terminate(child, exited))
  const pid = child.pid!

  // The era (ADR 033): the config's, else the verdict kept with the catalog, else a probe of this child (in place).
  const starting = startingVerdict(spec.protocol, spec.knownEra)
  const verdict: EraVerdict | undefined =
    starting !== "probe"
      ? starting
      : yield* probeInPlace(child, exited, {}, spec.onGarbage, spec.probeTimeout).pipe(
          Effect.mapError((exit) =>
            fail("EraProbe", `${describeExit(exit)} on the era probe (server/discover); started again as legacy`)
          )
        )
  const modern = verdict === undefined || verdict.era === "modern"
  // SDK v2's client loads with the first modern child only.
  const Modern = modern ? yield* Effect.promise(() => import("./Modern.js")) : undefined

  const transport = new ChildProcessTransport(child, spec.onGarbage, yield* CurrentLimits)
  // In serve this waits for the host's initialize: children declare only what the host has (ADR-005).
  const declared = yield* Surface.declaredCapabilities(spec)
  const modernClient: ModernClient | undefined =
    Modern === undefined
      ? undefined
      : new Modern.ModernClient(
          spec.instance,
          declared,
          Modern.askHost(spec, runtime),
          verdict?.era === "modern" ? verdict.discover : undefined
        )
  const client =
    modernClient?.asClient ??
    new Client(
      { name: Version.name, version: Version.version },
      { capabilities: declared, jsonSchemaValidator: unvalidated }
    )
  client.onerror = () => {} // transport-level noise is reported through onGarbage / exit; never throw from here
  // Every SDK internal SourceClient uses, checked now (ADR 002).
  const sdk = clientInternals(client)

  const exitDetail: Effect.Effect<ExitInfo | undefined> = Deferred.poll(exited).pipe(
    Effect.flatMap(Option.match({ onNone: () => Effect.succeed(undefined), onSome: (done) => done }))
  )
  const handshakeFailure = (reason: "Initialize" | "ListTools") => (cause: unknown) =>
    Effect.flatMap(exitDetail, (exit) => {
      // First, since it exits soon after: a nested clawtool refusing a config this chain already serves: by its code and a path of our chain, never text.
      const repeated =
        cause instanceof McpError ? repeatedConfigOf(cause.code, cause.data, chain.files) : Option.none<string>()
      if (Option.isSome(repeated)) {
        return Effect.fail(
          fail(
            "Recursion",
            `it starts clawtool again with config ${repeated.value}, which a clawtool above it already serves; not restarted`,
            { cause }
          )
        )
      }
      if (exit !== undefined) return Effect.fail(fail("Exited", `${describeExit(exit)} during ${reason}`, { cause }))
      if (cause instanceof McpError) {
        return Effect.fail(
          fail(reason, `child answered error ${cause.code}: ${cause.message}`, {
            auth: authErrorCodes.has(cause.code),
            cause
          })
        )
      }
      return Effect.fail(fail(reason, cause instanceof Error ? cause.message : String(cause), { cause }))
    })

  const surface = yield* Surface.install({ client, transport, spec, declared, exitInfo: exitDetail })
  const timeoutMs =
    spec.callTimeout === undefined ? undefined : Math.min(Duration.toMillis(spec.callTimeout), noTimeout)
  // Installed before the handshake, so a cancel of the child's very first request (a reverse one) is seen too.
  const relay = Relay.make({
    instance: spec.instance,
    send: (lines) => void transport.sendLine(lines).catch(() => {}),
    callTimeoutMs: timeoutMs,
    timers: spec.relayTimers,
    ...(modernClient === undefined
      ? {}
      : {
          envelope: envelopeOf(declared, { name: Version.name, version: Version.version }),
          continueCall: (request, needed, done, hostCapabilities) => {
            const fiber = Runtime.runFork(runtime)(
              callFailure(
                request,
                Effect.tryPromise({
                  try: (signal) =>
                    modernClient.continueCall(request, needed, signal, hostCapabilities) as Promise<CallToolResult>,
                  catch: (cause) => cause
                })
              )
            )
            fiber.addObserver((exit) => {
              if (Exit.isSuccess(exit)) return done(Either.right(exit.value))
              const failure = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined
              if (failure !== undefined) done(Either.left(failure))
            })
            return () => void Runtime.runFork(runtime)(Fiber.interrupt(fiber))
          }
        })
  })
  // Relayed answers first; then progress, dispatched at once so a result in the same read cannot overtake it (the SDK
  // would handle the progress a tick later, after the result removed its handler); then the reverse requests' cancels.
  transport.intercept = (message) =>
    relay.receive(message) || sdk.progressNow(message) || surface.observeCancel(message)
  const closeRelay = (code: number | null, signal: string | null) =>
    relay.close(`source "${spec.instance}" ${describeExit({ code, signal, at: new Date() })}`)
  if (child.exitCode !== null || child.signalCode !== null) closeRelay(child.exitCode, child.signalCode)
  else child.once("exit", closeRelay)

  yield* Effect.tryPromise({
    try: (signal) => client.connect(transport, { signal, timeout: noTimeout }),
    catch: (cause) => cause
  }).pipe(Effect.catchAll(handshakeFailure("Initialize")))

  const listTools = sdkListTools(client, spec.instance, (cause) => cause).pipe(
    Effect.catchAll(handshakeFailure("ListTools"))
  )

  const tools = yield* listTools
  const members = yield* surface.start(tools, listTools)

  /** A call's failure as a CallError, worded alike on every path. */
  function callFailure<A>(request: CallToolRequest, call: Effect.Effect<A, unknown>): Effect.Effect<A, CallError> {
    return call.pipe(
      Effect.catchAll((cause) =>
        Effect.flatMap(exitDetail, (exit) => {
          const tool = `${spec.instance}.${request.name}`
          if (exit !== undefined) {
            return Effect.fail(Relay.transportError(tool, `source "${spec.instance}" ${describeExit(exit)}`))
          }
          if (timeoutMs !== undefined && isOwnTimeout(cause, timeoutMs)) {
            // The SDK has already sent notifications/cancelled for it.
            return Effect.fail(Relay.timeoutError(tool, timeoutMs))
          }
          if (cause instanceof McpError) {
            return Effect.fail(Relay.childError(tool, cause))
          }
          const detail = cause instanceof Error ? cause.message : String(cause)
          return Effect.fail(Relay.transportError(tool, detail))
        })
      )
    )
  }
  const callTool = (request: CallToolRequest, options?: CallOptions) =>
    callFailure(request, sdkToolCall(client, request, options, timeoutMs))

  return {
    instance: spec.instance,
    pid,
    ...members,
    protocolVersion: modernClient === undefined ? surface.protocolVersion() : modernVersion,
    era: modernClient?.verdict ?? legacyVerdict,
    ...serverOf(client),
    tools,
    listTools,
    callTool,
    relayCall: relay.call,
    exited: Deferred.await(exited)
  } satisfies Connection
})

const spawnChild = (spec: LaunchSpec, exited: Deferred.Deferred<ExitInfo>, reaper: ReaperShape) =>
  Effect.async<SpawnedChild, SourceError>((resume) => {
    const [bin, ...args] = spec.command
    let child: SpawnedChild
    try {
      child = spawn(bin, args, {
        // Own process group (setsid): killing -pid reaches npx/uvx wrappers and every grandchild.
        detached: true,
        stdio: ["pipe", "pipe", "pipe"],
        env: spec.env,
        cwd: spec.cwd,
        windowsHide: true
      })
    } catch (cause) {
      return resume(Effect.fail(spawnError(spec, cause)))
    }
    // Recorded before anything else can happen, so a SIGKILL of clawtool from now on still reaps this group.
    const pid = child.pid
    if (pid !== undefined) reaper.track(pid)
    const stderr = new LineFramer(
      (line) => spec.onStderrLine(line.length > 2000 ? `${line.slice(0, 2000)}…` : line),
      () => spec.onStderrLine("<an over-long stderr line was dropped>"),
      1024 * 1024
    )
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk))
    child.stdin.on("error", () => {}) // EPIPE after the child died; the exit event reports it
    child.once("error", (cause) => resume(Effect.fail(spawnError(spec, cause))))
    child.once("spawn", () => resume(Effect.succeed(child)))
    child.once("exit", (code, signal) => {
      // Whatever the leader did, its group goes with it: no grandchild outlives a crash.
      if (pid !== undefined) {
        killGroup(pid, "SIGKILL")
        reaper.untrack(pid)
      }
      const exit: ExitInfo = { code, signal, at: new Date() }
      spec.onExit?.(exit)
      Deferred.unsafeDone(exited, Effect.succeed(exit))
    })
  })

const spawnError = (spec: LaunchSpec, cause: unknown) =>
  new SourceError({
    instance: spec.instance,
    reason: "Spawn",
    detail: `cannot start ${JSON.stringify(spec.command[0])}: ${cause instanceof Error ? cause.message : String(cause)}`,
    cause
  })

/** EOF, then SIGTERM to the group, then SIGKILL: each step bounded, so shutdown never hangs on one child. */
const terminate = (child: SpawnedChild, exited: Deferred.Deferred<ExitInfo>) =>
  Effect.gen(function* () {
    const pid = child.pid!
    // Finalizers run uninterruptibly; the wait must be interruptible itself or the timeout could never cut it.
    const waitExit = (grace: Duration.Duration) =>
      Effect.timeoutOption(Effect.interruptible(Deferred.await(exited)), grace)
    if (Option.isSome(yield* Deferred.poll(exited))) return killGroup(pid, "SIGKILL")
    if (!child.stdin.destroyed) child.stdin.end()
    if (Option.isSome(yield* waitExit(shutdownGrace.eof))) return
    killGroup(pid, "SIGTERM")
    if (Option.isSome(yield* waitExit(shutdownGrace.term))) return
    killGroup(pid, "SIGKILL")
    yield* waitExit(shutdownGrace.kill)
  })
