import * as Era from "../../domain/HostEra.js"
import type { JsonObject } from "../../domain/Mcp.js"
import { isJsonObject, RpcCode, type ListKind } from "../../domain/Surface.js"

/**
 * `subscriptions/listen` (2026-07-28): a modern host's replacement for unsolicited list_changed and for
 * resources/subscribe. Each open listen request is one subscription (its id is the subscription id), acknowledged with
 * the honoured filter once the children it names URIs of have subscribed them (an update the host causes after the
 * acknowledgement is heard, even from a modern child whose subscription is a listen of its own), and kept open; the
 * session's list_changed notices (after the Gateway's debounce and per-kind rules) and the children's resources/updated
 * go to the acknowledged subscriptions that asked for them, tagged with their id. The host's `notifications/cancelled`
 * ends one; clawtool's shutdown answers each with the empty result.
 */

interface Filter {
  toolsListChanged?: true
  promptsListChanged?: true
  resourcesListChanged?: true
  resourceSubscriptions?: Array<string>
}

const flag: Record<ListKind, "toolsListChanged" | "promptsListChanged" | "resourcesListChanged"> = {
  tools: "toolsListChanged",
  prompts: "promptsListChanged",
  resources: "resourcesListChanged"
}

/** A listen filter as honoured (clawtool serves every kind), or undefined when it is not one. */
export const parseFilter = (params: unknown): Filter | undefined => {
  const requested = isJsonObject(params) ? params.notifications : undefined
  if (!isJsonObject(requested)) return undefined
  const honoured: Filter = {}
  for (const key of ["toolsListChanged", "promptsListChanged", "resourcesListChanged"] as const) {
    const value = requested[key]
    if (value !== undefined && typeof value !== "boolean") return undefined
    if (value === true) honoured[key] = true
  }
  const uris = requested.resourceSubscriptions
  if (uris !== undefined) {
    if (!Array.isArray(uris) || !uris.every((uri) => typeof uri === "string")) return undefined
    if (uris.length > 0) honoured.resourceSubscriptions = [...new Set(uris as Array<string>)]
  }
  return honoured
}

export interface Listen {
  /** A listen request: acknowledged on `wire` (or answered -32602), then open until cancelled or closed. */
  readonly open: (id: string | number, params: unknown, wire: Era.ModernWire) => void
  /** The host cancelled request `id`: true when it was a subscription (now ended, never answered). */
  readonly cancel: (id: string | number) => boolean
  readonly listChanged: (kind: ListKind) => void
  /** A child's resources/updated, mapped to the host's URI. */
  readonly updated: (params: JsonObject) => void
  /** How many subscriptions are open. */
  readonly size: () => number
  /** Ends every subscription with its empty result (clawtool stops serving). */
  readonly closeAll: () => void
}

/**
 * `subscribe(uri, on)`: the session's resources/(un)subscribe for a URI a subscription names (ref-counted there),
 * settled when the child has answered or the session ended (never rejects: a child's refusal is logged there).
 */
export const makeListen = (subscribe: (uri: string, on: boolean) => Promise<void>, maxSubscriptions = 1024): Listen => {
  const open = new Map<
    string | number,
    { readonly filter: Filter; readonly wire: Era.ModernWire; acknowledged: boolean }
  >()
  const tagged = (id: string | number, params: JsonObject | undefined): JsonObject => ({
    ...params,
    _meta: { ...(isJsonObject(params?._meta) ? params._meta : {}), [Era.metaKey.subscriptionId]: id }
  })
  const release = (filter: Filter) => {
    for (const uri of filter.resourceSubscriptions ?? []) void subscribe(uri, false)
  }
  return {
    open: (id, params, wire) => {
      if (open.size >= maxSubscriptions) {
        return wire.error(id, { code: RpcCode.InternalError, message: "Subscription limit reached" })
      }
      const filter = parseFilter(params)
      if (filter === undefined) {
        return wire.error(id, {
          code: RpcCode.InvalidParams,
          message: "Invalid params: 'notifications' is required and must be a valid SubscriptionFilter"
        })
      }
      const entry = { filter, wire, acknowledged: false }
      open.set(id, entry)
      const acknowledge = () => {
        if (open.get(id) !== entry) return // cancelled meanwhile
        entry.acknowledged = true
        wire.notify("notifications/subscriptions/acknowledged", tagged(id, { notifications: filter as JsonObject }), id)
      }
      const uris = filter.resourceSubscriptions ?? []
      if (uris.length === 0) return acknowledge()
      void Promise.all(uris.map((uri) => subscribe(uri, true))).then(acknowledge)
    },
    cancel: (id) => {
      const entry = open.get(id)
      if (entry === undefined) return false
      open.delete(id)
      release(entry.filter)
      return true
    },
    listChanged: (kind) => {
      for (const [id, { filter, wire, acknowledged }] of open) {
        if (acknowledged && filter[flag[kind]] === true) {
          wire.notify(`notifications/${kind}/list_changed`, tagged(id, undefined), id)
        }
      }
    },
    updated: (params) => {
      const uri = params.uri
      for (const [id, { filter, wire, acknowledged }] of open) {
        if (acknowledged && typeof uri === "string" && filter.resourceSubscriptions?.includes(uri) === true) {
          wire.notify("notifications/resources/updated", tagged(id, params), id)
        }
      }
    },
    size: () => open.size,
    closeAll: () => {
      for (const [id, { filter, wire }] of open) {
        release(filter)
        wire.result(id, { resultType: "complete", _meta: { [Era.metaKey.subscriptionId]: id } })
      }
      open.clear()
    }
  }
}
