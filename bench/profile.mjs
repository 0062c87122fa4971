#!/usr/bin/env node
// profile.mjs: runs one bench scenario against `node --cpu-prof <entry> serve` and summarises the profile.
//   node bench/profile.mjs calls [--concurrency 32] [--count 20000]   tools/call echo through clawtool (raw child)
//   node bench/profile.mjs list                                      30 warm tools/list of a 10,000-tool child
//   node bench/profile.mjs coldstart                                 process start -> initialize, zero sources
//   options: --entry FILE (default dist/main.js), --top N (default 30)
// The .cpuprofile lands in bench/.out/profiles/ (open it in Chrome DevTools > Performance, or speedscope).
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { callEcho, cleanup, clawtoolArgs, distMain, listTools, open, rawServer, root } from "./lib.mjs"

const argv = process.argv.slice(2)
const value = (name, fallback) => {
  const at = argv.indexOf(name)
  return at === -1 ? fallback : argv[at + 1]
}
const scenario = argv[0]
const entry = Path.resolve(value("--entry", distMain))
const top = Number(value("--top", "30"))
const dir = Path.join(root, "bench", ".out", "profiles", `${scenario}-${Date.now()}`)
mkdirSync(dir, { recursive: true })
const profiled = (sources) => clawtoolArgs(entry, sources, ["--cpu-prof", `--cpu-prof-dir=${dir}`])

const scenarios = {
  calls: async () => {
    const concurrency = Number(value("--concurrency", "32"))
    const count = Number(value("--count", "20000"))
    const conn = await open(profiled({ echo: [rawServer] }))
    await listTools(conn.client)
    let issued = 0
    const started = performance.now()
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (issued++ < count) await callEcho(conn.client, "echo__echo")
      })
    )
    const seconds = (performance.now() - started) / 1000
    console.log(`${count} calls at c=${concurrency}: ${Math.round(count / seconds)} calls/s`)
    await conn.close()
  },
  list: async () => {
    const conn = await open(profiled({ big: [rawServer, "--tools", "10000"] }))
    await listTools(conn.client)
    const started = performance.now()
    for (let i = 0; i < 30; i++) await listTools(conn.client)
    console.log(`30 warm tools/list: ${((performance.now() - started) / 30).toFixed(1)} ms each (round trip)`)
    await conn.close()
  },
  coldstart: async () => {
    const conn = await open(profiled({}))
    console.log(`initialize answered after ${conn.initMs.toFixed(0)} ms`)
    await conn.close()
  }
}

/** Self time by function and by package, and inclusive time of clawtool's own frames. */
const summarise = (file) => {
  const profile = JSON.parse(readFileSync(file, "utf8"))
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const where = (node) => {
    const url = node.callFrame.url
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1]
    return (
      pkg ??
      (url.startsWith("node:") ? "node" : url === "" ? "(vm)" : Path.relative(root, url.replace(/^file:\/\//, "")))
    )
  }
  const label = (node) =>
    `${node.callFrame.functionName || "(anonymous)"}  ${where(node)}:${node.callFrame.lineNumber + 1}`
  const self = new Map()
  const byPackage = new Map()
  const inclusive = new Map()
  let total = 0
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0
    total += us
    const node = byId.get(id)
    self.set(label(node), (self.get(label(node)) ?? 0) + us)
    byPackage.set(where(node), (byPackage.get(where(node)) ?? 0) + us)
    const seen = new Set()
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)
      if (!/^(dist|bench)\//.test(where(frame))) continue
      const key = label(frame)
      if (!seen.has(key)) inclusive.set(key, (inclusive.get(key) ?? 0) + us)
      seen.add(key)
    }
  })
  const show = (title, map, n) => {
    console.log(`\n${title}`)
    for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, n)) {
      console.log(`${(us / 1000).toFixed(1).padStart(9)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${key}`)
    }
  }
  console.log(`\n${file}\nsampled ${(total / 1000).toFixed(0)} ms (includes start-up and idle)`)
  show("self time by package", byPackage, 12)
  show("self time by function", self, top)
  show("inclusive time of clawtool frames", inclusive, top)
}

if (scenarios[scenario] === undefined) {
  console.error(`usage: node bench/profile.mjs <${Object.keys(scenarios).join("|")}> [--entry FILE] [--top N]`)
  process.exit(2)
}
try {
  await scenarios[scenario]()
} finally {
  cleanup()
}
const files = readdirSync(dir).filter((name) => name.endsWith(".cpuprofile"))
if (files.length === 0) console.error(`no profile in ${dir}: did clawtool exit through process.exit?`)
for (const name of files) summarise(Path.join(dir, name))
writeFileSync(Path.join(dir, "README.txt"), `node bench/profile.mjs ${argv.join(" ")}\nentry ${entry}\n`)
