import type { ToolConfig } from "../../domain/Config.js"
import type { Tool } from "../../domain/Mcp.js"
import type { Manifest } from "./Manifest.js"
import * as Manifests from "./Manifest.js"
import * as NameBudget from "./NameBudget.js"
import * as Pipeline from "./Pipeline.js"

/** The tools one running instance serves, as the child sent them (Sources.catalog). */
export interface InstanceTools {
  readonly instance: string
  readonly tools: ReadonlyArray<Tool>
}

/** Where a listed wire name goes. */
export interface Route {
  readonly instance: string
  readonly tool: string
}

/** One tool the registry knows of, listed or not, with the reason (`tools list` prints these). */
export interface CatalogEntry {
  readonly wire: string
  readonly kind: "core" | "source"
  /** Empty for core tools. */
  readonly instance: string
  /** The name the child uses (or the core tool's name). */
  readonly original: string
  readonly shaping: NameBudget.Shaping
  readonly listed: boolean
  /** `listed`, or why not: switched off in the config, or another tool kept the wire name. */
  readonly status: "listed" | "disabled" | "collision"
  /** Why it is listed or not: `core`, `default`, `tools."gh.x".enabled`, `collision with …`. */
  readonly rule: string
  readonly alwaysLoad: boolean
  readonly hint: string | undefined
  /** The definition as tools/list sends it (canonical); for unlisted tools, what it would be. */
  readonly tool: Tool
  readonly tokens: number
}

export interface Catalog {
  /** Exactly what tools/list answers: listed tools, hints and alwaysLoad applied, sorted, canonical key order. */
  readonly tools: ReadonlyArray<Tool>
  /** sha256 (hex) of the canonical `tools`. */
  readonly hash: string
  /** Every tool, listed or not, sorted by wire name. */
  readonly entries: ReadonlyArray<CatalogEntry>
  readonly collisions: ReadonlyArray<NameBudget.Collision>
  /** Listed source tools: wire name → instance and original tool (the reverse map routing uses). */
  readonly routes: ReadonlyMap<string, Route>
}

export interface CatalogInput {
  readonly manifest: Manifest
  readonly sources: ReadonlyArray<InstanceTools>
  /** `[tools."<instance>.<tool>"]` tables. */
  readonly toolConfig: Readonly<Record<string, ToolConfig>>
  readonly budget: number
}

export const selector = (instance: string, tool: string) => `${instance}.${tool}`

interface Candidate {
  readonly kind: "core" | "source"
  readonly instance: string
  readonly original: string
  readonly shaping: NameBudget.Shaping
  readonly tool: Tool
  readonly enabled: boolean
  readonly enabledRule: string
  readonly alwaysLoad: boolean
  readonly hint: string | undefined
}

/** Pure: the catalog the host sees, from the manifest, the running children's tools and the config. */
export const build = (input: CatalogInput): Catalog => {
  const coreHints = Manifests.usageHints(input.manifest)
  const coreHot = Manifests.alwaysLoadSet(input.manifest)
  const candidates: Array<Candidate> = input.manifest.tools.map((core) => ({
    kind: "core",
    instance: "",
    original: core.spec.name,
    shaping: "as-is",
    tool: core.tool,
    enabled: true,
    enabledRule: "core",
    alwaysLoad: coreHot.has(core.spec.name),
    hint: coreHints.get(core.spec.name)
  }))
  for (const { instance, tools } of input.sources) {
    for (const tool of tools) {
      const key = selector(instance, tool.name)
      const config = input.toolConfig[key]
      const mapped = NameBudget.wireName(instance, tool.name, input.budget)
      candidates.push({
        kind: "source",
        instance,
        original: tool.name,
        shaping: mapped.shaping,
        tool: { ...tool, name: mapped.wire },
        enabled: config?.enabled ?? true,
        enabledRule: config !== undefined && !config.enabled ? `tools.${JSON.stringify(key)}.enabled` : "default",
        alwaysLoad: config?.always_load ?? false,
        hint: config?.usage_hint
      })
    }
  }

  // Disabled tools claim no name, so disabling one side of a collision settles it.
  const { kept, collisions } = NameBudget.resolveClaims(
    candidates
      .filter((candidate) => candidate.enabled)
      .map((candidate) => ({
        wire: candidate.tool.name,
        label: labelOf(candidate),
        rank: candidate.kind === "core" ? NameBudget.coreRank : NameBudget.sourceRank(candidate.shaping),
        value: candidate
      }))
  )
  const winners = new Set(kept.map((claim) => claim.value))
  const keptLabel = new Map(kept.map((claim) => [claim.wire, claim.label]))

  const hints = new Map<string, string>()
  const hot = new Set<string>()
  for (const candidate of winners) {
    if (candidate.hint !== undefined) hints.set(candidate.tool.name, candidate.hint)
    if (candidate.alwaysLoad) hot.add(candidate.tool.name)
  }
  const tools = Pipeline.pipeline(
    [...winners].map((candidate) => candidate.tool),
    { hints, alwaysLoad: hot }
  ).map((tool) => Pipeline.canonical(tool))
  const listedByWire = new Map(tools.map((tool) => [tool.name, tool]))

  const entries = candidates
    .map((candidate): CatalogEntry => {
      const listed = winners.has(candidate)
      const wire = candidate.tool.name
      const tool = listed
        ? listedByWire.get(wire)!
        : Pipeline.canonical(
            Pipeline.pipeline([candidate.tool], {
              hints: new Map(candidate.hint === undefined ? [] : [[wire, candidate.hint]]),
              alwaysLoad: new Set(candidate.alwaysLoad ? [wire] : [])
            })[0]!
          )
      return {
        wire: candidate.tool.name,
        kind: candidate.kind,
        instance: candidate.instance,
        original: candidate.original,
        shaping: candidate.shaping,
        listed,
        status: listed ? "listed" : candidate.enabled ? "collision" : "disabled",
        rule:
          listed || !candidate.enabled
            ? candidate.enabledRule
            : `collision with ${keptLabel.get(candidate.tool.name) ?? "?"}`,
        alwaysLoad: candidate.alwaysLoad,
        hint: candidate.hint,
        tool,
        tokens: Pipeline.estimateTokens(tool)
      }
    })
    .sort(
      (a, b) =>
        Pipeline.byteOrder(a.wire, b.wire) ||
        Pipeline.byteOrder(selector(a.instance, a.original), selector(b.instance, b.original))
    )

  const routes = new Map<string, Route>()
  for (const candidate of winners) {
    if (candidate.kind === "source") {
      routes.set(candidate.tool.name, { instance: candidate.instance, tool: candidate.original })
    }
  }

  return { tools, hash: Pipeline.catalogHash(tools), entries, collisions, routes }
}

const labelOf = (candidate: Candidate) =>
  candidate.kind === "core" ? candidate.original : selector(candidate.instance, candidate.original)
