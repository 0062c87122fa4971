import type { ToolConfig } from "../../domain/Config.js"
import type { Tool } from "../../domain/Mcp.js"
import type { InstanceVerdicts } from "../Trust/Pins.js"
import { alwaysLoadSet, type ToolListing, usageHints } from "../../domain/ToolProvider.js"
import * as Clean from "../Trust/Clean.js"
import { isReadOnly } from "../Trust/Confirm.js"
import * as CallTool from "./CallTool.js"
import type { Catalog, CatalogEntry, CatalogMode, HostView, InstanceTools, Route } from "./CatalogTypes.js"
import * as NameBudget from "./NameBudget.js"
import * as Pipeline from "./Pipeline.js"

/** The catalog's types are in CatalogTypes.ts (ToolSearch and the CLI need them, not this file); tests read these here. */
export type { Catalog, InstanceTools } from "./CatalogTypes.js"

export interface CatalogInput {
  /** Default "full". */
  readonly mode?: CatalogMode | undefined
  /** The provider's tools (core tools): listed first, under their own names. */
  readonly manifest: ToolListing
  readonly sources: ReadonlyArray<InstanceTools>
  /** `[tools."<instance>.<tool>"]` tables. */
  readonly toolConfig: Readonly<Record<string, ToolConfig>>
  readonly budget: number
  /** Core tools switched off, each with the rule that did it (`core_tools.Read.enabled`; CoreTools.coreGate). */
  readonly coreDisabled?: ReadonlyMap<string, string>
  /** Each instance's wire-name prefix (`prefix` in its source table); default: the instance name. */
  readonly prefixes?: NameBudget.Prefixes
  /** Instances with `read_only = true`: only their tools annotated `readOnlyHint: true` are listed (issue 25). */
  readonly readOnly?: ReadonlySet<string>
  /** The pins' verdicts per instance (issue 25): held tools are not listed and claim no name. */
  readonly trust?: ReadonlyMap<string, InstanceVerdicts> | undefined
}

export const selector = (instance: string, tool: string) => `${instance}.${tool}`

/** The rule of a `read_only` source's tool not annotated `readOnlyHint: true`: unlisted, and a call to it is refused. */
export const readOnlyRule = (instance: string) => `sources.${instance}.read_only`

interface Candidate {
  readonly kind: "core" | "source"
  readonly instance: string
  readonly original: string
  readonly shaping: NameBudget.Shaping
  /** The wire name it claims. */
  readonly wire: string
  readonly memo: Memo
  readonly config: ToolConfig | undefined
  readonly alwaysLoad: boolean
  readonly hint: string | undefined
  /** A core tool switched off, or a `read_only` source's tool that is not read-only: the rule that did it. */
  readonly disabledBy?: string | undefined
  /** A source tool held back by its pins (quarantined): why, with the commands that show and approve it. */
  readonly heldBy?: string | undefined
  readonly trust?: string | undefined
}

/** One tool as tools/list sends it (wire name, hint, alwaysLoad, canonical key order) and its JSON. */
interface Shaped {
  readonly hint: string | undefined
  readonly alwaysLoad: boolean
  readonly tool: Tool
  readonly json: string
  /** sha256 of `json`, for the catalog hash. */
  readonly digest: Buffer
}

/** What one tool object of a child (or of the manifest) was turned into: its wire name, then its listed form. */
interface Memo {
  readonly source: Tool
  readonly instance: string
  readonly budget: number
  readonly prefix: string
  readonly mapped: NameBudget.Mapped
  readonly route: Route
  shaped: Shaped | undefined
}

// An instance keeps its tool objects until it lists again, so a rebuild names, canonicalises and serialises only
// the tools of the instance that changed.
const memos = new WeakMap<Tool, Memo>()
// `[tools."<instance>.<tool>"]` by instance, then by tool name (instance names have no dot): most instances have no
// table, and a Map lookup does not intern the key as an object property lookup does.
const configIndexes = new WeakMap<object, ReadonlyMap<string, ReadonlyMap<string, ToolConfig>>>()

/** One instance's candidates and the claims of the enabled ones, kept with its tool array. */
interface InstancePart {
  readonly instance: string
  readonly budget: number
  readonly prefix: string
  readonly configured: ReadonlyMap<string, ToolConfig> | undefined
  readonly readOnly: boolean
  readonly verdicts: InstanceVerdicts | undefined
  readonly candidates: ReadonlyArray<Candidate>
  readonly claims: ReadonlyArray<NameBudget.Claim<Candidate>>
  /** Its claims resolved among themselves, computed when first needed. */
  resolved: Resolved | undefined
}

/** Claims resolved among themselves: winners sorted by wire name, with their listed form, and the losers. */
interface Resolved {
  readonly kept: ReadonlyArray<NameBudget.Claim<Candidate>>
  readonly listed: ReadonlyArray<Shaped>
  readonly collisions: ReadonlyArray<NameBudget.Collision>
  readonly wires: ReadonlySet<string>
}

const resolve = (claims: ReadonlyArray<NameBudget.Claim<Candidate>>): Resolved => {
  const resolved = NameBudget.resolveClaims(claims)
  const sorted = [...resolved.kept].sort((a, b) => Pipeline.byteOrder(a.wire, b.wire))
  return {
    kept: sorted,
    listed: sorted.map((claim) => shape(claim.value)),
    collisions: resolved.collisions,
    wires: new Set(sorted.map((claim) => claim.wire))
  }
}

/** Whether some wire name is claimed in two groups (a core name, or shortened names): then all are resolved at once. */
const claimedAcross = (groups: ReadonlyArray<Resolved>): boolean => {
  const bySize = [...groups].sort((a, b) => b.wires.size - a.wires.size)
  for (let i = 1; i < bySize.length; i++) {
    for (const wire of bySize[i]!.wires) {
      for (let j = 0; j < i; j++) if (bySize[j]!.wires.has(wire)) return true
    }
  }
  return false
}
const instanceParts = new WeakMap<ReadonlyArray<Tool>, InstancePart>()

/** The memo of a source tool, or of a core tool when `instance` is empty (its wire name is its name). */
const memoOf = (source: Tool, instance: string, budget: number, prefix: string = instance): Memo => {
  const cached = memos.get(source)
  if (cached !== undefined && cached.instance === instance && cached.budget === budget && cached.prefix === prefix) {
    return cached
  }
  const mapped: NameBudget.Mapped =
    instance === ""
      ? { wire: source.name, instance, tool: source.name, shaping: "as-is" }
      : NameBudget.wireName(instance, source.name, budget, prefix)
  const memo: Memo = {
    source,
    instance,
    budget,
    prefix,
    mapped,
    route: { instance, tool: source.name },
    shaped: undefined
  }
  memos.set(source, memo)
  return memo
}

const shape = (candidate: Candidate): Shaped => {
  const { memo, hint, alwaysLoad } = candidate
  const cached = memo.shaped
  if (cached !== undefined && cached.hint === hint && cached.alwaysLoad === alwaysLoad) return cached
  const { mapped } = memo
  // What the host reads has no hidden characters (ADR 029); the source's object, which the pins hash, is untouched.
  const source = Clean.tool(memo.source)
  const named = source.name === mapped.wire ? source : { ...source, name: mapped.wire }
  const tool = Pipeline.canonical(Pipeline.shapeTool(named, hint, alwaysLoad))
  const json = JSON.stringify(tool)
  const shaped: Shaped = { hint, alwaysLoad, tool, json, digest: Pipeline.toolDigest(json) }
  memo.shaped = shaped
  return shaped
}

/** The claim of an enabled candidate: disabled tools claim no name, so disabling one side settles a collision. */
const claimOf = (candidate: Candidate): NameBudget.Claim<Candidate> => ({
  wire: candidate.wire,
  label: labelOf(candidate),
  rank: candidate.kind === "core" ? NameBudget.coreRank : NameBudget.sourceRank(candidate.shaping),
  value: candidate
})
const isEnabled = (candidate: Candidate) => candidate.disabledBy === undefined && (candidate.config?.enabled ?? true)
/** Enabled and not held by its pins: it claims its wire name. */
const isClaiming = (candidate: Candidate) => candidate.heldBy === undefined && isEnabled(candidate)

const instancePart = (
  instance: string,
  tools: ReadonlyArray<Tool>,
  budget: number,
  configured: ReadonlyMap<string, ToolConfig> | undefined,
  prefix: string,
  readOnly: boolean,
  verdicts: InstanceVerdicts | undefined
): InstancePart => {
  const cached = instanceParts.get(tools)
  if (
    cached !== undefined &&
    cached.instance === instance &&
    cached.budget === budget &&
    cached.prefix === prefix &&
    cached.configured === configured &&
    cached.readOnly === readOnly &&
    cached.verdicts === verdicts
  ) {
    return cached
  }
  const candidates = tools.map((tool): Candidate => {
    const config = configured?.get(tool.name)
    const memo = memoOf(tool, instance, budget, prefix)
    return {
      kind: "source",
      instance,
      original: tool.name,
      shaping: memo.mapped.shaping,
      wire: memo.mapped.wire,
      memo,
      config,
      alwaysLoad: config?.always_load ?? false,
      hint: config?.usage_hint,
      disabledBy: readOnly && !isReadOnly(tool) ? readOnlyRule(instance) : undefined,
      heldBy: verdicts?.held.get(tool.name),
      trust: verdicts?.marks.get(tool.name)
    }
  })
  const part: InstancePart = {
    instance,
    budget,
    prefix,
    configured,
    readOnly,
    verdicts,
    candidates,
    claims: candidates.filter(isClaiming).map(claimOf),
    resolved: undefined
  }
  instanceParts.set(tools, part)
  return part
}

const configIndex = (toolConfig: Readonly<Record<string, ToolConfig>>) => {
  let index = configIndexes.get(toolConfig)
  if (index === undefined) {
    const byInstance = new Map<string, Map<string, ToolConfig>>()
    for (const [key, config] of Object.entries(toolConfig)) {
      const dot = key.indexOf(".")
      if (dot <= 0) continue
      const instance = key.slice(0, dot)
      const tools = byInstance.get(instance) ?? new Map<string, ToolConfig>()
      byInstance.set(instance, tools.set(key.slice(dot + 1), config))
    }
    index = byInstance
    configIndexes.set(toolConfig, index)
  }
  return index
}

/**
 * Pure: the catalog the host sees, from the manifest, the running children's tools and the config. The same as
 * `Pipeline.pipeline` then `canonical` on the listed tools, with each tool canonicalised and serialised once (the
 * hash and the token counts come from that JSON).
 */
export const build = (input: CatalogInput): Catalog => {
  const coreHints = usageHints(input.manifest)
  const coreHot = alwaysLoadSet(input.manifest)
  const coreCandidates = input.manifest.tools.map((core): Candidate => ({
    kind: "core",
    instance: "",
    original: core.spec.name,
    shaping: "as-is",
    wire: core.tool.name,
    memo: memoOf(core.tool, "", input.budget),
    config: undefined,
    alwaysLoad: coreHot.has(core.spec.name),
    hint: coreHints.get(core.spec.name),
    disabledBy: input.coreDisabled?.get(core.spec.name)
  }))
  const configs = configIndex(input.toolConfig)
  const parts = input.sources.map(({ instance, tools }) =>
    instancePart(
      instance,
      tools,
      input.budget,
      configs.get(instance),
      (input.prefixes ?? NameBudget.ownPrefixes).of(instance),
      input.readOnly?.has(instance) ?? false,
      input.trust?.get(instance)
    )
  )

  // Each instance's claims are resolved once per tool list (kept with it); only a wire name claimed by two groups,
  // which the instance prefix makes rare, needs everything resolved together. Either way the per-wire rule is the same.
  const coreClaims = coreCandidates.filter(isEnabled).map(claimOf)
  const groups = [resolve(coreClaims), ...parts.map((part) => (part.resolved ??= resolve(part.claims)))]
  const whole = claimedAcross(groups) ? resolve(coreClaims.concat(...parts.map((part) => part.claims))) : undefined
  const kept = whole?.kept ?? groups.flatMap((group) => group.kept)
  const collisions =
    whole?.collisions ?? groups.flatMap((group) => group.collisions).sort((a, b) => Pipeline.byteOrder(a.wire, b.wire))
  // The pipeline's sort is last and by wire name, which hints and alwaysLoad never change: sorting after shaping
  // gives the same list. Winners have distinct wire names, so the order is total; the groups come sorted, so this
  // only merges runs.
  const listed =
    whole?.listed ??
    groups.flatMap((group) => group.listed).sort((a, b) => Pipeline.byteOrder(a.tool.name, b.tool.name))
  const tools = listed.map((shaped) => shaped.tool)

  const routesOf = (): ReadonlyMap<string, Route> => {
    const routes = new Map<string, Route>()
    for (const { value: candidate } of kept) {
      if (candidate.kind === "source") routes.set(candidate.wire, candidate.memo.route)
    }
    return routes
  }

  const entriesOf = (): ReadonlyArray<CatalogEntry> => {
    const candidates = coreCandidates.concat(...parts.map((part) => part.candidates))
    const winners = new Set(kept.map((claim) => claim.value))
    const keptLabel = new Map(kept.map((claim) => [claim.wire, claim.label]))
    return candidates
      .map((candidate): CatalogEntry => {
        const winner = winners.has(candidate)
        // Memoised: a listed entry's tool is the very object tools/list sends.
        const shaped = shape(candidate)
        const { config } = candidate
        const enabled = isEnabled(candidate)
        const enabledRule =
          candidate.disabledBy ??
          (candidate.kind === "core"
            ? "core"
            : config !== undefined && !config.enabled
              ? `tools.${JSON.stringify(selector(candidate.instance, candidate.original))}.enabled`
              : "default")
        return {
          wire: candidate.wire,
          kind: candidate.kind,
          instance: candidate.instance,
          original: candidate.original,
          shaping: candidate.shaping,
          listed: winner,
          status: winner
            ? "listed"
            : !enabled
              ? "disabled"
              : candidate.heldBy !== undefined
                ? "quarantined"
                : "collision",
          rule:
            winner || !enabled
              ? enabledRule
              : (candidate.heldBy ?? `collision with ${keptLabel.get(candidate.wire) ?? "?"}`),
          trust: candidate.trust,
          alwaysLoad: candidate.alwaysLoad,
          hint: candidate.hint,
          tool: shaped.tool,
          tokens: Pipeline.tokensOfJson(shaped.json)
        }
      })
      .sort(
        (a, b) =>
          Pipeline.byteOrder(a.wire, b.wire) ||
          Pipeline.byteOrder(selector(a.instance, a.original), selector(b.instance, b.original))
      )
  }
  return assemble({
    listed,
    tools,
    collisions,
    mode: input.mode ?? "full",
    entries: entriesOf,
    routes: routesOf
  })
}

interface Parts {
  readonly listed: ReadonlyArray<Shaped>
  readonly tools: ReadonlyArray<Tool>
  readonly collisions: ReadonlyArray<NameBudget.Collision>
  readonly mode: CatalogMode
  readonly entries: () => ReadonlyArray<CatalogEntry>
  readonly routes: () => ReadonlyMap<string, Route>
}

/** The catalog of listed tools already shaped: hash, views, and entries and routes built when first read. */
const assemble = (parts: Parts): Catalog => {
  const { listed, tools, collisions } = parts
  // Built when first read: tools/list needs neither (calls read the routes, `tools list` and search the entries).
  let entries: ReadonlyArray<CatalogEntry> | undefined
  let routes: ReadonlyMap<string, Route> | undefined
  let listJson: string | undefined
  const hash = Pipeline.hashOfDigests(listed.map((shaped) => shaped.digest))
  const views = new Map<CatalogMode, HostView>()
  const viewOf = (mode: CatalogMode): HostView => {
    let view = views.get(mode)
    if (view === undefined) {
      view = mode === "full" ? fullView : searchView(listed)
      views.set(mode, view)
    }
    return view
  }
  const fullView: HostView = {
    tools,
    hash,
    get listJson() {
      return (listJson ??= `{"tools":[${listed.map((shaped) => shaped.json).join(",")}]}`)
    },
    tokens: listed.reduce((sum, shaped) => sum + Pipeline.tokensOfJson(shaped.json), 0)
  }

  const catalog: Catalog = {
    tools,
    hash,
    get listJson() {
      return fullView.listJson
    },
    get host() {
      return viewOf(parts.mode)
    },
    view: viewOf,
    get entries() {
      return (entries ??= parts.entries())
    },
    collisions,
    get routes() {
      return (routes ??= parts.routes())
    },
    // A profile's view (issue 26): the same shaped tools under the same wire names, fewer of them; nothing re-shaped.
    restrict: (admits, mode) => {
      const shown = catalog.entries.filter(admits)
      const listedTools = new Set(shown.filter((entry) => entry.listed).map((entry) => entry.tool))
      const kept = listed.filter((shaped) => listedTools.has(shaped.tool))
      const wires = new Set(shown.map((entry) => entry.wire))
      const listedWires = new Set(kept.map((shaped) => shaped.tool.name))
      return assemble({
        listed: kept,
        tools: kept.map((shaped) => shaped.tool),
        collisions: collisions.filter((collision) => wires.has(collision.wire)),
        mode,
        entries: () => shown,
        routes: () => new Map([...catalog.routes].filter(([wire]) => listedWires.has(wire)))
      })
    }
  }
  return catalog
}

/** The search mode's list: the hot set (alwaysLoad) and CallTool, in wire-name order like every list. */
const searchView = (listed: ReadonlyArray<Shaped>): HostView => {
  // CallTool first, so the dedupe keeps it should a source tool served under its own name (`prefix = ""`) be called so.
  const shown = [CallTool, ...listed.filter((shaped) => shaped.alwaysLoad)]
    .filter((shaped, i, all) => all.findIndex((other) => other.tool.name === shaped.tool.name) === i)
    .sort((a, b) => Pipeline.byteOrder(a.tool.name, b.tool.name))
  return {
    tools: shown.map((shaped) => shaped.tool),
    hash: Pipeline.hashOfDigests(shown.map((shaped) => shaped.digest)),
    listJson: `{"tools":[${shown.map((shaped) => shaped.json).join(",")}]}`,
    tokens: shown.reduce((sum, shaped) => sum + Pipeline.tokensOfJson(shaped.json), 0)
  }
}

const labelOf = (candidate: Candidate) =>
  candidate.kind === "core" ? candidate.original : selector(candidate.instance, candidate.original)
