// src/text.ts, the plain text of `health` and `tools list`. First the health table's stderr hint (issue 10): a
// source that is not running shows why its child said it failed.
import { assert, describe, it, onTestFinished } from "@effect/vitest"
import { HealthRow } from "../src/domain/Health.js"
import { healthTable, stderrHint } from "../src/text.js"
import * as Text from "../src/text.js"

/** What `node missing-module.mjs` prints on Node 20, verbatim. */
const missingModule = [
  "node:internal/modules/cjs/loader:1210",
  "  throw err;",
  "  ^",
  "",
  "Error: Cannot find module '/tmp/x/missing-module.mjs'",
  "    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)",
  "    at node:internal/main/run_main_module:28:49 {",
  "  code: 'MODULE_NOT_FOUND',",
  "  requireStack: []",
  "}",
  "",
  "Node.js v20.20.2"
]

const down = (stderrTail: ReadonlyArray<string>, status: HealthRow["status"] = "down") =>
  new HealthRow({
    name: "srv",
    status,
    reason: status === "running" ? "" : "Exited: exited with code 1 during Initialize",
    toolCount: 0,
    package: "missing-module.mjs",
    pid: null,
    startedAt: null,
    startupMs: null,
    stderrTail
  })

describe("stderrHint", () => {
  it("an uncaught Node error: its Error line, not the stack, the properties or the Node.js trailer", () => {
    assert.strictEqual(stderrHint(missingModule), "Error: Cannot find module '/tmp/x/missing-module.mjs'")
  })

  it("a Python traceback: its last line; plain logs: the last non-blank line; nothing: none", () => {
    assert.strictEqual(
      stderrHint([
        "Traceback (most recent call last):",
        '  File "server.py", line 1, in <module>',
        "    import mcp",
        "ModuleNotFoundError: No module named 'mcp'"
      ]),
      "ModuleNotFoundError: No module named 'mcp'"
    )
    assert.strictEqual(stderrHint(["starting", "fatal: bad flag --x", "  "]), "fatal: bad flag --x")
    assert.strictEqual(stderrHint(["  only indented"]), "  only indented")
    assert.strictEqual(stderrHint([]), undefined)
  })

  it("the last of several said lines, however many came before it", () => {
    assert.strictEqual(stderrHint(["starting", "listening", "fatal: port taken"]), "fatal: port taken")
  })

  it("lines of only blanks are never the hint, even when nothing else was said", () => {
    assert.strictEqual(stderrHint(["   ", "\t"]), undefined)
    assert.strictEqual(stderrHint(["  only indented", "   "]), "  only indented")
  })

  it("a closing brace followed by blanks is skipped like a lone one", () => {
    assert.strictEqual(stderrHint(["Error: boom", "}  "]), "Error: boom")
  })
})

describe("healthTable with the stderr hint", () => {
  it("not running: the hint beside the reason, whole when no width is given (stdout not a terminal)", () => {
    const line = healthTable([down(missingModule)], undefined).split("\n")[1]!
    assert.isTrue(
      line.endsWith(
        "Exited: exited with code 1 during Initialize — Error: Cannot find module '/tmp/x/missing-module.mjs'"
      ),
      line
    )
  })

  it("a terminal's width cuts every line to it, with an ellipsis", () => {
    const lines = healthTable([down(missingModule)], 60).split("\n")
    for (const line of lines) assert.isAtMost(line.length, 60, line)
    assert.isTrue(lines[1]!.endsWith("…"), lines[1])
  })

  it("a running source shows no hint, whatever its stderr said", () => {
    const line = healthTable([down(["Error: an old failure"], "running")], undefined).split("\n")[1]!
    assert.notInclude(line, "old failure")
  })
})

// Mutation-testing follow-ups (docs/mutation.md): the text renderings of `health` and `tools list`.
const row = (name: string, extra: Partial<ConstructorParameters<typeof HealthRow>[0]> = {}) =>
  new HealthRow({
    name,
    status: "running",
    reason: "",
    toolCount: 3,
    package: "pkg",
    pid: null,
    startedAt: null,
    startupMs: null,
    stderrTail: [],
    ...extra
  })

describe("Text.renderTable", () => {
  it("pads every column but the last to its widest cell, two spaces apart, no trailing blanks", () => {
    assert.strictEqual(
      Text.renderTable(
        ["A", "BB", "C"],
        [
          ["xxx", "y", ""],
          ["z", "", "last"]
        ]
      ),
      ["A    BB  C", "xxx  y", "z        last"].join("\n")
    )
  })
})

describe("Text.renderTable with short rows", () => {
  it("a missing cell counts as empty when the widths are measured", () => {
    assert.strictEqual(Text.renderTable(["A", "B", "C"], [["x"]]), ["A  B  C", "x"].join("\n"))
  })
})

describe("Text.oneLine", () => {
  it("collapses blanks and cuts at max characters with an ellipsis", () => {
    assert.strictEqual(Text.oneLine("  a\n\tb  c "), "a b c")
    assert.strictEqual(Text.oneLine("abcdef", 6), "abcdef")
    assert.strictEqual(Text.oneLine("abcdefg", 6), "abcde…")
    assert.strictEqual(Text.oneLine("x".repeat(81)), `${"x".repeat(79)}…`)
    assert.strictEqual(Text.oneLine("x".repeat(80)), "x".repeat(80))
  })
})

describe("Text.healthTable", () => {
  it("one row per instance: its era or -, startup in ms or -, restarts, package and a one-line reason", () => {
    const table = Text.healthTable([
      row("gh", { startupMs: 120, restarts: 2, era: "modern" }),
      row("fs", { status: "down", toolCount: 0, reason: "spawn failed:\n  ENOENT", package: "fs-server" })
    ])
    assert.strictEqual(
      table,
      [
        "NAME  STATUS   ERA     TOOLS  STARTUP  RESTARTS  PACKAGE    REASON",
        "gh    running  modern  3      120ms    2         pkg",
        "fs    down     -       0      -        0         fs-server  spawn failed: ENOENT"
      ].join("\n")
    )
  })

  it("an empty package shows as -; a line as wide as the width stays whole, a wider one keeps width - 1 and …", () => {
    const rows = [row("gh", { package: "" }), row("filesystem", { reason: "a long enough reason" })]
    const whole = Text.healthTable(rows, undefined).split("\n")
    assert.strictEqual(whole[1], "gh          running  -    3      -        0         -")
    const widest = Math.max(...whole.map((line) => line.length))
    assert.strictEqual(Text.healthTable(rows, widest), whole.join("\n"))
    const cut = Text.healthTable(rows, widest - 1).split("\n")
    const longest = whole.findIndex((line) => line.length === widest)
    assert.strictEqual(cut[longest], `${whole[longest]!.slice(0, widest - 2)}…`)
  })

  it("without a width: cut to the terminal's columns on a terminal; whole on a pipe or a terminal of 0 columns", () => {
    const rows = [row("filesystem", { status: "down", reason: "a reason long enough to pass twenty columns" })]
    const whole = Text.healthTable(rows, undefined)
    const saved = (["isTTY", "columns"] as const).map(
      (key) => [key, Object.getOwnPropertyDescriptor(process.stdout, key)] as const
    )
    onTestFinished(() => {
      for (const [key, descriptor] of saved) {
        if (descriptor === undefined) delete process.stdout[key]
        else Object.defineProperty(process.stdout, key, descriptor)
      }
    })
    const asStdout = (isTTY: boolean, columns: number) => {
      Object.assign(process.stdout, { isTTY, columns })
      return Text.healthTable(rows)
    }
    assert.strictEqual(
      asStdout(true, 20),
      whole
        .split("\n")
        .map((line) => `${line.slice(0, 19)}…`)
        .join("\n")
    )
    assert.strictEqual(asStdout(false, 20), whole)
    assert.strictEqual(asStdout(true, 0), whole)
  })

  it("no sources: a hint instead of an empty table", () => {
    assert.include(Text.healthTable([]), "no sources configured")
  })
})

describe("Text.collisionLines and catalogLine", () => {
  it("names the wire name, the kept tool and every dropped one; tool/tools agree with the count", () => {
    assert.deepStrictEqual(Text.collisionLines([{ wire: "a__x", kept: "a.x", dropped: ["a.x!", "a.x?"] }]), [
      `name collision on "a__x": kept a.x; not served: a.x!, a.x?`
    ])
    assert.strictEqual(Text.catalogLine("ab", 1), "catalog sha256:ab (1 tool listed)")
    assert.strictEqual(Text.catalogLine("ab", 2), "catalog sha256:ab (2 tools listed)")
    assert.strictEqual(Text.catalogLine("ab", 0), "catalog sha256:ab (0 tools listed)")
  })
})
