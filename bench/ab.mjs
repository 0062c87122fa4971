// ab.mjs: daemons side by side (issue 29): `serve --listen` over the echo child, each with a legacy SDK host on it,
// measured in many short rounds in alternating order. Used by run.mjs (sections 11, 12) and metrics-ab.mjs.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { execFileSync, spawn } from "node:child_process"
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { callEcho, childEnv, echoServer, httpTransport, median, root, throughput, tmp } from "./lib.mjs"

/**
 * CPU time (ms) of every thread of a process so far: the sum of each thread's run time in nanoseconds
 * (`/proc/<pid>/task/<tid>/schedstat`), where /proc/<pid>/stat counts in 10 ms ticks (1.4 % of a 700 ms round). A thread
 * that ended is no longer counted; a daemon's threads (main, libuv pool, V8 platform workers) live as long as it does.
 */
export const threadCpuMsOf = (pid) => {
  let ns = 0
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0])
    }
  } catch {
    return NaN
  }
  return ns / 1e6
}

/** The config lines of each mode of section 12 (after them, audit off and the echo source). */
export const metricsModes = {
  on: "",
  off: "[http]\nmetrics = false\nui = false\n",
  metrics: "[http]\nui = false\n",
  ui: "[http]\nmetrics = false\n"
}

/**
 * `<entry> serve --listen 127.0.0.1:0` over the echo child with `toml` in front of it (audit off); pid, URL, stop.
 * `wrapper`: a command that runs node (e.g. valgrind and its options); the pid is then the wrapper's.
 */
export const echoDaemon = (entry, name, toml, nodeFlags = [], wrapper = []) =>
  new Promise((resolve, reject) => {
    const dir = Path.join(tmp(), name)
    mkdirSync(dir, { recursive: true })
    const file = Path.join(dir, "config.toml")
    writeFileSync(
      file,
      `${toml}\n[audit]\nenabled = false\n\n[sources.echo]\ncommand = ${JSON.stringify([process.execPath, echoServer])}\n`
    )
    const args = [...nodeFlags, entry, "serve", "--config", file, "--listen", "127.0.0.1:0"]
    const [command, ...rest] = [...wrapper, process.execPath, ...args]
    const child = spawn(command, rest, { cwd: root, env: childEnv(), stdio: ["ignore", "ignore", "pipe"] })
    let stderr = ""
    child.stderr.on("data", (chunk) => {
      stderr = (stderr + chunk.toString()).slice(-8000)
      const match = /serving MCP on (http:\/\/\S+)/.exec(stderr)
      if (match !== null) {
        resolve({
          pid: child.pid,
          url: match[1],
          stderr: () => stderr,
          stop: () => new Promise((done) => (child.kill("SIGTERM") ? child.once("exit", done) : done()))
        })
      }
    })
    child.once("exit", (code) => reject(new Error(`daemon exited ${code}: ${stderr}`)))
  })

/** A legacy SDK v1 host on a daemon (one streamable-HTTP session). */
export const legacyHttpHost = async (url) => {
  const client = new Client({ name: "clawtool-bench", version: "1.0.0" })
  client.onerror = () => {}
  await client.connect(httpTransport(new URL(url)))
  return client
}

/** A daemon of `entry` in `mode` (metricsModes) with one legacy host on it; `close` ends both. */
export const openDaemon = async (entry, name, mode, nodeFlags = [], wrapper = []) => {
  const daemon = await echoDaemon(entry, name, metricsModes[mode], nodeFlags, wrapper)
  const client = await legacyHttpHost(daemon.url)
  const result = await callEcho(client, "echo__echo")
  if (result.content?.[0]?.text !== "hello") throw new Error(`${name}: ${JSON.stringify(result)}\n${daemon.stderr()}`)
  return {
    ...daemon,
    client,
    close: async () => {
      await client.close().catch(() => {})
      await daemon.stop()
    }
  }
}

/** The child processes (pids) of `pid`: a daemon's echo source. */
const childPids = (pid) => {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number)
    )
  } catch {
    return []
  }
}

const sequential = async (client, n) => {
  const out = new Float64Array(n)
  for (let i = 0; i < n; i++) {
    const started = performance.now()
    await callEcho(client, "echo__echo")
    out[i] = performance.now() - started
  }
  return out
}

/** The bench process's own CPU (ms): the SDK client and undici, the other end of every call. */
const ownCpuMs = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

/**
 * One path's round: `p.sequential` calls at c=1, then `p.concurrent` from `p.concurrency` callers; the CPU each part
 * cost the daemon (µs per call), its child, and the bench process itself; with a `counter` (callgrind's), the
 * daemon's instructions per call too.
 */
const round = async (path, p) => {
  const child = childPids(path.conn.pid)
  const cpu = () => [threadCpuMsOf(path.conn.pid), ownCpuMs(), child.reduce((sum, pid) => sum + threadCpuMsOf(pid), 0)]
  path.counter?.zero()
  const t0 = cpu()
  const latencies = await sequential(path.conn.client, p.sequential)
  const t1 = cpu()
  const rate = await throughput(path.conn.client, "echo__echo", p.concurrent, p.concurrency)
  const t2 = cpu()
  const instructions = path.counter?.read()
  const perCall = (from, to, i, n) => (1000 * (to[i] - from[i])) / n
  return {
    p50: median(latencies),
    rate,
    latencies,
    cpuSeq: perCall(t0, t1, 0, p.sequential),
    cpuConc: perCall(t1, t2, 0, p.concurrent),
    cpu: perCall(t0, t2, 0, p.sequential + p.concurrent),
    benchCpu: perCall(t0, t2, 1, p.sequential + p.concurrent),
    childCpu: perCall(t0, t2, 2, p.sequential + p.concurrent),
    instructions: instructions === undefined ? undefined : instructions / (p.sequential + p.concurrent)
  }
}

/**
 * Warms every path up (enough calls for V8 to optimise both the daemon's and the client's code), then `p.rounds`
 * rounds, each path once per round, the order reversed every other round. `onRound(r, rows)` sees each round's rows
 * by path name. Returns every path's rounds.
 */
export const alternate = async (paths, p, onRound = () => {}) => {
  for (const path of paths) {
    await sequential(path.conn.client, p.warmup)
    await throughput(path.conn.client, "echo__echo", p.warmup * 2, p.concurrency)
    path.counter?.start()
  }
  const rounds = Object.fromEntries(paths.map((path) => [path.name, []]))
  for (let r = 0; r < p.rounds; r++) {
    const rows = {}
    for (const path of r % 2 === 0 ? paths : [...paths].reverse()) {
      rows[path.name] = await round(path, p)
      rounds[path.name].push(rows[path.name])
    }
    onRound(r, rows)
  }
  return rounds
}

/**
 * The daemon's instruction count under `valgrind --tool=callgrind --instr-atstart=no` (the `wrapper` of
 * callgrindWrapper): counted from `start` (after the warm-up), zeroed before and dumped after each round. Unlike CPU
 * time it does not grow when a neighbour shares the cores. About 50 times slower than the daemon alone.
 */
export const callgrindWrapper = (dir, name) => [
  "valgrind",
  "--tool=callgrind",
  "--instr-atstart=no",
  `--callgrind-out-file=${Path.join(dir, `${name}.%p`)}`
]

export const callgrindCounter = (dir, name, pid) => {
  const control = (...args) => execFileSync("callgrind_control", [...args, String(pid)], { encoding: "utf8" })
  return {
    start: () => void control("-i", "on"),
    zero: () => void control("-z"),
    read: () => {
      control("-d")
      const dumps = readdirSync(dir).filter((file) => file.startsWith(`${name}.${pid}.`))
      const last = dumps.sort((a, b) => Number(a.split(".").pop()) - Number(b.split(".").pop())).at(-1)
      return Number(/^(?:summary|totals): (\d+)/m.exec(readFileSync(Path.join(dir, last), "utf8"))?.[1])
    }
  }
}
