#!/usr/bin/env node
// clock.mjs: a tiny clock MCP server over stdio, one of the two demo sources of examples/demo.toml.
// Tools: now(timezone?) -> the current time as ISO 8601 with the zone's offset; add(a, b) -> a + b.
// CLOCK_DEFAULT_TIMEZONE (set in demo.toml) is the zone used when `now` gets none; otherwise UTC.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { z } from "zod"

const defaultZone = process.env.CLOCK_DEFAULT_TIMEZONE || "UTC"

/** "2025-01-31T14:05:09+01:00" for the instant `date` seen in `timeZone` (throws RangeError on an unknown zone). */
const isoInZone = (date, timeZone) => {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      timeZoneName: "longOffset"
    })
      .formatToParts(date)
      .map((part) => [part.type, part.value])
  )
  // longOffset reads "GMT+01:00", or just "GMT" at offset zero.
  const offset = parts.timeZoneName === "GMT" ? "Z" : parts.timeZoneName.replace("GMT", "")
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${offset}`
}

const server = new McpServer({ name: "clock", version: "1.0.0" })

server.registerTool(
  "now",
  {
    title: "Current time",
    description: "The current time as ISO 8601 in an IANA time zone (default from CLOCK_DEFAULT_TIMEZONE, else UTC)",
    inputSchema: { timezone: z.string().optional().describe('IANA zone such as "Europe/Paris" or "America/New_York"') },
    outputSchema: { iso: z.string(), timezone: z.string() },
    annotations: { readOnlyHint: true, openWorldHint: false }
  },
  async ({ timezone = defaultZone }) => {
    try {
      const iso = isoInZone(new Date(), timezone)
      return { content: [{ type: "text", text: `${iso} (${timezone})` }], structuredContent: { iso, timezone } }
    } catch {
      return { content: [{ type: "text", text: `unknown time zone ${JSON.stringify(timezone)}` }], isError: true }
    }
  }
)

server.registerTool(
  "add",
  {
    title: "Add numbers",
    description: "Add two numbers",
    inputSchema: { a: z.number(), b: z.number() },
    outputSchema: { sum: z.number() },
    annotations: { readOnlyHint: true, openWorldHint: false }
  },
  async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }], structuredContent: { sum: a + b } })
)

// The SDK's stdio transport does not stop on stdin EOF: leave when the client goes away.
process.stdin.on("end", () => process.exit(0))
await server.connect(new StdioServerTransport())
