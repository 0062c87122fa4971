// Trust/Confirm (issue 25, ADR 029): which calls `[trust] confirm` names, the question put to the host, how its answer
// is read; and a `read_only` source's catalog (only tools annotated readOnlyHint: true are listed).
import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import type { Tool } from "../../src/domain/Mcp.js"
import { coreSpecs } from "../../src/services/CoreTools.js"
import * as Manifest from "../../src/services/CoreTools/Manifest.js"
import * as Catalog from "../../src/services/Registry/Catalog.js"
import * as Confirm from "../../src/services/Trust/Confirm.js"

const tool = (name: string, annotations?: Record<string, unknown>): Tool => ({
  name,
  inputSchema: { type: "object" },
  ...(annotations === undefined ? {} : { annotations })
})
const source = (instance: string, name: string, annotations?: Record<string, unknown>): Confirm.Target => ({
  kind: "source",
  instance,
  tool: tool(name, annotations)
})

describe("Confirm.matcher", () => {
  it('"destructive" matches only an explicit destructiveHint: true, not MCP\'s default for an absent hint', () => {
    const matching = Confirm.matcher(["destructive"]).matching
    assert.strictEqual(matching(source("fs", "rm", { destructiveHint: true })), "destructive")
    assert.isUndefined(matching(source("fs", "ls")))
    assert.isUndefined(matching(source("fs", "ls", {})))
    assert.isUndefined(matching(source("fs", "touch", { destructiveHint: false })))
    assert.isUndefined(matching(source("fs", "odd", { destructiveHint: "true" })))
    // A core tool is named by its name, never by its annotations.
    assert.isUndefined(matching({ kind: "core", name: "Bash" }))
  })

  it("core tools by name; `<instance>.<tool>` by the child's own name; `<instance>.*` every tool of that instance", () => {
    const matching = Confirm.matcher(["Bash", "Write", "gh.delete_repo", "fs.*"]).matching
    assert.strictEqual(matching({ kind: "core", name: "Bash" }), "Bash")
    assert.strictEqual(matching({ kind: "core", name: "Write" }), "Write")
    assert.isUndefined(matching({ kind: "core", name: "Read" }))
    assert.strictEqual(matching(source("gh", "delete_repo")), "gh.delete_repo")
    assert.isUndefined(matching(source("gh", "delete_repo_x")))
    assert.isUndefined(matching(source("gh", "list")))
    assert.isUndefined(matching(source("ghx", "delete_repo")))
    assert.strictEqual(matching(source("fs", "anything")), "fs.*")
    assert.strictEqual(matching(source("fs", "a.b")), "fs.*")
    assert.isUndefined(matching(source("fsx", "anything")))
    // A tool named "*" is matched by `fs.*` as every other tool of fs, and `gh.*` is not an exact name.
    assert.isUndefined(matching(source("gh", "*")))
    assert.isTrue(Confirm.matcher([]).empty)
    assert.isFalse(Confirm.matcher(["Bash"]).empty)
  })

  it("a selector's instance that is no configured source is reported; core names and destructive never are", () => {
    assert.deepStrictEqual(
      Confirm.unknownInstances(["destructive", "Bash", "gh.x", "nope.*", "fs.y", "nope.z"], { gh: {}, fs: {} }),
      [
        { selector: "nope.*", instance: "nope" },
        { selector: "nope.z", instance: "nope" }
      ]
    )
  })
})

describe("Confirm's question and answer", () => {
  it("the preview is the arguments' JSON, redacted, whitespace runs named, cut to 1,000 characters", () => {
    assert.strictEqual(Confirm.preview(undefined), "{}")
    assert.strictEqual(
      Confirm.preview({ token: "s3cr3t-value", path: "/tmp/x" }, (text) => text.replaceAll("s3cr3t-value", "[R]")),
      '{"token":"[R]","path":"/tmp/x"}'
    )
    assert.strictEqual(Confirm.preview({ m: `hi${" ".repeat(200)}@chat` }), '{"m":"hi [200 spaces] @chat"}')
    const long = Confirm.preview({ data: "x".repeat(5_000) })
    assert.strictEqual(long.indexOf("…"), Confirm.previewLimit)
    assert.isTrue(long.endsWith("(cut: 5,011 characters in all)"))
    const exact = Confirm.preview({ d: "x".repeat(Confirm.previewLimit - 8) })
    assert.strictEqual(exact.length, Confirm.previewLimit)
    assert.notInclude(exact, "…")
  })

  it("the question names the tool and its source and asks for one boolean", () => {
    const asked = Confirm.question("fs__rm", source("fs", "rm"), '{"path":"/x"}')
    assert.strictEqual(
      asked.message,
      'clawtool asks before running fs__rm (tool "rm" of source "fs"), as [trust] confirm says.\nArguments: {"path":"/x"}'
    )
    assert.deepStrictEqual(asked.requestedSchema, {
      type: "object",
      properties: {
        confirm: {
          type: "boolean",
          title: "Run fs__rm?",
          description: "Yes runs this call once; no (or no answer) refuses it.",
          default: false
        }
      },
      required: ["confirm"]
    })
    assert.include(
      Confirm.question("Bash", { kind: "core", name: "Bash" }, "{}").message as string,
      "Bash (a clawtool core tool)"
    )
  })

  it("only accept with confirm: true is a yes", () => {
    assert.strictEqual(Confirm.answerOf({ action: "accept", content: { confirm: true } }), "yes")
    assert.strictEqual(Confirm.answerOf({ action: "accept", content: { confirm: false } }), "declined")
    assert.strictEqual(Confirm.answerOf({ action: "accept", content: { confirm: "true" } }), "declined")
    assert.strictEqual(Confirm.answerOf({ action: "accept" }), "declined")
    assert.strictEqual(Confirm.answerOf({ action: "decline" }), "declined")
    assert.strictEqual(Confirm.answerOf({ action: "cancel" }), "dismissed")
    assert.strictEqual(Confirm.answerOf({}), "dismissed")
  })

  it("a host can be asked when it declared elicitation with forms (`{}` is forms only)", () => {
    assert.isTrue(Confirm.canAsk({ elicitation: {} }))
    assert.isTrue(Confirm.canAsk({ elicitation: { form: {} } }))
    assert.isTrue(Confirm.canAsk({ elicitation: { form: {}, url: {} } }))
    assert.isFalse(Confirm.canAsk({ elicitation: { url: {} } }))
    assert.isFalse(Confirm.canAsk({ sampling: {} }))
    assert.isFalse(Confirm.canAsk(undefined))
  })
})

describe("a read_only source's catalog", () => {
  const manifest = Either.getOrThrow(Manifest.make(coreSpecs))
  const toolsOf = () => [
    tool("look", { readOnlyHint: true }),
    tool("change", { readOnlyHint: false }),
    tool("plain"),
    tool("loud", { readOnlyHint: "yes" })
  ]
  // Each instance keeps its own array (as Sources does), so both builds see the same objects.
  const ro = toolsOf()
  const rw = toolsOf()
  const build = (readOnly: ReadonlySet<string>) =>
    Catalog.build({
      manifest,
      sources: [
        { instance: "ro", tools: ro },
        { instance: "rw", tools: rw }
      ],
      toolConfig: {},
      budget: 64,
      readOnly
    })

  it("lists only its tools annotated readOnlyHint: true; the others are unlisted with the rule sources.<instance>.read_only", () => {
    const catalog = build(new Set(["ro"]))
    const names = catalog.tools.map((listed) => listed.name)
    assert.include(names, "ro__look")
    for (const name of ["ro__change", "ro__plain", "ro__loud"]) assert.notInclude(names, name)
    for (const name of ["rw__look", "rw__change", "rw__plain", "rw__loud"]) assert.include(names, name)
    assert.isFalse(catalog.routes.has("ro__change"))
    const held = catalog.entries.filter((entry) => entry.instance === "ro" && !entry.listed)
    assert.deepStrictEqual(
      held.map((entry) => [entry.original, entry.status, entry.rule]),
      [
        ["change", "disabled", "sources.ro.read_only"],
        ["loud", "disabled", "sources.ro.read_only"],
        ["plain", "disabled", "sources.ro.read_only"]
      ]
    )
    // The same tool arrays without read_only: every tool listed again (the kept per-instance part is not reused).
    assert.lengthOf(
      build(new Set()).tools.filter((listed) => listed.name.startsWith("ro__")),
      4
    )
  })
})
