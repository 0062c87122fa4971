import { Option } from "effect"

/** ADR-006: the separator between instance and tool on the wire. Instance names never contain `_`. */
export const separator = "__"

export const make = (instance: string, tool: string): string => `${instance}${separator}${tool}`

/**
 * Splits `<instance>__<tool>` at the FIRST separator. None when there is no separator, the instance is
 * empty, or nothing follows the separator (`a__b__c` → instance `a`, tool `b__c`).
 */
export const split = (wire: string): Option.Option<{ readonly instance: string; readonly tool: string }> => {
  const at = wire.indexOf(separator)
  if (at <= 0) return Option.none()
  const tool = wire.slice(at + separator.length)
  return tool === "" ? Option.none() : Option.some({ instance: wire.slice(0, at), tool })
}
