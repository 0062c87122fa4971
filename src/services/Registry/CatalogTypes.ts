import type { Tool } from "../../domain/Mcp.js"
import type * as NameBudget from "./NameBudget.js"

/** What ToolSearch finds: defined with the read-only view core tools search through (domain/ToolProvider.ts). */
export type { SearchHit } from "../../domain/ToolProvider.js"

/**
 * The catalog as its readers see it: what Catalog.build makes (listed tools, entries, routes, the host's view) and
 * what ToolSearch finds in it. Types only, importing no builder: the core tools read the live catalog through the
 * narrower CatalogView (domain/ToolProvider.ts), so they and the Registry need no import of each other.
 */

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
  /**
   * `listed`, or why not: switched off in the config, another tool kept the wire name, or held back by its pins until
   * approved (issue 25).
   */
  readonly status: "listed" | "disabled" | "collision" | "quarantined"
  /** Why it is listed or not: `core`, `default`, `tools."gh.x".enabled`, `collision with …`, what changed. */
  readonly rule: string
  /** A source tool's pins verdict (`tools list`'s TRUST column): pinned, changed, new or suspicious. */
  readonly trust?: string | undefined
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
  /** `{"tools":[…]}` exactly as tools/list answers, serialised once per catalog from the per-tool JSON. */
  readonly listJson: string
  /** Every tool, listed or not, sorted by wire name. */
  readonly entries: ReadonlyArray<CatalogEntry>
  readonly collisions: ReadonlyArray<NameBudget.Collision>
  /** Listed source tools: wire name → instance and original tool (the reverse map routing uses). */
  readonly routes: ReadonlyMap<string, Route>
  /** What tools/list answers in the configured mode (in `full` mode: `tools`, `hash` and `listJson` themselves). */
  readonly host: HostView
  /** The answer of either mode (`tools list` shows both). */
  readonly view: (mode: CatalogMode) => HostView
  /**
   * A profile's view (issue 26): the entries `admits` keeps, listed as they are here (same wire names, same shaped
   * objects), its tools/list in `mode`.
   */
  readonly restrict: (admits: (entry: CatalogEntry) => boolean, mode: CatalogMode) => Catalog
}

/**
 * What tools/list shows the host: `full`, every listed tool; `search`, the alwaysLoad tools and CallTool, the rest found
 * through ToolSearch and called through CallTool (ADR 025). Routing and search see every listed tool either way.
 */
export type CatalogMode = "full" | "search"

/** The tools/list answer of one mode. */
export interface HostView {
  readonly tools: ReadonlyArray<Tool>
  /** sha256 (hex) of `tools`, as the catalog hash (the Gateway's list_changed key). */
  readonly hash: string
  readonly listJson: string
  /** ~Tokens of the tool definitions the host receives. */
  readonly tokens: number
}
