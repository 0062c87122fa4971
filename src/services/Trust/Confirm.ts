import type { JsonObject, Tool } from "../../domain/Mcp.js"

/*
 * `[trust] confirm` (issue 25, docs/decisions/029): which calls need the user's yes, the question put to the host
 * (`elicitation/create`, form mode) and how its answer is read. Pure; the Gateway asks (Gateway/Handlers.ts).
 */

/** What a selector is matched against: a core tool by name, or a source's tool (its own name) with its definition. */
export type Target =
  | { readonly kind: "core"; readonly name: string }
  | { readonly kind: "source"; readonly instance: string; readonly tool: Tool }

/** The `[trust] confirm` selectors, indexed once: `matching` is a few Set lookups per call. */
export interface Matcher {
  /** The first selector that matches `target`, or undefined: the call runs unasked. */
  readonly matching: (target: Target) => string | undefined
  /** No selector at all (the default): no call is ever asked about. */
  readonly empty: boolean
}

/** Only an explicit `destructiveHint: true` counts: MCP's default for an absent hint (true) would match every tool. */
export const isDestructive = (tool: Tool): boolean => {
  const annotations = tool.annotations
  return typeof annotations === "object" && annotations !== null && (annotations as JsonObject).destructiveHint === true
}

/** A `read_only` source serves only tools annotated `readOnlyHint: true` (absent or false: not read-only). */
export const isReadOnly = (tool: Tool): boolean => {
  const annotations = tool.annotations
  return typeof annotations === "object" && annotations !== null && (annotations as JsonObject).readOnlyHint === true
}

export const matcher = (selectors: ReadonlyArray<string>): Matcher => {
  const destructive = selectors.includes("destructive")
  const exact = new Set<string>()
  const wholeInstances = new Set<string>()
  const core = new Set<string>()
  for (const selector of selectors) {
    if (selector === "destructive") continue
    const dot = selector.indexOf(".")
    if (dot < 0) core.add(selector)
    else if (selector.slice(dot + 1) === "*") wholeInstances.add(selector.slice(0, dot))
    else exact.add(selector)
  }
  return {
    empty: selectors.length === 0,
    matching: (target) => {
      if (target.kind === "core") return core.has(target.name) ? target.name : undefined
      const { instance, tool } = target
      const named = `${instance}.${tool.name}`
      if (exact.has(named)) return named
      if (wholeInstances.has(instance)) return `${instance}.*`
      return destructive && isDestructive(tool) ? "destructive" : undefined
    }
  }
}

/** The instances named by `selectors` that are not configured sources (warned about at start, as `[tools]` keys are). */
export const unknownInstances = (
  selectors: ReadonlyArray<string>,
  sources: Readonly<Record<string, unknown>>
): ReadonlyArray<{ readonly selector: string; readonly instance: string }> =>
  selectors.flatMap((selector) => {
    const dot = selector.indexOf(".")
    const instance = selector.slice(0, dot)
    return dot > 0 && sources[instance] === undefined ? [{ selector, instance }] : []
  })

/** The longest argument preview the question shows. */
export const previewLimit = 1_000

/**
 * The arguments as the user sees them: JSON, secrets replaced by `redact`, runs of spaces named rather than shown
 * (a payload pushed out of sight behind whitespace, reference/trust.md 1.3), cut to `previewLimit` characters.
 */
export const preview = (args: JsonObject | undefined, redact: (text: string) => string = (text) => text): string => {
  const text = redact(JSON.stringify(args ?? {})).replace(/ {4,}/g, (run) => ` [${run.length} spaces] `)
  return text.length <= previewLimit
    ? text
    : `${text.slice(0, previewLimit)}… (cut: ${text.length.toLocaleString("en-US")} characters in all)`
}

/** Where the tool comes from, as the question and the refusals name it. */
export const describeTarget = (wire: string, target: Target): string =>
  target.kind === "core"
    ? `${wire} (a clawtool core tool)`
    : `${wire} (tool "${target.tool.name}" of source "${target.instance}")`

/** The `elicitation/create` params: a message naming the tool and its source with the arguments, and one yes/no field. */
export const question = (wire: string, target: Target, argumentsPreview: string): JsonObject => ({
  message: `clawtool asks before running ${describeTarget(wire, target)}, as [trust] confirm says.\nArguments: ${argumentsPreview}`,
  requestedSchema: {
    type: "object",
    properties: {
      confirm: {
        type: "boolean",
        title: `Run ${wire}?`,
        description: "Yes runs this call once; no (or no answer) refuses it.",
        default: false
      }
    },
    required: ["confirm"]
  }
})

/** The user's answer: only `accept` with `confirm: true` runs the call. */
export type Answer = "yes" | "declined" | "dismissed"

export const answerOf = (result: JsonObject): Answer => {
  if (result.action === "accept") {
    const content = result.content
    return typeof content === "object" && content !== null && (content as JsonObject).confirm === true
      ? "yes"
      : "declined"
  }
  return result.action === "decline" ? "declined" : "dismissed"
}

/** Whether the host can be asked: it declared elicitation with form mode (`{}` is form only, as before modes existed). */
export const canAsk = (capabilities: JsonObject | undefined): boolean => {
  const elicitation = capabilities?.elicitation
  if (typeof elicitation !== "object" || elicitation === null) return false
  const modes = elicitation as JsonObject
  return Object.keys(modes).length === 0 || modes.form !== undefined
}
