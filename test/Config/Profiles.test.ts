// `[profiles]`, source `tags` and `[http.tokens]` (issue 26): decoded with file:line like every table; what they name
// that does not exist is a warning (Registry/Profiles.problems), the profile still serves.
import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import { parseConfig } from "../../src/services/Config.js"
import * as Profiles from "../../src/services/Registry/Profiles.js"
import { rejected } from "./lib.js"

const parsed = (text: string) => {
  const result = parseConfig(text, "/x/config.toml")
  if (Either.isLeft(result)) return assert.fail(result.left.message)
  return result.right
}

const sources = `[sources.fs]\ncommand = ["a"]\ntags = ["code", "local"]\n[sources.gh]\ncommand = ["b"]\n`

describe("Config: profiles, tags and tokens", () => {
  it("decodes a profile with its defaults, source tags and named tokens", () => {
    const config = parsed(
      `${sources}[profiles.code]\nsources = ["gh"]\ntags = ["code"]\ntools = ["*", "!gh.delete_*"]\ncore_tools = ["Read"]\ncatalog = "search"\nread_only = true\n[profiles.all]\n[http.tokens.ci]\ntoken = "\${CI}"\nprofiles = ["code", "default"]\n`
    )
    assert.deepStrictEqual(config.sources.fs!.tags, ["code", "local"])
    assert.deepStrictEqual(config.sources.gh!.tags, [])
    const code = config.profiles.code!
    assert.deepStrictEqual(
      [code.sources, code.tags, code.tools, code.core_tools],
      [["gh"], ["code"], ["*", "!gh.delete_*"], ["Read"]]
    )
    assert.strictEqual(code.catalog, "search")
    assert.isTrue(code.read_only)
    const all = config.profiles.all!
    assert.deepStrictEqual(all.tools, ["*"])
    assert.isFalse(all.read_only)
    assert.isUndefined(all.catalog)
    assert.deepStrictEqual(config.http.tokens.ci!.profiles, ["code", "default"])
    assert.deepStrictEqual(parsed(sources).profiles, {})
  })

  it("rejects bad names and entries at their line", () => {
    assert.strictEqual(
      rejected(`${sources}[profiles.Code_X]\n`),
      `config /x/config.toml:6 at profiles.Code_X: profile names are kebab-case (a-z, 0-9, single dashes), got "Code_X"`
    )
    assert.strictEqual(
      rejected(`${sources}[profiles.default]\n`),
      `config /x/config.toml:6 at profiles.default: "default" is the name of /mcp's view (every tool); name the profile otherwise`
    )
    assert.strictEqual(
      rejected(`${sources}[profiles.code]\ntools = ["github"]\n`),
      `config /x/config.toml:7 at profiles.code.tools[0]: profile tools entries are "*" or "<instance>.<tool>" (the tool part may hold * wildcards), each may start with ! to exclude, got "github"`
    )
    assert.strictEqual(
      rejected(`${sources}[profiles.code]\ncore_tools = ["Bash", "Shell"]\n`),
      `config /x/config.toml:7 at profiles.code.core_tools[1]: core_tools entries are Bash, Read, Edit, Write, Glob, Grep, WebFetch, WebSearch, RunCode, got "Shell"`
    )
    assert.strictEqual(
      rejected(`[sources.fs]\ncommand = ["a"]\ntags = ["Code"]\n`),
      `config /x/config.toml:3 at sources.fs.tags[0]: tags are kebab-case (a-z, 0-9, single dashes), got "Code"`
    )
    assert.strictEqual(
      rejected(`${sources}[http.tokens.ci]\nprofiles = ["code"]\n`),
      `config /x/config.toml:6 at http.tokens.ci.token: this required key is missing`
    )
  })

  it("warns about each unknown source, tag, selector source and token profile by name", () => {
    const config = parsed(
      `${sources}[profiles.code]\nsources = ["fs", "nope"]\ntags = ["code", "ghost"]\ntools = ["fs.*", "!gh.x", "*"]\n[profiles.all]\n[http.tokens.ci]\ntoken = "t"\nprofiles = ["all", "default", "gone"]\n`
    )
    assert.deepStrictEqual(Profiles.problems(config), [
      `[profiles.code] sources names no configured source "nope"`,
      `[profiles.code] tags names "ghost", which no source carries`,
      `[profiles.code] tools "!gh.x" matches nothing: "gh" is not a source of the profile`,
      `[http.tokens.ci] profiles names no profile "gone"; that entry reaches nothing`
    ])
  })

  it("a profile admits its sources' tools by selector, tag and read-only hint; core tools by name, the registry's always", () => {
    const config = parsed(
      `${sources}[sources.mem]\ncommand = ["c"]\n[profiles.code]\ntags = ["code"]\nsources = ["gh"]\ntools = ["*", "!gh.delete_*"]\ncore_tools = ["Read"]\n[profiles.ro]\nread_only = true\n[profiles.only-out]\ntools = ["!mem.*"]\n`
    )
    const all = Profiles.resolveAll(config)
    const source = (instance: string, original: string, readOnly = false) => ({
      kind: "source" as const,
      instance,
      original,
      tool: { name: original, inputSchema: { type: "object" as const }, annotations: { readOnlyHint: readOnly } }
    })
    const core = (name: string, readOnly = false) => ({ ...source("", name, readOnly), kind: "core" as const })
    const code = all.get("code")!
    assert.deepStrictEqual([...code.instances].sort(), ["fs", "gh"])
    assert.isTrue(code.admits(source("fs", "read")))
    assert.isTrue(code.admits(source("gh", "create_issue")))
    assert.isFalse(code.admits(source("gh", "delete_repo")))
    assert.isFalse(code.admits(source("mem", "read")))
    assert.isTrue(code.admits(core("Read")))
    assert.isFalse(code.admits(core("Bash")))
    assert.isTrue(code.admits(core("ToolSearch")))
    const ro = all.get("ro")!
    assert.isTrue(ro.admits(source("mem", "get", true)))
    assert.isFalse(ro.admits(source("mem", "set")))
    assert.isFalse(ro.admits(core("Bash")))
    assert.isTrue(ro.admits(core("Read", true)))
    // Only exclusions: everything else.
    const out = all.get("only-out")!
    assert.isTrue(out.admits(source("fs", "x")))
    assert.isFalse(out.admits(source("mem", "x")))
    assert.isTrue(out.admits(core("Bash")))
  })
})
