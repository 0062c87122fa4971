import { Command, Options } from "@effect/cli"
import { Console, Data, Effect, Logger, LogLevel, Schedule } from "effect"
import * as Path from "node:path"
import { packageOf } from "./domain/Health.js"
import { HealthLive, ServeLive, StaticLive } from "./layers/Main.js"
import { Config } from "./services/Config.js"
import { Gateway } from "./services/Gateway.js"
import { Registry } from "./services/Registry.js"
import type { Catalog } from "./services/Registry/Catalog.js"
import { catalogLine, collisionLines, healthTable, renderTable } from "./services/Registry/Text.js"
import * as TypeScriptExport from "./services/Registry/TypeScriptExport.js"
import { Secrets } from "./services/Secrets.js"
import { Sources } from "./services/Sources.js"
import * as Version from "./version.js"

export { healthTable, renderTable } from "./services/Registry/Text.js"

/** Ends the program with this exit code after the command already said why (e.g. health: a source is down). */
export class ExitStatus extends Data.TaggedError("ExitStatus")<{ readonly code: number }> {}

const config = Options.text("config").pipe(
  Options.withAlias("c"),
  Options.optional,
  Options.withDescription(
    "Config file (TOML, or a Claude Desktop / Cursor / VS Code .json). Default: $CLAWTOOL_CONFIG, else $XDG_CONFIG_HOME/clawtool/config.toml, else ~/.config/clawtool/config.toml"
  )
)
const secrets = Options.text("secrets").pipe(
  Options.optional,
  Options.withDescription("Secrets file. Default: secrets.toml beside the config file")
)
const json = Options.boolean("json").pipe(Options.withDescription("Print JSON instead of a table"))

/** "3/7 settled" on a TTY's stderr while sources start; nothing when stderr is a pipe. */
/** "3/7 settled" on a TTY's stderr while sources start, until interrupted; nothing when stderr is not a terminal. */
const showProgress = (sources: Sources): Effect.Effect<never> =>
  process.stderr.isTTY !== true
    ? Effect.never
    : Effect.gen(function* () {
        const rows = yield* sources.health
        const settled = rows.filter((row) => row.status !== "starting").length
        process.stderr.write(`\r${settled}/${rows.length} settled`)
      }).pipe(
        Effect.repeat(Schedule.spaced("100 millis")),
        Effect.zipRight(Effect.never),
        Effect.ensuring(Effect.sync(() => process.stderr.write("\r\x1b[K")))
      )

/** Waits until every source has settled, showing progress on a TTY. */
const settle = (sources: Sources) => Effect.raceFirst(sources.awaitSettled, showProgress(sources))

const health = Command.make("health", { config, secrets, json }, (options) =>
  Effect.gen(function* () {
    const sources = yield* Sources
    yield* settle(sources)
    const rows = yield* sources.health
    const catalog = yield* (yield* Registry).catalog
    if (options.json) {
      const keys = [
        "name",
        "status",
        "reason",
        "toolCount",
        "package",
        "pid",
        "startupMs",
        "stderrTail",
        "restarts",
        "lastExit",
        "nextRetryAt",
        "uptimeMs",
        "stdoutGarbage"
      ] as const
      const out = rows.map((row) => Object.fromEntries(keys.map((key) => [key, row[key]])))
      yield* Console.log(JSON.stringify(out, null, 2))
      // stdout stays the array it always was; the catalog summary goes beside it, on stderr.
      yield* Console.error(
        [...collisionLines(catalog.collisions), catalogLine(catalog.hash, catalog.tools.length)].join("\n")
      )
    } else {
      yield* Console.log(
        [
          healthTable(rows),
          "",
          ...collisionLines(catalog.collisions),
          catalogLine(catalog.hash, catalog.tools.length)
        ].join("\n")
      )
    }
    if (rows.some((row) => row.status !== "running")) return yield* new ExitStatus({ code: 1 })
  }).pipe(
    Effect.provide(HealthLive(options)),
    // The table carries every failure; per-source warnings on stderr would only repeat it.
    Logger.withMinimumLogLevel(LogLevel.Error)
  )
).pipe(
  Command.withDescription(
    "Start every configured source (as serve does), wait until each has settled, print their health. Exit 0 when all run, 1 when any does not, 2 on usage or config errors."
  )
)

const serve = Command.make("serve", { config, secrets }, (options) =>
  Effect.flatMap(Gateway, (gateway) => gateway.serve).pipe(Effect.provide(ServeLive(options)))
).pipe(
  Command.withDescription(
    "Serve every configured source as one MCP server over stdio (what an MCP host runs). Exits when stdin closes."
  )
)

const sourceList = Command.make("list", { config, secrets, json }, (options) =>
  Effect.gen(function* () {
    const { config: loaded } = yield* Config
    const store = yield* Secrets
    const rows = store.readiness().map((row) => ({
      instance: row.instance,
      enabled: row.enabled,
      package: packageOf(loaded.sources[row.instance]!.command),
      secrets: row.missing.length === 0 ? "ready" : "missing",
      missing: row.missing
    }))
    if (options.json) return yield* Console.log(JSON.stringify(rows, null, 2))
    if (rows.length === 0) return yield* Console.log("(no sources configured)")
    yield* Console.log(
      renderTable(
        ["INSTANCE", "ENABLED", "PACKAGE", "SECRETS"],
        rows.map((row) => [
          row.instance,
          row.enabled ? "yes" : "no",
          row.package,
          row.missing.length === 0 ? "✓ ready" : `✗ missing: ${row.missing.join(", ")}`
        ])
      )
    )
  }).pipe(Effect.provide(StaticLive(options)))
).pipe(Command.withDescription("List configured sources and whether their secrets resolve, without starting anything."))

const source = Command.make("source").pipe(
  Command.withDescription("Inspect configured sources."),
  Command.withSubcommands([sourceList])
)

// === tools =========================================================================================================

/** Sources that are not running have no tools in the catalog: say so on stderr, so a short list is not a surprise. */
const warnNotRunning = (sources: Sources, what: string) =>
  Effect.gen(function* () {
    for (const row of yield* sources.health) {
      if (row.status !== "running") {
        yield* Console.error(
          `warning: source ${row.name} is ${row.status}${row.reason === "" ? "" : ` (${row.reason})`}; ${what}`
        )
      }
    }
  })

/** One row per tool, listed or not, as `tools list --json` prints it. */
export const toolRows = (catalog: Catalog) =>
  catalog.entries.map((entry) => ({
    wire: entry.wire,
    kind: entry.kind,
    instance: entry.kind === "core" ? null : entry.instance,
    original: entry.original,
    shaping: entry.shaping,
    enabled: entry.listed,
    rule: entry.rule,
    alwaysLoad: entry.alwaysLoad,
    hint: entry.hint ?? null,
    tokens: entry.tokens
  }))

export const toolTotals = (catalog: Catalog) => {
  const listed = catalog.entries.filter((entry) => entry.listed)
  return {
    tools: catalog.entries.length,
    listed: listed.length,
    disabled: catalog.entries.filter((entry) => entry.status === "disabled").length,
    collided: catalog.entries.filter((entry) => entry.status === "collision").length,
    tokens: listed.reduce((sum, entry) => sum + entry.tokens, 0)
  }
}

export const toolsTable = (catalog: Catalog): string => {
  const totals = toolTotals(catalog)
  const table = renderTable(
    ["NAME", "ORIGIN", "ENABLED", "ALWAYS-LOAD", "HINT", "~TOKENS"],
    catalog.entries.map((entry) => [
      entry.wire,
      entry.kind === "core" ? "core" : `${entry.instance}.${entry.original}`,
      `${entry.listed ? "yes" : "no"} (${entry.rule})`,
      entry.alwaysLoad ? "yes" : "-",
      entry.hint === undefined ? "-" : "yes",
      String(entry.tokens)
    ])
  )
  return [
    table,
    "",
    `${totals.tools} tools: ${totals.listed} listed, ${totals.disabled} disabled, ${totals.collided} lost a name collision; ~${totals.tokens} schema tokens listed`,
    ...collisionLines(catalog.collisions),
    catalogLine(catalog.hash, totals.listed)
  ].join("\n")
}

const toolsList = Command.make("list", { config, secrets, json }, (options) =>
  Effect.gen(function* () {
    const sources = yield* Sources
    yield* settle(sources)
    const catalog = yield* (yield* Registry).catalog
    yield* warnNotRunning(sources, "its tools are not listed")
    if (options.json) {
      return yield* Console.log(
        JSON.stringify(
          {
            catalogHash: catalog.hash,
            tools: toolRows(catalog),
            collisions: catalog.collisions,
            totals: toolTotals(catalog)
          },
          null,
          2
        )
      )
    }
    yield* Console.log(toolsTable(catalog))
  }).pipe(Effect.provide(HealthLive(options)), Logger.withMinimumLogLevel(LogLevel.Error))
).pipe(
  Command.withDescription(
    "Start every source, then list every tool: wire name, origin (instance.original name), enabled and by which rule, alwaysLoad, hint, estimated schema tokens; totals and the catalog hash at the end."
  )
)

const output = Options.text("output").pipe(
  Options.withAlias("o"),
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
  }).pipe(Effect.provide(HealthLive(options)), Logger.withMinimumLogLevel(LogLevel.Error))
).pipe(
  Command.withDescription(
    "Start every source, then write TypeScript stubs for code-mode hosts: <Name>.ts per core tool, <instance>/<tool>.ts per source tool, index.ts barrels; types from the tools' JSON Schemas. Removes stubs it generated for tools that are gone. Exit 0 ok, 1 on failure (or drift with --check), 2 on usage errors."
  )
)

const tools = Command.make("tools").pipe(
  Command.withDescription("Inspect and export the tool catalog clawtool serves."),
  Command.withSubcommands([toolsList, exportTypeScript])
)

const root = Command.make("clawtool").pipe(
  Command.withDescription("One MCP server for all your MCP servers: spawns, supervises and serves configured sources."),
  Command.withSubcommands([serve, health, source, tools])
)

export const run = Command.run(root, { name: "clawtool", version: Version.version })
