import { assert, describe, it } from "@effect/vitest"
import { helpPages } from "../../src/Cli.js"
import { helpRequest, page, summaryOf, wrap, type CommandDoc } from "../../src/cli/Help.js"

const sectionsOf = (text: string) => text.split("\n").filter((line) => /^[A-Z]+$/.test(line))

describe("help pages (the real command tree)", () => {
  const pages = helpPages(80)

  it("every command has a page: NAME, SYNOPSIS, DESCRIPTION, EXAMPLES; OPTIONS when it has options", () => {
    assert.isAbove(pages.length, 25)
    for (const { path, text } of pages) {
      const sections = sectionsOf(text)
      for (const required of ["NAME", "SYNOPSIS", "DESCRIPTION", "EXAMPLES"]) {
        assert.include(sections, required, `${path || "(main)"}: ${required}\n${text}`)
      }
      assert.match(
        text,
        new RegExp(`^NAME\\n    ${["clawtool", ...path.split(" ").filter(Boolean)].join(" ")} - \\S`),
        path
      )
      assert.match(text, /\nEXAMPLES\n( {4}\$ \S.*\n?| {8}\S.*\n?)+$/, path)
      const order = ["NAME", "SYNOPSIS", "DESCRIPTION", "ARGUMENTS", "OPTIONS", "COMMANDS", "EXAMPLES"]
      assert.deepStrictEqual(
        sections,
        order.filter((name) => sections.includes(name)),
        path
      )
    }
    const addPage = pages.find((entry) => entry.path === "source add")!.text
    assert.include(addPage, "\nOPTIONS\n    -c, --config FILE   Config file to edit")
    assert.include(addPage, "\nSYNOPSIS\n    clawtool source add [--config FILE]")
  })

  it("no filler: no 'This setting is optional.', no built-in --wizard/--completions/--log-level per page", () => {
    for (const { path, text } of pages) {
      for (const filler of [
        "This setting is optional",
        "A user-defined piece of text",
        "A true or false value",
        "This option may be repeated",
        "--wizard",
        "--completions",
        "One of the following"
      ]) {
        assert.notInclude(text, filler, `${path}: ${filler}`)
      }
      if (path !== "") assert.notInclude(text, "--log-level", path)
      assert.notInclude(text, "\x1b[", path)
    }
  })

  it("every line fits the width (80, 60), options one per line, aligned", () => {
    for (const width of [80, 60]) {
      for (const { path, text } of helpPages(width)) {
        for (const line of text.split("\n")) {
          // A single word longer than the width (a path) cannot be wrapped: it stands alone on its line.
          if (line.trim().includes(" ")) assert.isAtMost(line.length, width, `${path} at ${width}: ${line}`)
        }
      }
    }
    const call = pages.find((entry) => entry.path === "call")!.text
    const options = call.slice(call.indexOf("\nOPTIONS\n") + 9, call.indexOf("\n\nEXAMPLES"))
    const starts = options
      .split("\n")
      .filter((line) => line.startsWith("    -"))
      .map(
        (line) =>
          /^ {4}(\S+(?:,? \S+)*?) {2,}(\S)/.exec(line)!.index + /^ {4}\S+(?:,? \S+)*? {2,}/.exec(line)![0].length
      )
    assert.deepStrictEqual(starts.length, 5)
    assert.deepStrictEqual(new Set(starts).size, 1, options)
  })

  it("the main page lists the commands in their groups, in order", () => {
    const main = pages.find((entry) => entry.path === "")!.text
    const groups = main
      .split("\n")
      .filter((line) => /^ {2}[a-z]+$/.test(line))
      .map((line) => line.trim())
    assert.deepStrictEqual(groups, ["serving", "sources", "tools", "trust", "auth", "maintenance"])
    assert.match(main, /\n {2}tools\n {4}call +Call one tool/)
    assert.match(main, /\n {2}maintenance\n(.*\n)*? {4}completions +Print a completion script/)
  })
})

describe("help: the pieces", () => {
  const tree: CommandDoc = {
    name: "app",
    description: "An app: does things.",
    options: [],
    args: [],
    children: [
      {
        name: "run",
        description: "Run it. Then stop.",
        options: [
          { names: "-q, --quiet", placeholder: "", description: "Say less", optional: true, repeated: false },
          { names: "--out", placeholder: "DIR", description: "Where", optional: false, repeated: false }
        ],
        args: [{ name: "file", description: "The file", optional: true, repeated: true }],
        children: []
      }
    ]
  }
  const extras = {
    examples: { "": "app run", run: ["app run x", "app run --out d y"] },
    groups: {},
    groupOrder: [],
    globalOptions: [],
    extraCommands: {}
  }

  it("a page from the data: synopsis marks optional and repeated parts, a command without a group is under other", () => {
    const text = page(tree, ["run"], extras, 80)
    assert.include(text, "SYNOPSIS\n    app run [--quiet] --out DIR [<file>]...\n")
    assert.include(text, "OPTIONS\n    -q, --quiet  Say less\n    --out DIR    Where\n")
    assert.include(text, "EXAMPLES\n    $ app run x\n    $ app run --out d y\n")
    assert.include(page(tree, [], extras, 80), "COMMANDS\n  other\n    run  Run it\n")
  })

  it("summaries, wrapping, and what the arguments ask", () => {
    assert.strictEqual(summaryOf("Run it. Then stop."), "Run it")
    assert.strictEqual(summaryOf("List every tool: wire name, origin."), "List every tool")
    assert.deepStrictEqual(wrap("aa bb cc dd", 9, 2, 0), ["aa bb cc", "  dd"])
    assert.deepStrictEqual(helpRequest(["help", "run"], tree), { _tag: "Page", path: ["run"] })
    assert.deepStrictEqual(helpRequest(["run", "x", "--help"], tree), { _tag: "Page", path: ["run"] })
    assert.deepStrictEqual(helpRequest([], tree), { _tag: "Page", path: [] })
    assert.deepStrictEqual(helpRequest(["run", "x"], tree), { _tag: "None" })
    assert.deepStrictEqual(helpRequest(["help", "rnu"], tree), { _tag: "Unknown", name: "rnu", known: ["run"] })
  })
})
