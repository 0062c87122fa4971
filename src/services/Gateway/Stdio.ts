import * as Era from "../../domain/HostEra.js"
import type { JsonObject } from "../../domain/Mcp.js"
import { RpcCode } from "../../domain/Surface.js"
import { cancelledRequest } from "../../transport/Cancels.js"
import { kindOf } from "../../transport/Envelope.js"
import { rawResult, type StdioServerTransport } from "../../transport/StdioServerTransport.js"
import { logLevels } from "../HostSessions.js"
import * as Modern from "./Modern.js"

/**
 * One stdio host speaks one era, chosen by its first request (as SDK v2's serveStdio does): `server/discover` or a
 * request with the modern envelope → 2026-07-28 from then on; `initialize` or any envelope-less request → the legacy
 * path, byte for byte as before (the relay, then the SDK). An opening request whose envelope is refused (-32022, a
 * malformed envelope) pins nothing: the host may retry with another version or fall back to initialize.
 */
export const eraSwitch = (options: {
  readonly transport: StdioServerTransport
  /** Today's intercept (the tools/call relay); declining hands the message to the SDK. */
  readonly legacy: (message: Record<string, unknown>) => boolean
  /** The modern era's relay (the same relay, stamping its results); false: the call takes `serve`. */
  readonly relay: (message: Record<string, unknown>) => boolean
  /** Called once, when a modern host pins the era: the session's notices and reverse requests become the era's. */
  readonly modernContext: (wire: Era.ModernWire) => Modern.ModernContext
  /** Why this clawtool serves nothing (ADR 013), checked like initialize's. */
  readonly refusal: () => (Error & { code: number; data?: unknown }) | undefined
}) => {
  const { transport, legacy, relay } = options
  let era: "modern" | "legacy" | undefined
  let context: Modern.ModernContext | undefined
  const wire: Era.ModernWire = {
    result: (id, result) =>
      typeof result === "string"
        ? void transport.send({ jsonrpc: "2.0", id, result: rawResult(result) })
        : void transport.reply(id, result),
    error: (id, error) => void transport.send({ jsonrpc: "2.0", id, error } as never),
    notify: (method, params) => void transport.send({ jsonrpc: "2.0", method, params })
  }

  const modern = (message: Record<string, unknown>, context: Modern.ModernContext): boolean => {
    const cancelled = cancelledRequest(message)
    if (cancelled !== undefined) {
      if (!context.listen.cancel(cancelled.id)) context.cancels.cancel(cancelled.id, cancelled.reason)
      return true
    }
    // A modern host sends no answers (clawtool asks it nothing) and no other notification clawtool acts on.
    if (kindOf(message) !== "request") return true
    const id = message.id
    if (typeof id !== "string" && typeof id !== "number") {
      void transport.send({
        jsonrpc: "2.0",
        id: null,
        error: { code: RpcCode.InvalidRequest, message: "Invalid Request: the id must be a string or a number" }
      } as never)
      return true
    }
    const envelope = Modern.envelopeOf(wire, id, message.params)
    if (envelope === undefined) return true
    const refusal = options.refusal()
    if (refusal !== undefined) {
      wire.error(id, { code: refusal.code, message: refusal.message, data: refusal.data as JsonObject })
      return true
    }
    // A host that answers input, and its retries, take the path that can answer input_required (Mrtr.ts).
    // A call that asked for log messages too: its child's messages are routed to it (Modern.LogRoutes).
    if (
      message.method === "tools/call" &&
      !Modern.answersInput(envelope) &&
      envelope.logLevel === undefined &&
      !Modern.isRetry(message.params) &&
      relay(message)
    ) {
      return true
    }
    Modern.serve(context, wire, { id, method: String(message.method), params: message.params }, envelope)
    return true
  }

  return {
    intercept: (message: Record<string, unknown>): boolean => {
      if (era === undefined && kindOf(message) === "request") {
        if (Era.openingEra(message.method, message.params) === "legacy") era = "legacy"
        else {
          const checked = Era.checkEnvelope(message.params, logLevels)
          if (!checked.ok && (typeof message.id === "string" || typeof message.id === "number")) {
            wire.error(message.id, checked.error)
            return true
          }
          // A clawtool above already serves this config (ADR 013): refused, and the era stays open, so the parent's
          // era probe falls back to initialize and reads the same refusal there (its Recursion verdict).
          const refusal = options.refusal()
          if (refusal !== undefined && (typeof message.id === "string" || typeof message.id === "number")) {
            wire.error(message.id, { code: refusal.code, message: refusal.message, data: refusal.data as JsonObject })
            return true
          }
          era = "modern"
          context = options.modernContext(wire)
        }
      }
      return context !== undefined ? modern(message, context) : legacy(message)
    },
    /** The era the host chose (undefined until its first request). */
    era: () => era,
    /** Ends every open subscriptions/listen with its result (stdin closed or clawtool stopping). */
    close: () => context?.listen.closeAll()
  }
}
