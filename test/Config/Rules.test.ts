// The rules of the config's tables (src/domain/Config/): each rejected value is reported at its key, in that key's
// own sentence (the schema's annotations), and a value just inside a rule is accepted.
import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import { parseConfig } from "../../src/services/Config.js"
import { rejected } from "./lib.js"

const accepted = (text: string) => assert.isTrue(Either.isRight(parseConfig(text, "/x/config.toml")), text)
const remote = `[sources.web]\nurl = "https://mcp.example.com/mcp"\n`

describe("Config rules: sources", () => {
  it("a prefix is unique among sources, reported at the source that set it; several may share the empty prefix", () => {
    assert.strictEqual(
      rejected(`[sources.a1]\ncommand = ["a"]\n[sources.b1]\ncommand = ["b"]\nprefix = "a1"\n`),
      `config /x/config.toml:5 at sources.b1.prefix: prefix "a1" is already the prefix of source "a1"; prefixes are unique among sources`
    )
    // Sources are checked in name order: when the one that set the prefix comes first, it is still the one reported.
    assert.strictEqual(
      rejected(`[sources.aa]\ncommand = ["a"]\nprefix = "zz"\n[sources.zz]\ncommand = ["b"]\n`),
      `config /x/config.toml:3 at sources.aa.prefix: prefix "zz" is already the prefix of source "zz"; prefixes are unique among sources`
    )
    // Two sources setting the same prefix: the later one in name order is reported, whatever the file's order.
    assert.strictEqual(
      rejected(`[sources.b1]\ncommand = ["a"]\nprefix = "x"\n[sources.a1]\ncommand = ["b"]\nprefix = "x"\n`),
      `config /x/config.toml:3 at sources.b1.prefix: prefix "x" is already the prefix of source "a1"; prefixes are unique among sources`
    )
    accepted(`[sources.a1]\ncommand = ["a"]\nprefix = ""\n[sources.b1]\ncommand = ["b"]\nprefix = ""\n`)
  })

  it("a prefix is kebab-case of at most 32 characters, with the kebab form suggested", () => {
    assert.strictEqual(
      rejected(`[sources.fs]\ncommand = ["a"]\nprefix = "Bad_P"\n`),
      `config /x/config.toml:3 at sources.fs.prefix: prefix is kebab-case (a-z, 0-9, single dashes) or "" for the tools' own names, got "Bad_P"; use "bad-p"`
    )
    assert.strictEqual(
      rejected(`[sources.fs]\ncommand = ["a"]\nprefix = "${"a".repeat(33)}"\n`),
      "config /x/config.toml:3 at sources.fs.prefix: prefix has at most 32 characters"
    )
    accepted(`[sources.fs]\ncommand = ["a"]\nprefix = "${"a".repeat(32)}"\n`)
  })

  it("start is eager or lazy", () => {
    assert.strictEqual(
      rejected(`[sources.fs]\ncommand = ["a"]\nstart = "later"\n`),
      `config /x/config.toml:3 at sources.fs.start: start is "eager" or "lazy", got "later"`
    )
  })

  it("protocol is auto, legacy or modern, auto by default, on local and remote sources alike", () => {
    assert.strictEqual(
      rejected(`[sources.fs]\ncommand = ["a"]\nprotocol = "2026"\n`),
      `config /x/config.toml:3 at sources.fs.protocol: protocol is "auto", "legacy" or "modern", got "2026"`
    )
    const parsed = parseConfig(
      `[sources.aa]\ncommand = ["a"]\n[sources.bb]\ncommand = ["b"]\nprotocol = "modern"\n${remote}protocol = "legacy"\n`,
      "/x/config.toml"
    )
    assert.isTrue(Either.isRight(parsed))
    if (Either.isRight(parsed)) {
      const sources = parsed.right.sources
      assert.deepStrictEqual(
        [sources.aa!.protocol, sources.bb!.protocol, sources.web!.protocol],
        ["auto", "modern", "legacy"]
      )
    }
  })

  it("max_restarts is a whole number, not negative", () => {
    assert.strictEqual(
      rejected(`[sources.fs]\ncommand = ["a"]\nmax_restarts = 1.5\n`),
      "config /x/config.toml:3 at sources.fs.max_restarts: max_restarts must be a whole number"
    )
    assert.strictEqual(
      rejected(`[sources.fs]\ncommand = ["a"]\nmax_restarts = -1\n`),
      "config /x/config.toml:3 at sources.fs.max_restarts: max_restarts must not be negative"
    )
  })

  it("a url has no blanks and parses; header names are HTTP tokens", () => {
    assert.strictEqual(
      rejected(`[sources.web]\nurl = "https://[::1"\n`),
      `config /x/config.toml:2 at sources.web.url: url must be an http(s) URL like "https://mcp.example.com/mcp", got "https://[::1"`
    )
    assert.strictEqual(
      rejected(`[sources.web]\nurl = "https://exa mple.com/mcp"\n`),
      `config /x/config.toml:2 at sources.web.url: url must be an http(s) URL like "https://mcp.example.com/mcp", got "https://exa mple.com/mcp"`
    )
    for (const url of ["git+https://mcp.example.com/mcp", "https://mcp.example.com/a b"]) {
      assert.strictEqual(
        rejected(`[sources.web]\nurl = "${url}"\n`),
        `config /x/config.toml:2 at sources.web.url: url must be an http(s) URL like "https://mcp.example.com/mcp", got "${url}"`
      )
    }
    assert.strictEqual(
      rejected(`${remote}headers = { "Bad Name" = "x" }\n`),
      `config /x/config.toml:3 at sources.web.headers."Bad Name": "Bad Name" is not an HTTP header name`
    )
    accepted(`${remote}headers = { "X-Api_Key.v2" = "x" }\n`)
  })

  it("oauth's client_metadata_url is an https URL with a path; redirect_port a port", () => {
    const metadata = (url: string) => rejected(`${remote}oauth = { client_metadata_url = "${url}" }\n`)
    const sentence = (url: string) =>
      `config /x/config.toml:3 at sources.web.oauth.client_metadata_url: client_metadata_url must be an https URL with a path, where your client metadata document is published, like "https://example.com/clawtool-client.json", got "${url}"`
    assert.strictEqual(metadata("https://x.example/"), sentence("https://x.example/"))
    assert.strictEqual(metadata("http://x.example/c.json"), sentence("http://x.example/c.json"))
    assert.strictEqual(metadata("nope"), sentence("nope"))
    accepted(`${remote}oauth = { client_metadata_url = "https://x.example/c.json" }\n`)
    assert.strictEqual(
      rejected(`${remote}oauth = { redirect_port = 70000 }\n`),
      "config /x/config.toml:3 at sources.web.oauth.redirect_port: redirect_port must be between 1 and 65535"
    )
  })

  it("a remote source takes no env_passthrough or cwd; a local one no headers and no oauth, not even false", () => {
    assert.strictEqual(
      rejected(`${remote}env_passthrough = ["HOME"]\n`),
      "config /x/config.toml:3 at sources.web.env_passthrough: env_passthrough is for local servers (command); a remote source (url) cannot use it"
    )
    assert.strictEqual(
      rejected(`${remote}cwd = "/tmp"\n`),
      "config /x/config.toml:3 at sources.web.cwd: cwd is for local servers (command); a remote source (url) cannot use it"
    )
    assert.strictEqual(
      rejected(`[sources.fs]\ncommand = ["a"]\nheaders = { A = "b" }\n`),
      "config /x/config.toml:3 at sources.fs.headers: headers is for remote sources (url); a local source (command) cannot use it"
    )
    assert.strictEqual(
      rejected(`[sources.fs]\ncommand = ["a"]\noauth = false\n`),
      "config /x/config.toml:3 at sources.fs.oauth: oauth is for remote sources (url); a local source (command) cannot use it"
    )
  })
})

describe("Config rules: the other tables", () => {
  it("an empty config: no extra hosts, origins or roots, sessions kept, core tools on, WebFetch kept off private addresses", () => {
    const config = Either.getOrThrow(parseConfig("", "/x/config.toml"))
    assert.deepStrictEqual(config.http.allowed_hosts, [])
    assert.deepStrictEqual(config.http.allowed_origins, [])
    assert.strictEqual(config.http.stateless, false)
    assert.deepStrictEqual(config.roots, [])
    assert.strictEqual(config.core_tools.enabled, true)
    assert.strictEqual(config.core_tools.Bash.enabled, true)
    assert.strictEqual(config.core_tools.WebFetch.enabled, true)
    assert.strictEqual(config.core_tools.WebFetch.allow_private, false)
  })

  it("tools: selectors are <instance>.<tool>; a usage_hint is not blank", () => {
    assert.strictEqual(
      rejected(`[tools.read]\nenabled = false\n`),
      `config /x/config.toml:1 at tools.read: tool selectors are "<instance>.<tool>", like tools."github.create_issue"; got "read"`
    )
    assert.strictEqual(
      rejected(`[tools."fs.read"]\nusage_hint = "  "\n`),
      `config /x/config.toml:2 at tools."fs.read".usage_hint: usage_hint must not be empty; leave the key out instead`
    )
    accepted(`[tools."fs.a/b.c"]\nusage_hint = " x "\n`)
  })

  it("name_budget, max_output: whole numbers in their range", () => {
    assert.strictEqual(
      rejected("name_budget = 20\n"),
      "config /x/config.toml:1 at name_budget: name_budget must be between 24 and 128 characters"
    )
    assert.strictEqual(
      rejected("name_budget = 30.5\n"),
      "config /x/config.toml:1 at name_budget: name_budget must be a whole number of characters"
    )
    assert.strictEqual(
      rejected("[core_tools]\nmax_output = 10\n"),
      "config /x/config.toml:2 at core_tools.max_output: max_output must be between 1000 and 1000000"
    )
    assert.strictEqual(
      rejected("[core_tools]\nmax_output = 1000.5\n"),
      "config /x/config.toml:2 at core_tools.max_output: max_output must be a whole number"
    )
  })

  it("catalog, child_capabilities, roots and otlp_endpoint name what they accept", () => {
    assert.strictEqual(
      rejected(`catalog = "lazy"\n`),
      `config /x/config.toml:1 at catalog: catalog is "full" or "search", got "lazy"`
    )
    assert.strictEqual(
      rejected(`[http]\nchild_capabilities = ["sampling", "logging"]\n`),
      `config /x/config.toml:2 at http.child_capabilities[1]: child_capabilities entries are "sampling", "elicitation" or "roots", got "logging"`
    )
    assert.strictEqual(
      rejected(`roots = ["/a", " "]\n`),
      "config /x/config.toml:1 at roots[1]: a root must not be empty"
    )
    assert.strictEqual(
      rejected(`[observability]\notlp_endpoint = "localhost:4318"\n`),
      `config /x/config.toml:2 at observability.otlp_endpoint: otlp_endpoint must be an http(s) URL like "http://localhost:4318", got "localhost:4318"`
    )
  })
})
