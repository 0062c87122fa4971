#!/usr/bin/env node
// notes.mjs: a tiny in-memory notes MCP server over stdio, one of the two demo sources of examples/demo.toml.
// Tools: add_note(title, body), list_notes(), search_notes(query). Notes live as long as the process.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { z } from "zod"

const notes = [{ id: 1, title: "Welcome", body: "clawtool serves every source's tools as <instance>__<tool>." }]

const Note = z.object({ id: z.number(), title: z.string(), body: z.string() })
const render = (list) =>
  list.length === 0 ? "No notes." : list.map((note) => `#${note.id} ${note.title}: ${note.body}`).join("\n")

const server = new McpServer({ name: "notes", version: "1.0.0" })

server.registerTool(
  "add_note",
  {
    title: "Add note",
    description: "Store a note with a title and a body; returns the stored note",
    inputSchema: { title: z.string().min(1).describe("Short title"), body: z.string().describe("Note text") },
    outputSchema: { note: Note },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false }
  },
  async ({ title, body }) => {
    const note = { id: notes.length + 1, title, body }
    notes.push(note)
    return { content: [{ type: "text", text: `Added ${render([note])}` }], structuredContent: { note } }
  }
)

server.registerTool(
  "list_notes",
  {
    title: "List notes",
    description: "List every stored note, oldest first",
    outputSchema: { notes: z.array(Note) },
    annotations: { readOnlyHint: true, openWorldHint: false }
  },
  async () => ({ content: [{ type: "text", text: render(notes) }], structuredContent: { notes } })
)

server.registerTool(
  "search_notes",
  {
    title: "Search notes",
    description: "Find notes whose title or body contains the query (case-insensitive)",
    inputSchema: { query: z.string().describe("Text to look for") },
    outputSchema: { notes: z.array(Note) },
    annotations: { readOnlyHint: true, openWorldHint: false }
  },
  async ({ query }) => {
    const needle = query.toLowerCase()
    const found = notes.filter((note) => `${note.title}\n${note.body}`.toLowerCase().includes(needle))
    return { content: [{ type: "text", text: render(found) }], structuredContent: { notes: found } }
  }
)

// The SDK's stdio transport does not stop on stdin EOF: leave when the client goes away.
process.stdin.on("end", () => process.exit(0))
await server.connect(new StdioServerTransport())
