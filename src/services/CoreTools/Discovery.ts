import { Effect, Schema } from "effect"
import { CallError } from "../../domain/Errors.js"
import { ExitSummary, Status } from "../../domain/Health.js"
import { catalogLine, collisionLines, healthTable } from "../../text.js"
import { defineTool } from "./Manifest.js"

/**
 * The registry's own tools: ToolSearch and SourceHealth, which read the catalog they are part of through the
 * read-only CatalogView (domain/ToolProvider.ts) their context extends.
 */

export const defaultSearchLimit = 5
export const maxSearchLimit = 50

const JsonSchemaObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

const ToolSearchInput = Schema.Struct({
  query: Schema.String.pipe(Schema.pattern(/\S/)).annotations({
    description: 'Keywords for the task, e.g. "read a file" or "create issue"'
  }),
  limit: Schema.optionalWith(
    Schema.Number.pipe(Schema.int(), Schema.between(1, maxSearchLimit)).annotations({
      description: `How many tools to return (default ${defaultSearchLimit})`,
      default: defaultSearchLimit
    }),
    { default: () => defaultSearchLimit }
  )
})

const ToolSearchOutput = Schema.Struct({
  results: Schema.Array(
    Schema.Struct({
      name: Schema.String.annotations({ description: "The wire name to call" }),
      description: Schema.optional(Schema.String),
      inputSchema: JsonSchemaObject,
      score: Schema.Number,
      signature: Schema.optional(Schema.String).annotations({
        description: "How RunCode's code calls it (code mode on)"
      })
    })
  ),
  catalogHash: Schema.String
})

export const ToolSearch = defineTool({
  name: "ToolSearch",
  description:
    "Search every tool this server offers (clawtool's own and those of every connected source) by keywords. Returns the best matches, ranked (BM25), each with its wire name, description and input schema, so a tool that is not loaded yet can be called.",
  keywords: ["search", "find", "discover", "lookup", "tools", "catalog", "load", "deferred", "schema"],
  category: "discovery",
  usageHint:
    'Call with a few keywords for the task (e.g. "read file", "create issue"); then call a returned name directly, or through CallTool when it is not in your tool list, with arguments matching its inputSchema. Raise limit when the first matches do not fit.',
  alwaysLoad: true,
  annotations: { title: "Search tools", readOnlyHint: true, openWorldHint: false },
  input: ToolSearchInput,
  output: ToolSearchOutput,
  handler: (input, context) =>
    Effect.gen(function* () {
      const { hash, hits } = yield* context.search(input.query, input.limit)
      const structured = {
        results: hits.map((hit) => ({
          name: hit.name,
          ...(hit.description === undefined ? {} : { description: hit.description }),
          inputSchema: hit.inputSchema,
          score: hit.score,
          ...(hit.signature === undefined ? {} : { signature: hit.signature })
        })),
        catalogHash: hash
      }
      return { text: JSON.stringify(structured), structured }
    })
})

const SourceHealthInput = Schema.Struct({
  instance: Schema.optional(Schema.String).annotations({ description: "Only this source instance" })
})

const SourceHealthOutput = Schema.Struct({
  sources: Schema.Array(
    Schema.Struct({
      name: Schema.String,
      status: Status,
      reason: Schema.String,
      toolCount: Schema.Number,
      package: Schema.String,
      pid: Schema.NullOr(Schema.Number),
      startedAt: Schema.NullOr(Schema.String),
      startupMs: Schema.NullOr(Schema.Number),
      restarts: Schema.Number,
      lastExit: Schema.NullOr(ExitSummary),
      nextRetryAt: Schema.NullOr(Schema.String),
      uptimeMs: Schema.NullOr(Schema.Number),
      stdoutGarbage: Schema.Number,
      /** Tools held back by their pins until `clawtool trust approve` (issue 25). */
      quarantined: Schema.optional(Schema.Number),
      /** The era the running child is spoken to in (ADR 033); null unless running. */
      era: Schema.optional(Schema.NullOr(Schema.Literal("legacy", "modern"))),
      /** `config`: the reload row (a failed reload of the config file, ADR 016); `audit`: the audit log's; not sources. */
      kind: Schema.optional(Schema.Literal("source", "config", "audit"))
    })
  ),
  collisions: Schema.Array(
    Schema.Struct({ wire: Schema.String, kept: Schema.String, dropped: Schema.Array(Schema.String) })
  ),
  catalogHash: Schema.String
})

export const SourceHealth = defineTool({
  name: "SourceHealth",
  description:
    "Health of every source MCP server behind clawtool: status (running, starting, down, unauthenticated, crash-loop, idle; skipped: a config entry clawtool cannot use), why a source is not running, its tool count, start-up time and package; plus tool-name collisions and the catalog hash.",
  keywords: [
    "health",
    "status",
    "sources",
    "servers",
    "down",
    "running",
    "diagnose",
    "collisions",
    "missing",
    "broken",
    "failing",
    "error",
    "mcp",
    "connected",
    "tools"
  ],
  category: "setup",
  usageHint:
    "Call when a source tool is missing from the list or a call fails as not running: it says which source is down and why (missing secrets, crash, timeout). Pass instance to see one source.",
  alwaysLoad: false,
  annotations: { title: "Source health", readOnlyHint: true, openWorldHint: false },
  input: SourceHealthInput,
  output: SourceHealthOutput,
  handler: (input, context) =>
    Effect.gen(function* () {
      const all = yield* context.health
      const rows = input.instance === undefined ? all : all.filter((row) => row.name === input.instance)
      if (input.instance !== undefined && rows.length === 0) {
        return yield* new CallError({
          tool: "SourceHealth",
          reason: "NoSuchInstance",
          detail: `no source instance named "${input.instance}" (known: ${all.map((row) => row.name).join(", ") || "none"})`
        })
      }
      const catalog = yield* context.catalog
      const collisions = catalog.collisions.map((collision) => ({ ...collision, dropped: [...collision.dropped] }))
      const structured = {
        // Everything but the stderr tail, which is long and for people (clawtool health --json).
        sources: rows.map(({ stderrTail: _, ...row }) => row),
        collisions,
        catalogHash: catalog.hash
      }
      const listed = catalog.tools.length
      const text = [healthTable(rows), ...collisionLines(catalog.collisions), catalogLine(catalog.hash, listed)].join(
        "\n"
      )
      return { text, structured }
    })
})
