import { Command, Options } from "@effect/cli"
import { Console, Data, Effect, Logger, LogLevel, Schedule } from "effect"
import type { HealthRow } from "./domain/Health.js"
import { packageOf } from "./domain/Health.js"
import { HealthLive, ServeLive, StaticLive } from "./layers/Main.js"
import { Config } from "./services/Config.js"
import { Gateway } from "./services/Gateway.js"
import { Secrets } from "./services/Secrets.js"
import { Sources } from "./services/Sources.js"
import * as Version from "./version.js"

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

/** Columns padded to the widest cell; the last column is not padded. */
export const renderTable = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((row) => (row[i] ?? "").length)))
  const line = (row: ReadonlyArray<string>) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd()
  return [line(header), ...rows.map(line)].join("\n")
}

const oneLine = (text: string, max = 80) => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

export const healthTable = (rows: ReadonlyArray<HealthRow>): string =>
  rows.length === 0
    ? "(no sources configured: add [sources.<name>] to the config, see README)"
    : renderTable(
        ["NAME", "STATUS", "TOOLS", "STARTUP", "PACKAGE", "REASON"],
        rows.map((row) => [
          row.name,
          row.status,
          String(row.toolCount),
          row.startupMs === null ? "-" : `${row.startupMs}ms`,
          row.package,
          oneLine(row.reason)
        ])
      )

/** "3/7 settled" on a TTY's stderr while sources start; nothing when stderr is a pipe. */
const showProgress = (sources: Sources) =>
  Effect.gen(function* () {
    if (process.stderr.isTTY !== true) return
    yield* Effect.gen(function* () {
      const rows = yield* sources.health
      const settled = rows.filter((row) => row.status !== "starting").length
      process.stderr.write(`\r${settled}/${rows.length} settled`)
    }).pipe(Effect.repeat(Schedule.spaced("100 millis")))
  }).pipe(Effect.ensuring(Effect.sync(() => process.stderr.isTTY === true && process.stderr.write("\r\x1b[K"))))

const health = Command.make("health", { config, secrets, json }, (options) =>
  Effect.gen(function* () {
    const sources = yield* Sources
    yield* sources.awaitSettled.pipe(Effect.raceFirst(Effect.never.pipe(Effect.zipLeft(showProgress(sources)))))
    const rows = yield* sources.health
    if (options.json) {
      const keys = ["name", "status", "reason", "toolCount", "package", "pid", "startupMs", "stderrTail"] as const
      const out = rows.map((row) => Object.fromEntries(keys.map((key) => [key, row[key]])))
      yield* Console.log(JSON.stringify(out, null, 2))
    } else {
      yield* Console.log(healthTable(rows))
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

const root = Command.make("clawtool").pipe(
  Command.withDescription("One MCP server for all your MCP servers: spawns, supervises and serves configured sources."),
  Command.withSubcommands([serve, health, source])
)

export const run = Command.run(root, { name: "clawtool", version: Version.version })
