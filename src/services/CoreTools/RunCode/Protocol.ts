/**
 * The messages between RunCode's host side (Sandbox.ts, on clawtool's main thread) and its worker (Worker.ts), which
 * runs the guest in QuickJS. Plain data: values cross as JSON text, so no host object ever reaches the guest.
 */

import type { MessagePort } from "node:worker_threads"
import type { CodeNames } from "../../../domain/ToolProvider.js"

export type { CodeNames }

/** Start one run (the worker runs one at a time). */
export interface RunRequest {
  readonly type: "run"
  /** JavaScript: a script whose value is the run's promise (Script.ts made it from the code). */
  readonly code: string
  readonly names: CodeNames
  /** The guest's whole heap: the wasm memory's maximum, in bytes (a multiple of 64 KiB). */
  readonly memoryBytes: number
  readonly timeoutMs: number
  readonly maxCalls: number
  /** The most characters of console output kept. */
  readonly maxLog: number
  /**
   * Two Int32s: [0] set to non-zero by the host to stop the guest at its next interrupt poll (cancellation); [1] the
   * doorbell, counted up and notified by the host after each answer and on cancel (the worker waits on it).
   */
  readonly signal: SharedArrayBuffer
  /** The host's answers to this run's inner calls come on this port, taken by the worker synchronously. */
  readonly answers: MessagePort
}

/** The host's answer to one inner call: the value as JSON text, or the error the guest sees thrown. */
export type Answer =
  | { readonly type: "answer"; readonly id: number; readonly ok: true; readonly json: string | undefined }
  | { readonly type: "answer"; readonly id: number; readonly ok: false; readonly message: string }

export type ToHost =
  | { readonly type: "ready" }
  /** The guest called `name` (a wire name) with `args` (JSON text, undefined: none). */
  | { readonly type: "call"; readonly id: number; readonly name: string; readonly args: string | undefined }
  | { readonly type: "done"; readonly outcome: RunOutcome }

/** Why a run failed. */
export type FailureReason =
  /** The wasm memory reached its maximum (`[core_tools.RunCode] memory`). */
  | "OutOfMemory"
  /** `timeout_ms` / `[core_tools.RunCode] timeout` passed. */
  | "Timeout"
  /** More inner calls than `[core_tools.RunCode] max_calls`. */
  | "MaxCalls"
  /** The code threw (or its promise rejected), or did not compile. */
  | "Thrown"
  /** The code's promise can never settle: nothing is pending that could settle it. */
  | "NeverSettles"
  /** The returned value is not JSON (a cycle, a BigInt). */
  | "NotJson"
  | "Cancelled"
  /** The sandbox's thread failed or had to be ended (it did not stop at the deadline). */
  | "Crashed"

export interface RunLog {
  /** What console.* printed, lines joined, at most `maxLog` characters. */
  readonly text: string
  /** Characters printed beyond `maxLog` (not kept). */
  readonly dropped: number
}

export type RunOutcome =
  | { readonly ok: true; readonly json: string | undefined; readonly log: RunLog; readonly calls: number }
  | {
      readonly ok: false
      readonly reason: FailureReason
      readonly message: string
      readonly log: RunLog
      readonly calls: number
    }
