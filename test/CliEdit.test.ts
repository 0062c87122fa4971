import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import { validateConfigText, validateSecretsText } from "../src/cli/ConfigEdit.js"
import { rewriteHelp } from "../src/cli/HelpText.js"
import { choices, closest, suggest } from "../src/domain/Suggest.js"
import * as Manage from "../src/cli/Manage.js"
import { removeTable, setKey } from "../src/cli/TomlEdit.js"

const commented = `# my config, kept byte for byte
name_budget = 60 # a trailing comment

# the clock source
[sources.clock]
command = ["node", "clock.mjs"] # run it
startup_timeout = "5s"

[sources.clock.env]
TZ = "UTC"

# the notes source
[sources.notes]
command = ["node", "notes.mjs"]
`

const right = (edit: Manage.Edit): string => {
  if (Either.isLeft(edit)) assert.fail(`expected an edit, got: ${edit.left.detail}`)
  return edit.right
}
const left = (edit: Manage.Edit): string => {
  if (Either.isRight(edit)) assert.fail(`expected a refusal, got:\n${edit.right}`)
  return edit.left.detail
}

describe("management edits keep the rest of the file", () => {
  it("source add appends one table and changes no other byte", () => {
    const after = right(
      Manage.addSource(commented, ["clock", "notes"], "zed", ["node", "server.mjs", 'a "q"'], [["K", "v"]])
    )
    assert.isTrue(after.startsWith(commented))
    assert.strictEqual(
      after.slice(commented.length),
      `\n[sources.zed]\ncommand = ["node", "server.mjs", "a \\"q\\""]\nenv = { K = "v" }\n`
    )
    const config = Either.getOrThrow(validateConfigText(after, "c.toml"))
    assert.deepStrictEqual(config.sources.zed!.command, ["node", "server.mjs", 'a "q"'])
    assert.deepStrictEqual(config.sources.zed!.env, { K: "v" })
  })

  it("source add refuses a taken name, a bad name and an empty command", () => {
    assert.include(left(Manage.addSource(commented, ["clock", "notes"], "clock", ["x"], [])), "already exists")
    assert.include(left(Manage.addSource(commented, [], "Bad_Name", ["x"], [])), `use "bad-name"`)
    assert.include(left(Manage.addSource(commented, [], "zed", [], [])), "after --")
  })

  it("source remove drops the table, its sub-tables and the comment above it, nothing else", () => {
    const after = right(Manage.removeSource(commented, ["clock", "notes"], "clock", ""))
    assert.strictEqual(
      after,
      `# my config, kept byte for byte
name_budget = 60 # a trailing comment

# the notes source
[sources.notes]
command = ["node", "notes.mjs"]
`
    )
    assert.isTrue(Either.isRight(validateConfigText(after, "c.toml")))
    assert.include(left(Manage.removeSource(commented, ["clock", "notes"], "clok", `; did you mean "clock"?`)), "clock")
  })

  it("source disable inserts enabled = false; enable replaces the value and keeps its comment", () => {
    const disabled = right(Manage.setSourceEnabled(commented, ["clock", "notes"], "notes", false, ""))
    assert.include(disabled, `[sources.notes]\nenabled = false\ncommand`)
    assert.strictEqual(Either.getOrThrow(validateConfigText(disabled, "c.toml")).sources.notes!.enabled, false)
    const withComment = commented.replace(`startup_timeout = "5s"`, `enabled = false # paused`)
    const enabled = right(Manage.setSourceEnabled(withComment, ["clock", "notes"], "clock", true, ""))
    assert.include(enabled, `enabled = true # paused`)
    assert.strictEqual(enabled.length, withComment.length - 1)
  })

  it("tools disable adds a table; enable flips it; an inline rule is refused", () => {
    const disabled = right(Manage.setToolEnabled(commented, [], "clock.now", false))
    assert.isTrue(disabled.startsWith(commented))
    assert.isTrue(disabled.endsWith(`\n[tools."clock.now"]\nenabled = false\n`))
    const enabled = right(Manage.setToolEnabled(disabled, ["clock.now"], "clock.now", true))
    assert.isTrue(enabled.endsWith(`\n[tools."clock.now"]\nenabled = true\n`))
    assert.strictEqual(right(Manage.setToolEnabled(commented, [], "clock.now", true)), commented)
    const inline = `${commented}\n[tools]\n"clock.now" = { enabled = false }\n`
    assert.include(left(Manage.setToolEnabled(inline, ["clock.now"], "clock.now", true)), "inline")
  })

  it("set-secret adds a scope, replaces a value in place and refuses a bad key", () => {
    const first = right(Manage.setSecret("", "github", "TOKEN", 'a"b'))
    assert.strictEqual(first, `[scopes.github]\nTOKEN = "a\\"b"\n`)
    const second = right(Manage.setSecret(`# keep\n${first}`, "github", "TOKEN", "new"))
    assert.strictEqual(second, `# keep\n[scopes.github]\nTOKEN = "new"\n`)
    const store = Either.getOrThrow(validateSecretsText(right(Manage.setSecret(second, "global", "K", "v")), "s.toml"))
    assert.deepStrictEqual(store.scopes, { github: { TOKEN: "new" }, global: { K: "v" } })
    assert.include(left(Manage.setSecret("", "global", "1BAD", "v")), "environment variable name")
  })

  it("an edit whose result is invalid is caught by validation", () => {
    const edited = right(Manage.addSource(commented, ["clock", "notes"], "zed", ["node"], [["K", "v"]]))
    const broken = Either.getOrThrow(setKey(edited, ["sources", "zed"], "restart", `"sometimes"`))
    assert.isTrue(Either.isLeft(validateConfigText(broken, "c.toml")))
  })

  it("removeTable says when there is no table", () => {
    assert.isTrue(Either.isLeft(removeTable(commented, ["sources", "zed"])))
  })
})

describe("suggestions and help text", () => {
  it("closest names are typos of the input, closest first", () => {
    assert.deepStrictEqual(closest("clock.nwo", ["clock.now", "notes.add_note", "clock.add"]), ["clock.now"])
    assert.deepStrictEqual(closest("zzzzzz", ["clock.now"]), [])
  })

  it("a wrong name gets the close names, else every name to choose from, sorted and bounded", () => {
    const wording = { label: "configured sources", none: "no sources are configured" }
    assert.strictEqual(suggest("clok", ["notes", "clock"], wording), `; did you mean "clock"?`)
    assert.strictEqual(suggest("zzzzzz", ["notes", "clock"], wording), "; configured sources: clock, notes")
    assert.strictEqual(suggest("zzzzzz", [], wording), "; no sources are configured")
    const many = Array.from({ length: 25 }, (_, i) => `tool-${String(25 - i).padStart(2, "0")}`)
    const listed = choices(many, { label: "alpha has", none: "alpha has no tools" })
    const first = Array.from({ length: 20 }, (_, i) => `tool-${String(i + 1).padStart(2, "0")}`)
    assert.strictEqual(listed, `; alpha has: ${first.join(", ")}, …and 5 more`)
    assert.strictEqual(
      choices(many.slice(5), { label: "alpha has", none: "alpha has no tools" }),
      `; alpha has: ${first.join(", ")}`
    )
  })

  it("help gets the full usage path, no filler and an example", () => {
    const text = rewriteHelp(
      "USAGE\n\n$ add [--url text] <name>\n\nOPTIONS\n\n--url text\n\n  A user-defined piece of text.\n\n  The URL\n",
      ["source", "add"],
      "clawtool source add x -- y"
    )
    assert.include(text, "$ clawtool source add [--url text] <name>")
    assert.notInclude(text, "A user-defined piece of text")
    assert.include(text, "EXAMPLE\n\n  $ clawtool source add x -- y\n\nOPTIONS")
  })
})
