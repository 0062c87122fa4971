import { assert, describe, it } from "@effect/vitest"
import { assertNone, assertSome } from "@effect/vitest/utils"
import { Duration, Either, Schema } from "effect"
import { DurationString } from "../src/domain/Duration.js"
import { childEnvironment } from "../src/domain/Environment.js"
import { CallError, SourceError } from "../src/domain/Errors.js"
import { packageOf } from "../src/domain/Health.js"
import { errorResult } from "../src/domain/Mcp.js"
import { isJsonObject, RpcCode, RpcError } from "../src/domain/Surface.js"
import * as WireName from "../src/domain/WireName.js"
import { parseConfig } from "../src/services/Config.js"

describe("WireName.split (the Go SplitWireName cases)", () => {
  // null: no split (None)
  const cases: ReadonlyArray<[string, { instance: string; tool: string } | null]> = [
    ["stub__echo", { instance: "stub", tool: "echo" }],
    ["github-personal__create_issue", { instance: "github-personal", tool: "create_issue" }],
    ["a__b__c", { instance: "a", tool: "b__c" }],
    ["Bash", null],
    ["__leading", null],
    ["trailing__", null],
    ["", null]
  ]
  for (const [wire, expected] of cases) {
    it(JSON.stringify(wire), () =>
      expected === null ? assertNone(WireName.split(wire)) : assertSome(WireName.split(wire), expected)
    )
  }
  it("make and split round-trip", () =>
    assertSome(WireName.split(WireName.make("gh", "list_repos")), { instance: "gh", tool: "list_repos" }))
})

describe("packageOf", () => {
  const cases: ReadonlyArray<[ReadonlyArray<string>, string]> = [
    [["npx", "-y", "@modelcontextprotocol/server-github"], "@modelcontextprotocol/server-github"],
    [["uvx", "mcp-server-fetch"], "mcp-server-fetch"],
    [["docker", "run", "-i", "--rm", "mcp/fetch"], "mcp/fetch"],
    [
      ["node", "node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"],
      "@modelcontextprotocol/server-everything"
    ],
    [["node", "examples/servers/notes.mjs"], "notes.mjs"],
    [["/usr/local/bin/toolbox", "--tools-file", "x"], "toolbox"]
  ]
  for (const [command, expected] of cases) it(command.join(" "), () => assert.strictEqual(packageOf(command), expected))
})

describe("childEnvironment", () => {
  it("keeps the safe set, passthrough names and the resolved env; drops everything else", () => {
    const env = childEnvironment(
      {
        PATH: "/bin",
        HOME: "/h",
        LC_ALL: "C",
        HTTPS_PROXY: "p",
        OPENAI_API_KEY: "sk-x",
        MY_VAR: "1",
        GITHUB_TOKEN: "t"
      },
      ["MY_VAR"],
      { GITHUB_TOKEN: "from-secrets" }
    )
    assert.deepStrictEqual(env, {
      PATH: "/bin",
      HOME: "/h",
      LC_ALL: "C",
      HTTPS_PROXY: "p",
      MY_VAR: "1",
      GITHUB_TOKEN: "from-secrets"
    })
  })
})

// Mutation-testing follow-ups (docs/mutation.md): behaviour of src/domain/ that the other suites left unpinned.
describe("WireName.split rejects an empty side (compared with assertNone, not deepStrictEqual)", () => {
  it("no instance before the separator, or nothing after it", () => {
    assertNone(WireName.split("__leading"))
    assertNone(WireName.split("trailing__"))
    assertNone(WireName.split("__"))
    assertSome(WireName.split("a__b"), { instance: "a", tool: "b" })
  })
})

describe("DurationString", () => {
  it("accepts surrounding blanks and encodes back to milliseconds", () => {
    const decode = Schema.decodeUnknownEither(DurationString)
    assert.isTrue(Either.isRight(decode(" 2m ")))
    assert.strictEqual(Duration.toMillis(Either.getOrThrow(decode(" 2m "))), 120_000)
    assert.strictEqual(Schema.encodeSync(DurationString)(Duration.seconds(2)), "2000ms")
  })
})

describe("childEnvironment", () => {
  it("a safe name whose parent value is undefined is left out, not copied as undefined", () => {
    const env = childEnvironment({ PATH: undefined, HOME: "/h" }, [], {})
    assert.deepStrictEqual(Object.keys(env), ["HOME"])
  })
})

describe("packageOf: edges of the runner, interpreter and node_modules rules", () => {
  const cases: ReadonlyArray<[ReadonlyArray<string>, string]> = [
    // A flag the runner does not know is skipped because it starts with "-".
    [["npx", "--quiet", "pkg"], "pkg"],
    [["python", "server.py"], "server.py"],
    [["python3", "-u", "/srv/mcp/server.py"], "server.py"],
    // An interpreter without a script names itself.
    [["node", "--inspect"], "node"],
    // An unscoped installed package is its first directory under node_modules.
    [["node", "/x/node_modules/pkg/dist/index.js"], "pkg"],
    // Truncated node_modules paths never read past the end.
    [["node", "/x/node_modules"], "node_modules"],
    [["node", "/x/node_modules/@scope"], "@scope"],
    // An empty command names nothing.
    [[], ""]
  ]
  for (const [command, expected] of cases) it(command.join(" "), () => assert.strictEqual(packageOf(command), expected))
})

describe("errors and results", () => {
  it("SourceError and CallError messages; auth and retryable default to false", () => {
    const source = new SourceError({ instance: "gh", reason: "Timeout", detail: "no answer in 60s" })
    assert.strictEqual(source.message, `source "gh": Timeout: no answer in 60s`)
    assert.isFalse(source.auth)
    const call = new CallError({ tool: "gh__x", reason: "NoSuchTool", detail: "unknown tool" })
    assert.strictEqual(call.message, "gh__x: unknown tool")
    assert.isFalse(call.retryable)
  })

  it("RpcError's message is its detail", () => {
    const error = new RpcError({ reason: "NoRoute", code: RpcCode.ResourceNotFound, detail: "Resource not found: x" })
    assert.strictEqual(error.message, "Resource not found: x")
  })

  it("errorResult: one text item, isError, and _meta only when given", () => {
    assert.deepStrictEqual(errorResult("boom"), { content: [{ type: "text", text: "boom" }], isError: true })
    assert.deepStrictEqual(errorResult("boom", { k: 1 }), {
      content: [{ type: "text", text: "boom" }],
      isError: true,
      _meta: { k: 1 }
    })
  })

  it("isJsonObject: plain objects only", () => {
    assert.isTrue(isJsonObject({}))
    assert.isFalse(isJsonObject(null))
    assert.isFalse(isJsonObject([]))
    assert.isFalse(isJsonObject("x"))
  })
})

describe("[observability]", () => {
  it("a non-http otlp_endpoint is rejected with a message naming the expected form and the value", () => {
    const result = parseConfig(`[observability]\notlp_endpoint = "ftp://collector"\n`, "c.toml", "toml")
    assert.isTrue(Either.isLeft(result))
    const detail = Either.isLeft(result) ? result.left.detail : ""
    assert.include(detail, `otlp_endpoint must be an http(s) URL like "http://localhost:4318", got "ftp://collector"`)
  })
})
