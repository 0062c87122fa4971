import { Deferred, Duration, Effect } from "effect"
import { createHash, createHmac, randomUUID, timingSafeEqual } from "node:crypto"
import type * as Era from "../../domain/HostEra.js"
import type { JsonObject } from "../../domain/Mcp.js"
import { isJsonObject, RpcCode, RpcError } from "../../domain/Surface.js"
import { reverseCapability } from "../HostBridge.js"

/**
 * MRTR toward a modern host (ADR 032): a 2026-07-28 host cannot be sent requests, so when a child asks for sampling,
 * elicitation or roots during the host's call, the call is answered `input_required` with the child's request and an
 * opaque `requestState`, the child's call stays open (parked), and the host's retry carries the answer back to the
 * child; the call's final result (or its next question) answers the retry. `requestState` names the parked call and its
 * deadline, signed with clawtool's key (HMAC-SHA256): a forged, expired or already used state is an error.
 * A modern child's own `input_required` (to tools/call, prompts/get or resources/read) is passed through instead (ADR
 * 033): nothing is parked, the state carries the child's state with the request's route (instance, method, the tool,
 * prompt or URI, a digest of the arguments) and the host's retry is a new request to that child with the answers.
 */

/**
 * A requestState is never longer than this (the host echoes it byte for byte): clawtool's own are ~150 characters, a
 * passed-through one carries the child's state too.
 */
export const maxStateLength = 16_384

const base64url = (data: Buffer | string) => Buffer.from(data).toString("base64url")

const sign = (key: Buffer, payload: string) => createHmac("sha256", key).update(payload).digest()

/** The state for parked call `parked`, valid until `expiresAt` (Clock millis). */
export const sealState = (key: Buffer, parked: string, expiresAt: number): string => {
  const payload = base64url(JSON.stringify({ p: parked, e: expiresAt }))
  return `${payload}.${base64url(sign(key, payload))}`
}

/** The route of a request whose child asked for input (passthrough): the retry must be the same request. */
export interface Passed {
  readonly instance: string
  /** tools/call, prompts/get or resources/read. */
  readonly method: string
  /** What it names: the tool or prompt (the host's name), or the resource's URI. */
  readonly target: string
  /** A digest of its arguments (none for a resource). */
  readonly args: string
  /** The child's own requestState. */
  readonly state: string | undefined
}

/** A passed-through state: the child's state with its call's route (none when it would be too long). */
export const sealPassed = (key: Buffer, passed: Passed, expiresAt: number): string | undefined => {
  const payload = base64url(
    JSON.stringify({
      i: passed.instance,
      m: passed.method,
      t: passed.target,
      a: passed.args,
      s: passed.state,
      e: expiresAt
    })
  )
  const state = `${payload}.${base64url(sign(key, payload))}`
  return state.length > maxStateLength ? undefined : state
}

/** A digest of a call's arguments, so a retry cannot carry another call's answers. */
export const argumentsDigest = (args: unknown): string =>
  createHash("sha256")
    .update(JSON.stringify(args ?? {}))
    .digest("base64url")
    .slice(0, 22)

export type Opened =
  | { readonly ok: true; readonly parked: string }
  | { readonly ok: true; readonly passed: Passed }
  | { readonly ok: false; readonly why: string }

/** The parked call a state names, or why it is refused (not one of clawtool's, tampered with, expired). */
export const openState = (key: Buffer, state: unknown, now: number): Opened => {
  if (typeof state !== "string" || state.length > maxStateLength) return { ok: false, why: "is not a clawtool state" }
  const [payload, mac, extra] = state.split(".")
  if (payload === undefined || mac === undefined || extra !== undefined) {
    return { ok: false, why: "is not a clawtool state" }
  }
  const expected = sign(key, payload)
  const given = Buffer.from(mac, "base64url")
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { ok: false, why: "was not issued by this clawtool (signature mismatch)" }
  }
  let decoded: unknown
  try {
    decoded = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"))
  } catch {
    return { ok: false, why: "is not a clawtool state" }
  }
  const { p, e, i, m, t, a, s } = (isJsonObject(decoded) ? decoded : {}) as Record<string, unknown>
  if (typeof e !== "number") return { ok: false, why: "is not a clawtool state" }
  if (now > e) return { ok: false, why: "has expired ([http] input_required_ttl)" }
  if (typeof p === "string") return { ok: true, parked: p }
  if (
    typeof i === "string" &&
    typeof m === "string" &&
    typeof t === "string" &&
    typeof a === "string" &&
    (s === undefined || typeof s === "string")
  ) {
    return { ok: true, passed: { instance: i, method: m, target: t, args: a, state: s } }
  }
  return { ok: false, why: "is not a clawtool state" }
}

export const stateError = (why: string) => ({
  code: RpcCode.InvalidParams,
  message: `Invalid params: requestState ${why}`
})

/** One modern call that may ask its host for input. */
export interface Slot {
  /** The host request this call's answer goes to; undefined while parked (the host has its input_required). */
  hostId: string | number | undefined
  /** The instance it runs on, asked when a child asks (the catalog may not list the tool when the call starts). */
  readonly instance: () => string | undefined
  readonly capabilities: JsonObject
  /** The child's question waiting for the host's retry. */
  parked: { readonly key: string; readonly answer: Deferred.Deferred<JsonObject, RpcError> } | undefined
  /** The final answer, when it came while parked (the child gave up waiting): written to the retry. */
  held: ((hostId: string | number) => void) | undefined
  /** Cancels the call at the child. */
  cancel: () => void
}

export interface Parking {
  /** A call that may ask for input; its answer is written by `finish`. */
  readonly open: (hostId: string | number, instance: () => string | undefined, capabilities: JsonObject) => Slot
  /** The call ended: `write` answers the host request waiting for it (now, or the retry that comes later). */
  readonly finish: (slot: Slot, write: (hostId: string | number) => void) => void
  /** The host request a call's answer goes to now (for its cancel). */
  readonly hostId: (slot: Slot) => string | number | undefined
  /** A child's reverse request: answered through the host's retry of the call in flight on `instance`. */
  readonly ask: (
    instance: string,
    method: string,
    params: JsonObject | undefined
  ) => Effect.Effect<JsonObject, RpcError>
  /**
   * A request carrying `requestState`: resumes its parked call, or answers why it cannot; a passed-through state is
   * returned, for the caller to call its child again.
   */
  readonly retry: (hostId: string | number, params: JsonObject, wire: Era.ModernWire) => Passed | undefined
  /** The state a host gets for a child's own input_required (passthrough), valid for the ttl. */
  readonly seal: (passed: Passed) => string | undefined
}

export const makeParking = (options: {
  readonly key: Buffer
  readonly ttl: Duration.Duration
  /** Clock millis, read where no Effect runs (the intercept). */
  readonly now: () => number
  readonly wire: Era.ModernWire
  /** The input_required result, stamped for the era. */
  readonly stamp: (result: JsonObject) => JsonObject
  /** The parked call's host request counts as answered: its cancel moves to the retry. */
  readonly moved: (from: string | number | undefined, to: string | number | undefined, slot: Slot) => void
}): Parking => {
  const open = new Set<Slot>()
  const byKey = new Map<string, Slot>()
  const ttlMs = Duration.toMillis(options.ttl)

  const find = (instance: string) => {
    let found: Slot | undefined
    for (const slot of open) {
      if (slot.hostId !== undefined && (instance === "" || slot.instance() === instance)) found = slot
    }
    return found
  }

  return {
    open: (hostId, instance, capabilities) => {
      const slot: Slot = { hostId, instance, capabilities, parked: undefined, held: undefined, cancel: () => {} }
      open.add(slot)
      return slot
    },
    finish: (slot, write) => {
      if (slot.hostId === undefined) {
        slot.held = write
        return
      }
      open.delete(slot)
      write(slot.hostId)
    },
    hostId: (slot) => slot.hostId,
    ask: (instance, method, params) =>
      Effect.gen(function* () {
        const slot = find(instance)
        const capability = reverseCapability[method]
        if (slot === undefined || (capability !== undefined && slot.capabilities[capability] === undefined)) {
          return yield* new RpcError({
            reason: "Unsupported",
            code: RpcCode.MethodNotFound,
            detail:
              slot === undefined
                ? `${method}: the host speaks protocol 2026-07-28 and no call of it is in flight to carry the request`
                : `${method}: the host did not declare the ${capability} capability`
          })
        }
        const key = randomUUID()
        const answer = yield* Deferred.make<JsonObject, RpcError>()
        const hostId = slot.hostId!
        slot.parked = { key, answer }
        slot.hostId = undefined
        byKey.set(key, slot)
        options.moved(hostId, undefined, slot)
        options.wire.result(
          hostId,
          options.stamp({
            resultType: "input_required",
            inputRequests: { [key]: { method, ...(params === undefined ? {} : { params }) } },
            requestState: sealState(options.key, key, options.now() + ttlMs)
          })
        )
        return yield* Deferred.await(answer).pipe(
          Effect.timeoutFail({
            duration: options.ttl,
            onTimeout: () =>
              new RpcError({
                reason: "Peer",
                code: RpcCode.InternalError,
                detail: `${method}: the host did not retry with the answer within input_required_ttl`
              })
          }),
          Effect.ensuring(
            Effect.sync(() => {
              byKey.delete(key)
              if (slot.parked?.key === key) slot.parked = undefined
              // Nobody will retry: the call is cancelled at the child and forgotten.
              if (slot.hostId === undefined) {
                open.delete(slot)
                slot.cancel()
              }
            })
          )
        )
      }),
    seal: (passed) => sealPassed(options.key, passed, options.now() + ttlMs),
    retry: (hostId, params, wire) => {
      const opened = openState(options.key, params.requestState, options.now())
      if (!opened.ok) return void wire.error(hostId, stateError(opened.why))
      if ("passed" in opened) return opened.passed
      const slot = byKey.get(opened.parked)
      if (slot === undefined || slot.parked === undefined) {
        return void wire.error(hostId, stateError("was already used, or its call has ended"))
      }
      const { key, answer } = slot.parked
      const responses = isJsonObject(params.inputResponses) ? params.inputResponses : {}
      const response = responses[key]
      if (!isJsonObject(response)) {
        return void wire.error(hostId, {
          code: RpcCode.InvalidParams,
          message: `Invalid params: inputResponses has no answer for ${JSON.stringify(key)}`
        })
      }
      // Used once: a replay of this state finds nothing.
      byKey.delete(key)
      slot.parked = undefined
      slot.hostId = hostId
      options.moved(undefined, hostId, slot)
      if (slot.held !== undefined) {
        open.delete(slot)
        return void slot.held(hostId)
      }
      Deferred.unsafeDone(answer, Effect.succeed(response))
      return undefined
    }
  }
}
