/**
 * `clawtool doctor`: every check of a working setup, each explained, and a fix for each that is not fine. Loaded on
 * first use (it reads the hosts' files with init's parsers). No network beyond the configured sources and daemon.
 */
import { Clock, Console, Effect, Either, Layer, Logger, LogLevel, Option } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import type { ClawtoolConfig } from "../domain/Config.js"
import { isDown } from "../domain/Health.js"
import { HealthLive, type Location } from "../layers/Main.js"
import * as Paths from "../paths.js"
import { Config, ConfigLocation, ProcessEnv, readText, resolveConfigPaths } from "../services/Config.js"
import { rgPath } from "../services/CoreTools/Ripgrep.js"
import { OAuth } from "../services/OAuth.js"
import { Registry } from "../services/Registry.js"
import { Secrets } from "../services/Secrets.js"
import { Sources } from "../services/Sources.js"
import { renderTable } from "../text.js"
import { hostFiles, hostNames } from "./Init/Hosts.js"
import { shortPath } from "./Init/Plan.js"
import { readHostFile } from "./Init/Read.js"
import { settle } from "./Shared.js"

/** fail: something does not work (exit 1); warn: works, but worth knowing (exit 0). */
export type Verdict = "ok" | "warn" | "fail"

export interface Check {
  /** What was checked: `config`, `source notes`, `host Cursor`, … */
  readonly check: string
  readonly status: Verdict
  readonly detail: string
  /** What to do about it (every check that is not ok has one). */
  readonly fix?: string | undefined
  /** How long it took, when that tells something (a source's start). */
  readonly ms?: number | undefined
}

const ok = (check: string, detail: string, ms?: number): Check => ({ check, status: "ok", detail, ms })
const warn = (check: string, detail: string, fix: string): Check => ({ check, status: "warn", detail, fix })
const fail = (check: string, detail: string, fix: string, ms?: number): Check => ({
  check,
  status: "fail",
  detail,
  fix,
  ms
})

/** The report as a table (one row per check, its fix on the line below), and the summary line. */
export const renderReport = (checks: ReadonlyArray<Check>): string => {
  const rows = checks.map((check) => [
    check.status === "ok" ? "ok" : check.status.toUpperCase(),
    check.check,
    `${check.detail}${check.ms === undefined ? "" : ` (${Math.round(check.ms)} ms)`}`
  ])
  const table = renderTable(["STATUS", "CHECK", "DETAIL"], rows).split("\n")
  const width = Math.max(...rows.map((row) => row[0]!.length), "STATUS".length) + 2
  const lines = [table[0]!]
  checks.forEach((check, i) => {
    lines.push(table[i + 1]!)
    if (check.fix !== undefined) lines.push(`${" ".repeat(width)}fix: ${check.fix}`)
  })
  const failed = checks.filter((check) => check.status === "fail").length
  const warned = checks.filter((check) => check.status === "warn").length
  lines.push(
    "",
    failed === 0
      ? `all ${checks.length} checks passed${warned === 0 ? "" : ` (${warned} warning${warned === 1 ? "" : "s"})`}`
      : `${failed} of ${checks.length} checks failed${warned === 0 ? "" : `, ${warned} warning${warned === 1 ? "" : "s"}`}`
  )
  return lines.join("\n")
}

/** A folder clawtool writes to: created when missing, a file written and removed in it. */
const writable = (check: string, dir: string, variable: string) =>
  Effect.sync(() => {
    const probe = Path.join(dir, `.clawtool-doctor-${process.pid}`)
    try {
      Fs.mkdirSync(dir, { recursive: true })
      Fs.writeFileSync(probe, "")
      Fs.rmSync(probe)
      return ok(check, `${dir} is writable`)
    } catch (cause) {
      return fail(
        check,
        `${dir} is not writable (${(cause as NodeJS.ErrnoException).code ?? String(cause)})`,
        `make it writable by you, or set ${variable} to a folder that is`
      )
    }
  })

/** The config file, decoded as serve decodes it; its secrets file too, with its mode. */
const configChecks = (location: Location, file: string, secretsFile: string) =>
  Effect.gen(function* () {
    const checks: Array<Check> = []
    const config = yield* Effect.either(
      Effect.provide(Config, Config.Default.pipe(Layer.provide(ConfigLocation.layer(location))))
    )
    const missing =
      "clawtool init imports the MCP servers your hosts already have; or clawtool source add NAME -- COMMAND"
    if (Either.isLeft(config)) {
      checks.push(
        fail(
          "config",
          config.left.message,
          config.left.reason === "NotFound"
            ? missing
            : `edit ${file} where the message says, then run clawtool doctor again`
        )
      )
      return { checks, config: Option.none<ClawtoolConfig>() }
    }
    if (Option.isNone(config.right.file)) {
      checks.push(fail("config", `no config file at ${file}`, missing))
      return { checks, config: Option.none<ClawtoolConfig>() }
    }
    const loaded = config.right.config
    const count = Object.keys(loaded.sources).length
    checks.push(
      count === 0
        ? warn("config", `${file}: no sources`, "clawtool init, or clawtool source add NAME -- COMMAND")
        : ok("config", `${file}: ${count} source${count === 1 ? "" : "s"}`)
    )
    const secrets = yield* Effect.either(
      Effect.provide(
        Secrets,
        Secrets.DefaultWithoutDependencies.pipe(Layer.provide(Layer.succeed(Config, config.right)))
      )
    )
    if (Either.isLeft(secrets)) {
      checks.push(
        fail(
          "secrets",
          secrets.left.message,
          `edit ${secretsFile} where the message says ([scopes.<name>] tables of KEY = "value")`
        )
      )
      // The sources need their secrets: nothing is started with a file serve would refuse.
      return { checks, config: Option.none<ClawtoolConfig>() }
    } else if (Fs.existsSync(secretsFile)) {
      const mode = Fs.statSync(secretsFile).mode & 0o777
      checks.push(
        (mode & 0o077) === 0
          ? ok("secrets", `${secretsFile} (mode 0${mode.toString(8)})`)
          : fail(
              "secrets mode",
              `${secretsFile} is mode 0${mode.toString(8)}: other users can read the secrets`,
              `chmod 600 ${secretsFile}`
            )
      )
    } else {
      checks.push(ok("secrets", `no secrets file (${secretsFile})`))
    }
    return { checks, config: Option.some(loaded) }
  })

/** What a source that did not come up needs, by its status. */
const sourceFix = (name: string, status: string, config: ClawtoolConfig) => {
  if (status === "unauthenticated") return `clawtool auth login ${name}`
  const source = config.sources[name]
  const how =
    source !== undefined && "command" in source && Array.isArray(source.command)
      ? `run it by hand to see why: ${source.command.join(" ")}`
      : "check its url and headers"
  return `${how}; clawtool health --json shows its stderr; clawtool source disable ${name} keeps it out`
}

/** Every source started as serve starts them, each with its start time; the OAuth sources' logins. */
const sourceChecks = (location: Location, config: ClawtoolConfig) =>
  Effect.gen(function* () {
    const started = yield* Clock.currentTimeMillis
    const sources = yield* Sources
    yield* settle(sources)
    const settledMs = (yield* Clock.currentTimeMillis) - started
    const rows = yield* (yield* Registry).health
    const checks: Array<Check> = rows.map((row) => {
      const label = row.kind === "source" ? `source ${row.name}` : row.name
      const ms = row.startupMs ?? undefined
      if (row.status === "skipped") return warn(label, `skipped: ${row.reason}`, "see the reason; edit the entry")
      if (isDown(row)) {
        return fail(
          label,
          `${row.status}${row.reason === "" ? "" : `: ${row.reason}`}`,
          sourceFix(row.name, row.status, config),
          ms
        )
      }
      const tools = row.kind === "source" ? `, ${row.toolCount} tool${row.toolCount === 1 ? "" : "s"}` : ""
      return ok(label, `${row.status}${tools}`, ms)
    })
    if (rows.length > 0) checks.push(ok("sources", `all settled`, settledMs))
    const logins = yield* Effect.either(Effect.flatMap(OAuth, (oauth) => oauth.status))
    if (Either.isRight(logins)) {
      for (const row of logins.right) {
        checks.push(
          row.loggedIn
            ? ok(`oauth ${row.instance}`, `logged in at ${row.url}`)
            : fail(`oauth ${row.instance}`, `not logged in (${row.url})`, `clawtool auth login ${row.instance}`)
        )
      }
    }
    return checks
  }).pipe(
    Effect.provide(Layer.merge(HealthLive(location), OAuth.Default.pipe(Layer.provide(ConfigLocation.layer(location)))))
  )

/** The hosts' MCP files on this machine: which point at clawtool, which still list servers themselves. */
const hostChecks = (env: Paths.Env, home: string) =>
  Effect.gen(function* () {
    const project = process.cwd()
    const context = { home, project, bin: Path.resolve(process.argv[1] ?? "clawtool") }
    const checks: Array<Check> = []
    let pointing = 0
    for (const hostFile of hostFiles(env, home, project)) {
      const label = `host ${hostNames[hostFile.host]}`
      const where = shortPath(hostFile.file, home)
      const text = yield* Effect.either(readText(hostFile.file))
      if (Either.isLeft(text)) {
        checks.push(
          warn(
            label,
            `${where}: cannot be read (${text.left.detail})`,
            "fix the file's permissions; clawtool init skips it"
          )
        )
        continue
      }
      if (Option.isNone(text.right)) continue
      const reading = readHostFile(hostFile, text.right.value, context)
      if (Either.isLeft(reading)) {
        const { line, detail } = reading.left
        checks.push(
          warn(
            label,
            `${where}${line === undefined ? "" : `:${line}`}: ${detail}`,
            `fix ${hostFile.file}; clawtool init skips it`
          )
        )
        continue
      }
      const { servers, clawtool } = reading.right
      if (clawtool.length > 0) pointing++
      const names = servers.map((server) => server.name)
      if (names.length > 0) {
        checks.push(
          warn(
            label,
            `${where}: ${clawtool.length > 0 ? "points at clawtool, and " : ""}still lists ${names.length} server${names.length === 1 ? "" : "s"} itself (${names.join(", ")})`,
            "clawtool init --apply-hosts moves them into clawtool (--dry-run shows the changes first)"
          )
        )
      } else if (clawtool.length > 0) {
        checks.push(ok(label, `${where}: points at clawtool (${clawtool.join(", ")})`))
      }
    }
    if (pointing === 0) {
      checks.push(
        warn(
          "hosts",
          "no host's MCP config points at clawtool",
          "clawtool init --apply-hosts, or add `clawtool serve` to your host's MCP servers"
        )
      )
    }
    return checks
  })

/** `[http] listen`: the daemon answers /healthz (a wildcard address is asked on loopback). */
const daemonCheck = (listen: string) =>
  Effect.gen(function* () {
    const url = `http://${listen.replace(/^(0\.0\.0\.0|\[::\]|::)(?=:)/, "127.0.0.1")}/healthz`
    const answer = yield* Effect.either(
      Effect.tryPromise(() => fetch(url, { signal: AbortSignal.timeout(3_000) }).then((response) => response.status))
    )
    return Either.isRight(answer) && answer.right === 200
      ? ok("daemon", `${url} answers`)
      : fail(
          "daemon",
          `${url}: ${Either.isRight(answer) ? `HTTP ${answer.right}` : "no answer"}`,
          `start it: clawtool serve (it listens on [http] listen = "${listen}"), or remove [http] listen`
        )
  })

const nodeCheck = (): Check => {
  const major = Number(process.versions.node.split(".")[0])
  return major >= 20
    ? ok("node", `Node ${process.versions.node}`)
    : fail("node", `Node ${process.versions.node}; clawtool needs 20 or later`, "install Node 20 or later")
}

const ripgrepCheck = (): Check => {
  const rg = rgPath()
  return rg !== undefined && Fs.existsSync(rg)
    ? ok("ripgrep", rg)
    : fail(
        "ripgrep",
        "rg not found (the Grep and Glob core tools need it)",
        "reinstall clawtool (its @vscode/ripgrep dependency ships rg), or put ripgrep's rg on PATH"
      )
}

export const runDoctor = (options: Location & { readonly json: boolean }) =>
  Effect.gen(function* () {
    const env = yield* ProcessEnv
    const { file, secretsFile } = resolveConfigPaths(options, env)
    const home = env.HOME !== undefined && env.HOME !== "" ? env.HOME : Os.homedir()
    const checks: Array<Check> = []
    const configured = yield* configChecks(options, file, secretsFile)
    checks.push(...configured.checks)
    if (Option.isSome(configured.config)) {
      checks.push(...(yield* sourceChecks(options, configured.config.value)))
      const listen = configured.config.value.http.listen
      if (listen !== undefined) checks.push(yield* daemonCheck(listen))
    }
    checks.push(...(yield* hostChecks(env, home)))
    checks.push(yield* writable("cache folder", Paths.cacheDir(env), "CLAWTOOL_CACHE_DIR"))
    checks.push(yield* writable("state folder", Paths.stateDir(env), "CLAWTOOL_STATE_DIR"))
    checks.push(nodeCheck(), ripgrepCheck())
    yield* Console.log(options.json ? JSON.stringify({ checks }, null, 2) : renderReport(checks))
    return checks.some((check) => check.status === "fail")
  }).pipe(Logger.withMinimumLogLevel(LogLevel.Error)) // what the logs would say is in the report
