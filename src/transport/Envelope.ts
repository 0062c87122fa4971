/**
 * What a message read from a peer is, by its envelope alone (JSON-RPC 2.0, section 4): the one classification the
 * transports and everything offered a message before the SDK (cancels, progress, the call relays) go by. A message
 * with a `method` and an `id` member is a request, whatever the method is called and whatever the id holds: it is
 * answered exactly once, never taken for a notification. A `notifications/cancelled` with an id cancels nothing; the
 * SDK answers it like any request for a method no one serves (-32601), or the transport -32600 when its id is not one.
 */
export type Kind = "request" | "notification" | "answer" | "other"

export const kindOf = (message: unknown): Kind => {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return "other"
  if ("method" in message) return "id" in message ? "request" : "notification"
  return "result" in message || "error" in message ? "answer" : "other"
}

/** True when `message` is a notification (no id) of this method. */
export const isNotification = (message: unknown, method: string): boolean =>
  kindOf(message) === "notification" && (message as { method?: unknown }).method === method
