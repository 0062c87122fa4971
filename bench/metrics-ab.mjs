#!/usr/bin/env node
// metrics-ab.mjs: bench section 12's daemons (bench/ab.mjs) over any number of builds and modes, side by side in one
// sitting: `on` (the defaults: metrics and ui), `off` (both off), `metrics` (ui off) and `ui` (metrics off), each a
// `serve --listen` over its own echo child with a legacy SDK host on it, in many short rounds of alternating order.
//   node bench/metrics-ab.mjs [--rounds N] [--sequential N] [--concurrent N] [--each] [--cpu-prof] [--callgrind] NAME=DIST_MAIN[:MODE] ...
//   e.g. cp -r dist bench/.out/before  (then change, npm run build)
//        node bench/metrics-ab.mjs before-off=bench/.out/before/main.js:off before-on=bench/.out/before/main.js:on \
//          off=dist/main.js:off on=dist/main.js:on
// The first path is the baseline: every other path's ratios are taken against it round by round, and their median is
// printed beside the ratio of the totals. `--each` prints every round; `--cpu-prof` runs each daemon under
// `node --cpu-prof` (profiles in bench/.out/profiles/ab-<name>-*.cpuprofile); `--callgrind` runs each under valgrind's
// callgrind and adds its instructions per call, which a busy machine does not move (by default 4 rounds of 200 calls at
// c=1 and 200 at c=32, after 1,000 + 2,000: about 50 times slower). A copy of dist/ must sit under the repository
// (bench/.out/ is git-ignored) so that it finds node_modules.
import { mkdirSync } from "node:fs"
import * as Path from "node:path"
import { alternate, callgrindCounter, callgrindWrapper, openDaemon } from "./ab.mjs"
import { cleanup, log, median, root, round, tmp } from "./lib.mjs"

const argv = process.argv.slice(2)
const option = (name, fallback) => {
  const at = argv.indexOf(name)
  return at === -1 ? fallback : Number(argv[at + 1])
}
const callgrind = argv.includes("--callgrind")
const p = {
  rounds: option("--rounds", callgrind ? 4 : 20),
  warmup: option("--warmup", callgrind ? 1000 : 2000),
  sequential: option("--sequential", callgrind ? 200 : 300),
  concurrent: option("--concurrent", callgrind ? 200 : 1500),
  concurrency: 32
}
const specs = argv.filter((arg) => /^[\w.-]+=/.test(arg))
if (specs.length === 0) {
  console.error(
    "usage: node bench/metrics-ab.mjs [--rounds N] [--each] [--cpu-prof] [--callgrind] NAME=DIST_MAIN[:on|:off|:metrics|:ui] ..."
  )
  process.exit(2)
}
const profiles = Path.join(root, "bench", ".out", "profiles")
if (argv.includes("--cpu-prof")) mkdirSync(profiles, { recursive: true })

const paths = []
try {
  for (const spec of specs) {
    const [name, target] = [spec.slice(0, spec.indexOf("=")), spec.slice(spec.indexOf("=") + 1)]
    const [entry, mode = "on"] = target.split(":")
    const flags = argv.includes("--cpu-prof")
      ? ["--cpu-prof", "--cpu-prof-dir", profiles, "--cpu-prof-name", `ab-${name}-${process.pid}.cpuprofile`]
      : []
    const wrapper = callgrind ? callgrindWrapper(tmp(), name) : []
    const conn = await openDaemon(Path.resolve(entry), `ab-${name}`, mode, flags, wrapper)
    paths.push({ name, conn, counter: callgrind ? callgrindCounter(tmp(), name, conn.pid) : undefined })
  }
  const fmt = (x) => String(Math.round(x)).padStart(5)
  const rounds = await alternate(paths, p, (r, rows) => {
    if (!argv.includes("--each")) return log(`  round ${r + 1}/${p.rounds}`)
    log(
      `  round ${String(r + 1).padStart(2)}: ` +
        paths
          .map(
            ({ name }) =>
              `${name} ${fmt(rows[name].cpuSeq)}/${fmt(rows[name].cpuConc)} µs ` +
              `p50 ${rows[name].p50.toFixed(2)} ${fmt(rows[name].rate)}/s bench ${fmt(rows[name].benchCpu)}`
          )
          .join(" | ")
    )
  })
  const base = rounds[paths[0].name]
  const sum = (rows, key) => rows.reduce((total, row) => total + row[key], 0)
  const ratio = (rows, key) => median(rows.map((row, i) => row[key] / base[i][key]))
  console.log(
    `${p.rounds} rounds of ${p.sequential} calls at c=1 then ${p.concurrent} at c=${p.concurrency}; ` +
      `CPU µs/call of the daemon: total (median of rounds, min); ratios against ${paths[0].name}: ` +
      `the median of the rounds' ratios (the totals' ratio)`
  )
  for (const { name } of paths) {
    const rows = rounds[name]
    const total = sum(rows, "cpu") / rows.length
    console.log(
      `${name.padEnd(14)} CPU ${fmt(total)} (${fmt(median(rows.map((row) => row.cpu)))}, ` +
        `${fmt(Math.min(...rows.map((row) => row.cpu)))}) c=1 ${fmt(median(rows.map((row) => row.cpuSeq)))} ` +
        `c=32 ${fmt(median(rows.map((row) => row.cpuConc)))} | child ${fmt(median(rows.map((row) => row.childCpu)))} ` +
        `bench ${fmt(median(rows.map((row) => row.benchCpu)))} | p50 ${round(median(rows.map((row) => row.p50)), 3)} ms ` +
        `c=32 ${Math.round(median(rows.map((row) => row.rate)))}/s` +
        (callgrind ? ` | ${fmt(median(rows.map((row) => row.instructions)) / 1000)} kIr/call` : "") +
        (rows === base
          ? ""
          : ` | ratios CPU ${round(ratio(rows, "cpu"), 3)} (${round(total / (sum(base, "cpu") / base.length), 3)}) ` +
            `p50 ${round(ratio(rows, "p50"), 3)} c=32 ${round(ratio(rows, "rate"), 3)}` +
            (callgrind ? ` instructions ${round(ratio(rows, "instructions"), 4)}` : ""))
    )
  }
} finally {
  await Promise.all(paths.map((path) => path.conn.close()))
  cleanup()
}
