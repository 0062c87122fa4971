import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import type { ConfigError } from "../src/domain/Errors.js"
import { parseConfig } from "../src/services/Config.js"

const source = `[sources.gh]\ncommand = ["gh-mcp"]\n`

const failure = (text: string): ConfigError => {
  const result = parseConfig(text, "/x/config.toml")
  if (Either.isRight(result)) return assert.fail(`expected a ConfigError, got ${JSON.stringify(result.right)}`)
  return result.left
}

describe("config: [tools] and name_budget", () => {
  it("defaults: no tool tables, a budget of 64", () => {
    const config = Either.getOrThrow(parseConfig(source, "/x/config.toml"))
    assert.deepStrictEqual(config.tools, {})
    assert.strictEqual(config.name_budget, 64)
  })

  it("reads every key", () => {
    const text = [
      "name_budget = 60",
      source,
      `[tools."gh.create_issue"]`,
      `usage_hint = "Use for new issues only; search first."`,
      "always_load = true",
      "",
      `[tools."gh.delete_repo"]`,
      "enabled = false",
      "",
      `[tools."gh.files/read.v2"]`,
      "enabled = true"
    ].join("\n")
    const config = Either.getOrThrow(parseConfig(text, "/x/config.toml"))
    assert.strictEqual(config.name_budget, 60)
    const create = config.tools["gh.create_issue"]!
    assert.strictEqual(create.usage_hint, "Use for new issues only; search first.")
    assert.strictEqual(create.always_load, true)
    assert.strictEqual(create.enabled, true)
    const del = config.tools["gh.delete_repo"]!
    assert.strictEqual(del.enabled, false)
    assert.strictEqual(del.always_load, false)
    assert.strictEqual(del.usage_hint, undefined)
    assert.isDefined(config.tools["gh.files/read.v2"], "the tool part is the child's name, dots and slashes included")
  })

  it("an unknown key in a tool table is an error naming the known keys and the line", () => {
    const error = failure(`${source}\n[tools."gh.x"]\nenabeld = false\n`)
    assert.strictEqual(error.keyPath, `tools."gh.x".enabeld`)
    assert.strictEqual(error.line, 5)
    assert.include(error.detail, `unknown key "enabeld"`)
    assert.include(error.detail, "enabled")
  })

  it("a selector that is not <instance>.<tool> is an error", () => {
    for (const key of ["create_issue", "GH.x", "gh.", ".x"]) {
      const error = failure(`${source}\n[tools."${key}"]\nenabled = false\n`)
      assert.strictEqual(error.keyPath, `tools.${/^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key)}`, key)
      assert.strictEqual(error.line, 4, key)
      assert.include(error.detail, `"<instance>.<tool>"`, key)
    }
  })

  it("wrong value types are errors", () => {
    assert.include(failure(`[tools."gh.x"]\nenabled = "no"\n`).detail, "expected a boolean")
    assert.include(failure(`[tools."gh.x"]\nalways_load = 1\n`).detail, "expected a boolean")
    assert.include(failure(`[tools."gh.x"]\nusage_hint = 3\n`).detail, "expected a string")
    assert.include(failure(`[tools."gh.x"]\nusage_hint = "  "\n`).detail, "must not be empty")
    assert.include(failure(`tools = 3\n`).keyPath ?? "", "tools")
  })

  it("name_budget must be a whole number between 24 and 128", () => {
    for (const value of ["10", "200", "0", "-1"]) {
      const error = failure(`name_budget = ${value}\n`)
      assert.strictEqual(error.keyPath, "name_budget")
      assert.strictEqual(error.line, 1)
      assert.include(error.detail, "between 24 and 128", value)
    }
    assert.include(failure(`name_budget = 60.5\n`).detail, "whole number")
    assert.include(failure(`name_budget = "60"\n`).detail, "expected a number")
  })

  it("unknown top-level keys stay errors", () => {
    const error = failure(`name_budgte = 60\n`)
    assert.include(error.detail, `unknown key "name_budgte"`)
  })
})
