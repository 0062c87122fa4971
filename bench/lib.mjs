// lib.mjs: what run.mjs and profile.mjs share: spawning servers behind an SDK client, clawtool configs, the two
// requests every figure is made of, /proc memory, and small statistics.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js"
import { execFileSync } from "node:child_process"
import { setMaxListeners } from "node:events"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as z from "zod"

export const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
export const fixture = (name) => Path.join(root, "bench", "fixtures", name)
export const echoServer = fixture("echo-server.mjs")
export const rawServer = fixture("raw-server.mjs")
export const sdkProxy = fixture("sdk-proxy.mjs")
export const lineRelay = fixture("line-relay.mjs")
export const httpEchoServer = fixture("http-echo-server.mjs")
export const distMain = Path.join(root, "dist", "main.js")

export const log = (line) => process.stderr.write(`${line}\n`)
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// ---------------------------------------------------------------------------------------------------------------------
// Statistics

export const round = (x, digits = 2) =>
  x === null || x === undefined || Number.isNaN(x) ? null : Number(x.toFixed(digits))
export const percentile = (xs, p) => {
  if (xs.length === 0) return NaN
  const sorted = Float64Array.from(xs).sort()
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]
}
export const median = (xs) => percentile(xs, 50)

// ---------------------------------------------------------------------------------------------------------------------
// Processes

let tmpDir
/** A scratch directory for configs, removed by cleanup(). */
export const tmp = () => (tmpDir ??= mkdtempSync(Path.join(Os.tmpdir(), "clawtool-bench-")))
export const cleanup = () => {
  if (tmpDir !== undefined) rmSync(tmpDir, { recursive: true, force: true })
  tmpDir = undefined
}

/** The environment of every server under test: the bench's own, minus what would export spans or join a trace. */
export const childEnv = () => {
  const env = { ...process.env }
  for (const key of Object.keys(env)) if (/^(OTEL_|TRACEPARENT|TRACESTATE|CLAWTOOL_)/.test(key)) delete env[key]
  // The audit log (on by default, issue 25) and other state go to the run's temporary folder, never the user's.
  env.CLAWTOOL_STATE_DIR = Path.join(tmp(), "state")
  return env
}

/** A fresh, empty catalog cache folder: clawtool under test never reads or writes the user's own cache. */
export const freshCacheDir = () => mkdtempSync(Path.join(tmp(), "cache-"))

/**
 * An SDK client over stdio to `node <args>`. `started` is taken just before the spawn, so `initMs` is process start →
 * initialize answered. stderr is drained (a full pipe would stall the server) and its tail kept for error messages.
 * clawtool gets an empty catalog cache unless `env` names one (`CLAWTOOL_CACHE_DIR`): every start is cold by default.
 */
export const open = async (
  args,
  label = args.map((arg) => Path.basename(arg)).join(" "),
  env = {},
  launcher = [process.execPath]
) => {
  const transport = new StdioClientTransport({
    command: launcher[0],
    args: [...launcher.slice(1), ...args],
    env: { ...childEnv(), CLAWTOOL_CACHE_DIR: freshCacheDir(), ...env },
    cwd: root,
    stderr: "pipe"
  })
  let stderr = ""
  transport.stderr?.on("data", (chunk) => {
    stderr = (stderr + chunk.toString()).slice(-4000)
  })
  const client = new Client({ name: "clawtool-bench", version: "1.0.0" })
  client.onerror = () => {}
  const started = performance.now()
  try {
    await client.connect(transport, { timeout: 120_000 })
  } catch (error) {
    throw new Error(`${label}: initialize failed: ${error.message}\n${stderr}`)
  }
  return {
    client,
    pid: transport.pid,
    started,
    initMs: performance.now() - started,
    stderr: () => stderr,
    close: () => client.close().catch(() => {})
  }
}

/**
 * argv for `clawtool serve` (entry: the snapshot of dist/main.js) over a fresh config with these sources; `sourceToml`
 * (a function of the source's name) is added to its table, e.g. `start = "lazy"`.
 */
/**
 * A fresh folder per config: pins (clawtool.lock, issue 25) live beside the config, and sections reuse instance names
 * for other servers, which a shared lock file would see as changed definitions and hold back.
 */
const configFile = () => Path.join(mkdtempSync(Path.join(tmp(), "config-")), "config.toml")

export const clawtoolArgs = (entry, sources, nodeFlags = [], sourceToml = () => "") => {
  const file = configFile()
  const tables = Object.entries(sources).map(
    ([name, args]) =>
      `[sources.${name}]\ncommand = ${JSON.stringify([process.execPath, ...args])}\nstartup_timeout = "60s"\n${sourceToml(name)}`
  )
  writeFileSync(file, tables.join("\n"))
  return [...nodeFlags, entry, "serve", "--config", file]
}

/** argv for `clawtool serve` over a fresh config whose sources are remote: instance → url. */
export const clawtoolRemoteArgs = (entry, sources) => {
  const file = configFile()
  const tables = Object.entries(sources).map(([name, url]) => `[sources.${name}]\nurl = ${JSON.stringify(url)}\n`)
  writeFileSync(file, tables.join("\n"))
  return [entry, "serve", "--config", file]
}

// ---------------------------------------------------------------------------------------------------------------------
// Requests: the same two on every path

/**
 * The SDK's streamable-HTTP client transport, its requests over a fetch that lifts the listener limit of the signal
 * they carry: the transport hands every request its one AbortController's signal, and each fetch in flight adds an
 * abort listener to it, so 32 concurrent calls passed Node's default of 10 (hundreds of MaxListenersExceededWarning
 * lines on the bench's stderr, each a stack trace the bench process paid for during the measured rounds).
 */
export const httpTransport = (url) =>
  new StreamableHTTPClientTransport(url, {
    fetch: (input, init) => {
      if (init?.signal) setMaxListeners(0, init.signal)
      return fetch(input, init)
    }
  })

export const callEcho = (client, name) =>
  client.request({ method: "tools/call", params: { name, arguments: { text: "hello" } } }, CallToolResultSchema, {
    timeout: 60_000
  })

/** Calls per second of `n` echo calls of `tool` from `concurrency` callers at once (a new call as soon as one ends). */
export const throughput = async (client, tool, n, concurrency = 32) => {
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

// Both paths parse tools/list with a loose schema: the figures are not about the SDK client validating 10,000 tools.
const LooseListResult = z.looseObject({ tools: z.array(z.looseObject({ name: z.string() })) })
export const listTools = (client) =>
  client.request({ method: "tools/list", params: {} }, LooseListResult, { timeout: 120_000 })

const clockTicks = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100
  } catch {
    return 100
  }
})()

/**
 * CPU time (user + system) a process has used so far, in ms (Linux /proc, 10 ms resolution). Unlike wall time it
 * hardly moves when other work shares the machine, so it shows a process's own cost on a busy machine.
 */
export const cpuMsOf = (pid) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks
  } catch {
    return NaN
  }
}

/** Peak (VmHWM) and current (VmRSS) resident set size of a process, in MB (Linux /proc). */
export const memoryOf = (pid) => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8")
    const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN)
    return { peakRssMb: round(kb("VmHWM") / 1024, 1), rssMb: round(kb("VmRSS") / 1024, 1) }
  } catch {
    return { peakRssMb: null, rssMb: null }
  }
}
