import { assert, describe, it } from "@effect/vitest"
import { assertRight } from "@effect/vitest/utils"
import { Duration, Either, Schema } from "effect"
import { ClawtoolConfig, McpServersJson } from "../../src/domain/Config.js"
import type { ConfigError } from "../../src/domain/Errors.js"
import { decodeStrict, parseConfig } from "../../src/services/Config.js"

const failure = (text: string, file: string): ConfigError => {
  const result = parseConfig(text, file)
  if (Either.isRight(result)) return assert.fail(`expected a ConfigError, got ${JSON.stringify(result.right)}`)
  return result.left
}

const json = "/x/mcp.json"
const jsonMessage = (document: unknown) =>
  failure(typeof document === "string" ? document : JSON.stringify(document), json).message

describe("McpServersJson: the host's JSON as a Schema transform", () => {
  it("decodes to a ClawtoolConfig with every default, dropping the host-only approval keys", () => {
    const decoded = Schema.decodeUnknownEither(McpServersJson, { onExcessProperty: "error" })({
      inputs: [],
      servers: {
        fs: { type: "stdio", command: "npx", args: ["-y", "fs"], autoApprove: ["read"], alwaysAllow: [] },
        off: { command: "off", disabled: true, env: { A: "b" }, cwd: "/srv" }
      }
    })
    if (Either.isLeft(decoded)) return assert.fail(String(decoded.left))
    const { fs, off } = decoded.right.config.sources
    assert.instanceOf(decoded.right.config, ClawtoolConfig)
    assert.deepStrictEqual(decoded.right.skipped, [])
    assert.deepStrictEqual(fs?.command, ["npx", "-y", "fs"])
    assert.strictEqual(fs?.enabled, true)
    assert.strictEqual(fs?.restart, "on-failure")
    assert.isTrue(Duration.equals(fs!.startup_timeout, Duration.seconds(60)))
    assert.deepStrictEqual(off?.command, ["off"])
    assert.strictEqual(off?.enabled, false)
    assert.deepStrictEqual(off?.env, { A: "b" })
    assert.strictEqual(off?.cwd, "/srv")
  })

  it("is one way: a ClawtoolConfig is not written back as mcpServers JSON", () => {
    const encoded = Schema.encodeEither(McpServersJson)({ config: ClawtoolConfig.empty, skipped: [] })
    if (Either.isRight(encoded)) return assert.fail("expected the encoding to fail")
    assert.include(encoded.left.message, "clawtool writes its config as TOML, not as mcpServers JSON")
  })

  it("reports the document-level rules at the file, without a key", () => {
    assert.strictEqual(
      jsonMessage({ mcpServers: {}, servers: {} }),
      `config ${json}: has both "mcpServers" and "servers"; keep one`
    )
    assert.strictEqual(jsonMessage(5), `config ${json}: expected a JSON object with "mcpServers" or "servers", got 5`)
    assert.strictEqual(
      jsonMessage([]),
      `config ${json}: expected a JSON object with "mcpServers" or "servers", got an empty list`
    )
  })

  it("reports each entry's problems at the host's key path and line", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      [
        `{\n  "mcpServers": 5\n}`,
        `config ${json}:2 at mcpServers: expected an object of servers, like { "my-server": { "command": "npx" } }, got 5`
      ],
      [
        `{\n  "servers": {\n    "fs": "npx"\n  }\n}`,
        `config ${json}:3 at servers.fs: expected an object with a "command" or a "url", got "npx"`
      ],
      [
        `{ "mcpServers": {\n  "fs": { "command": "" }\n} }`,
        `config ${json}:2 at mcpServers.fs.command: expected a non-empty string, got ""`
      ],
      [
        `{ "mcpServers": {\n  "fs": {\n    "command": "a",\n    "args": "-y x"\n  }\n} }`,
        `config ${json}:4 at mcpServers.fs.args: expected a list of strings, got "-y x"`
      ],
      [
        `{ "mcpServers": { "fs": { "command": "a", "disabled": "yes" } } }`,
        `config ${json}:1 at mcpServers.fs.disabled: expected true or false, got "yes"`
      ],
      [
        `{ "mcpServers": { "fs": { "command": "a", "cwd": 3 } } }`,
        `config ${json}:1 at mcpServers.fs.cwd: expected a string (a directory), got 3`
      ],
      [
        `{ "mcpServers": { "fs": { "command": "a", "env": { "A-B": "x" } } } }`,
        `config ${json}:1 at mcpServers.fs.env.A-B: "A-B" is not an environment variable name (letters, digits and _, not starting with a digit)`
      ],
      [
        `{ "mcpServers": { "x": { "command": "a" } } }`,
        `config ${json}:1 at mcpServers.x: instance names have at least 2 characters`
      ]
    ]
    for (const [text, message] of cases) assert.strictEqual(jsonMessage(text), message, text)
  })

  it("decodes a remote server's keys, and leaves out one it cannot use, listing it with why", () => {
    const decoded = Schema.decodeUnknownEither(McpServersJson, { onExcessProperty: "error" })({
      servers: {
        web: { type: "sse", url: "https://example.com/sse", headers: { "X-Key": "k" } },
        odd: { command: "a", url: "https://example.com" }
      }
    })
    if (Either.isLeft(decoded)) return assert.fail(String(decoded.left))
    const { sources } = decoded.right.config
    assert.deepStrictEqual(Object.keys(sources), ["web"])
    assert.strictEqual(sources["web"]!.url, "https://example.com/sse")
    assert.strictEqual(sources["web"]!.transport, "sse")
    assert.deepStrictEqual(sources["web"]!.headers, { "X-Key": "k" })
    assert.deepStrictEqual(
      decoded.right.skipped.map((entry) => [entry.name, entry.reason]),
      [["odd", "has both a command and a url"]]
    )
  })
})

describe("config errors are worded from the schema", () => {
  const toml = "/x/config.toml"
  const message = (text: string) => failure(text, toml).message

  it("a union of literals is one sentence naming every choice", () => {
    assert.strictEqual(
      message(`[sources.fs]\ncommand = ["a"]\ntype = "sse"\n`),
      `config ${toml}:3 at sources.fs.type: expected "mcp" or "stdio", got "sse"`
    )
  })

  it("a table is shown by its header; a described table by its example", () => {
    assert.strictEqual(
      message(`observability = 5\n`),
      `config ${toml}:1 at observability: expected a table, like [observability], got 5`
    )
    assert.strictEqual(
      message(`[sources.fs]\ncommand = ["a"]\nenv = "A=b"\n`),
      `config ${toml}:3 at sources.fs.env: expected a table of strings, like { KEY = "value" }, got "A=b"`
    )
    assert.strictEqual(
      message(`[sources.fs]\ncommand = ["a"]\nenv_passthrough = "HOME"\n`),
      `config ${toml}:3 at sources.fs.env_passthrough: expected a list of environment variable names, like ["HOME"], got "HOME"`
    )
  })

  it("a non-string duration still reads as a duration, on every duration key", () => {
    assert.strictEqual(
      message(`[sources.fs]\ncommand = ["a"]\ncall_timeout = 5\n`),
      `config ${toml}:3 at sources.fs.call_timeout: expected a duration like "500ms", "60s", "2m" or "1h", got 5`
    )
  })

  it("unknown keys of a nested table list that table's keys", () => {
    assert.strictEqual(
      message(`[observability]\nendpoint = "http://x"\n`),
      `config ${toml}:2 at observability.endpoint: unknown key "endpoint"; known keys are otlp_endpoint`
    )
  })

  it("a new key needs only its schema field and annotation", () => {
    // The shape another block (like `limits`) would have: nothing else describes it.
    const Limits = Schema.Struct({
      limits: Schema.optional(
        Schema.Struct({
          max_line_bytes: Schema.optional(
            Schema.Number.annotations({ description: "a number of bytes", examples: [1_048_576] })
          ),
          max_depth: Schema.optional(
            Schema.Number.pipe(Schema.int({ message: () => "max_depth must be a whole number" }))
          )
        })
      )
    })
    const detail = (input: unknown) =>
      Either.match(decodeStrict(Limits, input, { file: toml, text: "", format: "toml" }), {
        onLeft: (error) => error.message,
        onRight: () => "decoded"
      })
    assertRight(decodeStrict(Limits, { limits: { max_line_bytes: 10 } }, { file: toml, text: "", format: "toml" }), {
      limits: { max_line_bytes: 10 }
    })
    assert.strictEqual(
      detail({ limits: { max_line_bytes: "big" } }),
      `config ${toml} at limits.max_line_bytes: expected a number of bytes, like 1048576, got "big"`
    )
    assert.strictEqual(
      detail({ limits: { max_depth: 1.5 } }),
      `config ${toml} at limits.max_depth: max_depth must be a whole number`
    )
    assert.strictEqual(
      detail({ limits: { depth: 1 } }),
      `config ${toml} at limits.depth: unknown key "depth"; known keys are max_line_bytes, max_depth`
    )
    assert.strictEqual(detail({ limits: 3 }), `config ${toml} at limits: expected a table, like [limits], got 3`)
  })
})
