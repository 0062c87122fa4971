#!/usr/bin/env node
// daemon.mjs: the HTTP daemon's rows (issue 12); see bench/README.md. Run after `npm run build`:
//   node bench/daemon.mjs [--quick] [--out FILE]
// 1. tools/call of `echo` through `clawtool serve --listen` over streamable HTTP vs the SDK client straight to the same
//    child over stdio: p50 (c=1) and throughput (c=32). 2. Memory with 5 sessions x 10 sources: the daemon and its
//    children vs 5 stdio clawtools with theirs (one measured, times 5: they are independent copies), judged against
//    ONE stdio clawtool with its children.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { CallToolRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { execFileSync, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import * as http from "node:http"
import { readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import {
  httpTransport,
  callEcho,
  childEnv,
  cleanup,
  clawtoolArgs,
  distMain,
  echoServer,
  listTools,
  log,
  open,
  percentile,
  rawServer,
  root,
  round,
  sleep,
  throughput
} from "./lib.mjs"

const argv = process.argv.slice(2)
const quick = argv.includes("--quick")
const outAt = argv.indexOf("--out")
const outFile = Path.resolve(outAt === -1 ? Path.join(root, "bench", ".out", "daemon.json") : argv[outAt + 1])
const plan = { warmup: quick ? 200 : 1000, sequential: quick ? 400 : 2000, concurrent: quick ? 800 : 4000 }
const targets = { memoryRatio: 1.3 }

/** `clawtool serve --listen 127.0.0.1:0` over these sources; resolves with its URL once it printed it. */
const startDaemon = (sources) =>
  new Promise((resolve, reject) => {
    const args = [...clawtoolArgs(distMain, sources), "--listen", "127.0.0.1:0"]
    const child = spawn(process.execPath, args, { cwd: root, env: childEnv(), stdio: ["ignore", "ignore", "pipe"] })
    let stderr = ""
    child.stderr.on("data", (chunk) => {
      stderr += chunk.toString()
      const match = /serving MCP on (http:\/\/\S+)/.exec(stderr)
      if (match !== null) resolve({ child, url: new URL(match[1]) })
    })
    child.once("exit", (code) => reject(new Error(`daemon exited ${code}: ${stderr}`)))
  })

const httpClient = async (url) => {
  const client = new Client({ name: "clawtool-bench", version: "1.0.0" })
  client.onerror = () => {}
  await client.connect(httpTransport(url))
  return client
}

const sequential = async (client, tool, n) => {
  const out = []
  for (let i = 0; i < n; i++) {
    const started = performance.now()
    await callEcho(client, tool)
    out.push(performance.now() - started)
  }
  return out
}

const measure = async (client, tool) => {
  await sequential(client, tool, plan.warmup)
  const latencies = await sequential(client, tool, plan.sequential)
  const callsPerSecond = await throughput(client, tool, plan.concurrent, 32)
  return {
    p50Ms: round(percentile(latencies, 50), 3),
    p99Ms: round(percentile(latencies, 99), 3),
    c32PerSecond: round(callsPerSecond, 0)
  }
}

/**
 * The floor of the HTTP edge itself: the SDK's StreamableHTTPServerTransport in this process with an echo tool that
 * answers on the next turn (no child, no clawtool). Reference, not a target.
 */
const sdkHttpFloor = async () => {
  const transports = new Map()
  const server = http.createServer(async (req, res) => {
    const id = req.headers["mcp-session-id"]
    if (id !== undefined) return transports.get(id).handleRequest(req, res)
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (sid) => transports.set(sid, transport)
    })
    const mcp = new Server({ name: "floor", version: "1" }, { capabilities: { tools: {} } })
    mcp.setRequestHandler(CallToolRequestSchema, async (request) => {
      await new Promise((resolve) => setImmediate(resolve))
      return { content: [{ type: "text", text: String(request.params.arguments?.text ?? "") }] }
    })
    await mcp.connect(transport)
    await transport.handleRequest(req, res)
  })
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
  const client = await httpClient(new URL(`http://127.0.0.1:${server.address().port}/mcp`))
  const figures = await measure(client, "echo")
  await client.close()
  server.closeAllConnections()
  server.close()
  return figures
}

const overhead = async () => {
  log("overhead: direct stdio")
  const direct = await open([echoServer])
  const directFigures = await measure(direct.client, "echo")
  await direct.close()
  log("overhead: daemon over HTTP")
  const daemon = await startDaemon({ echo: [echoServer] })
  const client = await httpClient(new URL(daemon.url))
  await listTools(client)
  const daemonFigures = await measure(client, "echo__echo")
  await client.close()
  daemon.child.kill("SIGTERM")
  await new Promise((resolve) => daemon.child.once("exit", resolve))
  log("overhead: SDK HTTP floor (in process)")
  const floor = await sdkHttpFloor()
  return {
    direct: directFigures,
    daemon: daemonFigures,
    sdkHttpFloor: floor,
    p50Ratio: round(daemonFigures.p50Ms / directFigures.p50Ms),
    throughputRatio: round(daemonFigures.c32PerSecond / directFigures.c32PerSecond)
  }
}

/** RSS (MB) of `pid` and every process below it, from /proc. */
const treeRssMb = (pid) => {
  const rssOf = (p) => {
    try {
      return Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${p}/status`, "utf8"))?.[1] ?? 0) / 1024
    } catch {
      return 0
    }
  }
  const children = (p) => {
    try {
      return execFileSync("ps", ["-o", "pid=", "--ppid", String(p)], { encoding: "utf8" })
        .split("\n")
        .map((line) => Number(line.trim()))
        .filter((n) => n > 0)
    } catch {
      return []
    }
  }
  let total = 0
  let count = 0
  const stack = [pid]
  while (stack.length > 0) {
    const p = stack.pop()
    total += rssOf(p)
    count++
    stack.push(...children(p))
  }
  return { mb: round(total, 1), processes: count }
}

const memory = async () => {
  const sources = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`s${i}`, [rawServer]]))
  log("memory: one stdio clawtool with 10 sources")
  const stdio = await open(clawtoolArgs(distMain, sources))
  await listTools(stdio.client)
  await callEcho(stdio.client, "s0__echo")
  await sleep(1500)
  const one = treeRssMb(stdio.pid)
  await stdio.close()
  log("memory: the daemon with 10 sources and 5 sessions")
  const daemon = await startDaemon(sources)
  const clients = await Promise.all(Array.from({ length: 5 }, () => httpClient(new URL(daemon.url))))
  for (const client of clients) {
    await listTools(client)
    await callEcho(client, "s0__echo")
  }
  await sleep(1500)
  const shared = treeRssMb(daemon.child.pid)
  await Promise.all(clients.map((client) => client.close().catch(() => {})))
  daemon.child.kill("SIGTERM")
  await new Promise((resolve) => daemon.child.once("exit", resolve))
  return {
    oneStdio: one,
    fiveStdioMb: round(one.mb * 5, 1),
    daemon: shared,
    ratioToOneStdio: round(shared.mb / one.mb),
    ratioToFiveStdio: round(shared.mb / (one.mb * 5))
  }
}

const main = async () => {
  const results = {
    date: new Date().toISOString(),
    node: process.version,
    quick,
    overhead: await overhead(),
    memory: await memory()
  }
  results.pass = { memory: results.memory.ratioToOneStdio <= targets.memoryRatio }
  writeFileSync(outFile, `${JSON.stringify(results, null, 2)}\n`)
  const o = results.overhead
  const m = results.memory
  console.log(`| row | direct stdio | daemon HTTP | ratio |`)
  console.log(`| --- | --- | --- | --- |`)
  console.log(`| tools/call p50 (c=1) | ${o.direct.p50Ms} ms | ${o.daemon.p50Ms} ms | ${o.p50Ratio} |`)
  console.log(`| tools/call c=32 | ${o.direct.c32PerSecond}/s | ${o.daemon.c32PerSecond}/s | ${o.throughputRatio} |`)
  console.log(
    `| reference: SDK HTTP server alone, in process (no child) | | p50 ${o.sdkHttpFloor.p50Ms} ms, c=32 ${o.sdkHttpFloor.c32PerSecond}/s | |`
  )
  console.log(
    `| memory, 10 sources | one stdio ${m.oneStdio.mb} MB (${m.oneStdio.processes} processes); 5 stdio ${m.fiveStdioMb} MB | daemon + 5 sessions ${m.daemon.mb} MB (${m.daemon.processes} processes) | ${m.ratioToOneStdio} of one stdio (target <= ${targets.memoryRatio}) |`
  )
  log(`written ${outFile}`)
}

main()
  .catch((error) => {
    log(String(error?.stack ?? error))
    process.exitCode = 1
  })
  .finally(cleanup)
