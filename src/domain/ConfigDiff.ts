import type { ClawtoolConfig, SourceConfig } from "./Config.js"

/**
 * What a reload does to the running set, per instance (ADR 016). Only enabled sources count: enabling one starts it,
 * disabling one stops it. `restart` is a source whose whole spec changed, in any key, including keys added later, but
 * `tags`: metadata profiles select by, never seen by the child (`retag`).
 */
export interface ConfigDiff {
  readonly start: ReadonlyArray<string>
  readonly stop: ReadonlyArray<string>
  readonly restart: ReadonlyArray<string>
  readonly keep: ReadonlyArray<string>
  /** Kept instances whose `tags` changed (and nothing else): the profiles' views change, the child does not. */
  readonly retag: ReadonlyArray<string>
  /** Top-level keys other than `sources` whose value changed (`tools`, `name_budget`, `limits`, …). */
  readonly settings: ReadonlyArray<string>
}

/** A diff that changes nothing (a single restart is `{ ...nothing, restart: [name] }`). */
export const nothing: ConfigDiff = { start: [], stop: [], restart: [], keep: [], retag: [], settings: [] }

/** The values a source's `${VAR}`s resolve to (command, env), or anything else that decides its child. */
export type Resolve = (instance: string, source: SourceConfig) => unknown

/**
 * JSON with object keys sorted, so two equal values always give the same text whatever order their keys were written
 * in. `toJSON` is honoured (durations), `undefined` members are left out as JSON does.
 */
export const canonical = (value: unknown): string => JSON.stringify(sorted(value)) ?? "undefined"

const sorted = (value: unknown): unknown => {
  const plain =
    typeof value === "object" && value !== null && typeof (value as { toJSON?: unknown }).toJSON === "function"
      ? (value as { toJSON: () => unknown }).toJSON()
      : value
  if (Array.isArray(plain)) return plain.map(sorted)
  if (typeof plain !== "object" || plain === null) return plain
  return Object.fromEntries(
    Object.keys(plain)
      .sort()
      .flatMap((key) => {
        const member = (plain as Record<string, unknown>)[key]
        return member === undefined ? [] : [[key, sorted(member)]]
      })
  )
}

/** One source's spec as the reload compares it: the whole table but its tags, and what its secrets resolve to. */
export const specOf = (instance: string, source: SourceConfig, resolve: Resolve): string => {
  const { tags: _tags, ...child } = source
  return canonical({ source: child, resolved: resolve(instance, source) })
}

const enabledSpecs = (config: ClawtoolConfig, resolve: Resolve): ReadonlyMap<string, string> =>
  new Map(
    Object.entries(config.sources)
      .filter(([, source]) => source.enabled)
      .map(([name, source]) => [name, specOf(name, source, resolve)])
  )

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** Pure: the per-instance diff from `old` (resolved with the old secrets) to `next` (with the new ones). */
export const diff = (
  old: ClawtoolConfig,
  next: ClawtoolConfig,
  resolve: { readonly old: Resolve; readonly next: Resolve }
): ConfigDiff => {
  const before = enabledSpecs(old, resolve.old)
  const after = enabledSpecs(next, resolve.next)
  const start: Array<string> = []
  const restart: Array<string> = []
  const keep: Array<string> = []
  for (const [name, spec] of after) {
    const previous = before.get(name)
    if (previous === undefined) start.push(name)
    else if (previous === spec) keep.push(name)
    else restart.push(name)
  }
  const stop = [...before.keys()].filter((name) => !after.has(name))
  const retag = keep.filter((name) => canonical(old.sources[name]!.tags) !== canonical(next.sources[name]!.tags))
  const keys = new Set([...Object.keys(old), ...Object.keys(next)].filter((key) => key !== "sources"))
  const settings = [...keys].filter(
    (key) =>
      canonical((old as unknown as Record<string, unknown>)[key]) !==
      canonical((next as unknown as Record<string, unknown>)[key])
  )
  return {
    start: start.sort(byName),
    stop: stop.sort(byName),
    restart: restart.sort(byName),
    keep: keep.sort(byName),
    retag: retag.sort(byName),
    settings: settings.sort(byName)
  }
}

/** Nothing to apply: no instance to start, stop, restart or retag, no setting changed. */
export const isEmpty = (self: ConfigDiff): boolean =>
  self.start.length === 0 &&
  self.stop.length === 0 &&
  self.restart.length === 0 &&
  self.retag.length === 0 &&
  self.settings.length === 0
