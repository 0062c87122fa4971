#!/usr/bin/env node
// demo.mjs: what `npm start` runs (after `npm run build`). It shows clawtool end to end with examples/demo.toml:
//   1. `clawtool health`: starts both demo sources and prints their status table;
//   2. `clawtool serve`: one MCP server in front of both. An MCP client (the SDK's, as any host would) lists the
//      aggregated tools and calls notes__add_note, notes__list_notes and clock__now.
// Exits non-zero with a one-line reason if any step fails.
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"

// Paths shown relative to the repo root; the config's own ./ paths resolve against its folder, so any cwd works.
process.chdir(fileURLToPath(new URL("..", import.meta.url)))
const main = "dist/main.js"
const config = "examples/demo.toml"
const deadlineMs = 60_000

const color = process.stdout.isTTY && !process.env.NO_COLOR
const paint = (code) => (text) => (color ? `\x1b[${code}m${text}\x1b[0m` : text)
const bold = paint("1")
const dim = paint("2")
const cyan = paint("36")
const green = paint("32")
const red = paint("31")

let client
const fail = async (message) => {
  process.stderr.write(`\n${red("demo failed:")} ${message}\n`)
  await client?.close().catch(() => {})
  process.exit(1)
}
const heading = (text) => console.log(`\n${bold(cyan(text))}`)
const indent = (text, prefix = "     ") => text.replace(/^/gm, prefix)
const textOf = (result) =>
  result.content
    .map((item) => (item.type === "text" ? item.text : `[${item.type} content]`))
    .join("\n")
    .trim() || JSON.stringify(result.structuredContent ?? {})

const deadline = setTimeout(() => void fail(`still not done after ${deadlineMs / 1000} s`), deadlineMs)
deadline.unref()

if (!existsSync(main)) await fail(`${main} is missing: build first with \`npm run build\` (or run \`npm start\`)`)

// ---------------------------------------------------------------------------------------------------------------------
heading(`1. node ${main} health --config ${config}`)
console.log(dim("   Starts every source in the config, asks each for its tools, prints one row per source."))
const health = spawnSync(process.execPath, [main, "health", "--config", config], {
  stdio: "inherit",
  timeout: deadlineMs
})
if (health.error) await fail(`could not run clawtool health: ${health.error.message}`)
if (health.status !== 0) await fail(`clawtool health exited with status ${health.status ?? health.signal}`)

// ---------------------------------------------------------------------------------------------------------------------
heading(`2. node ${main} serve --config ${config}`)
console.log(dim("   One MCP server on stdio in front of both sources; here an SDK client plays the MCP host."))
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [main, "serve", "--config", config],
  env: Object.fromEntries(Object.entries(process.env).filter(([, value]) => value !== undefined)),
  stderr: "pipe"
})
// clawtool logs to stderr (stdout is the protocol): show it, marked as such.
createInterface({ input: transport.stderr }).on("line", (line) =>
  process.stderr.write(`${dim(`  clawtool │ ${line}`)}\n`)
)

client = new Client({ name: "clawtool-demo", version: "1.0.0" })
try {
  await client.connect(transport)
} catch (error) {
  await fail(`could not connect to clawtool serve: ${error.message}`)
}
const server = client.getServerVersion()
console.log(`   Connected to ${bold(server?.name ?? "?")} ${server?.version ?? ""}`)

const call = async (name, args = {}) => {
  console.log(`\n   ${green("→")} ${bold(name)} ${dim(JSON.stringify(args))}`)
  let result
  try {
    result = await client.callTool({ name, arguments: args })
  } catch (error) {
    return fail(`${name} failed: ${error.message}`)
  }
  if (result.isError) return fail(`${name} answered an error: ${textOf(result)}`)
  console.log(indent(textOf(result)))
  return result
}

// clawtool answers initialize at once and holds tools/list until every source has settled, so one list is enough.
let tools = []
try {
  tools = (await client.listTools()).tools
} catch (error) {
  await fail(`tools/list failed: ${error.message}`)
}
const missing = ["notes__add_note", "notes__list_notes", "clock__now"].filter(
  (name) => !tools.some((t) => t.name === name)
)
if (missing.length > 0) await fail(`tools/list lacks ${missing.join(", ")}`)
const fromSources = tools.filter((tool) => tool.name.includes("__"))
const own = tools.filter((tool) => !tool.name.includes("__"))
const width = Math.max(...fromSources.map((tool) => tool.name.length))
console.log(`\n   ${fromSources.length} tools from the sources, named <instance>__<tool>:`)
for (const tool of fromSources) console.log(`     ${tool.name.padEnd(width)}  ${dim(tool.description ?? "")}`)
console.log(`   and ${own.length} of clawtool's own: ${own.map((tool) => tool.name).join(", ")}`)

await call("notes__add_note", { title: "Try clawtool", body: "Put every MCP server behind one gateway." })
await call("notes__list_notes")
await call("clock__now", { timezone: Intl.DateTimeFormat().resolvedOptions().timeZone })

await client.close()
heading("Done.")
console.log(`   Next: put your own servers in a config like ${config} and point your MCP host at \`clawtool serve\`.`)
