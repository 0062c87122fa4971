/**
 * WebSearch's backends: Brave Search (BRAVE_API_KEY) and Tavily (TAVILY_API_KEY), over global fetch. The endpoints
 * are fixed by clawtool; CLAWTOOL_BRAVE_ENDPOINT / CLAWTOOL_TAVILY_ENDPOINT replace them for tests only (a stub
 * server on loopback). The key never appears in an error: every backend message goes through `redact`.
 */

export type BackendName = "brave" | "tavily"

export interface Backend {
  readonly name: BackendName
  readonly key: string
  readonly endpoint: string
}

export interface SearchRequest {
  readonly query: string
  /** How many results to ask for (the caller over-fetches when it filters domains). */
  readonly count: number
  readonly allowedDomains: ReadonlyArray<string>
  readonly blockedDomains: ReadonlyArray<string>
}

export interface SearchHit {
  readonly title: string
  readonly url: string
  readonly snippet: string
  readonly published?: string | undefined
}

export class SearchFailure extends Error {
  constructor(
    readonly reason: "Auth" | "RateLimited" | "Backend" | "Timeout",
    detail: string
  ) {
    super(detail)
  }
}

export const keyNames: Readonly<Record<BackendName, string>> = { brave: "BRAVE_API_KEY", tavily: "TAVILY_API_KEY" }

export const defaultEndpoints: Readonly<Record<BackendName, string>> = {
  brave: "https://api.search.brave.com/res/v1/web/search",
  tavily: "https://api.tavily.com/search"
}

/** The test-only endpoint overrides (documented as such in the README). */
export const endpointVariables: Readonly<Record<BackendName, string>> = {
  brave: "CLAWTOOL_BRAVE_ENDPOINT",
  tavily: "CLAWTOOL_TAVILY_ENDPOINT"
}

/** The first backend with a key, Brave first; undefined when none is configured (WebSearch is then not listed). */
export const pickBackend = (
  lookup: (name: string) => string | undefined,
  env: Readonly<Record<string, string | undefined>>
): Backend | undefined => {
  for (const name of ["brave", "tavily"] as const) {
    const key = lookup(keyNames[name])
    if (key !== undefined && key !== "") {
      const override = env[endpointVariables[name]]
      return { name, key, endpoint: override === undefined || override === "" ? defaultEndpoints[name] : override }
    }
  }
  return undefined
}

export const redact = (text: string, key: string): string => (key === "" ? text : text.split(key).join("[redacted]"))

export const search = async (
  backend: Backend,
  request: SearchRequest,
  timeoutMs: number,
  signal?: AbortSignal
): Promise<ReadonlyArray<SearchHit>> => {
  const deadline = AbortSignal.timeout(timeoutMs)
  const abort = signal === undefined ? deadline : AbortSignal.any([signal, deadline])
  try {
    return backend.name === "brave" ? await brave(backend, request, abort) : await tavily(backend, request, abort)
  } catch (cause) {
    if (cause instanceof SearchFailure) throw new SearchFailure(cause.reason, redact(cause.message, backend.key))
    if (deadline.aborted) throw new SearchFailure("Timeout", `${backend.name}: no answer within ${timeoutMs} ms`)
    const message = cause instanceof Error ? cause.message : String(cause)
    throw new SearchFailure("Backend", redact(`${backend.name}: ${message}`, backend.key))
  }
}

// =============================================================================
// Internal
// =============================================================================

/** Brave takes `site:` terms in the query; the caller filters again locally either way. */
const brave = async (backend: Backend, request: SearchRequest, signal: AbortSignal) => {
  const sites = request.allowedDomains.map((domain) => `site:${domain}`).join(" OR ")
  const excluded = request.blockedDomains.map((domain) => `-site:${domain}`).join(" ")
  const query = [request.query, sites === "" ? "" : `(${sites})`, excluded].filter((part) => part !== "").join(" ")
  const url = new URL(backend.endpoint)
  url.searchParams.set("q", query)
  url.searchParams.set("count", String(Math.min(request.count, 20)))
  const response = await fetch(url, {
    headers: { accept: "application/json", "x-subscription-token": backend.key },
    signal
  })
  const body = await answer(backend, response)
  const results = (body as { web?: { results?: ReadonlyArray<Record<string, unknown>> } }).web?.results ?? []
  return results.map((result) => ({
    title: String(result.title ?? ""),
    url: String(result.url ?? ""),
    snippet: String(result.description ?? ""),
    published: typeof result.page_age === "string" ? result.page_age : undefined
  }))
}

const tavily = async (backend: Backend, request: SearchRequest, signal: AbortSignal) => {
  const response = await fetch(backend.endpoint, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json", authorization: `Bearer ${backend.key}` },
    body: JSON.stringify({
      query: request.query,
      max_results: Math.min(request.count, 20),
      ...(request.allowedDomains.length === 0 ? {} : { include_domains: request.allowedDomains }),
      ...(request.blockedDomains.length === 0 ? {} : { exclude_domains: request.blockedDomains })
    }),
    signal
  })
  const body = await answer(backend, response)
  const results = (body as { results?: ReadonlyArray<Record<string, unknown>> }).results ?? []
  return results.map((result) => ({
    title: String(result.title ?? ""),
    url: String(result.url ?? ""),
    snippet: String(result.content ?? ""),
    published: typeof result.published_date === "string" ? result.published_date : undefined
  }))
}

/** The JSON body of a 2xx answer; a clear, redacted failure otherwise. */
const answer = async (backend: Backend, response: Response): Promise<unknown> => {
  if (response.ok) {
    try {
      return await response.json()
    } catch {
      throw new SearchFailure("Backend", `${backend.name}: the answer is not JSON`)
    }
  }
  const text = (await response.text().catch(() => "")).slice(0, 200).replace(/\s+/g, " ")
  if (response.status === 401 || response.status === 403) {
    throw new SearchFailure(
      "Auth",
      `${backend.name} refused the key (HTTP ${response.status}): check ${keyNames[backend.name]} in secrets.toml [scopes.global]; retrying will not help`
    )
  }
  if (response.status === 429) {
    const retry = response.headers.get("retry-after")
    throw new SearchFailure(
      "RateLimited",
      `${backend.name}: rate limited (HTTP 429)${retry === null ? "" : `; retry after ${retry} s`}`
    )
  }
  throw new SearchFailure("Backend", `${backend.name}: HTTP ${response.status}: ${text}`)
}

/** `docs.python.org` is in `python.org`; `evilpython.org` is not. */
export const inDomain = (host: string, domain: string): boolean => {
  const h = host.toLowerCase().replace(/\.$/, "")
  const d = domain
    .toLowerCase()
    .trim()
    .replace(/^\*?\./, "")
    .replace(/\.$/, "")
  return d !== "" && (h === d || h.endsWith(`.${d}`))
}

const entities: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " }

/** Tags out, entities decoded, whitespace collapsed, at most `max` characters. */
export const cleanSnippet = (text: string, max = 300): string => {
  const plain = text
    .replace(/<[^>]*>/g, "")
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
      if (name[0] === "#") {
        const code = name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10)
        return Number.isFinite(code) && code > 0 && code < 0x110000 ? String.fromCodePoint(code) : whole
      }
      return entities[name.toLowerCase()] ?? whole
    })
    .replace(/\s+/g, " ")
    .trim()
  return plain.length <= max ? plain : `${plain.slice(0, max - 1)}…`
}

/** http(s) results only, deduplicated by URL, domain filters applied, at most `limit`. */
export const selectHits = (
  hits: ReadonlyArray<SearchHit>,
  request: Pick<SearchRequest, "allowedDomains" | "blockedDomains">,
  limit: number
): ReadonlyArray<SearchHit> => {
  const seen = new Set<string>()
  const kept: Array<SearchHit> = []
  for (const hit of hits) {
    let url: URL
    try {
      url = new URL(hit.url)
    } catch {
      continue
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") continue
    if (seen.has(url.href)) continue
    if (request.allowedDomains.length > 0 && !request.allowedDomains.some((d) => inDomain(url.hostname, d))) continue
    if (request.blockedDomains.some((d) => inDomain(url.hostname, d))) continue
    seen.add(url.href)
    kept.push({ ...hit, url: url.href, title: cleanSnippet(hit.title, 200), snippet: cleanSnippet(hit.snippet) })
    if (kept.length === limit) break
  }
  return kept
}
