import type { JsonObject } from "./Mcp.js"
import { isJsonObject } from "./Surface.js"

/**
 * Which tools/call takes the line relay and why the others take the SDK path (docs/decisions/009-call-relay.md). Pure:
 * the Gateway (its intercept and its SDK handler), Registry.relayCall and SourceClient (its relay and its SDK path)
 * ask here instead of each keeping its own copy of the rules.
 */

/** A tools/call's params as both paths read them. */
export interface ToolCall {
  readonly name: string
  readonly arguments: JsonObject | undefined
  readonly task: JsonObject | undefined
  /** The host's `_meta` when it is an object; a `_meta` of another type is ignored (SDK path) or declined (relay). */
  readonly meta: JsonObject | undefined
  readonly metaMalformed: boolean
}

export type Parsed =
  | { readonly ok: true; readonly call: ToolCall }
  /** The -32602 message the SDK path answers. */
  | { readonly ok: false; readonly invalid: string }

/** clawtool's CallTool (`catalog = "search"`, ADR 025): its call is routed as the call of its target. */
export const callToolName = "CallTool"

/** The tool a CallTool call names and the arguments for it, or the Invalid params message naming what is wrong. */
export const callToolTarget = (
  args: JsonObject | undefined
):
  | { readonly ok: true; readonly name: string; readonly arguments: JsonObject | undefined }
  | Extract<Parsed, { ok: false }> => {
  const name = args?.name
  if (typeof name !== "string" || name === "") {
    return {
      ok: false,
      invalid: `${callToolName} needs arguments.name: the wire name of the tool to call (ToolSearch returns it)`
    }
  }
  if (name === callToolName) return { ok: false, invalid: `${callToolName} cannot call itself` }
  const inner = args?.arguments
  if (inner !== undefined && !isJsonObject(inner)) {
    return { ok: false, invalid: `${callToolName} arguments.arguments for "${name}" must be an object` }
  }
  return { ok: true, name, arguments: inner }
}

/**
 * The params of a tools/call, or the Invalid params message naming what is wrong. A CallTool call comes out as the
 * call of its target (same `_meta`, progress token and task), so both paths route, trace and answer it as one.
 */
export const parse = (params: unknown): Parsed => {
  const parsed = parseDirect(params)
  if (!parsed.ok || parsed.call.name !== callToolName) return parsed
  const target = callToolTarget(parsed.call.arguments)
  return target.ok ? { ok: true, call: { ...parsed.call, name: target.name, arguments: target.arguments } } : target
}

const parseDirect = (params: unknown): Parsed => {
  if (!isJsonObject(params) || typeof params.name !== "string") {
    return { ok: false, invalid: "tools/call needs params.name (a string)" }
  }
  const name = params.name
  const args = params.arguments
  if (args !== undefined && !isJsonObject(args)) {
    return { ok: false, invalid: `tools/call arguments for "${name}" must be an object` }
  }
  const task = params.task
  if (task !== undefined && !isJsonObject(task)) {
    return { ok: false, invalid: `tools/call task for "${name}" must be an object` }
  }
  const meta = params._meta
  const metaObject = isJsonObject(meta) ? meta : undefined
  return {
    ok: true,
    call: {
      name,
      arguments: args,
      task,
      meta: metaObject,
      metaMalformed: meta !== undefined && metaObject === undefined
    }
  }
}

/** Why a call takes the SDK path; each reason is a feature only that path has, or a failure only it explains. */
export type SdkReason =
  /** Not a tools/call request: every other method is the SDK's. */
  | "NotACall"
  /** The request id is not a string or number, or another relayed call of the host still uses it. */
  | "IdUnusable"
  /** Params the SDK path answers with -32602 (name, arguments or task of the wrong type). */
  | "InvalidParams"
  /** Task augmentation (2025-11-25): the SDK path checks the child's support and maps the CreateTaskResult. */
  | "Task"
  /** The host asked for progress: the SDK path sends it back under the host's token. */
  | "ProgressAsked"
  /** A `_meta` that is not an object: the SDK path ignores it. */
  | "MetaMalformed"
  /** Trace context in `_meta`, or tracing active (an exporter, TRACEPARENT): the SDK path makes the spans. */
  | "Traced"
  /** One of clawtool's own tools. */
  | "CoreTool"
  /** A name the catalog does not list: the SDK path waits for start-up and explains why it cannot be called. */
  | "NotListed"
  /** The owning source is not running: the SDK path says so. */
  | "NotRunning"
  /** `[trust] confirm` names the tool: the SDK path asks the host's user first (ADR 029). */
  | "Confirm"

/** The SDK path, and why. */
export interface Decline {
  readonly relay: false
  readonly why: SdkReason
}

export type Plan = { readonly relay: true } | Decline

const relay: Plan = { relay: true }
const sdk = Object.fromEntries(
  (
    [
      "NotACall",
      "IdUnusable",
      "InvalidParams",
      "Task",
      "ProgressAsked",
      "MetaMalformed",
      "Traced",
      "CoreTool",
      "NotListed",
      "NotRunning",
      "Confirm"
    ] as const
  ).map((why) => [why, { relay: false, why }])
) as { readonly [K in SdkReason]: Decline }

/** The host's side of the decision (Gateway): a request the relay may take, or why it may not. */
export type HostPlan = { readonly relay: true; readonly id: string | number; readonly call: ToolCall } | Decline

/**
 * A host request the relay may take: a tools/call with well-formed params, no task, no progressToken, no trace context
 * (and tracing idle), under an id no other relayed call uses.
 */
export const forHost = (
  message: Record<string, unknown>,
  context: { readonly untraced: boolean; readonly inFlight: (id: string | number) => boolean }
): HostPlan => {
  if (message.method !== "tools/call") return sdk.NotACall
  if (!context.untraced) return sdk.Traced
  const id = message.id
  if ((typeof id !== "string" && typeof id !== "number") || context.inFlight(id)) return sdk.IdUnusable
  const parsed = parse(message.params)
  if (!parsed.ok) return sdk.InvalidParams
  const plan = forCall(parsed.call)
  return plan.relay ? { relay: true, id, call: parsed.call } : plan
}

/** The call's own side of the decision: what in its params needs the SDK path. */
export const forCall = (call: ToolCall): Plan => {
  if (call.task !== undefined) return sdk.Task
  if (call.metaMalformed) return sdk.MetaMalformed
  if (call.meta !== undefined) {
    if ("progressToken" in call.meta) return sdk.ProgressAsked
    if ("traceparent" in call.meta) return sdk.Traced
  }
  return relay
}

/** The routing side (Registry): only a listed tool of a running source that needs no confirmation is relayed. */
export const forRoute = (route: {
  readonly core: boolean
  readonly listed: boolean
  readonly running: boolean
  readonly confirm: boolean
}) =>
  route.core
    ? sdk.CoreTool
    : !route.listed
      ? sdk.NotListed
      : route.confirm
        ? sdk.Confirm
        : !route.running
          ? sdk.NotRunning
          : relay

/** The host's progressToken, when it asked for progress with a valid one (the SDK path sends progress back under it). */
export const hostProgressToken = (meta: JsonObject | undefined): string | number | undefined => {
  const token = meta?.progressToken
  return typeof token === "string" || typeof token === "number" ? token : undefined
}

/**
 * What the child is asked for, on either path (SourceClient): the host's progress when it asked; otherwise progress only
 * to keep a call alive under `call_timeout` (each one resets the timer; none is sent to the host); else nothing.
 */
export type ChildProgress = "forHost" | "keepAlive" | "none"

export const childProgress = (hostAsked: boolean, callTimeoutMs: number | undefined): ChildProgress =>
  hostAsked ? "forHost" : callTimeoutMs !== undefined ? "keepAlive" : "none"
