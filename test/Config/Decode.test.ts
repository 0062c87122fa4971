// parseConfig/decodeConfig (src/services/Config/Decode.ts): TOML and the hosts' JSON to a ClawtoolConfig, or one ConfigError.
import { assert, describe, it } from "@effect/vitest"
import { assertNone, assertSome } from "@effect/vitest/utils"
import { Duration, Either } from "effect"
import { instanceNameProblem, isRemote, OAuthConfig, oauthOf, targetOf } from "../../src/domain/Config.js"
import { decodeConfig, kebabCase, parseConfig } from "../../src/services/Config.js"
import { failure, fs, rejected } from "./lib.js"

describe("parseConfig (TOML)", () => {
  it("applies the defaults: enabled, 60s startup timeout, empty env and passthrough", () => {
    const config = Either.getOrThrow(parseConfig(fs, "/x/config.toml"))
    const source = config.sources["fs"]!
    assert.deepStrictEqual(source.command, ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"])
    assert.strictEqual(source.enabled, true)
    assert.isTrue(Duration.equals(source.startup_timeout, Duration.seconds(60)))
    assert.deepStrictEqual(source.env, {})
    assert.deepStrictEqual(source.env_passthrough, [])
    assert.strictEqual(source.cwd, undefined)
  })

  it("reads every key", () => {
    const text = [
      "[sources.github-work]",
      `command = ["npx", "-y", "@modelcontextprotocol/server-github"]`,
      `env = { GITHUB_TOKEN = "\${GITHUB_TOKEN}" }`,
      `cwd = "/srv"`,
      "enabled = false",
      `startup_timeout = "500ms"`,
      `env_passthrough = ["HOME", "PATH"]`,
      "",
      "[sources.slow]",
      `command = ["slow"]`,
      `startup_timeout = "2m"`
    ].join("\n")
    const config = Either.getOrThrow(parseConfig(text, "/x/config.toml"))
    const github = config.sources["github-work"]!
    assert.deepStrictEqual(github.env, { GITHUB_TOKEN: "${GITHUB_TOKEN}" })
    assert.strictEqual(github.cwd, "/srv")
    assert.strictEqual(github.enabled, false)
    assert.isTrue(Duration.equals(github.startup_timeout, Duration.millis(500)))
    assert.deepStrictEqual(github.env_passthrough, ["HOME", "PATH"])
    assert.isTrue(Duration.equals(config.sources["slow"]!.startup_timeout, Duration.minutes(2)))
  })

  it("an empty file has no sources", () => {
    assert.deepStrictEqual(Either.getOrThrow(parseConfig("", "/x/config.toml")).sources, {})
  })

  it("reports a syntax error with its line and column", () => {
    const error = failure(`[sources.fs]\ncommand = ["a"]\nenabled = \n`)
    assert.strictEqual(error.reason, "Syntax")
    assert.strictEqual(error.line, 3)
    assert.strictEqual(error.message, "config /x/config.toml:3:11: invalid TOML: invalid value")
  })

  it("a duplicate instance is a syntax error on its second table", () => {
    const error = failure(`[sources.fs]\ncommand = ["a"]\n\n[sources.fs]\ncommand = ["b"]\n`)
    assert.strictEqual(error.reason, "Syntax")
    assert.strictEqual(
      error.message,
      "config /x/config.toml:4:2: invalid TOML: trying to redefine an already defined table or value"
    )
  })

  it("rejects an unknown top-level key", () => {
    const error = failure(`profile = "x"\n\n${fs}`)
    assert.strictEqual(error.reason, "Invalid")
    assert.strictEqual(
      error.message,
      `config /x/config.toml:1 at profile: unknown key "profile"; known keys are sources, tools, name_budget, list_wait, observability, limits, roots, catalog, core_tools, http, trust, audit, profiles`
    )
  })

  it("rejects an unknown source key, naming the known ones", () => {
    const error = failure(`[sources.fs]\ncommand = ["a"]\nstartup-timeout = "5s"\n`)
    assert.strictEqual(error.keyPath, "sources.fs.startup-timeout")
    assert.strictEqual(
      error.message,
      `config /x/config.toml:3 at sources.fs.startup-timeout: unknown key "startup-timeout"; known keys are type, command, url, transport, headers, oauth, env, cwd, enabled, startup_timeout, env_passthrough, restart, restart_backoff, restart_backoff_max, restart_window, max_restarts, crash_loop_retry, call_timeout, start, idle_timeout, prefix, protocol, read_only, tags`
    )
  })

  it("rejects a command that is not a list", () => {
    assert.strictEqual(
      failure(`[sources.fs]\ncommand = "npx server"\n`).message,
      `config /x/config.toml:2 at sources.fs.command: expected a non-empty list of strings, like ["npx", "-y", "some-mcp-server"], got "npx server"`
    )
  })

  it("rejects a command element that is not a string", () => {
    assert.strictEqual(
      failure(`[sources.fs]\ncommand = ["a", 3]\n`).message,
      "config /x/config.toml:2 at sources.fs.command[1]: expected a string, got 3"
    )
  })

  it("rejects an empty command", () => {
    assert.strictEqual(
      failure(`[sources.fs]\ncommand = []\n`).message,
      `config /x/config.toml:2 at sources.fs.command[0]: must not be empty: give the program and its arguments, like ["npx", "-y", "some-mcp-server"]`
    )
  })

  it("rejects a source without a command", () => {
    assert.strictEqual(
      failure(`[sources.fs]\nenabled = true\n`).message,
      `config /x/config.toml:1 at sources.fs.command: a source needs a command (a local server, like ["npx", "-y", "some-mcp-server"]) or a url (a remote server)`
    )
  })

  it("reads a remote source: url, transport, headers and oauth", () => {
    const config = Either.getOrThrow(
      parseConfig(
        `[sources.linear]\nurl = "https://mcp.linear.app/mcp"\ntransport = "sse"\nheaders = { Authorization = "Bearer \${LINEAR_TOKEN}" }\noauth = { client_id = "abc", scopes = ["read"], redirect_port = 8976 }\n\n[sources.plain]\nurl = "http://localhost:3000/mcp"\noauth = true\n`,
        "/x/config.toml"
      )
    )
    const linear = config.sources["linear"]!
    assert.isTrue(isRemote(linear))
    assert.strictEqual(linear.command, undefined)
    assert.strictEqual(linear.transport, "sse")
    assert.deepStrictEqual(linear.headers, { Authorization: "Bearer ${LINEAR_TOKEN}" })
    const target = targetOf(linear)
    if (target._tag !== "Remote") return assert.fail("expected a remote target")
    assertSome(target.oauth, new OAuthConfig({ client_id: "abc", scopes: ["read"], redirect_port: 8976 }))
    const plain = targetOf(config.sources["plain"]!)
    if (plain._tag !== "Remote") return assert.fail("expected a remote target")
    assert.strictEqual(plain.transport, "auto")
    assertSome(plain.oauth, OAuthConfig.defaults)
    const local = Either.getOrThrow(parseConfig(`[sources.fs]\ncommand = ["a"]\n`, "/x/config.toml")).sources["fs"]!
    assert.isFalse(isRemote(local))
    const localTarget = targetOf(local)
    assert.strictEqual(localTarget._tag, "Stdio")
  })

  it("a target's oauth: none without the key or with false, the defaults for true, the table as written", () => {
    const oauthOfSource = (line: string) =>
      oauthOf(
        Either.getOrThrow(parseConfig(`[sources.web]\nurl = "https://mcp.example.com/mcp"\n${line}\n`, "/x/c.toml"))
          .sources["web"]!
      )
    assertNone(oauthOfSource(""))
    assertNone(oauthOfSource("oauth = false"))
    assertSome(oauthOfSource("oauth = true"), OAuthConfig.defaults)
    assertSome(oauthOfSource(`oauth = { scopes = ["read"] }`), new OAuthConfig({ scopes: ["read"] }))
  })

  it("a local source's target is its command as written", () => {
    const local = Either.getOrThrow(parseConfig(`[sources.fs]\ncommand = ["npx", "-y", "fs"]\n`, "/x/c.toml"))
    const target = targetOf(local.sources["fs"]!)
    if (target._tag !== "Stdio") return assert.fail("expected a local target")
    assert.deepStrictEqual(target.command, ["npx", "-y", "fs"])
  })

  it("rejects a source with both command and url, or remote and local keys mixed", () => {
    assert.strictEqual(
      failure(`[sources.fs]\ncommand = ["a"]\nurl = "https://x.example/mcp"\n`).message,
      "config /x/config.toml:3 at sources.fs.url: a source has a command or a url, not both"
    )
    for (const [line, key] of [
      [`env = { A = "b" }`, "env"],
      [`cwd = "/srv"`, "cwd"],
      [`env_passthrough = ["HOME"]`, "env_passthrough"]
    ] as const) {
      assert.strictEqual(
        failure(`[sources.web]\nurl = "https://x.example/mcp"\n${line}\n`).message,
        `config /x/config.toml:3 at sources.web.${key}: ${key} is for local servers (command); a remote source (url) cannot use it`
      )
    }
    assert.strictEqual(
      failure(`[sources.fs]\ncommand = ["a"]\nheaders = { A = "b" }\n`).message,
      "config /x/config.toml:3 at sources.fs.headers: headers is for remote sources (url); a local source (command) cannot use it"
    )
    assert.strictEqual(
      failure(`[sources.web]\nurl = "mcp.example.com"\n`).message,
      `config /x/config.toml:2 at sources.web.url: url must be an http(s) URL like "https://mcp.example.com/mcp", got "mcp.example.com"`
    )
    assert.strictEqual(
      failure(`[sources.web]\nurl = "https://x.example/mcp"\ntransport = "ws"\n`).message,
      `config /x/config.toml:3 at sources.web.transport: transport is "auto", "streamable-http" or "sse", got "ws"`
    )
    assert.strictEqual(
      failure(`[sources.web]\nurl = "https://x.example/mcp"\noauth = { redirect_port = 70000 }\n`).message,
      "config /x/config.toml:3 at sources.web.oauth.redirect_port: redirect_port must be between 1 and 65535"
    )
    assert.strictEqual(
      failure(`[sources.web]\nurl = "https://x.example/mcp"\noauth = "yes"\n`).message,
      `config /x/config.toml:3 at sources.web.oauth: expected a table, like [sources.web.oauth], got "yes"`
    )
    for (const url of ["http://x.example/client.json", "https://x.example/", "client.json"]) {
      assert.strictEqual(
        failure(`[sources.web]\nurl = "https://x.example/mcp"\noauth = { client_metadata_url = "${url}" }\n`).message,
        `config /x/config.toml:3 at sources.web.oauth.client_metadata_url: client_metadata_url must be an https URL with a path, where your client metadata document is published, like "https://example.com/clawtool-client.json", got "${url}"`
      )
    }
    assert.strictEqual(
      failure(
        `[sources.web]\nurl = "https://x.example/mcp"\noauth = { client_id = "abc", client_metadata_url = "https://x.example/c.json" }\n`
      ).message,
      "config /x/config.toml:3 at sources.web.oauth.client_metadata_url: oauth takes a client_id (registered by hand) or a client_metadata_url, not both"
    )
  })

  it("rejects a wrong boolean", () => {
    assert.strictEqual(
      failure(`[sources.fs]\ncommand = ["a"]\nenabled = "yes"\n`).message,
      `config /x/config.toml:3 at sources.fs.enabled: expected true or false, got "yes"`
    )
  })

  it("rejects a bad duration, on the line of the key inside the right table", () => {
    const text = `# clawtool\n[sources.other]\ncommand = ["b"]\nstartup_timeout = "1s"\n\n[sources.fs]\ncommand = ["a"]\nenv = { A = "1" }\nstartup_timeout = "5 min"\n`
    const error = failure(text)
    assert.strictEqual(error.line, 9)
    assert.strictEqual(
      error.message,
      `config /x/config.toml:9 at sources.fs.startup_timeout: expected a duration like "500ms", "60s", "2m" or "1h", got "5 min"`
    )
    assert.strictEqual(
      failure(`[sources.fs]\ncommand = ["a"]\nstartup_timeout = 60\n`).message,
      `config /x/config.toml:3 at sources.fs.startup_timeout: expected a duration like "500ms", "60s", "2m" or "1h", got 60`
    )
  })

  it("rejects a bad instance name, suggesting the kebab form", () => {
    const error = failure(`${fs}\n[sources.GitHub_Work]\ncommand = ["a"]\n`)
    assert.strictEqual(error.line, 4)
    assert.strictEqual(
      error.message,
      `config /x/config.toml:4 at sources.GitHub_Work: instance names are kebab-case (a-z, 0-9, single dashes), got "GitHub_Work"; use "github-work"`
    )
  })

  it("rejects instance names that are too short or too long", () => {
    assert.strictEqual(
      failure(`[sources.a]\ncommand = ["a"]\n`).message,
      "config /x/config.toml:1 at sources.a: instance names have at least 2 characters"
    )
    const long = "a".repeat(33)
    assert.strictEqual(
      failure(`[sources.${long}]\ncommand = ["a"]\n`).message,
      `config /x/config.toml:1 at sources.${long}: instance names have at most 32 characters`
    )
    assert.isTrue(Either.isRight(parseConfig(`[sources.${"a".repeat(32)}]\ncommand = ["a"]\n`, "/x/config.toml")))
  })

  it("rejects bad env names and values", () => {
    assert.strictEqual(
      failure(`[sources.fs]\ncommand = ["a"]\n\n[sources.fs.env]\n"BAD-NAME" = "x"\n`).message,
      `config /x/config.toml:5 at sources.fs.env.BAD-NAME: "BAD-NAME" is not an environment variable name (letters, digits and _, not starting with a digit)`
    )
    assert.strictEqual(
      failure(`[sources.fs]\ncommand = ["a"]\nenv = { OK = 1 }\n`).message,
      "config /x/config.toml:3 at sources.fs.env.OK: expected a string, got 1"
    )
    assert.strictEqual(
      failure(`[sources.fs]\ncommand = ["a"]\nenv_passthrough = ["OK", "1BAD"]\n`).message,
      `config /x/config.toml:3 at sources.fs.env_passthrough[1]: expected an environment variable name, got "1BAD"`
    )
  })

  it("rejects sources that are not tables", () => {
    assert.strictEqual(
      failure("sources = 5\n").message,
      "config /x/config.toml:1 at sources: expected a table of sources, like [sources.my-server], got 5"
    )
    assert.strictEqual(
      failure("[sources]\nfs = 5\n").message,
      "config /x/config.toml:2 at sources.fs: expected a table with a command or a url, like [sources.fs], got 5"
    )
  })
})

describe("parseConfig (JSON of Claude Desktop, Cursor, VS Code)", () => {
  const file = "/x/claude_desktop_config.json"
  const jsonFailure = (document: string) => failure(document, file)

  it("maps mcpServers entries to sources, ignoring the host's other keys", () => {
    const text = JSON.stringify({
      globalShortcut: "Ctrl+Space",
      mcpServers: {
        fs: { command: "npx", args: ["-y", "server-filesystem", "/tmp"], env: { A: "b" }, cwd: "/srv" },
        memory: { command: "npx", disabled: true, autoApprove: [] }
      }
    })
    const config = Either.getOrThrow(parseConfig(text, file))
    assert.deepStrictEqual(config.sources["fs"]!.command, ["npx", "-y", "server-filesystem", "/tmp"])
    assert.deepStrictEqual(config.sources["fs"]!.env, { A: "b" })
    assert.strictEqual(config.sources["fs"]!.cwd, "/srv")
    assert.strictEqual(config.sources["fs"]!.enabled, true)
    assert.isTrue(Duration.equals(config.sources["fs"]!.startup_timeout, Duration.seconds(60)))
    assert.deepStrictEqual(config.sources["memory"]!.command, ["npx"])
    assert.strictEqual(config.sources["memory"]!.enabled, false)
  })

  it("maps VS Code servers with type stdio", () => {
    const text = JSON.stringify({ inputs: [], servers: { memory: { type: "stdio", command: "npx", args: ["m"] } } })
    assert.deepStrictEqual(Either.getOrThrow(parseConfig(text, "/x/.vscode/mcp.json")).sources["memory"]!.command, [
      "npx",
      "m"
    ])
  })

  it("rejects a non-kebab name, suggesting the kebab form", () => {
    const text = `{\n  "mcpServers": {\n    "GitHub_Work": { "command": "npx", "args": ["-y", "x"] }\n  }\n}`
    assert.strictEqual(
      jsonFailure(text).message,
      `config ${file}:3 at mcpServers.GitHub_Work: instance names are kebab-case (a-z, 0-9, single dashes), got "GitHub_Work"; use "github-work"`
    )
  })

  it("maps remote entries (VS Code type http, Cursor url) to remote sources with their headers", () => {
    const text = `{\n  "servers": {\n    "local": { "type": "stdio", "command": "a" },\n    "remote": { "type": "http", "url": "https://example.com/mcp", "headers": { "Authorization": "Bearer \${TOKEN}" } },\n    "legacy": { "type": "sse", "url": "https://example.com/sse", "disabled": true },\n    "plain": { "url": "https://example.com/any" }\n  }\n}`
    const { sources } = Either.getOrThrow(parseConfig(text, "/x/mcp.json"))
    assert.deepStrictEqual(sources["local"]!.command, ["a"])
    assert.strictEqual(sources["remote"]!.url, "https://example.com/mcp")
    assert.strictEqual(sources["remote"]!.transport, "streamable-http")
    assert.deepStrictEqual(sources["remote"]!.headers, { Authorization: "Bearer ${TOKEN}" })
    assert.strictEqual(sources["remote"]!.command, undefined)
    assert.strictEqual(sources["remote"]!.enabled, true)
    assert.strictEqual(sources["legacy"]!.transport, "sse")
    assert.strictEqual(sources["legacy"]!.enabled, false)
    assert.strictEqual(sources["plain"]!.transport, "auto")
  })

  it("skips an entry it cannot use, keeping it with why beside the config, and keeps the others", () => {
    const document = {
      mcpServers: {
        ok: { command: "a" },
        web: { url: "https://example.com/mcp" },
        socket: { type: "ws", url: "wss://example.com" },
        pigeon: { type: 7 },
        empty: { args: [] },
        both: { command: "a", url: "https://example.com" },
        "no-url": { type: "sse" },
        "no-command": { type: "stdio", url: "https://example.com" }
      }
    }
    const { config, skipped } = Either.getOrThrow(decodeConfig(JSON.stringify(document), file))
    assert.deepStrictEqual(Object.keys(config.sources).sort(), ["ok", "web"])
    assert.deepStrictEqual(
      skipped.map((entry) => [entry.name, entry.reason]),
      [
        ["both", "has both a command and a url"],
        ["empty", "has neither a command nor a url"],
        ["no-command", `type "stdio" has no command`],
        ["no-url", `type "sse" has no url`],
        ["pigeon", "type 7 is not stdio, http or sse"],
        ["socket", `type "ws" is not stdio, http or sse`]
      ]
    )
    // A TOML config skips nothing: an entry it cannot use is an error.
    assert.deepStrictEqual(Either.getOrThrow(decodeConfig(`[sources.ok]\ncommand = ["a"]\n`, "/x/c.toml")).skipped, [])
    assert.isTrue(Either.isLeft(decodeConfig(`[sources.nothing]\n`, "/x/c.toml")))
  })

  it("checks a remote entry's keys like a local one's", () => {
    assert.strictEqual(
      jsonFailure(`{ "mcpServers": { "web": { "url": "ftp://example.com" } } }`).message,
      `config ${file}:1 at mcpServers.web.url: url must be an http(s) URL like "https://mcp.example.com/mcp", got "ftp://example.com"`
    )
    assert.strictEqual(
      jsonFailure(`{ "mcpServers": { "web": { "url": "https://example.com", "env": {} } } }`).message,
      `config ${file}:1 at mcpServers.web.env: unknown key "env"; known keys are type, url, headers, disabled`
    )
  })

  it("reports JSON syntax errors with a line", () => {
    const error = jsonFailure(`{\n  "mcpServers": {\n    "ok": { "command": "a" },\n  }\n}`)
    assert.strictEqual(error.reason, "Syntax")
    assert.strictEqual(error.line, 4)
    assert.match(error.message, /^config \/x\/claude_desktop_config\.json:4:3: invalid JSON: /)
  })

  it("names args, env and unknown keys in the user's terms", () => {
    assert.strictEqual(
      jsonFailure(`{\n  "mcpServers": {\n    "fs": {\n      "command": "a",\n      "args": ["x", 3]\n    }\n  }\n}`)
        .message,
      `config ${file}:5 at mcpServers.fs.args[1]: expected a string, got 3`
    )
    assert.strictEqual(
      jsonFailure(`{ "mcpServers": { "fs": { "command": "a", "env": { "K": 1 } } } }`).message,
      `config ${file}:1 at mcpServers.fs.env.K: expected a string, got 1`
    )
    assert.strictEqual(
      jsonFailure(`{ "mcpServers": { "fs": { "command": "a", "envFile": ".env" } } }`).message,
      `config ${file}:1 at mcpServers.fs.envFile: unknown key "envFile"; known keys are type, command, args, env, cwd, disabled`
    )
    assert.strictEqual(
      jsonFailure(`{ "mcpServers": { "fs": { "type": "stdio", "command": 3 } } }`).message,
      `config ${file}:1 at mcpServers.fs.command: expected a string, got 3`
    )
  })

  it("rejects a document without servers", () => {
    assert.strictEqual(
      jsonFailure(`{ "globalShortcut": "x" }`).message,
      `config ${file}: expected a JSON object with "mcpServers" (Claude Desktop, Cursor) or "servers" (VS Code)`
    )
  })

  it("kebabCase", () => {
    assert.strictEqual(kebabCase("GitHub_Work"), "github-work")
    assert.strictEqual(kebabCase("my server (2)"), "my-server-2")
  })
})

describe("instanceNameProblem (the name check of clawtool source add)", () => {
  it("none for a kebab-case name of 2 to 32 characters", () => {
    assertNone(instanceNameProblem("github-work"))
    assertNone(instanceNameProblem("a1"))
    assertNone(instanceNameProblem("a".repeat(32)))
  })

  it("the schema's own sentence otherwise, suggesting the kebab form only when that is a valid name", () => {
    assertSome(
      instanceNameProblem("GitHub_Work"),
      `instance names are kebab-case (a-z, 0-9, single dashes), got "GitHub_Work"; use "github-work"`
    )
    assertSome(instanceNameProblem("A"), `instance names are kebab-case (a-z, 0-9, single dashes), got "A"`)
    assertSome(instanceNameProblem("__"), `instance names are kebab-case (a-z, 0-9, single dashes), got "__"`)
    const long = "A".repeat(33)
    assertSome(instanceNameProblem(long), `instance names are kebab-case (a-z, 0-9, single dashes), got "${long}"`)
    assertSome(instanceNameProblem("a"), "instance names have at least 2 characters")
    assertSome(instanceNameProblem("a".repeat(33)), "instance names have at most 32 characters")
  })
})

describe("Config syntax errors", () => {
  it("TOML: the parser's reason with line and column, without its code block", () => {
    assert.strictEqual(rejected("[sources.fs\n"), "config /x/config.toml:1:12: invalid TOML: illegal character in key")
    assert.strictEqual(
      rejected("a = " + "[".repeat(2000)),
      "config /x/config.toml:1:1005: invalid TOML: document contains excessively nested structures. aborting."
    )
  })

  it("JSON: the reason without V8's position, as line and column", () => {
    assert.strictEqual(
      rejected('{\n  "mcpServers": {,\n}', "/x/c.json"),
      "config /x/c.json:2:18: invalid JSON: Expected property name or '}'"
    )
  })

  it("JSON: a one-digit position is cut too", () => {
    assert.strictEqual(
      rejected("{,}", "/x/c.json"),
      "config /x/c.json:1:2: invalid JSON: Expected property name or '}'"
    )
  })

  it("JSON: no line when the parser names no position", () => {
    assert.strictEqual(rejected("", "/x/c.json"), "config /x/c.json: invalid JSON: Unexpected end of JSON input")
    const error = parseConfig("[1,]", "/x/c.json")
    assert.isTrue(Either.isLeft(error))
    if (Either.isLeft(error)) {
      assert.strictEqual(error.left.line, undefined)
      assert.strictEqual(error.left.column, undefined)
    }
  })
})

describe("parseConfig: [trust] and [audit] (issue 25)", () => {
  it("defaults to the safe settings with nothing written", () => {
    const config = Either.getOrThrow(parseConfig(fs, "/x/config.toml"))
    assert.strictEqual(config.trust.first_use, "pin")
    assert.strictEqual(config.trust.on_change, "quarantine")
    assert.strictEqual(config.trust.new_tools, "allow")
    assert.strictEqual(config.trust.on_suspicious, "warn")
    assert.strictEqual(config.trust.redact_secrets, true)
    assert.strictEqual(config.trust.confirm.length, 0)
    assert.isTrue(Duration.equals(config.trust.confirm_timeout, Duration.minutes(2)))
    assert.strictEqual(config.trust.unconfirmed, "deny")
    assert.strictEqual(config.trust.pins, undefined)
    assert.strictEqual(config.audit.enabled, true)
    assert.strictEqual(config.audit.args, "none")
    assert.strictEqual(config.audit.max_bytes, 10 * 1024 * 1024)
    assert.strictEqual(config.audit.keep, 3)
    assert.strictEqual(config.sources["fs"]!.read_only, false)
  })

  it("names the allowed values of a setting given a wrong one", () => {
    assert.strictEqual(
      failure(`[trust]\non_change = "block"\n\n${fs}`).message,
      `config /x/config.toml:2 at trust.on_change: on_change is "quarantine", "warn" or "allow", got "block"`
    )
    assert.strictEqual(
      failure(`[trust]\nfirst_use = "trust"\n\n${fs}`).message,
      `config /x/config.toml:2 at trust.first_use: first_use is "pin" or "quarantine", got "trust"`
    )
  })

  it("takes confirm selectors: destructive, a core tool, <instance>.<tool> and <instance>.*", () => {
    const config = Either.getOrThrow(
      parseConfig(`[trust]\nconfirm = ["destructive", "Bash", "github.delete_repo", "fs.*"]\n\n${fs}`, "/x/config.toml")
    )
    assert.strictEqual(config.trust.confirm.join(" "), "destructive Bash github.delete_repo fs.*")
    assert.strictEqual(
      failure(`[trust]\nconfirm = ["bash"]\n\n${fs}`).message,
      `config /x/config.toml:2 at trust.confirm[0]: confirm entries are "destructive", a core tool (Bash, Read, Edit, Write, Glob, Grep, WebFetch, WebSearch, RunCode) or "<instance>.<tool>" / "<instance>.*", got "bash"`
    )
  })

  it("bounds the audit's rotation", () => {
    assert.strictEqual(
      failure(`[audit]\nmax_bytes = 10\n\n${fs}`).message,
      "config /x/config.toml:2 at audit.max_bytes: max_bytes must be between 1024 and 1073741824"
    )
  })
})
