import { Cause, Effect, Exit, Fiber, Option, Runtime } from "effect"
import { type InputPass, inputMethods } from "../../domain/Era.js"
import * as Era from "../../domain/HostEra.js"
import type { JsonObject } from "../../domain/Mcp.js"
import { isJsonObject, RpcCode, RpcError } from "../../domain/Surface.js"
import type { Cancels } from "../../transport/Cancels.js"
import { rawJsonOf } from "../../transport/StdioServerTransport.js"
import { logLevels } from "../HostSessions.js"
import * as Version from "../../version.js"
import type { Handler } from "./Handlers.js"
import { argumentsDigest, type Parking, stateError } from "./Mrtr.js"
import type { Listen } from "./Listen.js"

/**
 * The 2026-07-28 era at the host edge (ADR 032): every request stands alone (its envelope's version, capabilities and
 * client info), is served by the same per-request core as a legacy request (Handlers), and its result is stamped
 * (`resultType`, the cache hint, serverInfo). No SDK here: the era's wire is a handful of `_meta` keys and fields,
 * checked and stamped by domain/HostEra; the stdio and HTTP edges only carry the lines.
 */

export const serverInfo: JsonObject = { name: Version.name, version: Version.version }

/** What clawtool serves to a modern host: the legacy capabilities without logging/setLevel and core tasks. */
export const modernCapabilities: JsonObject = {
  tools: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  completions: {}
}

/**
 * The cache hints (ADR 032): lists are clawtool's merged catalog, which changes whenever a source starts, restarts,
 * reloads or announces a change, so a host may reuse one for a short while only, and not at all before every source
 * settled (a late source changes it); scope private because what a host sees depends on its config (and profile).
 * A resource's content is the child's: clawtool cannot vouch for it (0). discover changes only with the binary.
 */
export const listTtlMs = 10_000
export const discoverTtlMs = 300_000
export const hintFor = (method: string, settled: boolean): Era.CacheHint | undefined =>
  !Era.cacheableMethods.has(method)
    ? undefined
    : {
        ttlMs: method === "server/discover" ? discoverTtlMs : method === "resources/read" || !settled ? 0 : listTtlMs,
        cacheScope: "private"
      }

export const discoverResult = (): JsonObject => ({
  supportedVersions: [...Era.modernVersions],
  capabilities: modernCapabilities
})

/** What serving modern requests needs from the session they run in. */
export interface ModernContext {
  readonly runtime: Runtime.Runtime<never>
  readonly handlers: Readonly<Record<string, Handler>>
  readonly cancels: Cancels
  readonly listen: Listen
  /** Every source has settled (the list ttl is 0 until then). */
  readonly settled: () => boolean
  /** The first valid modern request of the connection: children learn what to declare from its capabilities. */
  readonly opened: (envelope: Era.Envelope) => void
  /** Calls that may ask their host for input (MRTR, Mrtr.ts). */
  readonly parking: Parking
  /** The instance a tools/call goes to (undefined: one of clawtool's own tools, or not listed). */
  readonly instanceOf: (tool: string) => string | undefined
  /** The calls whose host asked for log messages. */
  readonly logs: LogRoutes
}

export type LogRoutes = ReturnType<typeof makeLogRoutes>

/**
 * The modern calls that asked for log messages (their envelope's `logLevel`), by the child serving each: a child's
 * notifications/message carries no link to a request, so it goes to the latest such call in flight on that child, when
 * that call's level admits it (the era has no other destination for it: it is dropped otherwise).
 */
export const makeLogRoutes = () => {
  const open = new Map<
    string | number,
    { readonly instance: () => string | undefined; readonly level: string; readonly wire: Era.ModernWire }
  >()
  return {
    /**
     * Call `id` on `instance` (asked when a message comes: the catalog may not list the tool when the call starts)
     * hears its child's messages at `level` and above until the returned function runs.
     */
    add: (id: string | number, instance: () => string | undefined, level: string, wire: Era.ModernWire) => {
      const route = { instance, level, wire }
      open.set(id, route)
      return () => void (open.get(id) === route && open.delete(id))
    },
    /** No call is listening (the common case: nothing to map). */
    idle: () => open.size === 0,
    /** A child's notifications/message, mapped (its logger is the instance). */
    message: (params: JsonObject) => {
      let to: [string | number, { readonly level: string; readonly wire: Era.ModernWire }] | undefined
      for (const [id, route] of open) if (route.instance() === params.logger) to = [id, route]
      if (to === undefined) return
      const level = params.level
      if (typeof level === "string" && logLevels.indexOf(level) < logLevels.indexOf(to[1].level)) return
      to[1].wire.notify("notifications/message", params, to[0])
    }
  }
}

/** Whether a request's host can answer sampling, elicitation or roots: then its call may be answered input_required. */
export const answersInput = (envelope: Era.Envelope) =>
  envelope.capabilities.sampling !== undefined ||
  envelope.capabilities.elicitation !== undefined ||
  envelope.capabilities.roots !== undefined

/** A retry of an input_required call: it carries the state clawtool issued. */
export const isRetry = (params: unknown) => isJsonObject(params) && params.requestState !== undefined

const rpcErrorOf = (error: RpcError): Era.EraError => ({
  code: error.code,
  message: error.detail,
  ...(error.data === undefined || !isJsonObject(error.data) ? {} : { data: error.data })
})

/** A modern request's params as the handlers and children see them: the envelope stays at the edge. */
export const withoutEnvelope = (params: unknown): unknown => {
  if (!isJsonObject(params) || !isJsonObject(params._meta)) return params
  const { _meta, ...rest } = params
  const meta = Era.forwardedMeta(_meta)
  return meta === undefined ? rest : { ...rest, _meta: meta }
}

export interface ModernRequest {
  readonly id: string | number
  readonly method: string
  readonly params: unknown
}

/** Its envelope, or the error already answered on `wire`. */
export const envelopeOf = (wire: Era.ModernWire, id: string | number, params: unknown): Era.Envelope | undefined => {
  const checked = Era.checkEnvelope(params, logLevels)
  if (checked.ok) return checked.envelope
  wire.error(id, checked.error)
  return undefined
}

/**
 * Serves one modern request (envelope checked) on `wire`: discover and listen here, every other method of the era by
 * the session's handlers, run in a fiber the host's `notifications/cancelled` interrupts (then nothing is answered).
 */
export const serve = (
  context: ModernContext,
  wire: Era.ModernWire,
  request: ModernRequest,
  envelope: Era.Envelope
): Fiber.RuntimeFiber<unknown, RpcError> | undefined => {
  const { id, method } = request
  context.opened(envelope)
  const stamp = (result: unknown) => {
    const hint = hintFor(method, context.settled())
    const raw = rawJsonOf(result)
    return raw !== undefined
      ? Era.stampJson(raw, serverInfo, hint)
      : Era.stamp(isJsonObject(result) ? result : {}, serverInfo, hint)
  }
  if (method === "server/discover") return void wire.result(id, stamp(discoverResult()))
  if (method === "subscriptions/listen") return void context.listen.open(id, request.params, wire)
  const input = isRetry(request.params)
    ? retried(context, wire, id, method, request.params as JsonObject)
    : passable(context, method, request.params, envelope)
  if (input === false) return
  const handler = Era.modernMethods.has(method) ? context.handlers[method] : undefined
  if (handler === undefined) {
    return void wire.error(id, {
      code: RpcCode.MethodNotFound,
      message: `Method not found: ${method} is not part of protocol ${envelope.version}`
    })
  }
  const fiber = Runtime.runFork(context.runtime)(
    handler(withoutEnvelope(request.params), {
      requestId: id,
      notify: (method, params) => wire.notify(method, params, id),
      logLevel: envelope.logLevel,
      hostCapabilities: envelope.capabilities,
      ...(input === undefined ? {} : { input })
    })
  )
  const unroute = logRouteFor(context, wire, id, method, request.params, envelope)
  const cancel = () => void Runtime.runFork(context.runtime)(Fiber.interrupt(fiber))
  context.cancels.set(id, cancel)
  const slot = slotFor(context, id, method, request.params, envelope)
  if (slot !== undefined) slot.cancel = cancel
  fiber.addObserver((exit) => {
    unroute()
    const write = (to: string | number) => {
      if (Exit.isSuccess(exit)) return wire.result(to, stamp(exit.value))
      const failure = Cause.failureOption(exit.cause)
      if (Option.isSome(failure)) return wire.error(to, rpcErrorOf(failure.value))
      wire.error(to, { code: RpcCode.InternalError, message: `Internal error: ${Cause.pretty(exit.cause)}` })
    }
    if (slot === undefined) {
      // Cancelled by the host: its cancel already forgot the id, and a cancelled request is never answered.
      if (context.cancels.delete(id)) write(id)
      return
    }
    // An input_required call answers the host request waiting now (the last retry), or the retry still to come.
    const current = context.parking.hostId(slot)
    if (current !== undefined && !context.cancels.delete(current)) return context.parking.finish(slot, () => {})
    context.parking.finish(slot, write)
  })
  return fiber
}

/** A tools/call whose envelope names a log level hears its child's messages (LogRoutes) while it runs. */
const logRouteFor = (
  context: ModernContext,
  wire: Era.ModernWire,
  id: string | number,
  method: string,
  params: unknown,
  envelope: Era.Envelope
): (() => void) => {
  const name = isJsonObject(params) ? params.name : undefined
  if (envelope.logLevel === undefined || method !== "tools/call" || typeof name !== "string") return () => {}
  return context.logs.add(id, () => context.instanceOf(name), envelope.logLevel, wire)
}

/**
 * What a request a child may answer input_required names (the tool or prompt, or the resource's URI) and a digest of its
 * arguments; none for any other request, or one without its name.
 */
const routeOf = (method: string, params: unknown): { readonly target: string; readonly args: string } | undefined => {
  if (!inputMethods.has(method) || !isJsonObject(params)) return undefined
  const target = method === "resources/read" ? params.uri : params.name
  return typeof target !== "string"
    ? undefined
    : { target, args: argumentsDigest(method === "resources/read" ? undefined : params.arguments) }
}

/** What a modern child's input_required of this request is passed through with (none: not one that can take it). */
const passable = (
  context: ModernContext,
  method: string,
  params: unknown,
  envelope: Era.Envelope
): InputPass | undefined => {
  const route = answersInput(envelope) ? routeOf(method, params) : undefined
  if (route === undefined) return undefined
  return { seal: (instance, state) => context.parking.seal({ instance, method, ...route, state }) }
}

/**
 * A retry (`requestState`): a parked call is resumed by the parking (false: nothing left to do here); a passed-through
 * state must come back with the same request (method, name or URI, arguments), still routed to the same instance (a
 * tool's checked here, a prompt's or resource's where it is routed: InputPass.issuer), and goes to that child again
 * with the host's answers and the child's own state.
 */
const retried = (
  context: ModernContext,
  wire: Era.ModernWire,
  id: string | number,
  method: string,
  params: JsonObject
): InputPass | false => {
  const passed = context.parking.retry(id, params, wire)
  if (passed === undefined) return false
  const route = routeOf(method, params)
  const why =
    method !== passed.method || route?.target !== passed.target
      ? `was issued for a ${passed.method} of ${passed.target}`
      : route.args !== passed.args
        ? `was issued for a ${passed.method} of ${passed.target} with other arguments`
        : method === "tools/call" && context.instanceOf(passed.target) !== passed.instance
          ? `was issued by source ${passed.instance}, which no longer serves ${passed.target}`
          : undefined
  if (why !== undefined) {
    wire.error(id, stateError(why))
    return false
  }
  return {
    ...(isJsonObject(params.inputResponses) ? { inputResponses: params.inputResponses } : {}),
    ...(passed.state === undefined ? {} : { requestState: passed.state }),
    issuer: passed.instance,
    seal: (instance, state) => context.parking.seal({ ...passed, instance, state })
  }
}

/** A tools/call of a host that answers input gets a slot: a child's question then answers it input_required. */
const slotFor = (
  context: ModernContext,
  id: string | number,
  method: string,
  params: unknown,
  envelope: Era.Envelope
) => {
  if (method !== "tools/call" || !answersInput(envelope)) return undefined
  const name = isJsonObject(params) ? params.name : undefined
  return context.parking.open(
    id,
    () => (typeof name === "string" ? context.instanceOf(name) : undefined),
    envelope.capabilities
  )
}

/** A reverse request of a child while only modern hosts are attached: MRTR carries it (Mrtr.ts), else it fails. */
export const noReverseRequests = (method: string) =>
  Effect.fail(
    new RpcError({
      reason: "Unsupported",
      code: RpcCode.MethodNotFound,
      detail: `${method}: the host speaks protocol ${Era.modernVersion}, which has no server-to-client requests outside a call`
    })
  )
