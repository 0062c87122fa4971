#!/usr/bin/env node
// redact.mjs: what redacting known secrets costs (issue 25, docs/decisions/029 "Redaction"). Run after `npm run build`:
//   node bench/redact.mjs [--quick] [--calls-only] [--out FILE]
// 1. The scan of a 20 MB tools/call answer line with 50 secrets known (none in it: the common case), against
//    JSON.stringify of the same result (what the answer costs anyway) and one RegExp alternation of every secret's forms
//    (the obvious alternative), in this process, medians of warm runs. Also the line with one secret in it (parsed,
//    redacted, serialised again). Target: the scan ≤ 50 ms.
// 2. tools/call of `echo` through `clawtool serve` with 50 secrets in secrets.toml, `[trust] redact_secrets` true vs
//    false, over the same child: p50 (c=1) and throughput (c=32), rounds in alternating order. Target: within 5 %.
// Prints a table and writes bench/.out/redact.json.
import { randomBytes } from "node:crypto"
import { mkdirSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { cleanup, callEcho, distMain, echoServer, log, median, open, root, round, throughput, tmp } from "./lib.mjs"

const argv = process.argv.slice(2)
const quick = argv.includes("--quick")
const callsOnly = argv.includes("--calls-only")
const at = argv.indexOf("--out")
const outFile = Path.resolve(at === -1 ? Path.join(root, "bench", ".out", "redact.json") : argv[at + 1])
const { make } = await import(Path.join(root, "dist", "services", "Trust", "Redactor.js"))

/** 50 secrets as tokens look (32 url-safe characters), a few with characters JSON and URLs escape. */
const secrets = Array.from({ length: 50 }, (_, i) => ({
  name: `SECRET_${i}`,
  value: randomBytes(24).toString("base64url") + (i % 10 === 0 ? '"/\\ x' : "")
}))

const timed = (run, runs) => {
  const times = []
  for (let i = 0; i < runs + 3; i++) {
    const started = performance.now()
    run()
    if (i >= 3) times.push(performance.now() - started) // three warm-up runs
  }
  return round(median(times), 1)
}

const scan = () => {
  const runs = quick ? 5 : 15
  // Text a tool returns: lines of words, digits and punctuation (not the secrets' alphabet only).
  const word = () => randomBytes(1 + (randomBytes(1)[0] % 9)).toString("base64url")
  const lines = []
  for (let size = 0; size < 20 * 1024 * 1024;) {
    const line = `${Array.from({ length: 12 }, word).join(" ")} = ${randomBytes(2).readUInt16BE()};`
    lines.push(line)
    size += line.length + 1
  }
  const result = { content: [{ type: "text", text: lines.join("\n") }] }
  const line = `{"jsonrpc":"2.0","id":1,"result":${JSON.stringify(result)}}\n`
  const redactor = make(secrets)
  if (redactor.line(line) !== line) throw new Error("a random secret occurs in the random text: run again")
  const withSecret = line.replace(" = ", ` = ${secrets[7].value} `)
  const escaped = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  const forms = secrets.flatMap(({ value }) => [value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value)])
  const alternation = new RegExp(
    [...new Set(forms)]
      .sort((a, b) => b.length - a.length)
      .map(escaped)
      .join("|")
  )
  return {
    bytes: line.length,
    scanMs: timed(() => redactor.line(line), runs),
    stringifyMs: timed(() => JSON.stringify(result), runs),
    regexpMs: timed(() => alternation.test(line), quick ? 2 : 5),
    withOneSecretMs: timed(() => redactor.line(withSecret), quick ? 2 : 5)
  }
}

const sequential = async (client, n) => {
  const latencies = []
  for (let i = 0; i < n; i++) {
    const started = performance.now()
    await callEcho(client, "echo__echo")
    latencies.push(performance.now() - started)
  }
  return median(latencies)
}

const calls = async () => {
  const dir = tmp()
  writeFileSync(
    Path.join(dir, "secrets.toml"),
    `[scopes.global]\n${secrets.map(({ name, value }) => `${name} = ${JSON.stringify(value)}`).join("\n")}\n`,
    { mode: 0o600 }
  )
  const configOf = (on) => {
    const file = Path.join(dir, `redact-${on}.toml`)
    writeFileSync(
      file,
      `[trust]\nredact_secrets = ${on}\n[sources.echo]\ncommand = ${JSON.stringify([process.execPath, echoServer])}\n`
    )
    return file
  }
  const paths = [
    { name: "on", conn: await open([distMain, "serve", "--config", configOf(true)], "redaction on") },
    { name: "off", conn: await open([distMain, "serve", "--config", configOf(false)], "redaction off") }
  ]
  const plan = quick
    ? { warmup: 300, sequential: 500, concurrent: 1000, rounds: 2 }
    : { warmup: 1000, sequential: 2000, concurrent: 4000, rounds: 4 }
  try {
    for (const path of paths) {
      path.p50 = []
      path.rates = []
      await sequential(path.conn.client, plan.warmup)
      await throughput(path.conn.client, "echo__echo", plan.warmup * 2)
    }
    for (let r = 0; r < plan.rounds; r++) {
      for (const path of r % 2 === 0 ? paths : [...paths].reverse()) {
        path.p50.push(await sequential(path.conn.client, plan.sequential))
        path.rates.push(await throughput(path.conn.client, "echo__echo", plan.concurrent))
      }
    }
  } finally {
    await Promise.all(paths.map((path) => path.conn.close()))
  }
  const [on, off] = paths.map((path) => ({ p50Ms: round(median(path.p50), 3), rps: Math.round(median(path.rates)) }))
  return { plan, on, off, p50Ratio: round(on.p50Ms / off.p50Ms, 3), throughputRatio: round(on.rps / off.rps, 3) }
}

try {
  log("1. scan of a 20 MB answer line, 50 secrets")
  const scanned = callsOnly ? {} : scan()
  log("2. tools/call, redaction on vs off, 50 secrets")
  const called = await calls()
  const results = {
    node: process.version,
    date: new Date().toISOString(),
    scan: { ...scanned, target: "scanMs <= 50", pass: scanned.scanMs <= 50 },
    calls: {
      ...called,
      target: "p50 and c=32 within 5 %",
      pass: Math.abs(called.p50Ratio - 1) <= 0.05 && Math.abs(called.throughputRatio - 1) <= 0.05
    }
  }
  mkdirSync(Path.dirname(outFile), { recursive: true })
  writeFileSync(outFile, JSON.stringify(results, null, 2))
  console.log(`| row | redaction | baseline | ratio |
| --- | --- | --- | --- |
| 20 MB answer, 50 secrets, none in it | scan ${scanned.scanMs} ms | JSON.stringify ${scanned.stringifyMs} ms; one RegExp ${scanned.regexpMs} ms | ${round(scanned.scanMs / scanned.stringifyMs)} of stringify |
| the same with one secret in it | ${scanned.withOneSecretMs} ms (parse, redact, serialise) | | |
| tools/call p50 (c=1) | on ${called.on.p50Ms} ms | off ${called.off.p50Ms} ms | ${called.p50Ratio} |
| tools/call c=32 | on ${called.on.rps}/s | off ${called.off.rps}/s | ${called.throughputRatio} |`)
} finally {
  cleanup()
}
