// The health table's stderr hint (issue 10): a source that is not running shows why its child said it failed.
import { assert, describe, it } from "@effect/vitest"
import { HealthRow } from "../src/domain/Health.js"
import { healthTable, stderrHint } from "../src/text.js"

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
