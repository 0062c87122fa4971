import { Effect, Either, Exit, FiberSet, Queue } from "effect"
import { MessageChannel, Worker } from "node:worker_threads"
import type { Answer, CodeNames, RunOutcome, RunRequest, ToHost } from "./Protocol.js"
import { workerFiles } from "./WorkerFile.js"

/**
 * RunCode's host side: runs guest code in a worker thread (Worker.ts) and answers its inner calls on clawtool's own
 * path. The main thread never runs guest code, so other requests are answered while a run spins. A worker that
 * finished a run cleanly is kept for the next (its wasm stays compiled); one that was cancelled, timed out or failed
 * is terminated.
 */

export interface RunSettings {
  /** JavaScript: the body of an async function. */
  readonly code: string
  readonly names: CodeNames
  readonly memoryBytes: number
  readonly timeoutMs: number
  readonly maxCalls: number
  readonly maxLog: number
  /**
   * One inner call: the tool's value as JSON text, or the message of the error the guest sees thrown. Interrupted when
   * the run ends (cancelled, timed out) before it answered.
   */
  readonly call: (name: string, args: string | undefined) => Effect.Effect<string | undefined, string>
  /**
   * The same call without an Effect, when it can take the relay: `done` gets the value or the message, never
   * synchronously. Returns the cancel (called when the run ends first), or undefined: the call then takes `call`.
   */
  readonly relay?: (
    name: string,
    args: string | undefined,
    done: (answer: Either.Either<string | undefined, string>) => void
  ) => (() => void) | undefined
}

/** After the deadline, how long the guest has to stop at an interrupt poll before its thread is ended. */
const graceMs = 1000
/** Idle workers kept for the next runs. */
const keepIdle = 2
const idle: Array<Worker> = []

interface Lease {
  readonly worker: Worker
  readonly events: Queue.Queue<ToHost | { readonly type: "failed"; readonly detail: string }>
  readonly detach: () => void
}

/** A new worker; its stdout and stderr are its own (never clawtool's stdout, the protocol on stdio), and drained. */
const spawn = (files: { readonly worker: string; readonly wasm: string }) => {
  const worker = new Worker(files.worker, { workerData: { wasm: files.wasm }, stdout: true, stderr: true })
  worker.stdout.resume()
  worker.stderr.resume()
  return worker
}

/** A worker ready to run (kept or new), its messages going to a queue of this run. */
const lease = Effect.gen(function* () {
  const events = yield* Queue.unbounded<ToHost | { readonly type: "failed"; readonly detail: string }>()
  const kept = idle.pop()
  const files = kept === undefined ? workerFiles() : undefined
  const worker = kept ?? spawn(files!)
  const onMessage = (message: ToHost) => Queue.unsafeOffer(events, message)
  const onError = (error: Error) => Queue.unsafeOffer(events, { type: "failed", detail: error.message })
  const onExit = (code: number) => Queue.unsafeOffer(events, { type: "failed", detail: `its thread exited (${code})` })
  worker.on("message", onMessage).on("error", onError).on("exit", onExit)
  const detach = () => worker.off("message", onMessage).off("error", onError).off("exit", onExit)
  if (kept === undefined) {
    const first = yield* Queue.take(events)
    if (first.type !== "ready") return yield* Effect.fail(first.type === "failed" ? first.detail : "no ready message")
  }
  return { worker, events, detach } satisfies Lease
})

/** Back to the idle workers after a clean run, else ended (a run that did not finish may still be spinning). */
const release = (lease: Lease, clean: boolean) =>
  Effect.sync(() => {
    lease.detach()
    if (clean && idle.length < keepIdle) idle.push(lease.worker)
    else void lease.worker.terminate()
  })

const crashed = (detail: string, calls = 0): RunOutcome => ({
  ok: false,
  reason: "Crashed",
  message: `the sandbox failed: ${detail}`,
  log: { text: "", dropped: 0 },
  calls
})

/** Runs the code to its outcome; never fails. Interrupting it stops the guest at once (its thread is ended). */
export const run = (settings: RunSettings): Effect.Effect<RunOutcome> =>
  Effect.scoped(
    Effect.gen(function* () {
      const acquired = yield* Effect.either(Effect.acquireRelease(lease, (held, exit) => release(held, clean(exit))))
      if (acquired._tag === "Left") return crashed(acquired.left)
      const held = acquired.right
      const signal = new Int32Array(new SharedArrayBuffer(8))
      // The answers go on a port of this run's own: one left over from an earlier run can never reach this one.
      const { port1, port2 } = new MessageChannel()
      yield* Effect.addFinalizer(() => Effect.sync(() => port1.close()))
      const ring = () => {
        Atomics.add(signal, 1, 1)
        Atomics.notify(signal, 1)
      }
      const request: RunRequest = {
        type: "run",
        code: settings.code,
        names: settings.names,
        memoryBytes: settings.memoryBytes,
        timeoutMs: settings.timeoutMs,
        maxCalls: settings.maxCalls,
        maxLog: settings.maxLog,
        signal: signal.buffer as SharedArrayBuffer,
        answers: port2
      }
      held.worker.postMessage(request, [port2])
      // Inner calls run concurrently (Promise.all in the guest); the set interrupts those still running when the run ends.
      const calls = yield* FiberSet.make()
      // Relayed ones are cancelled by hand: they run no fiber.
      const relayed = new Map<number, () => void>()
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          for (const cancel of relayed.values()) cancel()
        })
      )
      const answer = (message: Answer) => {
        port1.postMessage(message)
        ring()
      }
      const loop: Effect.Effect<RunOutcome> = Effect.gen(function* () {
        let made = 0
        for (;;) {
          const event = yield* Queue.take(held.events)
          if (event.type === "done") return event.outcome
          if (event.type === "failed") return crashed(event.detail, made)
          if (event.type === "call") {
            made += 1
            const { id } = event
            const cancel = settings.relay?.(event.name, event.args, (outcome) => {
              if (!relayed.delete(id)) return
              answer(
                Either.isRight(outcome)
                  ? { type: "answer", id, ok: true, json: outcome.right }
                  : { type: "answer", id, ok: false, message: outcome.left }
              )
            })
            if (cancel !== undefined) {
              relayed.set(id, cancel)
              continue
            }
            yield* FiberSet.run(
              calls,
              Effect.matchEffect(settings.call(event.name, event.args), {
                onFailure: (message) => Effect.sync(() => answer({ type: "answer", id, ok: false, message })),
                onSuccess: (json) => Effect.sync(() => answer({ type: "answer", id, ok: true, json }))
              })
            )
          }
        }
      })
      const watched = Effect.timeoutTo(loop, {
        duration: settings.timeoutMs + graceMs,
        onSuccess: (outcome) => outcome,
        onTimeout: (): RunOutcome => ({
          ok: false,
          reason: "Timeout",
          message: `still running after ${settings.timeoutMs} ms; its thread was ended`,
          log: { text: "", dropped: 0 },
          calls: 0
        })
      })
      // Cancelled: the guest stops at its next interrupt poll, and the thread is ended anyway when the scope closes.
      return yield* Effect.onInterrupt(watched, () =>
        Effect.sync(() => {
          Atomics.store(signal, 0, 1)
          ring()
        })
      )
    })
  )

/** A worker is kept only after a run that ended with its "done" (the guest is no longer running in it). */
const finished = (outcome: RunOutcome) => outcome.ok || (outcome.reason !== "Crashed" && outcome.reason !== "Timeout")

/** The run's scope closed with an outcome its worker finished (the scope's value is the run's outcome). */
const clean = (exit: Exit.Exit<unknown, unknown>) => Exit.isSuccess(exit) && finished(exit.value as RunOutcome)
