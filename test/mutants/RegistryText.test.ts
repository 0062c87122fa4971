// Mutation-testing follow-ups (docs/mutation.md): the text renderings of `health` and `tools list`.
import { assert, describe, it } from "@effect/vitest"
import { HealthRow } from "../../src/domain/Health.js"
import * as Text from "../../src/text.js"

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
  it("one row per instance: startup in ms or -, restarts, package and a one-line reason", () => {
    const table = Text.healthTable([
      row("gh", { startupMs: 120, restarts: 2 }),
      row("fs", { status: "down", toolCount: 0, reason: "spawn failed:\n  ENOENT", package: "fs-server" })
    ])
    assert.strictEqual(
      table,
      [
        "NAME  STATUS   TOOLS  STARTUP  RESTARTS  PACKAGE    REASON",
        "gh    running  3      120ms    2         pkg",
        "fs    down     0      -        0         fs-server  spawn failed: ENOENT"
      ].join("\n")
    )
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
