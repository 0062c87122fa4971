import { assert, describe, it } from "@effect/vitest"
import { assertNone, assertSome } from "@effect/vitest/utils"
import { childEnvironment } from "../src/domain/Environment.js"
import { packageOf } from "../src/domain/Health.js"
import * as WireName from "../src/domain/WireName.js"

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
