import type { EventId, EventStore, StreamId } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"

/** How much of one daemon session's SSE traffic is kept for a client that comes back (docs/decisions/026). */
export interface ReplayLimits {
  readonly maxEvents: number
  /** JSON characters; a single larger message is kept alone. */
  readonly maxBytes: number
  /** Milliseconds an event stays replayable: a client resumes within seconds or not at all. */
  readonly maxAgeMs: number
}

export const defaultReplayLimits: ReplayLimits = { maxEvents: 1000, maxBytes: 4 * 1024 * 1024, maxAgeMs: 60_000 }

interface Entry {
  readonly streamId: StreamId
  readonly message: JSONRPCMessage
  readonly bytes: number
  readonly at: number
}

/**
 * One daemon session's SSE events, so a client whose stream dropped resumes with `Last-Event-ID` and gets what it
 * missed, a tool call's progress and result included (the spec's resumability; SDK clients reconnect on their own).
 * The SDK's example store keeps everything forever; this one is bounded by count, size and age, oldest first, and
 * lives and dies with its session. An id it no longer holds is unknown: the SDK answers 400 and the client's request
 * fails instead of waiting forever.
 */
export class ReplayLog implements EventStore {
  // Insertion order is event order: the oldest first, for eviction and replay.
  private readonly events = new Map<EventId, Entry>()
  private bytes = 0
  private sequence = 0

  constructor(
    private readonly limits: ReplayLimits = defaultReplayLimits,
    private readonly now: () => number = Date.now
  ) {}

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    const id = String(++this.sequence)
    const bytes = JSON.stringify(message).length
    const at = this.now()
    this.events.set(id, { streamId, message, bytes, at })
    this.bytes += bytes
    this.evict(at)
    return id
  }

  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    return this.events.get(eventId)?.streamId
  }

  async replayEventsAfter(
    lastEventId: EventId,
    { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> }
  ): Promise<StreamId> {
    const last = this.events.get(lastEventId)
    // The SDK asks getStreamIdForEventId first and answers 400 for an unknown id; reached only if that changes.
    if (last === undefined) throw new Error(`event ${lastEventId} is not (or no longer) in this session's replay log`)
    let after = false
    for (const [id, entry] of [...this.events]) {
      if (id === lastEventId) after = true
      // The priming event of a stream is an empty object: nothing to deliver.
      else if (after && entry.streamId === last.streamId && Object.keys(entry.message).length > 0) {
        await send(id, entry.message)
      }
    }
    return last.streamId
  }

  /** Events held now (for tests and diagnostics). */
  get size(): number {
    return this.events.size
  }

  private evict(now: number) {
    for (const [id, entry] of this.events) {
      const over =
        this.events.size > this.limits.maxEvents ||
        (this.bytes > this.limits.maxBytes && this.events.size > 1) ||
        now - entry.at > this.limits.maxAgeMs
      if (!over) return
      this.events.delete(id)
      this.bytes -= entry.bytes
    }
  }
}
