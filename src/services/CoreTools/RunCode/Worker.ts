import releaseSync from "@jitl/quickjs-wasmfile-release-sync"
import { readFileSync } from "node:fs"
import { parentPort, receiveMessageOnPort, workerData } from "node:worker_threads"
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSSyncVariant
} from "quickjs-emscripten-core"
import type { Answer, FailureReason, RunLog, RunOutcome, RunRequest, ToHost } from "./Protocol.js"
import { prelude } from "./Prelude.js"

/**
 * RunCode's worker thread (docs/decisions/035-code-mode.md): the guest runs in QuickJS compiled to wasm, one fresh
 * instance per run whose WebAssembly.Memory has a fixed maximum, so a memory bomb fails inside the guest instead of
 * growing clawtool (QuickJS's own setMemoryLimit does not count most of the heap on emscripten builds). The worker is
 * only the thread and the kill switch: the guest sees nothing but `tools`, `call` and `console`.
 */

interface WasmMemory {
  readonly buffer: ArrayBuffer
  grow(pages: number): number
}
/** The WebAssembly API as used here (the project's TypeScript lib has no DOM types). */
interface Wasm {
  readonly Module: new (bytes: Uint8Array) => object
  readonly Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory
}
const wasm = (globalThis as unknown as { readonly WebAssembly: Wasm }).WebAssembly
/** The release-sync build of QuickJS (pinned: the memory cap relies on its glue honouring `wasmMemory`). */
const variant = releaseSync as unknown as QuickJSSyncVariant

const port = parentPort!
const post = (message: ToHost) => port.postMessage(message)
/** Compiled once per worker; each run instantiates it with its own memory. */
const wasmModule = new wasm.Module(readFileSync((workerData as { wasm: string }).wasm))
const stackBytes = 512 * 1024
const page = 64 * 1024

// One run at a time; past its start the run is synchronous: this thread runs nothing else, so it waits for answers by
// blocking on the run's doorbell and takes them from the run's port itself (no event-loop turn per inner call).
port.on("message", (message: RunRequest) => void run(message).then((outcome) => post({ type: "done", outcome })))
post({ type: "ready" })

const run = async (request: RunRequest): Promise<RunOutcome> => {
  const memory = new wasm.Memory({
    initial: Math.min(256, request.memoryBytes / page),
    maximum: request.memoryBytes / page
  })
  // The glue grows the memory through this object when malloc needs more (`memory.grow` in a try/catch); a growth
  // refused by the maximum is the out-of-memory verdict, whatever error (or `null`) the guest is left with.
  let refused = false
  const grow = memory.grow.bind(memory)
  memory.grow = (pages) => {
    try {
      return grow(pages)
    } catch (error) {
      refused = true
      throw error
    }
  }
  const quickjs = await newQuickJSWASMModuleFromVariant(
    newVariant(variant, {
      wasmModule: wasmModule as never,
      wasmMemory: memory as never,
      // Nothing of the engine's own printing may reach clawtool's stdout (the protocol on stdio).
      emscriptenModule: { print: () => {}, printErr: () => {} } as never
    })
  )
  const runtime = quickjs.newRuntime()
  const signal = new Int32Array(request.signal)
  /** The inner calls awaiting the host's answer, by id. */
  const pending = new Set<number>()
  const deadline = performance.now() + request.timeoutMs
  const lines: Array<string> = []
  const log = { kept: 0, dropped: 0 }
  let calls = 0
  /** Set when the run must end whatever the guest does (the interrupt handler then stops it). */
  let fatal: { reason: FailureReason; message: string } | undefined
  const stopReason = (): typeof fatal => {
    if (fatal !== undefined) return fatal
    if (Atomics.load(signal, 0) !== 0) return { reason: "Cancelled", message: "the call was cancelled" }
    if (performance.now() > deadline)
      return { reason: "Timeout", message: `still running after ${request.timeoutMs} ms` }
    return undefined
  }
  const logOf = (): RunLog => ({ text: lines.join("\n"), dropped: log.dropped })
  const end = (reason: FailureReason, message: string): RunOutcome => ({
    ok: false,
    reason,
    message,
    log: logOf(),
    calls
  })
  const exhausted = () => refused
  /**
   * Blocks until answers came, the run must stop or the deadline passed: the answers to pending calls, as the batch the
   * guest's `deliver` takes (empty: none came). The values are spliced as the JSON text they came as.
   */
  const awaitAnswers = (): string => {
    const batch: Array<string> = []
    for (;;) {
      const rung = Atomics.load(signal, 1)
      for (let next = receiveMessageOnPort(request.answers); next !== undefined;) {
        const answer = next.message as Answer
        if (pending.delete(answer.id)) {
          batch.push(
            !answer.ok
              ? `[${answer.id},2,${JSON.stringify(answer.message)}]`
              : answer.json === undefined
                ? `[${answer.id},0]`
                : `[${answer.id},1,${answer.json}]`
          )
        }
        next = receiveMessageOnPort(request.answers)
      }
      const left = deadline - performance.now()
      if (batch.length > 0 || left <= 0 || stopReason() !== undefined)
        return batch.length === 0 ? "" : `[${batch.join(",")}]`
      Atomics.wait(signal, 1, rung, left + 1)
    }
  }
  try {
    // No setMemoryLimit: on this build it counts requested sizes, not the heap (upstream #255, #271), and refusing one
    // big allocation itself would hide it from the verdict above. The memory's maximum is the limit.
    runtime.setMaxStackSize(stackBytes)
    runtime.setInterruptHandler(() => stopReason() !== undefined)
    const context = runtime.newContext()
    const failure = (error: unknown): RunOutcome => {
      const stop = stopReason()
      if (stop !== undefined) return end(stop.reason, stop.message)
      if (exhausted()) return end("OutOfMemory", `the code used all of its ${request.memoryBytes / 2 ** 20} MB`)
      return end("Thrown", describe(error))
    }
    const hostSend = context.newFunction("send", (nameHandle, argsHandle) => {
      // Refused past the limit (and never sent): the run ends at the next interrupt poll or job loop, whatever it catches.
      if (calls >= request.maxCalls) {
        fatal = { reason: "MaxCalls", message: `more than ${request.maxCalls} tool calls in one run` }
        return context.newNumber(0)
      }
      const name = context.getString(nameHandle)
      const args = context.typeof(argsHandle) === "string" ? context.getString(argsHandle) : undefined
      calls += 1
      pending.add(calls)
      post({ type: "call", id: calls, name, args })
      return context.newNumber(calls)
    })
    const hostLog = context.newFunction("log", (textHandle) => {
      const text = context.getString(textHandle)
      const room = request.maxLog - log.kept
      if (text.length + 1 <= room) {
        lines.push(text)
        log.kept += text.length + 1
      } else {
        if (room > 0) lines.push(text.slice(0, room))
        log.kept = request.maxLog
        log.dropped += text.length - Math.max(0, room)
      }
    })
    const setup = context.evalCode(prelude)
    if (setup.error !== undefined) return failure(dumped(context, setup.error))
    const names = context.newString(JSON.stringify(request.names))
    const made = context.callFunction(setup.value, context.undefined, names, hostSend, hostLog)
    for (const handle of [setup.value, names, hostSend, hostLog]) handle.dispose()
    if (made.error !== undefined) return failure(dumped(context, made.error))
    const encode = context.getProp(made.value, "encode")
    const deliver = context.getProp(made.value, "deliver")
    made.value.dispose()
    const started = context.evalCode(request.code, "code.js")
    if (started.error !== undefined) return failure(dumped(context, started.error))
    const promise = started.value
    for (;;) {
      const jobs = runtime.executePendingJobs()
      if (jobs.error !== undefined) return failure(dumped(context, jobs.error))
      const stop = stopReason()
      if (stop !== undefined) return end(stop.reason, stop.message)
      const state = context.getPromiseState(promise)
      if (state.type === "fulfilled") {
        const json = context.callFunction(encode, context.undefined, state.value)
        state.value.dispose()
        if (json.error !== undefined) {
          const error = dumped(context, json.error)
          return exhausted() ? failure(error) : end("NotJson", `the returned value is not JSON: ${describe(error)}`)
        }
        const text = context.typeof(json.value) === "string" ? context.getString(json.value) : undefined
        json.value.dispose()
        return { ok: true, json: text, log: logOf(), calls }
      }
      if (state.type === "rejected") return failure(dumped(context, state.error))
      if (pending.size === 0 && !runtime.hasPendingJob()) {
        return end(
          "NeverSettles",
          "the code awaits a promise that nothing can settle (only tool calls settle promises)"
        )
      }
      const batch = awaitAnswers()
      if (batch !== "") {
        const text = context.newString(batch)
        const delivered = context.callFunction(deliver, context.undefined, text)
        text.dispose()
        if (delivered.error !== undefined) return failure(dumped(context, delivered.error))
        delivered.value.dispose()
      }
    }
  } catch (error) {
    // The engine itself failed (e.g. no memory left to build a handle): judged as the guest's failure.
    if (exhausted()) return end("OutOfMemory", `the code used all of its ${request.memoryBytes / 2 ** 20} MB`)
    const stop = stopReason()
    return stop === undefined ? end("Thrown", describe(error)) : end(stop.reason, stop.message)
  } finally {
    // Not disposed: the instance and its memory are dropped with this run, and freeing a heap that is thrown away only
    // costs time (and asserts on the handles a failed guest left behind).
    request.answers.close()
  }
}

/** The guest's error as a plain value, its handle freed. */
const dumped = (context: QuickJSContext, handle: QuickJSHandle): unknown => {
  try {
    return context.dump(handle)
  } catch {
    return null
  } finally {
    handle.dispose()
  }
}

/** `Name: message` of what the guest threw (an error object, a value, or null when QuickJS could not build one). */
const describe = (error: unknown): string => {
  if (typeof error === "object" && error !== null && "message" in error) {
    const { name, message, stack } = error as { name?: unknown; message?: unknown; stack?: unknown }
    const head = `${typeof name === "string" ? name : "Error"}: ${String(message)}`
    const where = typeof stack === "string" ? stack.split("\n").find((line) => line.includes("code.js")) : undefined
    return where === undefined ? head : `${head} (${where.trim()})`
  }
  try {
    return `thrown: ${JSON.stringify(error)}`
  } catch {
    return `thrown: ${String(error)}`
  }
}
