import type { TrustConfig } from "../../domain/Config/Trust.js"
import * as Confirm from "../Trust/Confirm.js"
import { selector as selectorOf } from "./Catalog.js"
import type { Catalog, InstanceTools } from "./CatalogTypes.js"

/** A call `[trust] confirm` names: the selector that matched, what it matched, and how to ask (`[trust]`). */
export interface Confirmation {
  readonly selector: string
  readonly target: Confirm.Target
  readonly settings: Pick<TrustConfig, "confirm_timeout" | "unconfirmed">
}

/** Pure: the listed wire names of `current` whose source tool `[trust] confirm` names, with what to ask. */
export const confirmationsOf = (
  matcher: Confirm.Matcher,
  settings: Confirmation["settings"],
  current: Catalog,
  input: ReadonlyArray<InstanceTools>
): ReadonlyMap<string, Confirmation> => {
  const matched = new Map<string, Confirmation>()
  for (const { instance, tools } of input) {
    for (const tool of tools) {
      const target: Confirm.Target = { kind: "source", instance, tool }
      const selector = matcher.matching(target)
      if (selector !== undefined) matched.set(selectorOf(instance, tool.name), { selector, target, settings })
    }
  }
  const byWire = new Map<string, Confirmation>()
  for (const [wire, route] of current.routes) {
    const confirmation = matched.get(selectorOf(route.instance, route.tool))
    if (confirmation !== undefined) byWire.set(wire, confirmation)
  }
  return byWire
}
