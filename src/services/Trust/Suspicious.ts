import type { Tool } from "../../domain/Mcp.js"

/*
 * The rule set that flags a suspicious tool description (issue 25, "Clean descriptions"): one documented, tested
 * rule per kind of poisoning. The rules themselves land with the clean-descriptions work; until then nothing is
 * flagged, and the pins code that reads this (on_suspicious) already calls it.
 */

/** One rule's finding: which rule and what it saw (quoted short, never the whole description). */
export interface Suspicion {
  readonly rule: string
  readonly detail: string
}

/** What every rule sees besides the tool: the names of other sources' tools (the shadowing rule reads them). */
export interface SuspicionContext {
  readonly instance: string
  readonly otherTools: ReadonlySet<string>
}

/** The findings for one tool's definition as the source sent it (before cleaning): empty when nothing is flagged. */
export const suspicions = (_tool: Tool, _context: SuspicionContext): ReadonlyArray<Suspicion> => []
