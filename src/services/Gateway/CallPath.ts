import { Either } from "effect"
import * as CallPlan from "../../domain/CallPlan.js"
import type { JsonObject } from "../../domain/Mcp.js"
import { resumeOptimiser } from "../../heap.js"
import type { Cancels } from "../../transport/Cancels.js"
import type { StdioServerTransport } from "../../transport/StdioServerTransport.js"
import type { AuditRecorder } from "../Audit.js"
import type { RegistryView as Registry } from "../Registry.js"
import { type Outcome, outcomeOfError, outcomeOfResult } from "../Trust/AuditLine.js"
import { auditRelayed } from "./CallAudit.js"
import { callErrorResult, hostRpcError, unserialisable } from "./Replies.js"

const reserved = () => {}

/**
 * The relay's side of tools/call (ADR 009): offered every parsed host message before the SDK. A host's
 * `notifications/cancelled` goes to the one cancel map (relayed calls, else the SDK's handler, id 0 included); a call
 * CallPlan lets through goes line to line through Registry.relayCall. Everything else is left to the SDK handlers.
 * No Effect, promise or closure chain per call beyond the relay's own `done`.
 */
export const intercept = (options: {
  readonly transport: StdioServerTransport
  readonly registry: Registry
  readonly cancels: Cancels
  readonly untraced: boolean
  /** The audit log's recorder for this session; undefined when `[audit]` is off. */
  readonly audit?: AuditRecorder | undefined
  /** The modern era's stamp on every result (ADR 032); the legacy era answers results as they are. */
  readonly stamp?: ((result: JsonObject) => JsonObject) | undefined
  /**
   * The capabilities a modern child is told the calls' host has (a modern host's relayed calls: none of sampling,
   * elicitation or roots); none: what clawtool declared to it, which is the stdio legacy host's.
   */
  readonly hostCapabilities?: JsonObject | undefined
}) => {
  const { transport, registry, cancels, untraced, audit } = options
  const stamp = options.stamp ?? ((result: JsonObject) => result)
  const inFlight = (id: string | number) => cancels.has(id)
  const context = { untraced, inFlight }

  /** Never throws: a result that cannot be serialised is answered as an isError result. */
  const reply = (id: string | number, tool: string, result: unknown) =>
    transport.reply(id, stamp(result as JsonObject), (cause) => stamp(callErrorResult(unserialisable(tool, cause))))

  const record = (recorder: AuditRecorder, call: CallPlan.ToolCall, started: number, outcome: Outcome, json: string) =>
    auditRelayed(recorder, registry, call, started, outcome, json)

  return (message: Record<string, unknown>): boolean => {
    if (cancels.observe(message)) return true
    const plan = CallPlan.forHost(message, context)
    if (!plan.relay) return false
    const { id, call } = plan
    resumeOptimiser() // the host's first call ends the start-up (src/heap.ts)
    // Reserved before relayCall, so the id counts as in flight even if the answer came back at once.
    cancels.set(id, reserved)
    const started = audit === undefined ? 0 : performance.now()
    audit?.begin?.()
    const cancel = registry.relayCall(
      call.name,
      { arguments: call.arguments, _meta: call.meta },
      (outcome) => {
        if (!cancels.delete(id)) return
        const refused = Either.isLeft(outcome) ? hostRpcError(outcome.left) : undefined
        if (refused !== undefined) {
          void transport.send({
            jsonrpc: "2.0",
            id,
            error: { code: refused.code, message: refused.detail, data: refused.data }
          } as never)
          if (audit !== undefined) record(audit, call, started, "error", "")
          return
        }
        const answered = Either.isRight(outcome) ? outcome.right : callErrorResult(outcome.left)
        const json = reply(id, call.name, answered)
        if (audit !== undefined) {
          record(
            audit,
            call,
            started,
            Either.isRight(outcome) ? outcomeOfResult(answered) : outcomeOfError(outcome.left),
            json
          )
        }
      },
      options.hostCapabilities
    )
    if (cancel === undefined) cancels.delete(id)
    else if (cancels.has(id)) {
      cancels.set(
        id,
        audit === undefined
          ? cancel
          : () => {
              cancel()
              record(audit, call, started, "cancelled", "")
            }
      )
    }
    return cancel !== undefined
  }
}
