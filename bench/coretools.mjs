#!/usr/bin/env node
// coretools.mjs: Grep and Glob through `clawtool serve` vs running ripgrep directly (issue 14), over this project's
// own tree (cwd = the project, so it is the root). Run after `npm run build`:
//   node bench/coretools.mjs [--runs N] [--out FILE]
// Prints a table and writes bench/coretools-results.json. The ratio (clawtool / direct, medians) is what carries over.
import { execFileSync } from "node:child_process"
import { createRequire } from "node:module"
import { writeFileSync } from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js"
import { clawtoolArgs, distMain, log, median, open, root, round } from "./lib.mjs"

const argv = process.argv.slice(2)
const value = (name) => {
  const at = argv.indexOf(name)
  return at === -1 ? undefined : argv[at + 1]
}
const runs = Number(value("--runs") ?? 15)
const outFile = Path.resolve(value("--out") ?? Path.join(root, "bench", "coretools-results.json"))
const rg = createRequire(import.meta.url).resolve(`@vscode/ripgrep-${process.platform}-${process.arch}/bin/rg`)

const timeIt = async (run) => {
  const times = []
  let size = 0
  for (let i = 0; i < runs + 2; i++) {
    const started = performance.now()
    size = await run()
    if (i >= 2) times.push(performance.now() - started) // two warm-up runs
  }
  return { medianMs: round(median(times)), size }
}

/** The same work, both ways: what the tool runs (and returns), and rg alone from a shell-less spawn. */
const cases = [
  {
    name: "Grep files_with_matches 'Effect' over the tree",
    tool: { name: "Grep", arguments: { pattern: "Effect", head_limit: 10_000 } },
    direct: ["--no-config", "--no-require-git", "--files-with-matches", "--null", "--regexp", "Effect", "--", root]
  },
  {
    name: "Grep content 'acquireRelease' -C 2",
    tool: {
      name: "Grep",
      arguments: { pattern: "acquireRelease", output_mode: "content", "-C": 2, head_limit: 10_000 }
    },
    direct: ["--no-config", "--no-require-git", "--json", "--context=2", "--regexp", "acquireRelease", "--", root]
  },
  {
    name: "Glob **/*.ts",
    tool: { name: "Glob", arguments: { pattern: "**/*.ts", limit: 1000 } },
    direct: ["--files", "--no-config", "--no-require-git", "--null", "--glob=*.ts"]
  }
]

const main = async () => {
  const conn = await open(clawtoolArgs(distMain, {}), "clawtool serve")
  const results = []
  try {
    // What any core tool call costs before it does its work: the host → clawtool round trip.
    const roundTrip = await timeIt(async () => {
      const result = await conn.client.request(
        { method: "tools/call", params: { name: "SourceHealth", arguments: {} } },
        CallToolResultSchema,
        { timeout: 120_000 }
      )
      return result.content[0]?.text.length ?? 0
    })
    log(`round trip (SourceHealth): ${roundTrip.medianMs} ms`)
    results.push({ name: "round trip (SourceHealth, no work)", clawtoolMs: roundTrip.medianMs })
    for (const entry of cases) {
      const via = await timeIt(async () => {
        const result = await conn.client.request({ method: "tools/call", params: entry.tool }, CallToolResultSchema, {
          timeout: 120_000
        })
        if (result.isError) throw new Error(`${entry.name}: ${result.content[0]?.text}`)
        return result.content[0]?.text.length ?? 0
      })
      const direct = await timeIt(
        async () => execFileSync(rg, entry.direct, { cwd: root, maxBuffer: 256 * 1024 * 1024 }).length
      )
      const row = {
        name: entry.name,
        clawtoolMs: via.medianMs,
        directMs: direct.medianMs,
        ratio: round(via.medianMs / direct.medianMs),
        clawtoolChars: via.size,
        directBytes: direct.size
      }
      results.push(row)
      log(`${row.name}: clawtool ${row.clawtoolMs} ms, rg ${row.directMs} ms, ratio ${row.ratio}`)
    }
  } finally {
    await conn.close()
  }
  const out = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: Os.cpus().length,
    loadavg: Os.loadavg().map((x) => round(x)),
    runs,
    results
  }
  writeFileSync(outFile, `${JSON.stringify(out, null, 2)}\n`)
  console.log(JSON.stringify(out, null, 2))
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
