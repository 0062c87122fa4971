#!/usr/bin/env node
// run.mjs: clawtool's benchmark harness (issue 7). `npm run bench` builds dist/ and runs this; see bench/README.md.
//   node bench/run.mjs [--quick]
//                      [--only overhead,firstcalls,startup,coldstart,catalog,memory,steadiness,warmstart,lazy,remote,trust,code,metrics,eras]
//                      [--out FILE] [--merge]
// --merge keeps the sections of FILE that this run does not measure (each section records when it was measured).
// Every figure is measured in this one run, on this machine, next to its direct-path baseline; the ratios are what
// carries over to other machines. Prints a table and writes bench/results.json.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { execFileSync, spawn } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { alternate, echoDaemon, legacyHttpHost, openDaemon } from "./ab.mjs"
import * as Bundle from "./bundle.mjs"
import { codeMode } from "./codemode.mjs"
import {
  httpTransport,
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
  tmp,
  throughput
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
  // Short rounds, many of them: a neighbour's burst spoils a round, not the median of the rounds' ratios.
  metrics: {
    rounds: quick ? 4 : 16,
    warmup: scale(2000),
    sequential: quick ? 100 : 300,
    concurrent: quick ? 300 : 1500,
    concurrency: 32
  },
  trust: {
    pairs: quick ? 2 : 10,
    // Calls before a pair is measured: V8 is still compiling the audit's code after a few thousand (section 10's CPU
    // per call, on against off, fell from 1.2× to 1.02× between 3,000 and 60,000 calls).
    warmup: scale(4000),
    sequential: scale(3000),
    concurrent: scale(24000),
    slices: quick ? 4 : 24,
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
  const daemon = await echoDaemon(Bundle.variants.dist, "eras-http", "")
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
    await daemon.stop()
  }
  out.loadavgAfter = loadavg()
  return out
}

// ---------------------------------------------------------------------------------------------------------------------
// 1b. Calls in the first 2 s after start: what a host calling soon after it connected sees (V8 still warming up, and
// clawtool's start-up settings, ADR 027), against the same child started fresh and called directly

/** Spawn, initialize, tools/list, then sequential calls until `windowMs` after the spawn: their latencies, in ms. */
const callsAfterStart = async (args, tool, label, env) => {
  const conn = await open(args, label, env)
  try {
    await listTools(conn.client)
    const latencies = []
    const cpuBefore = cpuMsOf(conn.pid)
    while (performance.now() - conn.started < plan.firstcalls.windowMs) {
      const started = performance.now()
      const result = await callEcho(conn.client, tool)
      latencies.push(performance.now() - started)
      if (result.content?.[0]?.text !== "hello")
        throw new Error(`${label}: unexpected result ${JSON.stringify(result)}`)
    }
    return { latencies, cpuMs: cpuMsOf(conn.pid) - cpuBefore, memory: memoryOf(conn.pid) }
  } finally {
    await conn.close()
  }
}

const firstCalls = async () => {
  const p = plan.firstcalls
  // clawtool as at every start after the first: with the bin's code cache, filled by one run that listed and called.
  // Its persisted catalog is removed before each run, so that tools/list waits for the child as the direct path's
  // initialize does, and the first call finds it running.
  const env = { CLAWTOOL_CACHE_DIR: freshCacheDir() }
  const withoutCatalog = () => {
    for (const name of readdirSync(env.CLAWTOOL_CACHE_DIR))
      if (name.startsWith("catalog-")) rmSync(Path.join(env.CLAWTOOL_CACHE_DIR, name), { force: true })
  }
  const args = clawtoolArgs(Bundle.variants.dist, { echo: [echoServer] })
  await callsAfterStart(args, "echo__echo", "first calls (filling the code cache)", env)
  const runs = { direct: [], clawtool: [] }
  for (let r = 0; r < p.runs; r++) {
    // Round robin, so both see the same machine load.
    runs.direct.push(await callsAfterStart([echoServer], "echo", "first calls direct", {}))
    withoutCatalog()
    runs.clawtool.push(await callsAfterStart(args, "echo__echo", "first calls via clawtool", env))
  }
  const summary = (path) => {
    const latencies = path.flatMap((run) => run.latencies)
    return {
      p50Ms: round(median(latencies), 3),
      p99Ms: round(percentile(latencies, 99), 3),
      calls: latencies.length,
      // CPU of the process the client talks to, as in section 1: it moves less than wall time on a busy machine.
      cpuUsPerCall:
        latencies.length === 0
          ? null
          : Math.round((1000 * path.reduce((sum, run) => sum + run.cpuMs, 0)) / latencies.length),
      // Per run: p50 (null when start-up took the whole window) and how many calls fit.
      runs: path.map((run) => ({ p50Ms: round(median(run.latencies), 3), calls: run.latencies.length }))
    }
  }
  const direct = summary(runs.direct)
  const clawtool = summary(runs.clawtool)
  const out = {
    plan: p,
    direct,
    clawtool: {
      ...clawtool,
      latencyRatioP50: clawtool.p50Ms === null ? null : round(clawtool.p50Ms / direct.p50Ms),
      // What optimising the first calls costs in memory (no call at all: section 8).
      peakRssMb: median(runs.clawtool.map((run) => run.memory.peakRssMb))
    }
  }
  log(
    `  p50 ${direct.p50Ms} -> ${clawtool.p50Ms} ms (x${out.clawtool.latencyRatioP50}), CPU ${direct.cpuUsPerCall} -> ${clawtool.cpuUsPerCall} µs/call, ${clawtool.calls} calls in ${p.runs} runs; clawtool peak RSS ${out.clawtool.peakRssMb} MB`
  )
  return out
}

// ---------------------------------------------------------------------------------------------------------------------
// 2. Start-up: 20 sources whose initialize takes 1 s

const slowSources = () =>
  Object.fromEntries(
    Array.from({ length: plan.startup.sources }, (_, i) => [
      `slow-${String(i + 1).padStart(2, "0")}`,
      [rawServer, "--init-delay", String(plan.startup.initDelayMs)]
    ])
  )

const startupOnce = async (entry) => {
  const proxied = await open(clawtoolArgs(entry, slowSources()), "clawtool start-up")
  try {
    const { tools } = await listTools(proxied.client)
    const fullMs = performance.now() - proxied.started
    const echoes = tools.filter((tool) => tool.name.endsWith("__echo")).length
    if (echoes !== plan.startup.sources) {
      throw new Error(`tools/list had ${echoes} of ${plan.startup.sources} sources\n${proxied.stderr()}`)
    }
    return { fullMs, initMs: proxied.initMs, afterInitMs: fullMs - proxied.initMs }
  } finally {
    await proxied.close()
  }
}

/** The reference: the bench itself spawns the same 20 children concurrently and lists each. */
const startupDirectOnce = async () => {
  const started = performance.now()
  const children = await Promise.all(
    Object.values(slowSources()).map(async (args) => {
      const child = await open(args, "slow child")
      await listTools(child.client)
      return child
    })
  )
  const fullMs = performance.now() - started
  await Promise.all(children.map((child) => child.close()))
  return { fullMs }
}

/**
 * Both MCP eras (ADR 033), same run: a fresh clawtool (nothing cached) serving two children until its tools/list has
 * both: two legacy ones (each probed with server/discover, then initialize on the same process), a legacy one beside the
 * modern-only fixture (SDK v2, discover adopted), and the two legacy ones with protocol = "legacy" (no probe at all).
 */
const modernServer = Path.join(root, "test/fixtures/modern-server.mjs")
const eraPairs = {
  legacyPair: [{ legacy: [rawServer], other: [rawServer] }, () => ""],
  modernBesideLegacy: [{ legacy: [rawServer], modern: [modernServer] }, () => ""],
  legacyPairNoProbe: [{ legacy: [rawServer], other: [rawServer] }, () => 'protocol = "legacy"\n']
}
const eraPairOnce = async (entry, [sources, toml]) => {
  const proxied = await open(clawtoolArgs(entry, sources, [], toml), "clawtool eras")
  try {
    const { tools } = await listTools(proxied.client)
    const echoes = tools.filter((tool) => tool.name.endsWith("__echo")).length
    if (echoes !== 2) throw new Error(`tools/list had ${echoes} of 2 sources\n${proxied.stderr()}`)
    return performance.now() - proxied.started
  } finally {
    await proxied.close()
  }
}

const startup = async (variants) => {
  const rows = Object.fromEntries(Object.keys(variants).map((name) => [name, []]))
  const direct = []
  const eras = Object.fromEntries(Object.keys(eraPairs).map((name) => [name, []]))
  for (let r = 0; r < plan.startup.runs; r++) {
    direct.push(await startupDirectOnce())
    for (const [name, entry] of Object.entries(variants)) rows[name].push(await startupOnce(entry))
    for (const [name, pair] of Object.entries(eraPairs)) eras[name].push(await eraPairOnce(variants.dist, pair))
  }
  const summarize = (runs) => ({
    fullMs: Math.round(median(runs.map((run) => run.fullMs))),
    initMs: Math.round(median(runs.map((run) => run.initMs))),
    afterInitMs: Math.round(median(runs.map((run) => run.afterInitMs))),
    runsMs: runs.map((run) => Math.round(run.fullMs))
  })
  const out = {
    plan: plan.startup,
    directMs: Math.round(median(direct.map((run) => run.fullMs))),
    directRunsMs: direct.map((run) => Math.round(run.fullMs)),
    clawtool: Object.fromEntries(Object.entries(rows).map(([name, runs]) => [name, summarize(runs)])),
    eras: Object.fromEntries(
      Object.entries(eras).map(([name, runs]) => [
        name,
        { fullMs: Math.round(median(runs)), runsMs: runs.map((ms) => Math.round(ms)) }
      ])
    )
  }
  log(
    `  direct ${out.directMs} ms; clawtool ${Object.entries(out.clawtool)
      .map(([k, v]) => `${k} ${v.fullMs} ms`)
      .join(", ")}`
  )
  log(
    `  two children, first start: ${Object.entries(out.eras)
      .map(([k, v]) => `${k} ${v.fullMs} ms`)
      .join(", ")}`
  )
  return out
}

// ---------------------------------------------------------------------------------------------------------------------
// 3. Cold start: process start -> initialize answered

const coldstart = async (variants) => {
  const empty = Path.join(tmp(), "empty.toml")
  writeFileSync(empty, "# no sources\n")
  // Every clawtool start gets an empty cache folder (lib.mjs), so "clawtool dist" is a first start: nothing cached.
  // The "code cache" row shares one folder, filled by a first run here: V8's code cache of the bin (src/launcher.ts),
  // as on every start after the first (the config has no source, so no catalog is involved).
  const codeCache = { CLAWTOOL_CACHE_DIR: freshCacheDir() }
  const candidates = {
    "raw-server (node, no SDK)": { args: [rawServer] },
    "bare SDK server": { args: [echoServer] },
    ...Object.fromEntries(
      Object.entries(variants).flatMap(([name, entry]) => [
        [`clawtool ${name}`, { args: [entry, "serve", "--config", empty] }],
        [`clawtool ${name}, code cache`, { args: [entry, "serve", "--config", empty], env: codeCache }]
      ])
    )
  }
  await (await open(candidates["clawtool dist, code cache"].args, "filling the code cache", codeCache)).close()
  const times = Object.fromEntries(Object.keys(candidates).map((name) => [name, []]))
  const memory = {}
  for (let r = 0; r < plan.coldstart.runs; r++) {
    // Round robin, so every candidate sees the same machine load.
    for (const [name, { args, env }] of Object.entries(candidates)) {
      const child = await open(args, name, env)
      times[name].push(child.initMs)
      if (r === 0) memory[name] = memoryOf(child.pid)
      await child.close()
    }
  }
  const bare = median(times["bare SDK server"])
  const rows = Object.fromEntries(
    Object.entries(times).map(([name, runs]) => [
      name,
      {
        medianMs: Math.round(median(runs)),
        minMs: Math.round(Math.min(...runs)),
        ratioToBareSdk: round(median(runs) / bare),
        peakRssMbAtInit: memory[name].peakRssMb
      }
    ])
  )
  for (const [name, row] of Object.entries(rows)) log(`  ${name}: ${row.medianMs} ms (x${row.ratioToBareSdk})`)
  return { plan: plan.coldstart, rows }
}

// ---------------------------------------------------------------------------------------------------------------------
// 4. Catalog: one child with 10,000 tools

/** Catalog.build, in process, on the same 10,001 tools the child serves: the pipeline (names, hints, sort, hash). */
const pipelineMs = async (tools) => {
  const servicesDir = Path.join(Path.dirname(Bundle.variants.dist), "services")
  try {
    const [Catalog, Manifest, CoreTools, Either] = await Promise.all([
      import(pathToFileURL(Path.join(servicesDir, "Registry", "Catalog.js")).href),
      import(pathToFileURL(Path.join(servicesDir, "CoreTools", "Manifest.js")).href),
      import(pathToFileURL(Path.join(servicesDir, "CoreTools.js")).href),
      import("effect/Either")
    ])
    const manifest = Either.getOrThrow(Manifest.make(CoreTools.coreSpecs))
    const input = { manifest, sources: [{ instance: "big", tools }], toolConfig: {}, budget: 64 }
    Catalog.build(input) // warm-up
    const runs = []
    const cpuRuns = []
    for (let i = 0; i < plan.catalog.builds; i++) {
      const started = performance.now()
      const cpu = process.cpuUsage()
      const catalog = Catalog.build(input)
      const used = process.cpuUsage(cpu)
      runs.push(performance.now() - started)
      cpuRuns.push((used.user + used.system) / 1000)
      if (catalog.tools.length < tools.length) throw new Error(`built ${catalog.tools.length} tools`)
    }
    return { ms: median(runs), cpuMs: median(cpuRuns), runsMs: runs.map((x) => round(x, 1)), ...(await cleanMs(tools)) }
  } catch (error) {
    return { ms: NaN, cpuMs: NaN, error: `in-process Catalog.build unavailable: ${error.message}` }
  }
}

/**
 * Clean.tool over every tool (what a cold Catalog.build adds for clean descriptions: one scan of each string, no copy
 * of a clean tool), against JSON.stringify of the same tools (which the build does once per tool anyway), alternated.
 */
const cleanMs = async (tools) => {
  const servicesDir = Path.join(Path.dirname(Bundle.variants.dist), "services")
  const Clean = await import(pathToFileURL(Path.join(servicesDir, "Trust", "Clean.js")).href)
  const cleaning = []
  const serialising = []
  for (let i = 0; i < plan.catalog.builds * 3; i++) {
    let started = performance.now()
    for (const tool of tools) if (Clean.tool(tool) !== tool) throw new Error(`${tool.name} is not clean`)
    cleaning.push(performance.now() - started)
    started = performance.now()
    for (const tool of tools) JSON.stringify(tool)
    serialising.push(performance.now() - started)
  }
  return {
    cleanMs: median(cleaning),
    stringifyMs: median(serialising),
    cleanRatio: median(cleaning) / median(serialising)
  }
}

const catalog = async () => {
  const childArgs = [rawServer, "--tools", String(plan.catalog.tools)]
  const direct = await open(childArgs, "10k direct")
  const proxied = await open(clawtoolArgs(Bundle.variants.dist, { big: childArgs }), "10k via clawtool")
  try {
    let started = performance.now()
    const first = await listTools(proxied.client)
    const firstListMs = performance.now() - started
    const proxiedTimes = []
    const directTimes = []
    let directResult
    let clawtoolCpuMs = 0
    for (let i = 0; i < plan.catalog.lists; i++) {
      started = performance.now()
      const cpuBefore = cpuMsOf(proxied.pid)
      await listTools(proxied.client)
      proxiedTimes.push(performance.now() - started)
      clawtoolCpuMs += cpuMsOf(proxied.pid) - cpuBefore
      started = performance.now()
      directResult = await listTools(direct.client)
      directTimes.push(performance.now() - started)
    }
    const pipeline = await pipelineMs(directResult.tools)
    const warmProxied = median(proxiedTimes)
    const warmDirect = median(directTimes)
    // Server time of a warm tools/list, two ways: clawtool's CPU time per list (from /proc: its SDK Server, the
    // serialisation, the write; robust on a busy machine), and the round trip minus a direct round trip of a
    // same-sized, pre-serialised answer (wall time, noisy). The first tools/list after a catalog change also runs the
    // pipeline, timed in process (CPU time). The target is judged on pipeline CPU + warm-list CPU.
    const warmServerMs = Math.max(0, warmProxied - warmDirect)
    const warmListCpuMs = clawtoolCpuMs / plan.catalog.lists
    const out = {
      plan: plan.catalog,
      tools: first.tools.length,
      responseBytes: Buffer.byteLength(JSON.stringify(first)),
      directResponseBytes: Buffer.byteLength(JSON.stringify(directResult)),
      firstListMs: Math.round(firstListMs),
      warmListMs: round(warmProxied, 1),
      directListMs: round(warmDirect, 1),
      warmServerMs: round(warmServerMs, 1),
      warmListCpuMs: round(warmListCpuMs, 1),
      pipelineMs: round(pipeline.ms, 1),
      pipelineCpuMs: round(pipeline.cpuMs, 1),
      pipelineRunsMs: pipeline.runsMs,
      cleanMs: round(pipeline.cleanMs, 1),
      stringifyMs: round(pipeline.stringifyMs, 1),
      cleanRatio: round(pipeline.cleanRatio, 2),
      ...(pipeline.error === undefined ? {} : { pipelineError: pipeline.error }),
      serverMs: round(warmListCpuMs + (Number.isNaN(pipeline.cpuMs) ? 0 : pipeline.cpuMs), 1),
      clawtoolMemory: memoryOf(proxied.pid)
    }
    log(
      `  ${out.tools} tools, ${out.responseBytes} bytes; pipeline ${out.pipelineCpuMs} ms CPU + warm list ${out.warmListCpuMs} ms CPU`
    )
    return out
  } finally {
    await Promise.all([direct.close(), proxied.close()])
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// 5. Memory: clawtool with 20 idle children

/** Child processes of `pid`, each marked a source (a bench fixture) or not. */
const childrenOf = (pid) => {
  const children = []
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
      if (ppid !== pid) continue
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ")
      children.push({
        pid: Number(entry),
        source: cmdline.includes(Path.join("bench", "fixtures")),
        command: cmdline.slice(0, 60),
        ...memoryOf(Number(entry))
      })
    } catch {
      // The process ended while being read.
    }
  }
  return children
}

/** Child processes of `pid` that are not sources (e.g. a reaper helper): their RSS is clawtool's too. */
const helpersOf = (pid) => childrenOf(pid).filter((child) => !child.source)

const memory = async (variants) => {
  const sources = Object.fromEntries(
    Array.from({ length: plan.memory.sources }, (_, i) => [`idle-${String(i + 1).padStart(2, "0")}`, [rawServer]])
  )
  const rows = {}
  for (const [name, entry] of Object.entries(variants)) {
    const proxied = await open(clawtoolArgs(entry, sources), `memory ${name}`)
    try {
      const { tools } = await listTools(proxied.client)
      if (tools.filter((tool) => tool.name.endsWith("__echo")).length !== plan.memory.sources) {
        throw new Error(`memory ${name}: not every source is running\n${proxied.stderr()}`)
      }
      await sleep(plan.memory.idleMs)
      const helpers = helpersOf(proxied.pid)
      rows[name] = {
        ...memoryOf(proxied.pid),
        helperProcesses: helpers.length,
        helpersRssMb: round(
          helpers.reduce((sum, helper) => sum + (helper.rssMb ?? 0), 0),
          1
        )
      }
    } finally {
      await proxied.close()
    }
    log(
      `  clawtool ${name}: peak ${rows[name].peakRssMb} MB, now ${rows[name].rssMb} MB; ` +
        `${rows[name].helperProcesses} helper process(es), ${rows[name].helpersRssMb} MB`
    )
  }
  return { plan: plan.memory, clawtool: rows }
}

// ---------------------------------------------------------------------------------------------------------------------
// 6. Memory steadiness: live heap after a full GC at 5,000 and at 100,000 calls

const heapProbe = Path.join(root, "bench", "fixtures", "heap-probe.cjs")

/** Asks the preloaded probe in `pid` for a full GC and process.memoryUsage(), in MB. */
const liveHeap = async (pid) => {
  const file = Path.join(Os.tmpdir(), `clawtool-heap-${pid}.json`)
  rmSync(file, { force: true })
  process.kill(pid, "SIGUSR2")
  for (let waited = 0; !existsSync(file); waited += 20) {
    if (waited > 30_000) throw new Error("steadiness: the heap probe did not answer")
    await sleep(20)
  }
  const usage = JSON.parse(readFileSync(file, "utf8"))
  rmSync(file, { force: true })
  return { heapUsedMb: round(usage.heapUsed / 1024 / 1024, 2), rssMb: round(usage.rss / 1024 / 1024, 1) }
}

const steadiness = async () => {
  const p = plan.steadiness
  const proxied = await open(
    clawtoolArgs(Bundle.variants.dist, { echo: [echoServer] }, ["--expose-gc", "--require", heapProbe]),
    "steadiness via clawtool"
  )
  try {
    await throughput(proxied.client, "echo__echo", p.early, p.concurrency)
    const early = await liveHeap(proxied.pid)
    await throughput(proxied.client, "echo__echo", p.late - p.early, p.concurrency)
    const late = await liveHeap(proxied.pid)
    const growthMb = round(late.heapUsedMb - early.heapUsedMb, 2)
    log(`  live heap ${early.heapUsedMb} MB at ${p.early} calls, ${late.heapUsedMb} MB at ${p.late} (${growthMb} MB)`)
    return { plan: p, early, late, growthMb, peakRssMb: memoryOf(proxied.pid).peakRssMb }
  } finally {
    await proxied.close()
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// 7. Warm start: the 20 slow sources of section 2, with the catalog a previous run persisted

/** One `env` per source: twenty distinct child specs, so twenty cache entries as with twenty different servers. */
const ownEnv = (name) => `env = { BENCH_SOURCE = "${name}" }\n`

const cacheEntries = (dir) => readdirSync(dir).filter((name) => /^catalog-.*\.json$/.test(name)).length

/** Lists until every source's `echo` is listed and each has its cache entry, then closes (the run that fills a cache). */
const fillCache = async (args, env, count, label) => {
  const session = await open(args, label, env)
  try {
    for (let waited = 0; ; waited += 200) {
      const { tools } = await listTools(session.client)
      const listed = tools.filter((tool) => tool.name.endsWith("__echo")).length
      if (listed === count && cacheEntries(env.CLAWTOOL_CACHE_DIR) === count) return
      if (waited > 120_000) throw new Error(`${label}: ${listed} of ${count} sources listed\n${session.stderr()}`)
      await sleep(200)
    }
  } finally {
    await session.close()
  }
}

const warmstart = async (entry) => {
  const p = plan.warmstart
  const env = { CLAWTOOL_CACHE_DIR: freshCacheDir() }
  const sources = slowSources()
  await fillCache(clawtoolArgs(entry, sources, [], ownEnv), env, p.sources, "warm start (filling the cache)")
  const warm = []
  const bare = []
  for (let r = 0; r < p.runs; r++) {
    // Round robin, so both see the same machine load.
    const sdk = await open([echoServer], "bare SDK server")
    try {
      await listTools(sdk.client)
      bare.push(performance.now() - sdk.started)
    } finally {
      await sdk.close()
    }
    const proxied = await open(clawtoolArgs(entry, sources, [], ownEnv), "clawtool warm start", env)
    try {
      const { tools } = await listTools(proxied.client)
      const fullMs = performance.now() - proxied.started
      const echoes = tools.filter((tool) => tool.name.endsWith("__echo")).length
      if (echoes !== p.sources) throw new Error(`warm start: tools/list had ${echoes} of ${p.sources} sources`)
      warm.push({ fullMs, initMs: proxied.initMs })
    } finally {
      await proxied.close()
    }
  }
  const bareMs = median(bare)
  const out = {
    plan: p,
    fullMs: Math.round(median(warm.map((run) => run.fullMs))),
    initMs: Math.round(median(warm.map((run) => run.initMs))),
    runsMs: warm.map((run) => Math.round(run.fullMs)),
    bareSdkMs: Math.round(bareMs),
    bareSdkRunsMs: bare.map(Math.round),
    ratioToBareSdk: round(median(warm.map((run) => run.fullMs)) / bareMs)
  }
  log(`  clawtool warm ${out.fullMs} ms; bare SDK server ${out.bareSdkMs} ms (x${out.ratioToBareSdk})`)
  return out
}

// ---------------------------------------------------------------------------------------------------------------------
// 8. Lazy: 20 lazy sources with a cached catalog, none used

const lazy = async (entry) => {
  const p = plan.lazy
  const env = { CLAWTOOL_CACHE_DIR: freshCacheDir() }
  const sources = Object.fromEntries(
    Array.from({ length: p.sources }, (_, i) => [`lazy-${String(i + 1).padStart(2, "0")}`, [rawServer]])
  )
  const toml = (name) => `start = "lazy"\n${ownEnv(name)}`
  // Without a cache entry a lazy source starts once, like an eager one, to learn its catalog.
  await fillCache(clawtoolArgs(entry, sources, [], toml), env, p.sources, "lazy (filling the cache)")
  const proxied = await open(clawtoolArgs(entry, sources, [], toml), "clawtool lazy", env)
  try {
    const { tools } = await listTools(proxied.client)
    const echoes = tools.filter((tool) => tool.name.endsWith("__echo")).length
    if (echoes !== p.sources) throw new Error(`lazy: tools/list had ${echoes} of ${p.sources} sources`)
    await sleep(p.idleMs)
    const children = childrenOf(proxied.pid)
    const sourceChildren = children.filter((child) => child.source).length
    if (sourceChildren > 0) throw new Error(`lazy: ${sourceChildren} source process(es) spawned, none expected`)
    const helpers = children.filter((child) => !child.source)
    const early = memoryOf(proxied.pid)
    if (p.settledMs > 0) await sleep(p.settledMs)
    const out = {
      plan: p,
      toolsListed: tools.length,
      sourceChildren,
      ...early,
      settledRssMb: p.settledMs > 0 ? memoryOf(proxied.pid).rssMb : null,
      helperProcesses: helpers.length,
      helpersRssMb: round(
        helpers.reduce((sum, helper) => sum + (helper.rssMb ?? 0), 0),
        1
      )
    }
    log(
      `  clawtool: peak ${out.peakRssMb} MB, ${out.rssMb} MB ${p.idleMs} ms after the list, ${out.settledRssMb} MB after ${p.settledMs} ms more; ${sourceChildren} source processes`
    )
    return out
  } finally {
    await proxied.close()
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// 9. Remote source: tools/call over streamable HTTP, through clawtool vs the SDK client straight to the server

const remote = async () => {
  const p = plan.remote
  const server = spawn(process.execPath, [httpEchoServer], { env: childEnv(), stdio: ["pipe", "pipe", "inherit"] })
  try {
    const port = await new Promise((resolve, reject) => {
      let out = ""
      server.stdout.on("data", (chunk) => {
        out += chunk.toString()
        const match = /port (\d+)/.exec(out)
        if (match) resolve(Number(match[1]))
      })
      server.once("exit", (code) => reject(new Error(`http-echo-server exited with ${code}`)))
    })
    const url = `http://127.0.0.1:${port}/mcp`
    const direct = new Client({ name: "clawtool-bench", version: "1.0.0" })
    direct.onerror = () => {}
    await direct.connect(httpTransport(new URL(url)))
    const via = await open(clawtoolRemoteArgs(Bundle.variants.dist, { echo: url }), "remote via clawtool")
    const paths = [
      { name: "direct", client: direct, tool: "echo" },
      { name: "clawtool", client: via.client, tool: "echo__echo" }
    ]
    const out = { plan: p }
    // Both paths warm the server (and its JIT) before either is measured; then each figure in turn.
    for (const path of paths) await sequentialLatencies(path.client, path.tool, p.warmup)
    const latencies = {}
    for (const path of paths) latencies[path.name] = await sequentialLatencies(path.client, path.tool, p.sequential)
    for (const path of paths) {
      const rps = await throughput(path.client, path.tool, p.concurrent, p.concurrency)
      out[path.name] = {
        p50Ms: round(percentile(latencies[path.name], 50), 3),
        p99Ms: round(percentile(latencies[path.name], 99), 3),
        throughputRps: Math.round(rps)
      }
    }
    out.latencyRatioP50 = round(out.clawtool.p50Ms / out.direct.p50Ms)
    out.throughputRatio = round(out.clawtool.throughputRps / out.direct.throughputRps)
    await via.close()
    await direct.close().catch(() => {})
    return out
  } finally {
    server.kill("SIGKILL")
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// 10. Trust on vs off (issue 25): the same echo child behind two clawtools, one with every check of docs/decisions/029
// at its default (pins, clean descriptions, redaction of 50 known secrets, the audit log written to a temporary file)
// and one with what can be switched off switched off. Rounds alternate the order, as in section 1.

let trustRuns = 0
/** A fresh folder per clawtool: every pair starts alike (no lock file, no audit file yet). */
const trustArgs = (on) => {
  const dir = Path.join(tmp(), `trust-${on ? "on" : "off"}-${++trustRuns}`)
  mkdirSync(dir, { recursive: true })
  const secrets = Array.from({ length: plan.trust.secrets }, (_, i) => [
    `BENCH_SECRET_${i}`,
    `s${i}-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`
  ])
  writeFileSync(
    Path.join(dir, "secrets.toml"),
    `[scopes.global]\n${secrets.map(([name, value]) => `${name} = "${value}"`).join("\n")}\n`,
    { mode: 0o600 }
  )
  const config = [
    "[sources.echo]",
    `command = ${JSON.stringify([process.execPath, echoServer])}`,
    `env = { BENCH_TOKEN = "\${BENCH_SECRET_0}" }`,
    "",
    "[trust]",
    `pins = ${JSON.stringify(Path.join(dir, "clawtool.lock"))}`,
    on ? "" : `on_change = "allow"\nredact_secrets = false`,
    "",
    "[audit]",
    on ? `path = ${JSON.stringify(Path.join(dir, "audit.jsonl"))}` : "enabled = false",
    ""
  ].join("\n")
  const file = Path.join(dir, "config.toml")
  writeFileSync(file, config)
  return [Bundle.variants.dist, "serve", "--config", file, "--secrets", Path.join(dir, "secrets.toml")]
}

/**
 * One pair of section 10: a fresh `off` and `on` clawtool, warmed up, then `p.sequential` calls to each in turns (the
 * two alternate call by call, so a neighbour's burst slows both alike), then `p.concurrent` calls from `p.concurrency`
 * callers to each, in `p.slices` slices alternating between them. The p50s, rates and each clawtool's CPU per call.
 */
const trustPair = async (p, pair) => {
  const opened = []
  try {
    // Opened in alternating order across pairs: neither is always the older process.
    for (const on of pair % 2 === 0 ? [false, true] : [true, false]) {
      opened.push({ name: on ? "on" : "off", conn: await open(trustArgs(on), `trust ${on ? "on" : "off"}`) })
    }
    const [off, on] = ["off", "on"].map((name) => opened.find((path) => path.name === name))
    for (const path of [off, on]) {
      const result = await callEcho(path.conn.client, "echo__echo")
      if (result.content?.[0]?.text !== "hello") {
        throw new Error(`trust ${path.name}: unexpected result ${JSON.stringify(result)}\n${path.conn.stderr()}`)
      }
      await sequentialLatencies(path.conn.client, "echo__echo", p.warmup)
      await throughput(path.conn.client, "echo__echo", p.warmup * 4, p.concurrency)
    }
    const cpuBefore = [off, on].map((path) => cpuMsOf(path.conn.pid))
    const latencies = { off: new Float64Array(p.sequential), on: new Float64Array(p.sequential) }
    for (let i = 0; i < p.sequential; i++) {
      for (const path of i % 2 === 0 ? [off, on] : [on, off]) {
        const started = performance.now()
        await callEcho(path.conn.client, "echo__echo")
        latencies[path.name][i] = performance.now() - started
      }
    }
    // Many short slices, off-on then on-off: a burst on the machine falls on both alike.
    const seconds = { off: 0, on: 0 }
    for (let slice = 0; slice < p.slices; slice++) {
      for (const path of slice % 2 === 0 ? [off, on] : [on, off]) {
        const started = performance.now()
        await throughput(path.conn.client, "echo__echo", p.concurrent / p.slices, p.concurrency)
        seconds[path.name] += (performance.now() - started) / 1000
      }
    }
    const calls = p.sequential + p.concurrent
    const row = (path, k) => ({
      latencies: latencies[path.name],
      p50: median(latencies[path.name]),
      rate: p.concurrent / seconds[path.name],
      cpu: (1000 * (cpuMsOf(path.conn.pid) - cpuBefore[k])) / calls
    })
    return { off: row(off, 0), on: row(on, 1) }
  } finally {
    await Promise.all(opened.map((path) => path.conn.close()))
  }
}

/**
 * Section 10: `p.pairs` fresh pairs, one after the other. Fresh processes per pair, since one process's JIT and heap
 * settle where they settle and keep it: two clawtools of the same build and config, measured side by side for minutes,
 * stay a few per cent apart. The figures are the medians of the pairs' on/off ratios.
 */
const trust = async () => {
  const p = plan.trust
  const pairs = []
  for (let pair = 0; pair < p.pairs; pair++) {
    pairs.push(await trustPair(p, pair))
    const last = pairs.at(-1)
    log(
      `  pair ${pair + 1}/${p.pairs}: p50 ratio ${round(last.on.p50 / last.off.p50, 3)}, c=${p.concurrency} ratio ${round(last.on.rate / last.off.rate, 3)}`
    )
  }
  const summary = (name) => ({
    p50Ms: round(median(pairs.map((pair) => pair[name].p50)), 3),
    p99Ms: round(
      percentile(
        pairs.flatMap((pair) => Array.from(pair[name].latencies)),
        99
      ),
      3
    ),
    throughputRps: Math.round(median(pairs.map((pair) => pair[name].rate))),
    calls: p.pairs * (p.sequential + p.concurrent),
    cpuUsPerCall: Math.round(median(pairs.map((pair) => pair[name].cpu)))
  })
  const ratio = (key) => round(median(pairs.map((pair) => pair.on[key] / pair.off[key])), 3)
  const out = {
    plan: p,
    off: summary("off"),
    on: summary("on"),
    latencyRatioP50: ratio("p50"),
    throughputRatio: ratio("rate"),
    cpuRatio: ratio("cpu"),
    perPair: pairs.map((pair) => ({
      latencyRatio: round(pair.on.p50 / pair.off.p50, 3),
      throughputRatio: round(pair.on.rate / pair.off.rate, 3),
      cpuUsPerCall: [Math.round(pair.off.cpu), Math.round(pair.on.cpu)]
    }))
  }
  log(
    `  p50 ${out.off.p50Ms} -> ${out.on.p50Ms} ms (ratio ${out.latencyRatioP50}), ` +
      `${out.off.throughputRps} -> ${out.on.throughputRps} calls/s (ratio ${out.throughputRatio}), CPU ratio ${out.cpuRatio}`
  )
  return out
}

// ---------------------------------------------------------------------------------------------------------------------
// 12. Metrics on vs off (issue 29): the same echo child behind two daemons (`serve --listen`, streamable HTTP), one
// counting every call for /metrics and the dashboard (the defaults) and one with `[http] metrics = false, ui = false`.
// Many short rounds in alternating order (bench/ab.mjs); the figures are the medians of the rounds' on/off ratios.

/** A path's figures over its rounds: medians per round, and the CPU total beside its median. */
const abSummary = (rows, p) => ({
  p50Ms: round(median(rows.map((row) => row.p50)), 3),
  p99Ms: round(
    percentile(
      rows.flatMap((row) => Array.from(row.latencies)),
      99
    ),
    3
  ),
  throughputRps: Math.round(median(rows.map((row) => row.rate))),
  calls: rows.length * (p.sequential + p.concurrent),
  cpuUsPerCall: Math.round(median(rows.map((row) => row.cpu))),
  cpuUsPerCallTotal: Math.round(rows.reduce((sum, row) => sum + row.cpu, 0) / rows.length),
  benchCpuUsPerCall: Math.round(median(rows.map((row) => row.benchCpu)))
})

const metrics = async () => {
  const p = plan.metrics
  const paths = []
  try {
    for (const mode of ["off", "on"]) {
      paths.push({ name: mode, conn: await openDaemon(Bundle.variants.dist, `metrics-${mode}`, mode) })
    }
    const rounds = await alternate(paths, p, (r) => log(`  round ${r + 1}/${p.rounds}`))
    // The counted calls are there: the "on" daemon's /metrics has them.
    const scraped = await (await fetch(new URL("/metrics", paths[1].conn.url))).text()
    if (!/clawtool_tool_calls_total\{source="echo",tool="echo",outcome="ok"\} [1-9]/.test(scraped)) {
      throw new Error(`metrics on: the calls are not counted:\n${scraped.slice(0, 2000)}`)
    }
    const [off, on] = [abSummary(rounds.off, p), abSummary(rounds.on, p)]
    const ratio = (key) => round(median(rounds.on.map((row, i) => row[key] / rounds.off[i][key])), 3)
    const out = {
      plan: p,
      off,
      on,
      latencyRatioP50: ratio("p50"),
      throughputRatio: ratio("rate"),
      cpuRatio: ratio("cpu"),
      cpuRatioTotal: round(on.cpuUsPerCallTotal / off.cpuUsPerCallTotal, 3),
      perRound: rounds.on.map((row, i) => ({
        latencyRatio: round(row.p50 / rounds.off[i].p50),
        throughputRatio: round(row.rate / rounds.off[i].rate),
        cpuUsPerCall: [Math.round(rounds.off[i].cpu), Math.round(row.cpu)]
      }))
    }
    log(
      `  daemon CPU ${off.cpuUsPerCall} -> ${on.cpuUsPerCall} µs/call (ratio ${out.cpuRatio}; totals ${out.cpuRatioTotal}), ` +
        `p50 ratio ${out.latencyRatioP50}, c=32 ratio ${out.throughputRatio}`
    )
    return out
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
    add("metrics on/off daemon CPU per call", results.metrics.cpuRatio, "≤", round(1 + targets.metricsApart), "")
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
      [
        "metrics (echo via the daemon, HTTP)",
        "p50 / p99 ms",
        "ratio p50",
        "c=32 calls/s",
        "ratio",
        "daemon CPU µs/call (total)",
        "ratio (totals)",
        "bench CPU µs/call"
      ],
      [
        [
          "[http] metrics = false, ui = false",
          `${m.off.p50Ms} / ${m.off.p99Ms}`,
          "",
          m.off.throughputRps,
          "",
          `${m.off.cpuUsPerCall} (${m.off.cpuUsPerCallTotal})`,
          "",
          m.off.benchCpuUsPerCall
        ],
        [
          "  counted for /metrics and the dashboard",
          `${m.on.p50Ms} / ${m.on.p99Ms}`,
          m.latencyRatioP50,
          m.on.throughputRps,
          m.throughputRatio,
          `${m.on.cpuUsPerCall} (${m.on.cpuUsPerCallTotal})`,
          `${m.cpuRatio} (${m.cpuRatioTotal})`,
          m.on.benchCpuUsPerCall
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
