import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import * as Path from "node:path"
import { type HealthRow, isDown } from "../../domain/Health.js"
import { Config } from "../../services/Config.js"
import { Registry } from "../../services/Registry.js"
import type { Catalog } from "../../services/Registry/CatalogTypes.js"
import { catalogLine, collisionLines, renderTable } from "../../text.js"
import { defaultSearchLimit, maxSearchLimit } from "../../services/CoreTools/Discovery.js"
import { Sources } from "../../services/Sources.js"
import * as Clean from "../../services/Trust/Clean.js"
import { EditError } from "../ConfigEdit.js"
import * as Manage from "../Manage.js"
import { knownTools, selectorProblem, warnSelectorsMatchingNothing } from "../Selectors.js"
import {
  config,
  configForEdit,
  editConfig,
  ExitStatus,
  checkProfile,
  json,
  profile,
  reportEdit,
  secrets,
  settle,
  withStartedSources
} from "../Shared.js"

/**
 * Sources that are not running have no tools in the catalog: say so on stderr, so a short list is not a surprise. An
 * idle lazy source's (cached) tools are listed.
 */
const warnNotRunning = (sources: Sources, what: string) =>
  Effect.gen(function* () {
    for (const row of yield* sources.health) {
      if (isDown(row)) {
        yield* Console.error(
          `warning: source ${row.name} is ${row.status}${row.reason === "" ? "" : ` (${row.reason})`}; ${what}`
        )
      }
    }
  })

/** One row per tool, listed or not, as `tools list --json` prints it. */
const toolRows = (catalog: Catalog) =>
  catalog.entries.map((entry) => ({
    wire: entry.wire,
    kind: entry.kind,
    instance: entry.kind === "core" ? null : entry.instance,
    // The child's own name as a person can read it (the wire name is ASCII already; ADR 029).
    original: Clean.text(entry.original),
    shaping: entry.shaping,
    enabled: entry.listed,
    rule: entry.rule,
    /** Pins (issue 25): pinned, changed, new, suspicious; null for core tools. */
    trust: entry.trust ?? null,
    alwaysLoad: entry.alwaysLoad,
    hint: entry.hint ?? null,
    tokens: entry.tokens
  }))

const toolTotals = (catalog: Catalog) => {
  const listed = catalog.entries.filter((entry) => entry.listed)
  return {
    tools: catalog.entries.length,
    listed: listed.length,
    disabled: catalog.entries.filter((entry) => entry.status === "disabled").length,
    collided: catalog.entries.filter((entry) => entry.status === "collision").length,
    quarantined: catalog.entries.filter((entry) => entry.status === "quarantined").length,
    tokens: listed.reduce((sum, entry) => sum + entry.tokens, 0),
    /** What the host's tools/list costs in each `catalog` mode: tools shown and ~tokens of their definitions. */
    host: {
      full: { tools: catalog.view("full").tools.length, tokens: catalog.view("full").tokens },
      search: { tools: catalog.view("search").tools.length, tokens: catalog.view("search").tokens }
    }
  }
}

/** Each running source's MCP era (ADR 033), by instance. */
const erasOf = (rows: ReadonlyArray<HealthRow>): Record<string, "legacy" | "modern"> =>
  Object.fromEntries(rows.flatMap((row) => (row.kind === "source" && row.era !== null ? [[row.name, row.era]] : [])))

const toolsTable = (catalog: Catalog, eras: Record<string, "legacy" | "modern">): string => {
  const totals = toolTotals(catalog)
  const table = renderTable(
    ["NAME", "ORIGIN", "TRUST", "ENABLED", "ALWAYS-LOAD", "HINT", "~TOKENS"],
    catalog.entries.map((entry) => [
      entry.wire,
      entry.kind === "core" ? "core" : `${entry.instance}.${Clean.text(entry.original)}`,
      entry.trust ?? "-",
      `${entry.listed ? "yes" : "no"} (${entry.rule})`,
      entry.alwaysLoad ? "yes" : "-",
      entry.hint === undefined ? "-" : "yes",
      String(entry.tokens)
    ])
  )
  return [
    table,
    "",
    `${totals.tools} tools: ${totals.listed} listed, ${totals.disabled} disabled, ${totals.collided} lost a name collision, ${totals.quarantined} quarantined; ~${totals.tokens} schema tokens listed`,
    `the host's tools/list: catalog = "full" ${totals.host.full.tools} tools, ~${totals.host.full.tokens} tokens; catalog = "search" ${totals.host.search.tools} tools, ~${totals.host.search.tokens} tokens (the rest through ToolSearch + CallTool)`,
    ...(Object.keys(eras).length === 0
      ? []
      : [
          `sources' MCP eras: ${Object.entries(eras)
            .map(([name, era]) => `${name} ${era}`)
            .join(", ")}`
        ]),
    ...collisionLines(catalog.collisions),
    catalogLine(catalog.hash, totals.listed)
  ].join("\n")
}

const toolsList = Command.make("list", { config, secrets, json, profile }, (options) =>
  Effect.gen(function* () {
    const chosen = yield* checkProfile(options.profile, (yield* Config).config)
    const sources = yield* Sources
    yield* settle(sources)
    // A profile's view (issue 26): its tools under the whole catalog's wire names, its host list in its catalog mode.
    const catalog = yield* (yield* Registry).viewOf(chosen).catalog
    yield* warnNotRunning(sources, "its tools are not listed")
    yield* warnSelectorsMatchingNothing((yield* Config).config, sources, catalog)
    if (options.json) {
      return yield* Console.log(
        JSON.stringify(
          {
            catalogHash: catalog.hash,
            tools: toolRows(catalog),
            collisions: catalog.collisions,
            totals: toolTotals(catalog),
            eras: erasOf(yield* sources.health)
          },
          null,
          2
        )
      )
    }
    yield* Console.log(toolsTable(catalog, erasOf(yield* sources.health)))
  }).pipe(withStartedSources(options))
).pipe(
  Command.withDescription(
    "Start every source, then list every tool: wire name, origin (instance.original name), enabled and by which rule, alwaysLoad, hint, estimated schema tokens; totals, each running source's MCP era and the catalog hash at the end. With --profile NAME, only what that profile sees."
  )
)

const query = Args.text({ name: "query" }).pipe(
  Args.withDescription('Keywords for the task, as an agent gives ToolSearch ("read file", "create issue")')
)
const limit = Options.integer("limit").pipe(
  Options.withPseudoName("N"),
  Options.withDefault(defaultSearchLimit),
  Options.withDescription(`How many tools to show, the best first (1-${maxSearchLimit}; default ${defaultSearchLimit})`)
)

/** A description's first line, cut to `width` characters: the table stays one line per tool. */
const firstLine = (text: string | undefined, width: number) => {
  const line = (text ?? "").split("\n")[0]!.trim()
  return line.length <= width ? line : `${line.slice(0, width - 1)}…`
}

const toolsSearch = Command.make("search", { config, secrets, json, query, limit }, (options) =>
  Effect.gen(function* () {
    if (options.query.trim() === "") return yield* new EditError({ detail: "the query is empty: give a few keywords" })
    if (options.limit < 1 || options.limit > maxSearchLimit) {
      return yield* new EditError({ detail: `--limit is 1 to ${maxSearchLimit}, got ${options.limit}` })
    }
    const sources = yield* Sources
    yield* settle(sources)
    const registry = yield* Registry
    yield* warnNotRunning(sources, "its tools are not searched")
    const { hash, hits } = yield* registry.search(options.query, options.limit)
    if (options.json) {
      return yield* Console.log(
        JSON.stringify(
          {
            query: options.query,
            results: hits.map((hit) => ({
              name: hit.name,
              score: hit.score,
              ...(hit.description === undefined ? {} : { description: hit.description }),
              inputSchema: hit.inputSchema
            })),
            catalogHash: hash
          },
          null,
          2
        )
      )
    }
    if (hits.length === 0) return yield* Console.log(`no tool matches ${JSON.stringify(options.query)}`)
    yield* Console.log(
      renderTable(
        ["SCORE", "NAME", "DESCRIPTION"],
        hits.map((hit) => [hit.score.toFixed(2), hit.name, firstLine(hit.description, 72)])
      )
    )
  }).pipe(withStartedSources(options), reportEdit)
).pipe(
  Command.withDescription(
    "Start every source, then search the listed tools as the ToolSearch tool does (BM25 over names, descriptions and parameters): the best matches with their scores, wire names and descriptions; --json adds each input schema and the catalog hash."
  )
)

const output = Options.text("output").pipe(
  Options.withAlias("o"),
  Options.withPseudoName("DIR"),
  Options.withDescription("Directory to write the stubs to (created when missing)")
)
const check = Options.boolean("check").pipe(
  Options.withDescription(
    "Write nothing; exit 1 when the directory differs from what would be generated (CI drift check)"
  )
)

const exportTypeScript = Command.make("export-typescript", { config, secrets, output, check }, (options) =>
  Effect.gen(function* () {
    const sources = yield* Sources
    yield* settle(sources)
    const catalog = yield* (yield* Registry).catalog
    yield* warnNotRunning(sources, "its tools are not exported")
    // Loaded by this command only (with its own lazily loaded json-schema-to-typescript).
    const TypeScriptExport = yield* Effect.promise(() => import("../TypeScriptExport.js"))
    const files = yield* TypeScriptExport.generate(catalog)
    const dir = Path.resolve(options.output)
    if (options.check) {
      const drift = yield* TypeScriptExport.check(dir, files)
      if (drift.length === 0) {
        return yield* Console.log(`up to date: ${files.length} files in ${dir} (catalog sha256:${catalog.hash})`)
      }
      yield* Console.log(drift.map((item) => `${item.kind.padEnd(7)} ${item.path}`).join("\n"))
      yield* Console.log(
        `${drift.length} of the files in ${dir} differ from the catalog; run without --check to refresh`
      )
      return yield* new ExitStatus({ code: 1 })
    }
    const report = yield* TypeScriptExport.write(dir, files)
    const lines = [
      ...report.written.map((path) => `wrote   ${path}`),
      ...report.removed.map((path) => `removed ${path}`),
      `${files.length} files in ${dir}: ${report.written.length} written, ${report.unchanged.length} unchanged, ${report.removed.length} removed (catalog sha256:${catalog.hash})`
    ]
    yield* Console.log(lines.join("\n"))
  }).pipe(withStartedSources(options))
).pipe(
  Command.withDescription(
    "Start every source, then write TypeScript stubs for code-mode hosts: <Name>.ts per core tool, <instance>/<tool>.ts per source tool, index.ts barrels; types from the tools' JSON Schemas. Removes stubs it generated for tools that are gone. Exit 0 ok, 1 on failure (or drift with --check), 2 on usage errors."
  )
)

const selectorArg = Args.text({ name: "instance.tool" }).pipe(
  Args.withDescription("The tool as <instance>.<tool>, the name the source itself gives it (see: clawtool tools list)")
)

const toolsToggle = (enabled: boolean) =>
  Command.make(enabled ? "enable" : "disable", { config: configForEdit, secrets, selector: selectorArg }, (options) =>
    Effect.gen(function* () {
      const sources = yield* Sources
      yield* settle(sources)
      const catalog = yield* (yield* Registry).catalog
      const { config: loaded } = yield* Config
      const tools = yield* knownTools(sources, catalog)
      const problem = selectorProblem(options.selector, Object.keys(loaded.sources), tools)
      if (Option.isSome(problem)) return yield* new EditError({ detail: problem.value })
      const instance = options.selector.slice(0, options.selector.indexOf("."))
      if (!tools.has(instance)) {
        yield* Console.error(`warning: source ${instance} is not running; the tool name could not be checked`)
      }
      const file = yield* editConfig(options, false, (text, current) =>
        Manage.setToolEnabled(text, Object.keys(current.tools), options.selector, enabled)
      )
      yield* Console.log(`${enabled ? "enabled" : "disabled"} ${options.selector} in ${file}`)
    }).pipe(withStartedSources(options), reportEdit)
  ).pipe(
    Command.withDescription(
      enabled
        ? 'Enable a tool again: sets enabled = true in its [tools."<instance>.<tool>"] table. Starts the sources to check the name.'
        : 'Disable a tool (neither listed nor callable): sets enabled = false in its [tools."<instance>.<tool>"] table, adding the table when missing. Starts the sources to check the name.'
    )
  )

export const tools = Command.make("tools").pipe(
  Command.withDescription("Inspect, search, enable, disable and export the tool catalog clawtool serves."),
  Command.withSubcommands([toolsList, toolsSearch, toolsToggle(true), toolsToggle(false), exportTypeScript])
)
