import { Effect, Schema } from "effect"
import { CallError } from "../../domain/Errors.js"
import { version } from "../../version.js"
import { defineTool } from "./Manifest.js"
import { fitResult, sizeOf } from "./Budget.js"
import type { Fetched } from "./WebFetchHttp.js"

/** The HTTP stack (http, https, zlib, dns, the address guard) loads on the first WebFetch, not at start-up. */
const loadHttp = () => import("./WebFetchHttp.js")
type Http = Awaited<ReturnType<typeof loadHttp>>

export const defaultTimeoutMs = 30_000
/** Decompressed bytes read from one page at most. */
export const maxBodyBytes = 5 * 1024 * 1024
export const maxRedirects = 5

const WebFetchInput = Schema.Struct({
  url: Schema.String.pipe(Schema.pattern(/\S/)).annotations({
    description: "An http(s) URL; http is upgraded to https for public hosts"
  }),
  start_char: Schema.optionalWith(
    Schema.Number.pipe(Schema.int(), Schema.nonNegative()).annotations({
      description: "Continue a long page from this character (the nextStartChar of the previous answer)"
    }),
    { default: () => 0 }
  ),
  timeout_ms: Schema.optionalWith(
    Schema.Number.pipe(Schema.int(), Schema.between(1000, 120_000)).annotations({
      description: `Give up after this many ms (default ${defaultTimeoutMs})`
    }),
    { default: () => defaultTimeoutMs }
  )
})

const WebFetchOutput = Schema.Struct({
  url: Schema.String,
  finalUrl: Schema.String,
  status: Schema.Number,
  contentType: Schema.String,
  title: Schema.optional(Schema.String),
  format: Schema.Literal("markdown", "text"),
  /** Characters of the whole converted page. */
  totalChars: Schema.Number,
  startChar: Schema.Number,
  /** Where the next page of a long document starts; null when this answer reaches the end. */
  nextStartChar: Schema.NullOr(Schema.Number),
  /** The body was longer than the size cap and was cut there. */
  bodyTruncated: Schema.Boolean,
  redirects: Schema.Array(Schema.String)
})

type Kind = "html" | "text" | "binary"

const kindOf = (contentType: string, body: Buffer): Kind => {
  const type = contentType.split(";")[0]!.trim().toLowerCase()
  if (type === "text/html" || type === "application/xhtml+xml") return "html"
  if (
    type.startsWith("text/") ||
    /^application\/(json|xml|javascript|ecmascript|x-yaml|yaml|toml|x-toml|ld\+json|x-ndjson)$/.test(type) ||
    type.endsWith("+json") ||
    type.endsWith("+xml")
  ) {
    return "text"
  }
  if (type === "") {
    const head = body.subarray(0, 1024)
    if (head.includes(0)) return "binary"
    return /<html|<!doctype html/i.test(head.toString("latin1")) ? "html" : "text"
  }
  return "binary"
}

/** The charset from the header, else (HTML) from a `<meta>` in the first bytes; UTF-8 when unknown. */
export const decodeBody = (body: Buffer, contentType: string, html: boolean): string => {
  const fromHeader = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType)?.[1]
  const fromMeta = html
    ? /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(body.subarray(0, 4096).toString("latin1"))?.[1]
    : undefined
  const label = fromHeader ?? fromMeta ?? "utf-8"
  try {
    return new TextDecoder(label).decode(body)
  } catch {
    return new TextDecoder("utf-8").decode(body)
  }
}

const toCallError = (http: Http, url: string, cause: unknown): CallError => {
  if (cause instanceof http.WebFetchRefusal) {
    return new CallError({
      tool: "WebFetch",
      reason: cause.reason === "Blocked" ? "Blocked" : "InvalidArguments",
      detail: cause.detail
    })
  }
  if (cause instanceof http.WebFetchFailure) {
    return new CallError({
      tool: "WebFetch",
      reason: cause.reason === "Timeout" ? "Timeout" : "Failed",
      detail: cause.message,
      retryable: cause.reason !== "TooManyRedirects"
    })
  }
  return new CallError({ tool: "WebFetch", reason: "Failed", detail: `${url}: ${String(cause)}` })
}

export const WebFetch = defineTool({
  name: "WebFetch",
  description:
    "Fetch a web page and return it as Markdown (the article, via Readability; links absolute, tables kept) or as text (plain text, JSON, XML). Long pages come in parts (start_char). Public addresses only: private, loopback, link-local and cloud metadata addresses are refused, also behind redirects and DNS.",
  keywords: [
    "web",
    "fetch",
    "url",
    "http",
    "https",
    "page",
    "download",
    "markdown",
    "docs",
    "read",
    "browse",
    "link",
    "article",
    "site",
    "website",
    "scrape",
    "api"
  ],
  category: "web",
  usageHint:
    "Pass the full URL. For a long page call again with start_char = nextStartChar. A nearly empty page is probably rendered by JavaScript; a 4xx/5xx status comes back as a result with its body. Binary content (PDF, images) is refused.",
  alwaysLoad: true,
  annotations: {
    title: "Fetch a web page",
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: true
  },
  input: WebFetchInput,
  output: WebFetchOutput,
  handler: (input, context) =>
    Effect.gen(function* () {
      const allowPrivate = context.settings.WebFetch.allow_private
      const http = yield* Effect.promise(loadHttp)
      const { policyFor, systemResolver } = http
      const fetched: Fetched = yield* Effect.tryPromise({
        try: (signal) =>
          http.fetchGuarded(
            input.url,
            {
              allowed: policyFor(allowPrivate),
              upgradeHttp: true,
              resolver: systemResolver,
              timeoutMs: input.timeout_ms,
              maxBytes: maxBodyBytes,
              maxRedirects,
              userAgent: `clawtool/${version} (WebFetch)`
            },
            signal
          ),
        catch: (cause) => toCallError(http, input.url, cause)
      })
      const kind = kindOf(fetched.contentType, fetched.body)
      if (kind === "binary") {
        return yield* new CallError({
          tool: "WebFetch",
          reason: "Binary",
          detail: `${fetched.finalUrl} is ${fetched.contentType || "binary content"}, not text or HTML; WebFetch returns text only`
        })
      }
      const decoded = decodeBody(fetched.body, fetched.contentType, kind === "html")
      const converted =
        kind === "html"
          ? yield* Effect.tryPromise({
              try: () =>
                import("./WebFetchMarkdown.js").then((module) => module.htmlToMarkdown(decoded, fetched.finalUrl)),
              catch: (cause) =>
                new CallError({
                  tool: "WebFetch",
                  reason: "Failed",
                  detail: `${fetched.finalUrl}: cannot convert the page to Markdown: ${cause instanceof Error ? cause.message : String(cause)}`
                })
            })
          : { title: undefined, markdown: decoded }
      const content = converted.markdown
      const startChar = Math.min(input.start_char, content.length)
      const base = {
        url: input.url,
        finalUrl: fetched.finalUrl,
        status: fetched.status,
        contentType: fetched.contentType,
        ...(converted.title === undefined ? {} : { title: converted.title }),
        format: kind === "html" ? ("markdown" as const) : ("text" as const),
        totalChars: content.length,
        startChar,
        nextStartChar: null as number | null,
        bodyTruncated: fetched.truncated,
        redirects: [...fetched.redirects]
      }
      const header = [
        `# ${converted.title ?? fetched.finalUrl}`,
        `${fetched.finalUrl} · HTTP ${fetched.status}${fetched.truncated ? ` · body cut at ${maxBodyBytes} bytes` : ""}`,
        ""
      ].join("\n")
      // Room for this part: what the budget leaves after the structured content, the header and a closing line.
      const closing = (next: number) =>
        `\n\n[… ${content.length - next} more characters; call WebFetch again with start_char=${next}]`
      const room = Math.max(0, context.maxOutput - sizeOf({ ...base, nextStartChar: content.length }) - header.length)
      const fits = content.length - startChar <= room
      // The closing line's numbers are at most as wide as the page's length, twice.
      const reserve = closing(0).length + String(content.length).length
      const take = fits ? content.length - startChar : Math.max(0, room - reserve)
      const next = fits ? null : startChar + take
      const text = header + content.slice(startChar, startChar + take) + (next === null ? "" : closing(next))
      return fitResult({ text, structured: { ...base, nextStartChar: next } }, context.maxOutput, "use start_char")
    })
})
