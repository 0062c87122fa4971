#!/usr/bin/env node
// run.mjs: clawtool's benchmark harness (issue 7). `npm run bench` builds dist/ and runs this; see bench/README.md.
//   node bench/run.mjs [--quick]
//                      [--only overhead,firstcalls,startup,coldstart,catalog,memory,steadiness,warmstart,lazy,remote,trust,code,metrics,eras]
//                      [--out FILE] [--merge]
// --merge keeps the sections of FILE that this run does not measure (each section records when it was measured).
// Every figure is measured in this one run, on this machine, next to its direct-path baseline; the ratios are what
// carries over to other machines. Prints a table and writes bench/results.json.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { execFileSync, spawn } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import * as Bundle from "./bundle.mjs"
import { codeMode } from "./codemode.mjs"
import {
  callEcho,
  childEnv,
  cleanup,
  clawtoolRemoteArgs,
  cpuMsOf,
  clawtoolArgs,
  echoServer,
  httpEchoServer,
  freshCacheDir,
  listTools,
  log,
  median,
  memoryOf,
  open,
  percentile,
  rawServer,
  root,
  round,
  sdkProxy,
  lineRelay,
  sleep,
  tmp
} from "./lib.mjs"

// ---------------------------------------------------------------------------------------------------------------------
// Options

const argv = process.argv.slice(2)
const flag = (name) => argv.includes(name)
const value = (name) => {
  const at = argv.indexOf(name)
  return at === -1 ? undefined : argv[at + 1]
}
const quick = flag("--quick")
const only = new Set(
  (
    value("--only") ??
    "overhead,firstcalls,startup,coldstart,catalog,memory,steadiness,warmstart,lazy,remote,trust,code,metrics,eras"
  ).split(",")
)
const merge = flag("--merge")
const outFile = Path.resolve(value("--out") ?? Path.join(root, "bench", "results.json"))
const scale = (n) => (quick ? Math.max(1, Math.round(n / 5)) : n)

const plan = {
  overhead: {
    rounds: quick ? 1 : 3,
    warmup: scale(1000),
    sequential: scale(2000),
    concurrent: scale(4000),
    concurrency: 32
  },
  // windowMs: from the spawn; a host calls within it (Claude Code lists, and often calls, within a second).
  firstcalls: { runs: quick ? 2 : 5, windowMs: 2000 },
  startup: { runs: quick ? 1 : 3, sources: 20, initDelayMs: 1000 },
  coldstart: { runs: quick ? 2 : 5 },
  catalog: { tools: 10_000, lists: quick ? 3 : 10, builds: quick ? 2 : 5 },
  memory: { sources: 20, idleMs: 1500 },
  steadiness: { early: 5_000, late: quick ? 20_000 : 100_000, concurrency: 32 },
  warmstart: { runs: quick ? 2 : 5, sources: 20, initDelayMs: 1000 },
  // settledMs: V8's memory reducer runs some seconds after a process goes quiet; RSS is read again after it.
  lazy: { sources: 20, idleMs: 1500, settledMs: quick ? 0 : 20_000 },
  remote: { warmup: scale(500), sequential: scale(2000), concurrent: scale(4000), concurrency: 32 },
  metrics: {
    rounds: quick ? 1 : 3,
    warmup: scale(1000),
    sequential: scale(2000),
    concurrent: scale(4000),
    concurrency: 32
  },
  trust: {
    rounds: quick ? 1 : 3,
    warmup: scale(1000),
    sequential: scale(2000),
    concurrent: scale(4000),
    concurrency: 32,
    secrets: 50
  }
}

const targets = {
  latencyRatio: 1.5,
  throughputRatio: 0.6,
  startupMs: 1250,
  coldStartRatio: 1.3,
  catalogServerMs: 25,
  peakRssMb: 90,
  heapGrowthMb: 1,
  warmStartRatio: 1.3,
  lazyPeakRssMb: 70,
  /** Trust, redaction and audit on vs all off: at most this far apart (issue 25). */
  trustApart: 0.05,
  /** The daemon's metrics and dashboard counting on vs off: at most this far apart (issue 29). */
  metricsApart: 0.03,
  /** Cleaning every tool of the 10,000-tool catalog (Trust/Clean.ts, issue 25) against JSON.stringify of the same tools. */
  cleanRatio: 0.5,
  /** Code mode (issue 30): bytes entering the model's context, one RunCode vs direct calls, over the five tasks. */
  codeSaving: 0.9,
  /** 100 sequential inner echo calls from one RunCode vs 100 direct calls through clawtool. */
  codeOverheadRatio: 1.5
}

// ---------------------------------------------------------------------------------------------------------------------
// Helpers

const loadavg = () => Os.loadavg().map((x) => round(x))

const commit = () => {
  try {
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).trim()
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "src"], { cwd: root, encoding: "utf8" }).trim()
    return dirty === "" ? head : `${head}+uncommitted src changes`
  } catch {
    return "unknown"
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// 1. Call overhead

const sequentialLatencies = async (client, tool, n) => {
  const out = new Float64Array(n)
  for (let i = 0; i < n; i++) {
    const started = performance.now()
    await callEcho(client, tool)
    out[i] = performance.now() - started
  }
  return out
}

const throughput = async (client, tool, n, concurrency) => {
  let issued = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (issued < n) {
        issued++
        await callEcho(client, tool)
      }
    })
  )
  return n / ((performance.now() - started) / 1000)
}

/** One path's round: sequential latencies then c=N throughput, its process's CPU added to the path's tally. */
const measureRound = async (path, p) => {
  const cpuBefore = cpuMsOf(path.conn.pid)
  const latencies = await sequentialLatencies(path.client, path.tool, p.sequential)
  const rate = await throughput(path.client, path.tool, p.concurrent, p.concurrency)
  path.cpuMs += cpuMsOf(path.conn.pid) - cpuBefore
  path.latencies.push(...latencies)
  path.rates.push(rate)
  return { p50: median(latencies), rate }
}

/** A path's figures over every round (CPU per call: the process the client talks to). */
const summaryOf = (path, p) => ({
  p50Ms: round(median(path.latencies), 3),
  p99Ms: round(percentile(path.latencies, 99), 3),
  throughputRps: Math.round(median(path.rates)),
  calls: path.latencies.length + path.rates.length * p.concurrent,
  cpuUsPerCall: Math.round((1000 * path.cpuMs) / (path.latencies.length + path.rates.length * p.concurrent))
})

/**
 * One child, three paths: direct, through clawtool, and through sdk-proxy.mjs (the leanest relay on the SDK, a
 * reference for what any Node proxy on the SDK costs here). Every path keeps its process open for the whole section.
 */
const overheadFor = async (childArgs, label) => {
  const p = plan.overhead
  const opened = [
    { name: "direct", tool: "echo", conn: await open(childArgs, `${label} direct`) },
    {
      name: "clawtool",
      tool: "echo__echo",
      conn: await open(clawtoolArgs(Bundle.variants.dist, { echo: childArgs }), `${label} via clawtool`)
    },
    {
      name: "sdkRelay",
      tool: "echo",
      conn: await open([sdkProxy, process.execPath, ...childArgs], `${label} via sdk-proxy`)
    },
    {
      name: "lineRelay",
      tool: "echo",
      conn: await open([lineRelay, process.execPath, ...childArgs], `${label} via line-relay`)
    }
  ]
  try {
    const listed = (await listTools(opened[1].conn.client)).tools.map((tool) => tool.name)
    if (!listed.includes("echo__echo")) throw new Error(`clawtool did not list echo__echo: ${listed.join(", ")}`)
    const paths = opened.map((path) => ({ ...path, client: path.conn.client, latencies: [], rates: [], cpuMs: 0 }))
    for (const path of paths) {
      const result = await callEcho(path.client, path.tool)
      if (result.content?.[0]?.text !== "hello")
        throw new Error(`${path.name}: unexpected result ${JSON.stringify(result)}`)
      await sequentialLatencies(path.client, path.tool, p.warmup)
      await throughput(path.client, path.tool, p.warmup * 2, p.concurrency)
    }
    const perRound = []
    for (let r = 0; r < p.rounds; r++) {
      // Rotate the order so a drift in the machine's load does not favour one path.
      const order = paths.map((_, i) => paths[(i + r) % paths.length])
      const row = {}
      for (const path of order) row[path.name] = await measureRound(path, p)
      perRound.push({
        latencyRatio: round(row.clawtool.p50 / row.direct.p50),
        throughputRatio: round(row.clawtool.rate / row.direct.rate)
      })
    }
    const [direct, clawtool, sdkRelay, lineRelay] = paths.map((path) => summaryOf(path, p))
    const ratios = (x) => ({
      addedP50Ms: round(x.p50Ms - direct.p50Ms, 3),
      latencyRatioP50: round(x.p50Ms / direct.p50Ms),
      latencyRatioP99: round(x.p99Ms / direct.p99Ms),
      throughputRatio: round(x.throughputRps / direct.throughputRps)
    })
    return {
      child: label,
      direct,
      clawtool: { ...clawtool, ...ratios(clawtool) },
      sdkRelay: { ...sdkRelay, ...ratios(sdkRelay) },
      lineRelay: { ...lineRelay, ...ratios(lineRelay) },
      perRound,
      clawtoolMemory: memoryOf(opened[1].conn.pid)
    }
  } finally {
    await Promise.all(opened.map((path) => path.conn.close()))
  }
}

const overhead = async () => {
  const out = { plan: plan.overhead }
  for (const [key, args, label] of [
    ["sdkChild", [echoServer], "sdk-echo"],
    ["rawChild", [rawServer], "raw-echo"]
  ]) {
    const row = (out[key] = await overheadFor(args, label))
    log(
      `  ${label}: p50 ${row.direct.p50Ms} -> ${row.clawtool.p50Ms} ms (sdk relay ${row.sdkRelay.p50Ms}), ` +
        `${row.direct.throughputRps} -> ${row.clawtool.throughputRps} calls/s (sdk relay ${row.sdkRelay.throughputRps}, line relay ${row.lineRelay.p50Ms} ms ${row.lineRelay.throughputRps} calls/s)`
    )
  }
  return out
}

// ---------------------------------------------------------------------------------------------------------------------
// 11. The two MCP eras (issue 27, ADR 032): the same clawtool and child, called by a legacy SDK v1 host and by an SDK v2
// host pinned to 2026-07-28, over stdio (one clawtool each) and over HTTP (both hosts on one daemon), rounds alternating

/** An SDK v2 client pinned to the modern era (the envelope on every request, stamped results) over `transport`. */
const modernClient = async (transport, label) => {
  const { Client: ModernClient } = await import("@modelcontextprotocol/client")
  const client = new ModernClient(
    { name: "clawtool-bench-modern", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } }
  )
  await client.connect(transport).catch((error) => {
    throw new Error(`${label}: connect failed: ${error.message}`)
  })
  // callEcho's request(…, schema) is the v1 client's call shape: the v2 client takes the same.
  return client
}

/** `open` for the modern host over stdio. */
const openModern = async (args, label) => {
  const { StdioClientTransport: ModernStdio } = await import("@modelcontextprotocol/client/stdio")
  const transport = new ModernStdio({
    command: process.execPath,
    args,
    env: { ...childEnv(), CLAWTOOL_CACHE_DIR: freshCacheDir() },
    cwd: root,
    stderr: "ignore"
  })
  const client = await modernClient(transport, label)
  return { client, pid: transport.pid, close: () => client.close().catch(() => {}) }
}

/** The legacy and the modern path's rounds, alternating; CPU is the process each client talks to. */
const eraRounds = async (opened, p, label) => {
  const paths = opened.map((path) => ({
    ...path,
    tool: "echo__echo",
    client: path.conn.client,
    latencies: [],
    rates: [],
    cpuMs: 0
  }))
  for (const path of paths) {
    await listTools(path.client)
    const result = await callEcho(path.client, path.tool)
    if (result.content?.[0]?.text !== "hello") throw new Error(`${path.name}: unexpected ${JSON.stringify(result)}`)
    await sequentialLatencies(path.client, path.tool, p.warmup)
    await throughput(path.client, path.tool, p.warmup * 2, p.concurrency)
  }
  for (let r = 0; r < p.rounds; r++) {
    for (const path of r % 2 === 0 ? paths : [...paths].reverse()) await measureRound(path, p)
  }
  const [legacy, modern] = paths.map((path) => summaryOf(path, p))
  log(
    `  ${label}: legacy p50 ${legacy.p50Ms} ms, ${legacy.throughputRps} calls/s; modern p50 ${modern.p50Ms} ms, ${modern.throughputRps} calls/s (c=${p.concurrency})`
  )
  return {
    legacy,
    modern: {
      ...modern,
      latencyRatioP50: round(modern.p50Ms / legacy.p50Ms),
      throughputRatio: round(modern.throughputRps / legacy.throughputRps)
    }
  }
}

const eras = async () => {
  const p = plan.overhead
  const config = clawtoolArgs(Bundle.variants.dist, { echo: [echoServer] })
  const stdio = [
    { name: "legacy", conn: await open(config, "legacy host via clawtool") },
    { name: "modern", conn: await openModern(config, "modern host via clawtool") }
  ]
  const out = { plan: p, loadavgBefore: loadavg() }
  try {
    Object.assign(out, await eraRounds(stdio, p, "stdio"))
  } finally {
    await Promise.all(stdio.map((path) => path.conn.close()))
  }
  // HTTP: one daemon, one child, both hosts (the modern one sessionless, a POST per request).
  const daemon = await echoDaemon("eras-http", "")
  try {
    const { StreamableHTTPClientTransport: ModernHttp } = await import("@modelcontextprotocol/client")
    const legacy = await legacyHttpHost(daemon.url)
    const modern = await modernClient(new ModernHttp(new URL(daemon.url)), "modern host via the daemon")
    const conn = (client) => ({ client, pid: daemon.pid })
    try {
      out.http = await eraRounds(
        [
          { name: "legacy", conn: conn(legacy) },
          { name: "modern", conn: conn(modern) }
        ],
        p,
        "http"
      )
    } finally {
      await Promise.all([legacy.close().catch(() => {}), modern.close().catch(() => {})])
    }
  } finally {
    daemon.stop()
  }
  out.loadavgAfter = loadavg()
  return out
}

// ---------------------------------------------------------------------------------------------------------------------
// 11. Metrics on vs off (issue 29): the same echo child behind two daemons (`serve --listen`, streamable HTTP), one
// counting every call for /metrics and the dashboard (the defaults) and one with `[http] metrics = false, ui = false`.
// Rounds alternate the order, as in section 10.

/** `serve --listen 127.0.0.1:0` over the echo child with `toml` in front of it (audit off); its pid, URL and stop. */
const echoDaemon = (name, toml) =>
  new Promise((resolve, reject) => {
    const dir = Path.join(tmp(), name)
    mkdirSync(dir, { recursive: true })
    const file = Path.join(dir, "config.toml")
    writeFileSync(
      file,
      `${toml}\n[audit]\nenabled = false\n\n[sources.echo]\ncommand = ${JSON.stringify([process.execPath, echoServer])}\n`
    )
    const args = [Bundle.variants.dist, "serve", "--config", file, "--listen", "127.0.0.1:0"]
    const child = spawn(process.execPath, args, { cwd: root, env: childEnv(), stdio: ["ignore", "ignore", "pipe"] })
    let stderr = ""
    child.stderr.on("data", (chunk) => {
      stderr += chunk.toString()
      const match = /serving MCP on (http:\/\/\S+)/.exec(stderr)
      if (match !== null) resolve({ pid: child.pid, url: match[1], stop: () => child.kill("SIGTERM") })
    })
    child.once("exit", (code) => reject(new Error(`daemon exited ${code}: ${stderr}`)))
  })

/** A legacy SDK v1 host on a daemon (one streamable-HTTP session). */
const legacyHttpHost = async (url) => {
  const client = new Client({ name: "clawtool-bench", version: "1.0.0" })
  client.onerror = () => {}
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  return client
}

const metricsDaemon = async (on) => {
  const daemon = await echoDaemon(`metrics-${on ? "on" : "off"}`, on ? "" : "[http]\nmetrics = false\nui = false\n")
  const client = await legacyHttpHost(daemon.url)
  return {
    pid: daemon.pid,
    client,
    url: daemon.url,
    close: async () => {
      await client.close().catch(() => {})
      daemon.stop()
    }
  }
}

const metrics = async () => {
  const p = plan.metrics
  const opened = [
    { name: "off", conn: await metricsDaemon(false) },
    { name: "on", conn: await metricsDaemon(true) }
  ]
  const paths = opened.map((path) => ({
    ...path,
    client: path.conn.client,
    tool: "echo__echo",
    latencies: [],
    rates: [],
    cpuMs: 0
  }))
  try {
    for (const path of paths) {
      const result = await callEcho(path.client, "echo__echo")
      if (result.content?.[0]?.text !== "hello") throw new Error(`metrics ${path.name}: ${JSON.stringify(result)}`)
      await sequentialLatencies(path.client, "echo__echo", p.warmup)
      await throughput(path.client, "echo__echo", p.warmup * 2, p.concurrency)
    }
    const perRound = []
    for (let r = 0; r < p.rounds; r++) {
      const order = r % 2 === 0 ? paths : [...paths].reverse()
      const row = {}
      for (const path of order) row[path.name] = await measureRound(path, p)
      perRound.push({
        latencyRatio: round(row.on.p50 / row.off.p50),
        throughputRatio: round(row.on.rate / row.off.rate)
      })
    }
    // The counted calls are there: the "on" daemon's /metrics has them.
    const scraped = await (await fetch(new URL("/metrics", opened[1].conn.url))).text()
    if (!/clawtool_tool_calls_total\{source="echo",tool="echo",outcome="ok"\} [1-9]/.test(scraped)) {
      throw new Error(`metrics on: the calls are not counted:\n${scraped.slice(0, 2000)}`)
    }
    return onOffResult(paths, p, perRound)
  } finally {
    await Promise.all(paths.map((path) => path.conn.close()))
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// Main

const main = async () => {
  const started = performance.now()
  const results = {
    date: new Date().toISOString(),
    node: process.version,
    platform: `${process.platform} ${Os.release()} ${process.arch}`,
    cpus: Os.cpus().length,
    cpuModel: Os.cpus()[0]?.model ?? "unknown",
    totalMemoryMb: Math.round(Os.totalmem() / 1024 / 1024),
    commit: commit(),
    quick,
    loadavgAtStart: loadavg(),
    // Everything below runs a snapshot of dist/ taken now (bench/.out/dist), built at this time.
    distBuiltAt: Bundle.snapshot()
  }

  const variants = { dist: Bundle.variants.dist }

  const sections = [
    ["overhead", "1. call overhead", () => overhead()],
    ["firstcalls", "1b. calls in the first 2 s after start", () => firstCalls()],
    ["startup", "2. start-up, 20 sources x 1 s initialize", () => startup(variants)],
    ["coldstart", "3. cold start", () => coldstart(variants)],
    ["catalog", "4. catalog of 10,000 tools", () => catalog()],
    ["memory", "5. memory, 20 idle children", () => memory(variants)],
    ["steadiness", "6. memory steadiness, 100,000 calls", () => steadiness()],
    ["warmstart", "7. warm start, 20 sources x 1 s initialize, persisted catalog", () => warmstart(variants.dist)],
    ["lazy", "8. 20 lazy sources with a persisted catalog, idle", () => lazy(variants.dist)],
    ["remote", "9. remote source (streamable HTTP) call overhead", () => remote()],
    ["trust", "10. trust, redaction and audit on vs off", () => trust()],
    ["code", "11. code mode: token economy and RunCode overhead", () => codeMode(variants.dist)],
    ["metrics", "12. daemon metrics and dashboard counting on vs off", () => metrics()],
    ["eras", "13. legacy vs 2026-07-28 host, tools/call over stdio and HTTP", () => eras()]
  ]
  if (merge && existsSync(outFile)) {
    // The sections this run does not measure, as an earlier run measured them.
    const earlier = JSON.parse(readFileSync(outFile, "utf8"))
    for (const [key] of sections) {
      if (only.has(key) || earlier[key] === undefined) continue
      results[key] = earlier[key]
      results[key].measured ??= { date: earlier.date, commit: earlier.commit, loadavg: earlier.loadavgAtStart }
    }
  }
  for (const [key, title, run] of sections) {
    if (!only.has(key)) continue
    log(`${title}…`)
    const sectionStarted = performance.now()
    results[key] = await run()
    results[key].sectionSeconds = round((performance.now() - sectionStarted) / 1000, 1)
    results[key].measured = { date: new Date().toISOString(), commit: results.commit, loadavg: loadavg() }
  }

  results.targets = judge(results)
  results.loadavgAtEnd = loadavg()
  results.durationSeconds = round((performance.now() - started) / 1000, 1)
  writeFileSync(outFile, JSON.stringify(results, null, 2) + "\n")
  print(results)
  log(`\nwrote ${Path.relative(process.cwd(), outFile)} (${results.durationSeconds} s)`)
}

const judge = (results) => {
  const rows = []
  const add = (name, value, op, target, unit) =>
    rows.push({
      name,
      value,
      target: `${op} ${target}${unit}`,
      pass: value === null || value === undefined ? null : op === "≤" ? value <= target : value >= target
    })
  if (results.overhead) {
    const clawtool = results.overhead.sdkChild.clawtool
    add("latency ratio p50, c=1 (clawtool/direct)", clawtool.latencyRatioP50, "≤", targets.latencyRatio, "")
    add("throughput ratio, c=32 (clawtool/direct)", clawtool.throughputRatio, "≥", targets.throughputRatio, "")
  }
  if (results.startup)
    add("start-up, 20 x 1 s sources (ms)", results.startup.clawtool.dist.fullMs, "≤", targets.startupMs, " ms")
  if (results.coldstart) {
    add(
      "cold start ratio (clawtool/bare SDK)",
      results.coldstart.rows["clawtool dist"].ratioToBareSdk,
      "≤",
      targets.coldStartRatio,
      ""
    )
  }
  if (results.catalog) {
    add("tools/list server time, 10k tools (ms)", results.catalog.serverMs, "≤", targets.catalogServerMs, " ms")
    add("clean 10k tools / JSON.stringify them", results.catalog.cleanRatio, "≤", targets.cleanRatio, "")
  }
  if (results.code) {
    add("code mode: context bytes saved, 5 tasks", results.code.saving, "≥", targets.codeSaving, "")
    add("RunCode: 100 inner echo calls / 100 direct", results.code.overhead.ratio, "≤", targets.codeOverheadRatio, "")
  }
  if (results.memory)
    add("peak RSS, 20 idle children (MB)", results.memory.clawtool.dist.peakRssMb, "≤", targets.peakRssMb, " MB")
  if (results.steadiness) {
    const s = results.steadiness
    add(`live heap growth, ${s.plan.early} -> ${s.plan.late} calls (MB)`, s.growthMb, "≤", targets.heapGrowthMb, " MB")
  }
  if (results.warmstart) {
    add(
      "warm start ratio, 20 x 1 s sources (clawtool/bare SDK)",
      results.warmstart.ratioToBareSdk,
      "≤",
      targets.warmStartRatio,
      ""
    )
  }
  if (results.lazy) {
    add("peak RSS, 20 lazy idle sources (MB)", results.lazy.peakRssMb, "≤", targets.lazyPeakRssMb, " MB")
    add("source processes, 20 lazy idle sources", results.lazy.sourceChildren, "≤", 0, "")
  }
  if (results.remote) {
    add(
      "remote latency ratio p50, c=1 (clawtool/direct)",
      results.remote.latencyRatioP50,
      "≤",
      targets.latencyRatio,
      ""
    )
    add(
      "remote throughput ratio, c=32 (clawtool/direct)",
      results.remote.throughputRatio,
      "≥",
      targets.throughputRatio,
      ""
    )
  }
  if (results.trust) {
    add("trust on/off latency ratio p50, c=1", results.trust.latencyRatioP50, "≤", round(1 + targets.trustApart), "")
    add("trust on/off throughput ratio, c=32", results.trust.throughputRatio, "≥", round(1 - targets.trustApart), "")
  }
  if (results.metrics) {
    add(
      "metrics on/off latency ratio p50, c=1",
      results.metrics.latencyRatioP50,
      "≤",
      round(1 + targets.metricsApart),
      ""
    )
    add(
      "metrics on/off throughput ratio, c=32",
      results.metrics.throughputRatio,
      "≥",
      round(1 - targets.metricsApart),
      ""
    )
  }
  return rows
}

const print = (results) => {
  const lines = []
  const table = (header, rows) => {
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => String(row[i] ?? "").length)))
    const fmt = (row) =>
      row
        .map((cell, i) => String(cell ?? "").padEnd(widths[i]))
        .join("  ")
        .trimEnd()
    lines.push(fmt(header), fmt(widths.map((w) => "-".repeat(w))), ...rows.map(fmt))
    lines.push("")
  }
  lines.push(
    "",
    `clawtool bench — ${results.date}, Node ${results.node}, ${results.cpus} CPU (${results.cpuModel}), load ${results.loadavgAtStart.join(" ")}`,
    ""
  )
  if (results.overhead) {
    const o = results.overhead
    const noise = (key) => {
      const xs = o.sdkChild.perRound.map((row) => row[key])
      return xs.length > 1 ? `${Math.min(...xs)}–${Math.max(...xs)}` : ""
    }
    table(
      [
        "call overhead (echo)",
        "p50 / p99 ms",
        "+p50 ms",
        "ratio p50",
        "ratio p99",
        "c=32 calls/s",
        "ratio",
        "CPU µs/call"
      ],
      [o.sdkChild, o.rawChild].flatMap((row) => [
        [
          `${row.child} child, direct`,
          `${row.direct.p50Ms} / ${row.direct.p99Ms}`,
          "",
          "",
          "",
          row.direct.throughputRps,
          "",
          row.direct.cpuUsPerCall
        ],
        ...[
          ["via clawtool", row.clawtool],
          ["via sdk-proxy (reference)", row.sdkRelay]
        ].map(([name, x]) => [
          `  ${name}`,
          `${x.p50Ms} / ${x.p99Ms}`,
          x.addedP50Ms,
          x.latencyRatioP50,
          x.latencyRatioP99,
          x.throughputRps,
          x.throughputRatio,
          x.cpuUsPerCall
        ])
      ])
    )
    if (o.sdkChild.perRound.length > 1) {
      lines.push(
        `per-round clawtool ratios, sdk-echo child: latency ${noise("latencyRatio")}, throughput ${noise("throughputRatio")}`,
        ""
      )
    }
    lines.push(
      "CPU µs/call: of the process the client talks to (the child when direct, else the relay, not its child)",
      ""
    )
  }
  if (results.firstcalls) {
    const f = results.firstcalls
    const perRun = (path) => path.runs.map((run) => `${run.p50Ms ?? "–"} (${run.calls})`).join(" ")
    table(
      [
        "calls in the first 2 s after start (echo, c=1)",
        "p50 / p99 ms",
        "ratio p50",
        "CPU µs/call",
        "calls",
        "per run: p50 ms (calls)"
      ],
      [
        [
          "sdk-echo child, direct",
          `${f.direct.p50Ms} / ${f.direct.p99Ms}`,
          "",
          f.direct.cpuUsPerCall,
          f.direct.calls,
          perRun(f.direct)
        ],
        [
          `  via clawtool (peak RSS ${f.clawtool.peakRssMb} MB)`,
          `${f.clawtool.p50Ms} / ${f.clawtool.p99Ms}`,
          f.clawtool.latencyRatioP50,
          f.clawtool.cpuUsPerCall,
          f.clawtool.calls,
          perRun(f.clawtool)
        ]
      ]
    )
  }
  if (results.startup) {
    const s = results.startup
    table(
      [
        "start-up (20 x 1 s)",
        "spawn -> full tools/list ms",
        "over direct ms",
        "initialize ms",
        "initialize -> full list ms",
        "runs ms"
      ],
      [
        ["direct (bench spawns all 20)", s.directMs, "", "", "", s.directRunsMs.join(" ")],
        ...Object.entries(s.clawtool).map(([name, row]) => [
          `clawtool ${name}`,
          row.fullMs,
          row.fullMs - s.directMs,
          row.initMs,
          row.afterInitMs,
          row.runsMs.join(" ")
        ])
      ]
    )
  }
  if (results.coldstart) {
    table(
      ["cold start (spawn -> initialize)", "median ms", "min ms", "ratio to bare SDK", "RSS at init MB"],
      Object.entries(results.coldstart.rows).map(([name, row]) => [
        name,
        row.medianMs,
        row.minMs,
        row.ratioToBareSdk,
        row.peakRssMbAtInit
      ])
    )
  }
  if (results.catalog) {
    const c = results.catalog
    table(
      ["catalog (10,000 tools)", "value"],
      [
        ["tools listed", c.tools],
        ["response bytes (clawtool / child)", `${c.responseBytes} / ${c.directResponseBytes}`],
        ["first tools/list ms (incl. settle)", c.firstListMs],
        ["warm tools/list round trip ms (clawtool / direct)", `${c.warmListMs} / ${c.directListMs}`],
        ["warm tools/list server ms: clawtool CPU / round-trip difference", `${c.warmListCpuMs} / ${c.warmServerMs}`],
        ["pipeline (Catalog.build) ms: CPU / wall", c.pipelineError ?? `${c.pipelineCpuMs} / ${c.pipelineMs}`],
        ["clean descriptions ms: Clean.tool x 10k / JSON.stringify x 10k", `${c.cleanMs} / ${c.stringifyMs}`],
        ["server time ms (pipeline CPU + warm list CPU)", c.serverMs],
        ["clawtool peak RSS MB", c.clawtoolMemory.peakRssMb]
      ]
    )
  }
  if (results.memory) {
    table(
      ["memory (20 idle children)", "peak RSS MB", "RSS MB", "helper processes (RSS MB)"],
      Object.entries(results.memory.clawtool).map(([name, row]) => [
        `clawtool ${name}`,
        row.peakRssMb,
        row.rssMb,
        `${row.helperProcesses} (${row.helpersRssMb})`
      ])
    )
  }
  if (results.steadiness) {
    const s = results.steadiness
    table(
      ["memory steadiness (echo, c=32)", "live heap after GC MB", "RSS MB"],
      [
        [`after ${s.plan.early} calls`, s.early.heapUsedMb, s.early.rssMb],
        [`after ${s.plan.late} calls`, s.late.heapUsedMb, s.late.rssMb],
        ["growth / peak RSS over the run", s.growthMb, s.peakRssMb]
      ]
    )
  }
  if (results.warmstart) {
    const w = results.warmstart
    table(
      ["warm start (20 x 1 s, persisted catalog)", "spawn -> full tools/list ms", "initialize ms", "runs ms", "ratio"],
      [
        [`clawtool dist`, w.fullMs, w.initMs, w.runsMs.join(" "), w.ratioToBareSdk],
        ["bare SDK server, cold (spawn -> tools/list)", w.bareSdkMs, "", w.bareSdkRunsMs.join(" "), 1]
      ]
    )
  }
  if (results.lazy) {
    const l = results.lazy
    table(
      [
        "20 lazy idle sources (cached)",
        "peak RSS MB",
        "RSS MB",
        "RSS MB, settled",
        "source processes",
        "helper processes (RSS MB)"
      ],
      [
        [
          "clawtool dist",
          l.peakRssMb,
          l.rssMb,
          l.settledRssMb ?? "",
          l.sourceChildren,
          `${l.helperProcesses} (${l.helpersRssMb})`
        ]
      ]
    )
  }
  if (results.remote) {
    const r = results.remote
    table(
      ["remote call overhead (echo, streamable HTTP)", "p50 / p99 ms", "ratio p50", "c=32 calls/s", "ratio"],
      [
        ["SDK client, direct", `${r.direct.p50Ms} / ${r.direct.p99Ms}`, "", r.direct.throughputRps, ""],
        [
          "  via clawtool",
          `${r.clawtool.p50Ms} / ${r.clawtool.p99Ms}`,
          r.latencyRatioP50,
          r.clawtool.throughputRps,
          r.throughputRatio
        ]
      ]
    )
  }
  if (results.trust) {
    const t = results.trust
    table(
      ["trust (echo via clawtool)", "p50 / p99 ms", "ratio p50", "c=32 calls/s", "ratio", "CPU µs/call"],
      [
        ["all off", `${t.off.p50Ms} / ${t.off.p99Ms}`, "", t.off.throughputRps, "", t.off.cpuUsPerCall],
        [
          "  trust + redaction (50 secrets) + audit on",
          `${t.on.p50Ms} / ${t.on.p99Ms}`,
          t.latencyRatioP50,
          t.on.throughputRps,
          t.throughputRatio,
          t.on.cpuUsPerCall
        ]
      ]
    )
  }
  if (results.metrics) {
    const m = results.metrics
    table(
      ["metrics (echo via the daemon, HTTP)", "p50 / p99 ms", "ratio p50", "c=32 calls/s", "ratio", "CPU µs/call"],
      [
        [
          "[http] metrics = false, ui = false",
          `${m.off.p50Ms} / ${m.off.p99Ms}`,
          "",
          m.off.throughputRps,
          "",
          m.off.cpuUsPerCall
        ],
        [
          "  counted for /metrics and the dashboard",
          `${m.on.p50Ms} / ${m.on.p99Ms}`,
          m.latencyRatioP50,
          m.on.throughputRps,
          m.throughputRatio,
          m.on.cpuUsPerCall
        ]
      ]
    )
  }

  table(
    ["target", "value", "target", "result"],
    results.targets.map((row) => [
      row.name,
      row.value,
      row.target,
      row.pass === null ? "n/a" : row.pass ? "PASS" : "FAIL"
    ])
  )
  process.stdout.write(lines.join("\n") + "\n")
}

try {
  await main()
} finally {
  cleanup()
}
