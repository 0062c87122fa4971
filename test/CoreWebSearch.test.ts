import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Either, Option } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import {
  type Backend,
  cleanSnippet,
  inDomain,
  pickBackend,
  search,
  SearchFailure,
  selectHits
} from "../src/services/CoreTools/WebSearchBackends.js"
import { CoreToolsConfig } from "../src/domain/Config.js"
import { coreGate, coreSpecs } from "../src/services/CoreTools.js"
import * as Manifest from "../src/services/CoreTools/Manifest.js"
import { coreContext } from "./lib/coreContext.js"

export const braveKey = "BSA-test-key-0123456789"

/** A stub of the Brave and Tavily APIs on loopback; `requests` records what reached it. */
export const startSearchStub = () =>
  new Promise<{
    server: Http.Server
    base: string
    requests: Array<{ url: string; headers: Http.IncomingHttpHeaders; body: string }>
  }>((resolve) => {
    const requests: Array<{ url: string; headers: Http.IncomingHttpHeaders; body: string }> = []
    const server = Http.createServer((req, res) => {
      let body = ""
      req.on("data", (chunk: Buffer) => (body += chunk.toString()))
      req.on("end", () => {
        requests.push({ url: req.url ?? "", headers: req.headers, body })
        const url = new URL(req.url ?? "/", "http://x")
        const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
          res.writeHead(status, { "content-type": "application/json", ...headers })
          res.end(JSON.stringify(value))
        }
        if (url.pathname === "/brave") {
          if (req.headers["x-subscription-token"] !== braveKey) {
            return json(401, { error: `invalid token ${String(req.headers["x-subscription-token"])}` })
          }
          const q = url.searchParams.get("q") ?? ""
          if (q.startsWith("ratelimit")) return json(429, { error: "slow down" }, { "retry-after": "7" })
          if (q.startsWith("broken")) return json(500, { error: `backend broke for ${braveKey}` })
          return json(200, {
            web: {
              results: [
                {
                  title: "Python <strong>docs</strong>",
                  url: "https://docs.python.org/3/",
                  description: "The &amp; <strong>official</strong> docs"
                },
                { title: "Evil", url: "https://evilpython.org/", description: "not python.org" },
                { title: "Python", url: "https://python.org/", description: "home", page_age: "2025-01-01" },
                { title: "Dup", url: "https://python.org/", description: "same URL again" },
                { title: "FTP", url: "ftp://python.org/pub", description: "not http" },
                { title: "Unicode", url: `https://example.com/?q=${encodeURIComponent(q)}`, description: q }
              ]
            }
          })
        }
        if (url.pathname === "/tavily") {
          if (req.headers.authorization !== "Bearer tvly-key") return json(401, { error: "no" })
          return json(200, { results: [{ title: "T", url: "https://tavily.example/", content: "snippet" }] })
        }
        json(404, {})
      })
    })
    server.listen(0, "127.0.0.1", () => {
      resolve({ server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests })
    })
  })

let stub: Awaited<ReturnType<typeof startSearchStub>>
beforeAll(async () => {
  stub = await startSearchStub()
})
afterAll(() => {
  stub.server.closeAllConnections()
  stub.server.close()
})

const brave = (key = braveKey): Backend => ({ name: "brave", key, endpoint: `${stub.base}/brave` })
const request = (query: string, extra: { allowedDomains?: Array<string>; blockedDomains?: Array<string> } = {}) => ({
  query,
  count: 10,
  allowedDomains: extra.allowedDomains ?? [],
  blockedDomains: extra.blockedDomains ?? []
})
const failureOf = (backend: Backend, query: string) =>
  Effect.promise(() =>
    search(backend, request(query), 5000).then(
      () => undefined,
      (error: unknown) => error
    )
  )

describe("WebSearch: choosing a backend", () => {
  it("Brave first, then Tavily; none without a key; the endpoint override only from its variable", () => {
    const keys = (found: Record<string, string>) => (name: string) => found[name]
    assert.strictEqual(pickBackend(keys({}), {}), undefined)
    assert.strictEqual(pickBackend(keys({ BRAVE_API_KEY: "" }), {}), undefined)
    assert.deepStrictEqual(pickBackend(keys({ BRAVE_API_KEY: "b", TAVILY_API_KEY: "t" }), {}), {
      name: "brave",
      key: "b",
      endpoint: "https://api.search.brave.com/res/v1/web/search"
    })
    assert.deepStrictEqual(pickBackend(keys({ TAVILY_API_KEY: "t" }), { CLAWTOOL_TAVILY_ENDPOINT: "http://stub/" }), {
      name: "tavily",
      key: "t",
      endpoint: "http://stub/"
    })
  })
})

describe("WebSearch: results", () => {
  it("domains match on a label boundary: python.org keeps docs.python.org, not evilpython.org", () => {
    assert.isTrue(inDomain("docs.python.org", "python.org"))
    assert.isTrue(inDomain("python.org", "python.org"))
    assert.isFalse(inDomain("evilpython.org", "python.org"))
    assert.isTrue(inDomain("a.b.example.com", "*.example.com"))
  })

  it("snippets lose tags and entities, and are at most 300 characters", () => {
    assert.strictEqual(cleanSnippet("The &amp; <strong>official</strong>&#x21;  docs"), "The & official! docs")
    assert.strictEqual(cleanSnippet("x".repeat(1000)).length, 300)
  })

  it.live(
    "Brave through a stub: the key is sent as X-Subscription-Token; results mapped, cleaned, deduplicated, http only",
    () =>
      Effect.gen(function* () {
        const hits = yield* Effect.promise(() => search(brave(), request("python docs"), 5000))
        assert.strictEqual(stub.requests.at(-1)!.headers["x-subscription-token"], braveKey)
        const kept = selectHits(hits, { allowedDomains: [], blockedDomains: [] }, 10)
        assert.deepStrictEqual(
          kept.map((hit) => hit.url),
          ["https://docs.python.org/3/", "https://evilpython.org/", "https://python.org/", kept[3]!.url]
        )
        assert.strictEqual(kept[0]!.title, "Python docs")
        assert.strictEqual(kept[0]!.snippet, "The & official docs")
        assert.strictEqual(kept[2]!.published, "2025-01-01")
      })
  )

  it.live("allowed and blocked domains go to Brave as site: terms and are applied again locally", () =>
    Effect.gen(function* () {
      const filters = { allowedDomains: ["python.org"], blockedDomains: ["docs.python.org"] }
      const hits = yield* Effect.promise(() => search(brave(), request("python", filters), 5000))
      const sent = new URL(stub.requests.at(-1)!.url, "http://x").searchParams.get("q")
      assert.strictEqual(sent, "python (site:python.org) -site:docs.python.org")
      assert.deepStrictEqual(
        selectHits(hits, filters, 10).map((hit) => hit.url),
        ["https://python.org/"]
      )
      assert.strictEqual(selectHits(hits, { allowedDomains: [], blockedDomains: [] }, 2).length, 2)
    })
  )

  it.live("a unicode query is encoded and comes back intact", () =>
    Effect.gen(function* () {
      const hits = yield* Effect.promise(() => search(brave(), request("çay ☕ 東京"), 5000))
      assert.strictEqual(hits.at(-1)!.snippet, "çay ☕ 東京")
    })
  )

  it.live("401, 429 and 500 are clear failures that never show the key", () =>
    Effect.gen(function* () {
      const auth = yield* failureOf(brave("wrong-secret-key"), "x")
      assert.isTrue(auth instanceof SearchFailure && auth.reason === "Auth", String(auth))
      assert.include((auth as Error).message, "BRAVE_API_KEY")
      assert.notInclude((auth as Error).message, "wrong-secret-key")
      const limited = yield* failureOf(brave(), "ratelimit")
      assert.isTrue(limited instanceof SearchFailure && limited.reason === "RateLimited")
      assert.include((limited as Error).message, "retry after 7 s")
      const broken = yield* failureOf(brave(), "broken")
      assert.isTrue(broken instanceof SearchFailure && broken.reason === "Backend")
      assert.include((broken as Error).message, "HTTP 500")
      assert.include((broken as Error).message, "[redacted]")
      assert.notInclude((broken as Error).message, braveKey)
    })
  )

  it.live("Tavily through a stub: bearer key, results mapped", () =>
    Effect.gen(function* () {
      const hits = yield* Effect.promise(() =>
        search(
          { name: "tavily", key: "tvly-key", endpoint: `${stub.base}/tavily` },
          request("q", { allowedDomains: ["a.org"] }),
          5000
        )
      )
      assert.deepStrictEqual(hits, [
        { title: "T", url: "https://tavily.example/", snippet: "snippet", published: undefined }
      ])
      assert.deepStrictEqual(JSON.parse(stub.requests.at(-1)!.body), {
        query: "q",
        max_results: 10,
        include_domains: ["a.org"]
      })
    })
  )
})

const manifest = Either.getOrThrow(Manifest.make(coreSpecs))
const settings = new CoreToolsConfig({})

describe("the WebSearch tool", () => {
  it("is not served without a key (the rule names it), and is served with one from secrets", () => {
    const without = coreGate(coreSpecs, { settings, secret: () => Option.none() })
    assert.include(without.get("WebSearch"), "BRAVE_API_KEY")
    assert.include(without.get("WebSearch"), "secrets.toml [scopes.global]")
    const secret = (name: string) => (name === "BRAVE_API_KEY" ? Option.some(braveKey) : Option.none())
    assert.isFalse(coreGate(coreSpecs, { settings, secret }).has("WebSearch"))
  })

  it.live("searches the configured backend with the key from secrets; domain filters applied", () =>
    Effect.gen(function* () {
      process.env.CLAWTOOL_BRAVE_ENDPOINT = `${stub.base}/brave`
      try {
        const result = yield* manifest.byName
          .get("WebSearch")!
          .call(
            { query: "python", max_results: 5, allowed_domains: ["python.org"] },
            coreContext({ secrets: { BRAVE_API_KEY: braveKey } })
          )
        const structured = result.structuredContent as { backend: string; results: Array<{ url: string }> }
        assert.strictEqual(structured.backend, "brave")
        assert.deepStrictEqual(
          structured.results.map((hit) => hit.url),
          ["https://docs.python.org/3/", "https://python.org/"]
        )
        const text = (result.content[0] as { text: string }).text
        assert.include(text, "[1] Python docs\n    https://docs.python.org/3/")
        assert.notInclude(text, braveKey)
        const refused = yield* Effect.flip(
          manifest.byName
            .get("WebSearch")!
            .call({ query: "x" }, coreContext({ secrets: { BRAVE_API_KEY: "bad-key-123" } }))
        )
        assert.strictEqual(refused.reason, "MissingSecret")
        assert.notInclude(refused.detail, "bad-key-123")
      } finally {
        delete process.env.CLAWTOOL_BRAVE_ENDPOINT
      }
    })
  )
})
