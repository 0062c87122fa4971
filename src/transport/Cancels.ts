/**
 * Requests in flight by their JSON-RPC id, each with its cancel: the one mechanism by which a peer's
 * `notifications/cancelled` reaches what runs for it, at both edges (the host's calls in the Gateway, a child's reverse
 * requests in SourceClient). Unlike the SDK's Protocol._oncancel, request id 0 is honoured.
 */
import { isNotification } from "./Envelope.js"

export type RequestId = string | number

/**
 * The request a `notifications/cancelled` names, with its reason; undefined for any other message, a request of that
 * name (with an id) included: that one is answered, not obeyed.
 */
export const cancelledRequest = (
  message: Record<string, unknown>
): { readonly id: RequestId; readonly reason: unknown } | undefined => {
  if (!isNotification(message, "notifications/cancelled")) return undefined
  const params = message.params
  if (typeof params !== "object" || params === null) return undefined
  const { requestId, reason } = params as { requestId?: unknown; reason?: unknown }
  return typeof requestId === "string" || typeof requestId === "number" ? { id: requestId, reason } : undefined
}

export class Cancels {
  private readonly running = new Map<RequestId, (reason: unknown) => void>()

  /** `fallback` cancels requests this map does not hold (e.g. the SDK's own handlers); false when it knows none. */
  constructor(private readonly fallback: (id: RequestId, reason: unknown) => boolean = () => false) {}

  has(id: RequestId): boolean {
    return this.running.has(id)
  }

  set(id: RequestId, cancel: (reason: unknown) => void): void {
    this.running.set(id, cancel)
  }

  /** The request ended: its cancel is forgotten. False when it was not (or no longer) held. */
  delete(id: RequestId): boolean {
    return this.running.delete(id)
  }

  /** Cancels request `id` once (it is forgotten first); false when neither this map nor the fallback knew it. */
  cancel(id: RequestId, reason: unknown): boolean {
    const cancel = this.running.get(id)
    if (cancel === undefined) return this.fallback(id, reason)
    this.running.delete(id)
    cancel(reason)
    return true
  }

  /** Offered a peer's message: a `notifications/cancelled` is acted on here (true); anything else is not (false). */
  observe(message: Record<string, unknown>): boolean {
    const cancelled = cancelledRequest(message)
    if (cancelled === undefined) return false
    this.cancel(cancelled.id, cancelled.reason)
    return true
  }
}
