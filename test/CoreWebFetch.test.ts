import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Zlib from "node:zlib"
import { checkUrl, policyFor, type Resolver, WebFetchRefusal } from "../src/services/CoreTools/WebFetchGuard.js"
import { type FetchOptions, fetchGuarded, upgraded, WebFetchFailure } from "../src/services/CoreTools/WebFetchHttp.js"
import { htmlToMarkdown } from "../src/services/CoreTools/WebFetchMarkdown.js"
import { CoreToolsConfig, WebFetchConfig } from "../src/domain/Config.js"
import type { CallToolResult, JsonObject } from "../src/domain/Mcp.js"
import { coreSpecs } from "../src/services/CoreTools.js"
import * as Manifest from "../src/services/CoreTools/Manifest.js"
import { coreContext } from "./lib/coreContext.js"

export const article = `<!doctype html><html><head><title>Page title</title></head><body>
<nav><a href="/home">Home</a> | <a href="/about">About</a></nav>
<article><h1>Pipes and groups</h1>
<p>${"A process group lets a shell signal every job it started at once. ".repeat(12)}</p>
<p>Read <a href="/docs/kill.html">the kill page</a> for details.</p>
<pre><code class="language-sh">kill -TERM -- -1234</code></pre>
<table><thead><tr><th>Signal</th><th>Number</th></tr></thead><tbody><tr><td>TERM</td><td>15</td></tr><tr><td>KILL</td><td>9</td></tr></tbody></table>
<script>alert("never")</script>
</article></body></html>`

/** A local server with the routes the tests need; `hits` counts requests per path. */
export const startServer = () =>
  new Promise<{ server: Http.Server; base: string; port: number; hits: Map<string, number> }>((resolve) => {
    const bomb = Zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024))
    const hits = new Map<string, number>()
    const server = Http.createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://x")
      hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1)
      switch (url.pathname) {
        case "/article":
          res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
          return res.end(article)
        case "/text":
          res.writeHead(200, { "content-type": "text/plain" })
          return res.end("plain words")
        case "/latin1":
          res.writeHead(200, { "content-type": "text/plain; charset=iso-8859-1" })
          return res.end(Buffer.from([0x63, 0x61, 0x66, 0xe9]))
        case "/missing":
          res.writeHead(404, { "content-type": "text/plain" })
          return res.end("no such page")
        case "/redirect":
          res.writeHead(302, { location: url.searchParams.get("to") ?? "/text" })
          return res.end()
        case "/loop":
          res.writeHead(302, { location: "/loop" })
          return res.end()
        case "/big":
          res.writeHead(200, { "content-type": "text/plain" })
          return res.end(Buffer.alloc(20 * 1024 * 1024, 0x61))
        case "/bomb":
          res.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" })
          return res.end(bomb)
        case "/binary":
          res.writeHead(200, { "content-type": "application/octet-stream" })
          return res.end(Buffer.from([0, 1, 2, 3]))
        case "/slow":
          res.writeHead(200, { "content-type": "text/plain" })
          res.write("first")
          return // never ends
        default:
          res.writeHead(404)
          return res.end()
      }
    })
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port
      resolve({ server, base: `http://127.0.0.1:${port}`, port, hits })
    })
  })

let local: Awaited<ReturnType<typeof startServer>>
beforeAll(async () => {
  local = await startServer()
})
afterAll(() => {
  local.server.closeAllConnections()
  local.server.close()
})

const options = (overrides: Partial<FetchOptions> = {}): FetchOptions => ({
  allowed: policyFor(true),
  upgradeHttp: true,
  resolver: async () => [{ address: "127.0.0.1", family: 4 }],
  timeoutMs: 5000,
  maxBytes: 5 * 1024 * 1024,
  maxRedirects: 5,
  userAgent: "clawtool-test",
  ...overrides
})

/** The rejection of a fetch, or undefined when it succeeded. */
const failure = (url: string, fetchOptions: FetchOptions) =>
  Effect.promise(() =>
    fetchGuarded(url, fetchOptions).then(
      () => undefined,
      (error: unknown) => error
    )
  )

const blocked = (error: unknown) => error instanceof WebFetchRefusal && error.reason === "Blocked"

describe("WebFetch guard: URLs refused before any connection", () => {
  const closed = policyFor(false)
  for (const url of [
    "http://127.0.0.1/",
    "http://2130706433/",
    "http://0x7f.1/",
    "http://0177.0.0.1/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::1]/",
    "http://localhost./",
    "http://api.localhost/",
    "http://169.254.169.254/latest/meta-data/",
    "http://10.0.0.8/",
    "http://[fd00::1]/",
    "http://[64:ff9b::7f00:1]/",
    "http://0.0.0.0/"
  ]) {
    it(`${url} is a private address: Blocked`, () => {
      const checked = checkUrl(url, closed)
      assert.isTrue(blocked(checked), String(checked))
      assert.include((checked as WebFetchRefusal).detail, "allow_private")
    })
  }
  for (const url of [
    "file:///etc/passwd",
    "ftp://example.com/",
    "javascript:alert(1)",
    "http://a:b@example.com/",
    "x"
  ]) {
    it(`${url} is not a URL WebFetch fetches: InvalidUrl`, () => {
      const checked = checkUrl(url, closed)
      assert.instanceOf(checked, WebFetchRefusal)
      assert.strictEqual((checked as WebFetchRefusal).reason, "InvalidUrl")
    })
  }
  it("a public literal passes; allow_private lets a private one through", () => {
    assert.instanceOf(checkUrl("https://93.184.216.34/", closed), URL)
    assert.instanceOf(checkUrl("http://127.0.0.1:8080/", policyFor(true)), URL)
  })
})

describe("WebFetch guard: the address dialled is the address checked", () => {
  it.live("with allow_private off, the local server is refused by its literal address", () =>
    Effect.gen(function* () {
      const error = yield* failure(`${local.base}/text`, options({ allowed: policyFor(false) }))
      assert.isTrue(blocked(error), String(error))
      assert.strictEqual(local.hits.get("/text") ?? 0, 0)
    })
  )

  it.live("a name the resolver answers with a private address is refused at connect time", () =>
    Effect.gen(function* () {
      const resolver: Resolver = async () => [{ address: "127.0.0.1", family: 4 }]
      const error = yield* failure(
        `http://intranet.example:${local.port}/text`,
        options({ allowed: policyFor(false), resolver })
      )
      assert.isTrue(blocked(error), String(error))
    })
  )

  it.live("one private address among public ones is enough to refuse", () =>
    Effect.gen(function* () {
      const resolver: Resolver = async () => [
        { address: "93.184.216.34", family: 4 },
        { address: "10.1.2.3", family: 4 }
      ]
      const error = yield* failure(`https://mixed.example/`, options({ allowed: policyFor(false), resolver }))
      assert.isTrue(blocked(error), String(error))
    })
  )

  it.live("the connection goes to the address the hook checked, never to a second resolution", () =>
    Effect.gen(function* () {
      // `app.test` does not exist in DNS: reaching the server proves the socket dialled the hook's answer.
      let calls = 0
      const resolver: Resolver = async () => {
        calls++
        return [{ address: "127.0.0.1", family: 4 }]
      }
      const fetched = yield* Effect.promise(() =>
        fetchGuarded(`http://app.test:${local.port}/text`, options({ resolver }))
      )
      assert.strictEqual(fetched.body.toString(), "plain words")
      // Once to decide on the https upgrade (a private answer: kept on http), once by the socket.
      assert.strictEqual(calls, 2)
    })
  )

  it.live("a redirect from an allowed address to a private one is re-checked and refused", () =>
    Effect.gen(function* () {
      // The test plays "public" with the local server's address; every other private address stays refused.
      const allowed = (address: string) => address === "127.0.0.1"
      for (const to of ["http://169.254.169.254/latest/meta-data/", "http://[::1]/", "http://10.0.0.1/"]) {
        const error = yield* failure(
          `${local.base}/redirect?to=${encodeURIComponent(to)}`,
          options({ allowed, upgradeHttp: false })
        )
        assert.isTrue(blocked(error), `${to}: ${String(error)}`)
      }
      const followed = yield* Effect.promise(() =>
        fetchGuarded(`${local.base}/redirect?to=/text`, options({ allowed, upgradeHttp: false }))
      )
      assert.strictEqual(followed.body.toString(), "plain words")
      assert.deepStrictEqual(followed.redirects, [`${local.base}/text`])
    })
  )

  it("http is upgraded to https for a public host, not for a private one WebFetch may reach", () =>
    Effect.gen(function* () {
      const open = { allowed: policyFor(false), upgradeHttp: true, resolver: async () => [] }
      assert.strictEqual(
        (yield* Effect.promise(() => upgraded(new URL("http://example.com:80/a?b"), open))).href,
        "https://example.com/a?b"
      )
      const dev = { ...open, allowed: policyFor(true) }
      assert.strictEqual(
        (yield* Effect.promise(() => upgraded(new URL("http://127.0.0.1:3000/"), dev))).href,
        "http://127.0.0.1:3000/"
      )
    }).pipe(Effect.runPromise))
})

describe("WebFetch over HTTP (allow_private on, a real local server)", () => {
  it.live("caps a 20 MB body at the size limit and says so", () =>
    Effect.gen(function* () {
      const fetched = yield* Effect.promise(() => fetchGuarded(`${local.base}/big`, options({ maxBytes: 1024 * 1024 })))
      assert.strictEqual(fetched.body.length, 1024 * 1024)
      assert.isTrue(fetched.truncated)
    })
  )

  it.live("counts decompressed bytes: a gzip bomb stops at the cap", () =>
    Effect.gen(function* () {
      const fetched = yield* Effect.promise(() =>
        fetchGuarded(`${local.base}/bomb`, options({ maxBytes: 1024 * 1024 }))
      )
      assert.strictEqual(fetched.body.length, 1024 * 1024)
      assert.isTrue(fetched.truncated)
    })
  )

  it.live("a redirect loop ends with TooManyRedirects; a stalled body with Timeout", () =>
    Effect.gen(function* () {
      const loop = yield* failure(`${local.base}/loop`, options())
      assert.isTrue(loop instanceof WebFetchFailure && loop.reason === "TooManyRedirects", String(loop))
      const slow = yield* failure(`${local.base}/slow`, options({ timeoutMs: 500 }))
      assert.isTrue(slow instanceof WebFetchFailure && slow.reason === "Timeout", String(slow))
    })
  )

  it.live("a 404 is an answer with its status and body, not a failure", () =>
    Effect.gen(function* () {
      const fetched = yield* Effect.promise(() => fetchGuarded(`${local.base}/missing`, options()))
      assert.strictEqual(fetched.status, 404)
      assert.strictEqual(fetched.body.toString(), "no such page")
    })
  )
})

describe("WebFetch: HTML to Markdown", () => {
  it.live("keeps the article's heading, an absolute link, a fenced code block and a table; drops scripts", () =>
    Effect.gen(function* () {
      const { title, markdown } = yield* Effect.promise(() => htmlToMarkdown(article, "http://site.test/blog/post"))
      assert.strictEqual(title, "Page title")
      assert.include(markdown, "[the kill page](http://site.test/docs/kill.html)")
      assert.include(markdown, "```sh\nkill -TERM -- -1234\n```")
      assert.include(markdown, "| Signal | Number |")
      assert.include(markdown, "| TERM | 15 |")
      assert.notInclude(markdown, "alert")
    })
  )
})

const manifest = Either.getOrThrow(Manifest.make(coreSpecs))
const webFetch = (args: JsonObject, options: { allowPrivate?: boolean; maxOutput?: number } = {}) =>
  manifest.byName.get("WebFetch")!.call(
    args,
    coreContext({
      settings: new CoreToolsConfig({ WebFetch: new WebFetchConfig({ allow_private: options.allowPrivate ?? true }) }),
      ...(options.maxOutput === undefined ? {} : { maxOutput: options.maxOutput })
    })
  )
const textOf = (result: CallToolResult) => (result.content[0] as { text: string }).text

describe("the WebFetch tool", () => {
  it.live("allow_private off (the default): the local server is Blocked, with the config key named", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(webFetch({ url: `${local.base}/text` }, { allowPrivate: false }))
      assert.strictEqual(error.reason, "Blocked")
      assert.include(error.detail, "allow_private")
    })
  )

  it.live("an HTML page comes back as Markdown with its title; metadata in the structured result", () =>
    Effect.gen(function* () {
      const result = yield* webFetch({ url: `${local.base}/article` })
      const text = textOf(result)
      assert.isTrue(text.startsWith("# Page title\n"), text.slice(0, 100))
      assert.include(text, "Pipes and groups")
      assert.include(text, `[the kill page](${local.base}/docs/kill.html)`)
      assert.include(result.structuredContent, {
        finalUrl: `${local.base}/article`,
        status: 200,
        format: "markdown",
        title: "Page title",
        nextStartChar: null,
        bodyTruncated: false
      })
    })
  )

  it.live("text is decoded by its charset; binary content is refused; a bad URL is an argument error", () =>
    Effect.gen(function* () {
      assert.include(textOf(yield* webFetch({ url: `${local.base}/latin1` })), "café")
      const binary = yield* Effect.flip(webFetch({ url: `${local.base}/binary` }))
      assert.strictEqual(binary.reason, "Binary")
      const bad = yield* Effect.flip(webFetch({ url: "file:///etc/passwd" }))
      assert.strictEqual(bad.reason, "InvalidArguments")
    })
  )

  it.live("a long page comes in parts within max_output; start_char = nextStartChar continues it exactly", () =>
    Effect.gen(function* () {
      const maxOutput = 3000
      const whole = textOf(yield* webFetch({ url: `${local.base}/article` }))
      const body = whole.slice(whole.indexOf("\n", whole.indexOf("\n") + 1) + 1)
      let collected = ""
      let start: number | null = 0
      let parts = 0
      while (start !== null) {
        const result: CallToolResult = yield* webFetch({ url: `${local.base}/big`, start_char: start }, { maxOutput })
        const text = textOf(result)
        assert.isAtMost(text.length + JSON.stringify(result.structuredContent).length, maxOutput)
        const structured = result.structuredContent as { nextStartChar: number | null; totalChars: number }
        const part = text
          .slice(text.indexOf("\n", text.indexOf("\n") + 1) + 1)
          .replace(/\n\n\[… \d+ more characters; .*\]$/, "")
        collected += part
        start = structured.nextStartChar
        parts++
        if (parts > 3) break
      }
      assert.isAbove(body.length, 0)
      assert.strictEqual(collected, "a".repeat(collected.length))
      assert.isAbove(collected.length, 3 * 2000)
    })
  )
})
