import { Console, Effect, Option } from "effect"
import type { ClawtoolConfig } from "../domain/Config.js"
import { type Choices, choices, didYouMean, suggest } from "../domain/Suggest.js"
import type { Catalog } from "../services/Registry/CatalogTypes.js"
import type { Sources } from "../services/Sources.js"
import { configuredSources } from "./Shared.js"

/** Tools each running instance serves (listed or not), by instance; instances that are not running are absent. */
export const knownTools = (sources: Sources, catalog: Catalog) =>
  Effect.map(sources.health, (rows) => {
    const running = new Set(rows.filter((row) => row.status === "running").map((row) => row.name))
    const byInstance = new Map<string, Set<string>>([...running].map((name) => [name, new Set<string>()]))
    for (const entry of catalog.entries) {
      if (entry.kind !== "core") byInstance.get(entry.instance)?.add(entry.original)
    }
    return byInstance
  })

/** Why `selector` names nothing known (None when it does, or when its instance is not running to tell). */
export const selectorProblem = (
  selector: string,
  instances: ReadonlyArray<string>,
  tools: ReadonlyMap<string, ReadonlySet<string>>
): Option.Option<string> => {
  const dot = selector.indexOf(".")
  const instance = dot === -1 ? selector : selector.slice(0, dot)
  const tool = dot === -1 ? "" : selector.slice(dot + 1)
  const everyTool = [...tools].flatMap(([name, names]) => [...names].map((original) => `${name}.${original}`))
  if (dot === -1 || tool === "") {
    return Option.some(`${JSON.stringify(selector)} is not <instance>.<tool>${didYouMean(selector, everyTool)}`)
  }
  if (!instances.includes(instance)) {
    return Option.some(
      `no source named ${JSON.stringify(instance)}${didYouMean(selector, everyTool) || suggest(instance, instances, configuredSources)}`
    )
  }
  const served = tools.get(instance)
  if (served === undefined || served.has(tool)) return Option.none()
  const own: Choices = { label: `${instance} has`, none: `${instance} has no tools` }
  return Option.some(
    `source ${instance} has no tool ${JSON.stringify(tool)}${didYouMean(selector, everyTool) || choices(served, own)}`
  )
}

/**
 * `[tools."…"]` tables naming no configured instance, or a tool a running instance does not serve, with close names.
 * Not the Registry's `warnUnknownSelectors`: that one logs at serve's start and reload, knows only the configured
 * instances (no catalog yet), and its log lines are what serve prints; this one checks tool names against the settled
 * catalog and prints on stderr for health and tools list.
 */
export const warnSelectorsMatchingNothing = (config: ClawtoolConfig, sources: Sources, catalog: Catalog) =>
  Effect.gen(function* () {
    const tools = yield* knownTools(sources, catalog)
    for (const selector of Object.keys(config.tools).sort()) {
      const problem = selectorProblem(selector, Object.keys(config.sources), tools)
      if (Option.isSome(problem)) {
        yield* Console.error(`warning: [tools.${JSON.stringify(selector)}] matches nothing: ${problem.value}`)
      }
    }
  })
