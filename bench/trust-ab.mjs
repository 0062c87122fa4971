#!/usr/bin/env node
// trust-ab.mjs: bench section 10's two configs (bench/run.mjs `trustArgs`: trust + redaction of 50 secrets + audit on,
// against them off) over any number of builds, side by side in one sitting, for a machine too busy for run.mjs's
// three rounds: each path's clawtool CPU per call is taken per round (c=1 then c=32 calls), and the median and the
// minimum over the rounds are printed beside the total (a round slowed by a neighbour moves the total, not the median).
//   node bench/trust-ab.mjs [--rounds N] [--callgrind] NAME=DIST_MAIN[:on|:off|:redact|:audit] ...
//   e.g. cp -r dist bench/.out/before  (then change, npm run build)
//        node bench/trust-ab.mjs --rounds 8 before-off=bench/.out/before/main.js:off before-on=bench/.out/before/main.js:on \
//          off=dist/main.js:off on=dist/main.js:on
// A copy of dist/ must sit under the repository (bench/.out/ is git-ignored) so that it finds node_modules.
// --callgrind: each clawtool runs under valgrind's callgrind (instrumented only while a round runs, fewer calls), and
// instructions per call are printed beside the CPU: a count a busy machine does not move. What runs on a timer is
// counted per wall second, and under valgrind a call takes ~10× longer: for the audit log, measure copies of dist
// whose writer pause and queue are raised (in the copy's bundle, `flushEvery:millis(100)` → `millis(6e5)` and
// `defaultCapacity=4096` → `1e7`), so no append falls in a round and no line is dropped, and add the append's cost.
import { execFileSync } from "node:child_process"
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { callEcho, cleanup, cpuMsOf, echoServer, log, median, open, round, throughput, tmp } from "./lib.mjs"

const argv = process.argv.slice(2)
const at = argv.indexOf("--rounds")
const rounds = at === -1 ? 8 : Number(argv[at + 1])
const callgrind = argv.includes("--callgrind")
const specs = argv.filter((arg, i) => arg.includes("=") && i !== at + 1)
if (specs.length === 0) {
  console.error("usage: node bench/trust-ab.mjs [--rounds N] [--callgrind] NAME=DIST_MAIN[:on|:off|:redact|:audit] ...")
  process.exit(2)
}
// Under callgrind, sequential calls only: how many calls of 32 concurrent callers share a read from the pipe depends on
// how fast the two sides run, which the machine's load decides, and so would the instructions per call.
const sequential = callgrind ? 1000 : 1500
const concurrent = callgrind ? 0 : 4000
const concurrency = 32

/**
 * The config of run.mjs's section 10 (`on`: every default, the audit log in the run's folder; `off`: all off), or one
 * part of it alone, to tell where the cost is (`redact`: redaction only; `audit`: the audit log only).
 */
const args = (name, entry, mode) => {
  const redact = mode === "on" || mode === "redact"
  const audit = mode === "on" || mode === "audit"
  const dir = Path.join(tmp(), `ab-${name}`)
  mkdirSync(dir, { recursive: true })
  const secrets = Array.from({ length: 50 }, (_, i) => [
    `BENCH_SECRET_${i}`,
    `s${i}-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`
  ])
  writeFileSync(
    Path.join(dir, "secrets.toml"),
    `[scopes.global]\n${secrets.map(([key, value]) => `${key} = "${value}"`).join("\n")}\n`,
    { mode: 0o600 }
  )
  const config = [
    "[sources.echo]",
    `command = ${JSON.stringify([process.execPath, echoServer])}`,
    `env = { BENCH_TOKEN = "\${BENCH_SECRET_0}" }`,
    "",
    "[trust]",
    `pins = ${JSON.stringify(Path.join(dir, "clawtool.lock"))}`,
    mode === "on" ? "" : `on_change = "allow"`,
    redact ? "" : "redact_secrets = false",
    "",
    "[audit]",
    audit ? `path = ${JSON.stringify(Path.join(dir, "audit.jsonl"))}` : "enabled = false",
    ""
  ].join("\n")
  writeFileSync(Path.join(dir, "config.toml"), config)
  return [
    Path.resolve(entry),
    "serve",
    "--config",
    Path.join(dir, "config.toml"),
    "--secrets",
    Path.join(dir, "secrets.toml")
  ]
}

const latencies = async (client, n) => {
  const out = []
  for (let i = 0; i < n; i++) {
    const started = performance.now()
    await callEcho(client, "echo__echo")
    out.push(performance.now() - started)
  }
  return out
}
/** callgrind's instrumentation of a clawtool, switched by `callgrind_control` (valgrind's own client). */
const control = (pid, ...flags) => execFileSync("callgrind_control", [...flags, String(pid)], { stdio: "ignore" })
/** The instructions counted since the last zeroing: dumped, read from the dump's totals, and the dump removed. */
const instructionsOf = (path) => {
  control(path.conn.pid, "-d")
  const dir = Path.dirname(path.cgFile)
  const dumps = readdirSync(dir).filter((file) => file.startsWith(`${Path.basename(path.cgFile)}.`))
  let total = 0
  for (const dump of dumps) {
    const text = readFileSync(Path.join(dir, dump), "utf8")
    total += Number(/^(?:summary|totals): (\d+)/m.exec(text)?.[1] ?? NaN)
    rmSync(Path.join(dir, dump))
  }
  return total
}

const paths = []
try {
  for (const spec of specs) {
    const [name, target] = [spec.slice(0, spec.indexOf("=")), spec.slice(spec.indexOf("=") + 1)]
    const [entry, mode = "on"] = target.split(":")
    const cgFile = Path.join(tmp(), `callgrind-${name}`)
    const launcher = callgrind
      ? ["valgrind", "--tool=callgrind", "--instr-atstart=no", `--callgrind-out-file=${cgFile}`, process.execPath]
      : [process.execPath]
    const conn = await open(args(name, entry, mode), name, {}, launcher)
    paths.push({ name, conn, cgFile, cpuMs: 0, calls: 0, perRound: [], p50s: [], rates: [], instructions: [] })
  }
  for (const path of paths) {
    await latencies(path.conn.client, 1000)
    await throughput(path.conn.client, "echo__echo", 2000, concurrency)
    if (callgrind) {
      control(path.conn.pid, "-i", "on")
      // Not counted: the first calls after instrumentation starts re-translate every hot function.
      await latencies(path.conn.client, 300)
    }
  }
  for (let r = 0; r < rounds; r++) {
    for (const path of r % 2 === 0 ? paths : [...paths].reverse()) {
      if (callgrind) control(path.conn.pid, "-z")
      const before = cpuMsOf(path.conn.pid)
      const seen = await latencies(path.conn.client, sequential)
      const perSecond =
        concurrent === 0 ? NaN : await throughput(path.conn.client, "echo__echo", concurrent, concurrency)
      const used = cpuMsOf(path.conn.pid) - before
      if (callgrind) path.instructions.push(instructionsOf(path) / (sequential + concurrent))
      path.cpuMs += used
      path.calls += sequential + concurrent
      path.perRound.push((1000 * used) / (sequential + concurrent))
      path.p50s.push(median(seen))
      path.rates.push(perSecond)
    }
    log(`  round ${r + 1}/${rounds}`)
  }
  for (const path of paths) {
    console.log(
      `${path.name.padEnd(16)} CPU ${Math.round((1000 * path.cpuMs) / path.calls)} µs/call ` +
        `(median ${Math.round(median(path.perRound))}, min ${Math.round(Math.min(...path.perRound))}), ` +
        `p50 ${round(median(path.p50s), 3)} ms, c=${concurrency} ${Math.round(median(path.rates))} calls/s` +
        (callgrind
          ? `, ${round(median(path.instructions) / 1000, 1)}k instructions/call ` +
            `(rounds ${path.instructions.map((n) => round(n / 1000, 1)).join(", ")})`
          : "")
    )
  }
} finally {
  await Promise.all(paths.map((path) => path.conn.close()))
  cleanup()
  // valgrind leaves its gdbserver pipes in the temporary folder when its process is ended by a signal.
  if (callgrind) {
    const pids = new Set(paths.map((path) => `-${path.conn.pid}-by-`))
    for (const file of readdirSync(Os.tmpdir())) {
      if (file.startsWith("vgdb-pipe-") && [...pids].some((pid) => file.includes(pid))) {
        rmSync(Path.join(Os.tmpdir(), file), { force: true })
      }
    }
  }
}
