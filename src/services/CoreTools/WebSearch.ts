import { Effect, Option, Schema } from "effect"
import { CallError } from "../../domain/Errors.js"
import { type Env, ProcessEnv } from "../Config.js"
import { type CoreSetup, defineTool } from "./Manifest.js"
import { fitResult } from "./Budget.js"
import { type Backend, keyNames, pickBackend, redact, search, SearchFailure, selectHits } from "./WebSearchBackends.js"

export const defaultResults = 8
export const maxResults = 20
const timeoutMs = 15_000

const Domains = Schema.Array(Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9.*-]+$/)))

const WebSearchInput = Schema.Struct({
  query: Schema.String.pipe(Schema.pattern(/\S/), Schema.maxLength(400)).annotations({
    description: "What to search the web for"
  }),
  max_results: Schema.optionalWith(
    Schema.Number.pipe(Schema.int(), Schema.between(1, maxResults)).annotations({
      description: `How many results (default ${defaultResults})`
    }),
    { default: () => defaultResults }
  ),
  allowed_domains: Schema.optionalWith(
    Domains.annotations({ description: 'Only results from these domains (subdomains included), e.g. ["python.org"]' }),
    { default: () => [] }
  ),
  blocked_domains: Schema.optionalWith(
    Domains.annotations({ description: "No results from these domains (subdomains included)" }),
    { default: () => [] }
  )
})

const WebSearchOutput = Schema.Struct({
  backend: Schema.Literal("brave", "tavily"),
  query: Schema.String,
  results: Schema.Array(
    Schema.Struct({
      title: Schema.String,
      url: Schema.String,
      snippet: Schema.String,
      published: Schema.optional(Schema.String)
    })
  ),
  count: Schema.Number
})

/**
 * The configured backend: a key in secrets.toml [scopes.global] or the environment; `env` (ProcessEnv) may point it
 * at another endpoint (tests).
 */
export const backendOf = (setup: Pick<CoreSetup, "secret">, env: Env): Backend | undefined =>
  pickBackend((name) => Option.getOrUndefined(setup.secret(name)), env)

export const WebSearch = defineTool({
  name: "WebSearch",
  description:
    "Search the web (Brave Search, or Tavily) and return ranked results: title, URL and a short snippet each. Optional domain allow and block lists.",
  keywords: [
    "web",
    "search",
    "internet",
    "google",
    "query",
    "find",
    "results",
    "news",
    "docs",
    "lookup",
    "online",
    "latest"
  ],
  category: "web",
  usageHint:
    "Search with a few precise words, then hand the best URL to WebFetch to read the page. Restrict to trusted sites with allowed_domains. An authentication error is configuration (the API key), not something to retry.",
  alwaysLoad: true,
  annotations: {
    title: "Search the web",
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: true
  },
  unavailable: (setup) =>
    // Only the key decides whether it is served; the endpoint is read per call.
    backendOf(setup, {}) === undefined
      ? `no search backend key: set ${keyNames.brave} (or ${keyNames.tavily}) in secrets.toml [scopes.global] or the environment`
      : undefined,
  input: WebSearchInput,
  output: WebSearchOutput,
  handler: (input, context) =>
    Effect.gen(function* () {
      const backend = backendOf(context, yield* ProcessEnv)
      if (backend === undefined) {
        return yield* new CallError({
          tool: "WebSearch",
          reason: "MissingSecret",
          detail: `no search backend key: set ${keyNames.brave} in secrets.toml [scopes.global] or the environment`
        })
      }
      const filtered = input.allowed_domains.length > 0 || input.blocked_domains.length > 0
      const request = {
        query: input.query,
        // Results are filtered (and deduplicated) here too: ask for more when filtering may drop some.
        count: filtered ? Math.min(maxResults, input.max_results * 2) : input.max_results,
        allowedDomains: input.allowed_domains,
        blockedDomains: input.blocked_domains
      }
      const hits = yield* Effect.tryPromise({
        try: (signal) => search(backend, request, timeoutMs, signal),
        catch: (cause) =>
          new CallError({
            tool: "WebSearch",
            reason:
              cause instanceof SearchFailure
                ? cause.reason === "Auth"
                  ? "MissingSecret"
                  : cause.reason === "Timeout"
                    ? "Timeout"
                    : "Failed"
                : "Failed",
            detail: redact(cause instanceof Error ? cause.message : String(cause), backend.key),
            retryable: cause instanceof SearchFailure && cause.reason !== "Auth"
          })
      })
      const results = selectHits(hits, request, input.max_results).map((hit) => ({
        title: hit.title,
        url: hit.url,
        snippet: hit.snippet,
        ...(hit.published === undefined ? {} : { published: hit.published })
      }))
      const text =
        results.length === 0
          ? `no results for ${JSON.stringify(input.query)} (${backend.name})`
          : results.map((hit, i) => `[${i + 1}] ${hit.title}\n    ${hit.url}\n    ${hit.snippet}`).join("\n")
      // The structured list is the payload here: the text repeats it, so the budget is shared by halves at worst.
      return fitResult(
        { text, structured: { backend: backend.name, query: input.query, results, count: results.length } },
        context.maxOutput,
        "ask for fewer results"
      )
    })
})
