import type { ClawtoolConfig, ProfileConfig } from "../../domain/Config.js"
import type { HealthRow } from "../../domain/Health.js"
import { isReadOnly } from "../Trust/Confirm.js"
import type { CatalogEntry, CatalogMode } from "./CatalogTypes.js"

/*
 * Profiles (issue 26, docs/decisions/031): a profile is a view over the one catalog, never a catalog of its own, so a
 * tool has the same wire name in every profile and children start once. Pure: which entries a profile admits, and
 * what its config names that does not exist (warnings, like unknown `[tools]` selectors).
 */

/** The registry's own tools: every view has them (ToolSearch and SourceHealth search and report only the view). */
const alwaysCore: ReadonlySet<string> = new Set(["ToolSearch", "SourceHealth"])

/** One profile, resolved against the config it came from. */
export interface Profile {
  readonly name: string
  /** The sources it sees (named, or tagged), by instance name. */
  readonly instances: ReadonlySet<string>
  /** The catalog mode of its tools/list; undefined: the top-level `catalog`. */
  readonly mode: CatalogMode | undefined
  /** Whether an entry of the whole catalog belongs to this view. */
  readonly admits: (entry: Pick<CatalogEntry, "kind" | "instance" | "original" | "tool">) => boolean
}

/** `*` matches any run of characters; everything else is literal. */
const globOf = (pattern: string): RegExp =>
  new RegExp(
    `^${pattern
      .split("*")
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*")}$`
  )

const selectorMatcher = (selector: string): ((instance: string, tool: string) => boolean) => {
  if (selector === "*") return () => true
  const dot = selector.indexOf(".")
  const instance = selector.slice(0, dot)
  const tool = globOf(selector.slice(dot + 1))
  return (candidate, name) => candidate === instance && tool.test(name)
}

/** The instances a profile's `sources` and `tags` select (neither: every configured source). */
export const instancesOf = (profile: ProfileConfig, config: ClawtoolConfig): ReadonlySet<string> => {
  if (profile.sources === undefined && profile.tags === undefined) return new Set(Object.keys(config.sources))
  const tags = new Set(profile.tags ?? [])
  return new Set([
    ...(profile.sources ?? []).filter((instance) => config.sources[instance] !== undefined),
    ...Object.entries(config.sources)
      .filter(([, source]) => source.tags.some((tag) => tags.has(tag)))
      .map(([instance]) => instance)
  ])
}

export const resolve = (name: string, profile: ProfileConfig, config: ClawtoolConfig): Profile => {
  const instances = instancesOf(profile, config)
  const excluded = profile.tools.filter((selector) => selector.startsWith("!")).map((s) => selectorMatcher(s.slice(1)))
  const positive = profile.tools.filter((selector) => !selector.startsWith("!"))
  // Only exclusions: everything else is in.
  const included = (positive.length === 0 ? ["*"] : positive).map(selectorMatcher)
  const core = profile.core_tools === undefined ? undefined : new Set<string>(profile.core_tools)
  return {
    name,
    instances,
    mode: profile.catalog,
    admits: (entry) => {
      if (entry.kind === "core" && alwaysCore.has(entry.original)) return true
      if (profile.read_only && !isReadOnly(entry.tool)) return false
      if (entry.kind === "core") return core === undefined || core.has(entry.original)
      return (
        instances.has(entry.instance) &&
        included.some((matches) => matches(entry.instance, entry.original)) &&
        !excluded.some((matches) => matches(entry.instance, entry.original))
      )
    }
  }
}

/** Every profile of `config`, by name. */
export const resolveAll = (config: ClawtoolConfig): ReadonlyMap<string, Profile> =>
  new Map(Object.entries(config.profiles).map(([name, profile]) => [name, resolve(name, profile, config)]))

/**
 * What the config's profiles and tokens name that does not exist: a source, a tag, a selector's source outside the
 * profile, a token's profile. Each a sentence naming it; the profile still serves.
 */
export const problems = (config: ClawtoolConfig): ReadonlyArray<string> => {
  const tags = new Set(Object.values(config.sources).flatMap((source) => source.tags))
  const found: Array<string> = []
  for (const [name, profile] of Object.entries(config.profiles)) {
    for (const instance of profile.sources ?? []) {
      if (config.sources[instance] === undefined) {
        found.push(`[profiles.${name}] sources names no configured source "${instance}"`)
      }
    }
    for (const tag of profile.tags ?? []) {
      if (!tags.has(tag)) found.push(`[profiles.${name}] tags names "${tag}", which no source carries`)
    }
    const instances = instancesOf(profile, config)
    for (const selector of profile.tools) {
      const bare = selector.replace(/^!/, "")
      if (bare === "*") continue
      const instance = bare.slice(0, bare.indexOf("."))
      if (!instances.has(instance)) {
        found.push(
          `[profiles.${name}] tools "${selector}" matches nothing: "${instance}" is not a source of the profile`
        )
      }
    }
  }
  for (const [name, token] of Object.entries(config.http.tokens)) {
    for (const profile of token.profiles) {
      if (profile !== "default" && config.profiles[profile] === undefined) {
        found.push(`[http.tokens.${name}] profiles names no profile "${profile}"; that entry reaches nothing`)
      }
    }
  }
  return found
}

/**
 * The selectors of the config's profiles that match no tool of the whole catalog (`profile list` warns, as `tools list`
 * does for `[tools]` tables): the catalog is only known once the sources run.
 */
export const unmatched = (
  config: ClawtoolConfig,
  entries: ReadonlyArray<Pick<CatalogEntry, "kind" | "instance" | "original">>
): ReadonlyArray<string> =>
  Object.entries(config.profiles).flatMap(([name, profile]) =>
    profile.tools.flatMap((selector) => {
      const bare = selector.replace(/^!/, "")
      if (bare === "*") return []
      const matches = selectorMatcher(bare)
      return entries.some((entry) => entry.kind === "source" && matches(entry.instance, entry.original))
        ? []
        : [`[profiles.${name}] tools "${selector}" matches no tool of the running sources`]
    })
  )

/** A profile's health: the rows of its sources, and every row that is not a source's (the config, the audit log). */
export const healthOf = (profile: Profile, rows: ReadonlyArray<HealthRow>): ReadonlyArray<HealthRow> =>
  rows.filter((row) => row.kind !== "source" || profile.instances.has(row.name))
