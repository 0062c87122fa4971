import { type AuditCall, type Outcome, outcomes } from "./AuditLine.js"

/*
 * The calls waiting for the audit log's writer (issue 25, docs/decisions/029), in storage reused from batch to batch
 * (grown by doubling when a burst needs it): numbers in typed arrays, everything else by reference in arrays made for
 * it. Recording a call is a few stores: no object of its
 * own is kept, and nothing about its line is made on the call's path. The writer makes the lines of every queued call
 * in one batch (Audit.ts), once per 100 ms; work done after an answer in the same turn, before clawtool's process
 * sleeps, delays the host the answer woke (bench section 10: p50 on/off 1.07-1.08× with the line made there, 1.03-1.04× without).
 * The arguments are kept as the host's request parsed them, made JSON by the writer: copying them as bytes on the
 * call's path cost more CPU per call than the collector's promoting the few objects still held at a scavenge.
 */

/** One queued call as the writer reads it: one object, reused for each call (valid until the next). */
export type QueuedCall = { -readonly [K in keyof AuditCall]: AuditCall[K] }

const at = 0
const durationMs = 1
const bytesOut = 2
const numberFields = 3

const session = 0
const client = 1
const profile = 2
const token = 3
const instance = 4
const tool = 5
const traceId = 6
const via = 7
const nameFields = 8

/** Slots made at first; doubled when a burst needs more, up to the capacity (an idle serve keeps a few KB). */
const initialSlots = 256

export class AuditQueue {
  /** Calls queued since the last drain. */
  size = 0
  private slots: number
  private numbers: Float64Array
  private outcome: Uint8Array
  private names: Array<string | undefined>
  private args: Array<AuditCall["arguments"]>
  private readonly view: QueuedCall = {
    at: 0,
    durationMs: 0,
    session: undefined,
    client: undefined,
    profile: undefined,
    token: undefined,
    instance: undefined,
    tool: "",
    outcome: "ok",
    arguments: undefined,
    bytesOut: 0,
    traceId: undefined,
    via: undefined
  }

  constructor(readonly capacity: number) {
    this.slots = Math.min(capacity, initialSlots)
    this.numbers = new Float64Array(this.slots * numberFields)
    this.outcome = new Uint8Array(this.slots)
    this.names = new Array<string | undefined>(this.slots * nameFields).fill(undefined)
    this.args = new Array<AuditCall["arguments"]>(this.slots).fill(undefined)
  }

  /** Queues the call; false, and nothing queued, when `capacity` calls wait already. */
  push(call: AuditCall): boolean {
    if (this.size >= this.capacity) return false
    if (this.size === this.slots) this.grow()
    const slot = this.size++
    const number = slot * numberFields
    this.numbers[number + at] = call.at
    this.numbers[number + durationMs] = call.durationMs
    this.numbers[number + bytesOut] = call.bytesOut
    this.outcome[slot] = outcomes.indexOf(call.outcome)
    const name = slot * nameFields
    this.names[name + session] = call.session
    this.names[name + client] = call.client
    this.names[name + profile] = call.profile
    this.names[name + token] = call.token
    this.names[name + instance] = call.instance
    this.names[name + tool] = call.tool
    this.names[name + traceId] = call.traceId
    this.names[name + via] = call.via
    this.args[slot] = call.arguments
    return true
  }

  /** Hands each queued call to `each` in order (one reused object: read it there, never keep it), then empties the queue. */
  drain(each: (call: QueuedCall) => void): void {
    const view = this.view
    const count = this.size
    // Emptied first: a throwing `each` cannot make the same calls drain twice.
    this.size = 0
    try {
      for (let slot = 0; slot < count; slot++) {
        const number = slot * numberFields
        const name = slot * nameFields
        view.at = this.numbers[number + at]!
        view.durationMs = this.numbers[number + durationMs]!
        view.bytesOut = this.numbers[number + bytesOut]!
        view.outcome = outcomes[this.outcome[slot]!] as Outcome
        view.session = this.names[name + session]
        view.client = this.names[name + client]
        view.profile = this.names[name + profile]
        view.token = this.names[name + token]
        view.instance = this.names[name + instance]
        view.tool = this.names[name + tool]!
        view.traceId = this.names[name + traceId]
        view.via = this.names[name + via]
        view.arguments = this.args[slot]
        each(view)
      }
    } finally {
      // Nothing of a written call is kept past its line (its arguments above all).
      this.names.fill(undefined, 0, count * nameFields)
      this.args.fill(undefined, 0, count)
      view.arguments = undefined
    }
  }

  private grow(): void {
    const slots = Math.min(this.capacity, this.slots * 2)
    const numbers = new Float64Array(slots * numberFields)
    numbers.set(this.numbers)
    this.numbers = numbers
    const outcome = new Uint8Array(slots)
    outcome.set(this.outcome)
    this.outcome = outcome
    this.names = this.names.concat(new Array<string | undefined>((slots - this.slots) * nameFields).fill(undefined))
    this.args = this.args.concat(new Array<AuditCall["arguments"]>(slots - this.slots).fill(undefined))
    this.slots = slots
  }
}
