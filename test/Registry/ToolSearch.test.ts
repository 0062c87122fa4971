// Mutation-testing follow-ups (docs/mutation.md): ToolSearch over an in-process catalog, so that the index and the
// ranking rules are pinned without the reference servers (test/RegistryToolSearch.test.ts runs those).
import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import { ToolConfig } from "../../src/domain/Config.js"
import type { Tool } from "../../src/domain/Mcp.js"
import * as Catalog from "../../src/services/Registry/Catalog.js"
import { coreSpecs } from "../../src/services/CoreTools.js"
import * as Manifest from "../../src/services/CoreTools/Manifest.js"
import * as ToolSearch from "../../src/services/Registry/ToolSearch.js"

const manifest = Either.getOrThrow(Manifest.make(coreSpecs))

const tool = (name: string, description: string, properties: Record<string, unknown> = {}, extra = {}): Tool => ({
  name,
  description,
  inputSchema: { type: "object", properties },
  ...extra
})

// Built inside each test (see docs/mutation.md: a fixture computed when the file loads hides mutants).
const fixture = () => {
  const catalog = Catalog.build({
    manifest,
    sources: [
      {
        instance: "weather",
        tools: [
          tool("get_forecast", "Forecast for a city", { city: { type: "string" } }, { title: "Meteorology" }),
          tool("get_alerts", "Severe alerts", { region: { type: "string" } }),
          tool("hidden_tool", "Never listed: switched off")
        ]
      },
      {
        instance: "repo",
        tools: [
          tool("alpha", "zebra crossing"),
          tool("beta", "zebra crossing"),
          tool("commit", "Records changes to the repository", { message: { type: "string" } })
        ]
      }
    ],
    toolConfig: { "weather.hidden_tool": new ToolConfig({ enabled: false }) },
    budget: 64
  })
  const index = ToolSearch.build(catalog, manifest)
  const names = (query: string, limit = 10) => index.search(query, limit).map((hit) => hit.name)
  return { catalog, index, names }
}

describe("ToolSearch.tokenize", () => {
  it("splits acronyms from the next word and digits from capitals; keeps non-ASCII letters", () => {
    assert.deepStrictEqual(ToolSearch.tokenize("HTTPServer"), ["http", "server", "httpserver"])
    assert.deepStrictEqual(ToolSearch.tokenize("v2Api"), ["v2", "api", "v2api"])
    assert.deepStrictEqual(ToolSearch.tokenize("café crème"), ["café", "crème"])
    assert.deepStrictEqual(ToolSearch.tokenize("  "), [])
  })

  it("drops contractions, possessives, function words and numbers alone", () => {
    assert.deepStrictEqual(ToolSearch.tokenize("what's in Carol's 2 files, doesn't it"), ["carol", "files"])
    assert.deepStrictEqual(ToolSearch.tokenize("v2 100ms"), ["v2", "100ms"])
  })
})

describe("ToolSearch.concepts for words that are not words", () => {
  const kinds = (query: string) => ToolSearch.concepts(query).map((concept) => [...concept].filter(([, w]) => w === 1))
  it("a link is a URL; a glob finds files of its extension; a file name is a file of its kind; a path a folder", () => {
    assert.deepStrictEqual(kinds("fetch https://example.com/docs/a.html"), [[["fetch", 1]], [["url", 1]]])
    assert.deepStrictEqual(kinds("*.md"), [[["glob", 1]], [["file", 1]], [["md", 1]]])
    assert.deepStrictEqual(kinds("open notes.txt"), [[["open", 1]], [["file", 1]], [["txt", 1]]])
    assert.deepStrictEqual(kinds("ls src/ui"), [[["ls", 1]], [["folder", 1]]])
    assert.deepStrictEqual(kinds("locate the Dockerfile"), [[["locat", 1]], [["file", 1]]], "a file named for its use")
    assert.deepStrictEqual(kinds("the Docker file"), [[["docker", 1]], [["file", 1]]])
    assert.deepStrictEqual(
      kinds("read notes.txt."),
      [[["read", 1]], [["file", 1]], [["txt", 1]]],
      "a sentence's full stop is not part of it"
    )
  })

  it("a quoted phrase is a value: it stands for text, its words count as parts", () => {
    assert.deepStrictEqual(kinds("grep the logs for 'connection refused'"), [
      [["text", 1]],
      [["grep", 1]],
      [["log", 1]]
    ])
    const [phrase] = ToolSearch.concepts("find “parse config” in src")
    assert.strictEqual(phrase!.get("text"), 1)
    assert.strictEqual(phrase!.get("pars"), 0.1)
    assert.strictEqual(phrase!.get("config"), 0.1)
    assert.deepStrictEqual(kinds("Carol's 'notes"), [[["carol", 1]], [["note", 1]]], "no closing quote, no phrase")
  })

  it("files listed make a task over several files; a source and a destination do not", () => {
    const several = (query: string) =>
      ToolSearch.concepts(query).filter((concept) => concept.get("multipl") === 1).length
    assert.strictEqual(several("compare a.txt and b.txt"), 1)
    assert.strictEqual(several("open a.txt, b.txt and c.txt"), 1, "once however many")
    assert.strictEqual(several("diff a.txt & b.txt"), 1)
    assert.strictEqual(several("rename a.txt to b.txt"), 0)
    assert.strictEqual(several("read a.txt"), 0)
    assert.strictEqual(several("read the config files at once"), 1, "at once: several at a time")
  })

  it("the name's own words count as a compound's parts", () => {
    const [, file] = ToolSearch.concepts("open notes.txt")
    assert.strictEqual(file!.get("note"), 0.1)
    const [, folder] = ToolSearch.concepts("ls src/ui")
    assert.strictEqual(folder!.get("src"), 0.1)
    assert.strictEqual(folder!.get("directori"), 0.7, "a folder's synonyms")
  })
})

describe("ToolSearch.isQuestion", () => {
  it("a question word first, or a question mark last; how-to and can-you are requests", () => {
    for (const question of [
      "what files are here",
      "Which folders",
      "is it up",
      "where's the log",
      "how big is it",
      "list files?"
    ])
      assert.isTrue(ToolSearch.isQuestion(question), question)
    for (const request of ["how do I delete a file", "how to center a div", "list files", "can you delete it", ""])
      assert.isFalse(ToolSearch.isQuestion(request), request)
  })
})

describe("ToolSearch.documents", () => {
  it("listed tools only, discovery tools excepted; a source tool carries its original name, a core tool its keywords and hint", () => {
    const { catalog } = fixture()
    const docs = ToolSearch.documents(catalog, manifest)
    const byId = new Map(docs.map((doc) => [doc.id, doc]))
    assert.isFalse(byId.has("weather__hidden_tool"))
    assert.deepStrictEqual(byId.get("weather__get_forecast"), {
      id: "weather__get_forecast",
      name: "weather__get_forecast get_forecast",
      title: "Meteorology",
      description: "Forecast for a city",
      hint: "",
      keywords: "",
      params: "city"
    })
    assert.isFalse(byId.has("ToolSearch"), "ToolSearch never finds itself")
    const core = byId.get("SourceHealth")!
    assert.strictEqual(core.name, "SourceHealth")
    assert.include(core.keywords.split(" "), "diagnose")
    assert.include(core.hint, "Call when a source tool is missing")
    assert.strictEqual(core.title, "Source health", "a title given only in the annotations is indexed")
    assert.deepStrictEqual(
      [...docs.map((doc) => doc.id)].sort(),
      [...catalog.tools.map((t) => t.name)].filter((name) => name !== "ToolSearch").sort(),
      "one document per listed tool"
    )
  })
})

describe("ToolSearch.documents without parameters", () => {
  it("a schema without properties, or with null properties, indexes no parameter names", () => {
    const catalog = Catalog.build({
      manifest,
      sources: [
        {
          instance: "x",
          tools: [
            { name: "bare", inputSchema: { type: "object" } },
            { name: "nulled", inputSchema: { type: "object", properties: null } }
          ]
        }
      ],
      toolConfig: {},
      budget: 64
    })
    const docs = ToolSearch.documents(catalog, manifest).filter((doc) => doc.id.startsWith("x__"))
    assert.deepStrictEqual(
      docs.map((doc) => [doc.id, doc.params, doc.description]),
      [
        ["x__bare", "", ""],
        ["x__nulled", "", ""]
      ]
    )
  })
})

describe("ToolSearch.documents for a collision", () => {
  it("the name kept is indexed with the winner's original name, and every parameter separately", () => {
    const catalog = Catalog.build({
      manifest,
      sources: [
        {
          instance: "gh",
          tools: [
            { name: "x_y", inputSchema: { type: "object", properties: { first: {}, second: {} } } },
            { name: "x~y", inputSchema: { type: "object" } }
          ]
        }
      ],
      toolConfig: {},
      budget: 64
    })
    const doc = ToolSearch.documents(catalog, manifest).find((d) => d.id === "gh__x_y")!
    assert.strictEqual(doc.name, "gh__x_y x_y")
    assert.strictEqual(doc.params, "first second")
  })
})

describe("ToolSearch.concepts", () => {
  it("one concept per word: the word weighs 1, a compound's parts and synonyms less", () => {
    assert.deepStrictEqual(
      ToolSearch.concepts("dryRun").map((concept) => [...concept]),
      [
        [
          ["dry", 0.1],
          ["run", 0.1],
          ["dryrun", 1],
          ...["shell", "bash", "command", "termin", "execut", "cli", "launch"].map((term) => [term, 0.1 * 0.7])
        ]
      ]
    )
    const [folders] = ToolSearch.concepts("folders")
    assert.strictEqual(folders!.get("folder"), 1, "stemmed")
    assert.strictEqual(folders!.get("directori"), 0.7, "then a synonym")
    assert.deepStrictEqual(
      ToolSearch.concepts("make a new").map((concept) => concept.get("creat")),
      [0.7, 0.7],
      "stop words make no concept; two words pointing at create both count"
    )
    const [, manages] = ToolSearch.concepts("Alice manages Bob")
    assert.strictEqual(manages!.get("manag"), 1)
    assert.strictEqual(manages!.get("relat"), 0.35, "a word naming a kind of thing looks for the kind's name")
    assert.deepStrictEqual(
      ToolSearch.concepts("the new release").map((concept) => concept.has("creat")),
      [false, false],
      "the new X is a recent X, not one to create"
    )
  })
})

describe("ToolSearch.rephrase and namesSomeone", () => {
  it("a phrase that means one word is that word: whole words, any case, any spaces between", () => {
    assert.strictEqual(ToolSearch.rephrase("Look  up the news"), "lookup the news")
    assert.strictEqual(ToolSearch.rephrase("Erin reports to Alice"), "Erin relates to Alice")
    assert.strictEqual(ToolSearch.rephrase("pull up the entries"), "open the entries")
    assert.strictEqual(ToolSearch.rephrase("when was it Created"), "when was it time", "a participle says when")
    assert.strictEqual(ToolSearch.rephrase("the newest setup, outlook for"), "the newest setup, outlook for")
  })

  it("a capitalised word after the first names someone or something; acronyms and the first word do not", () => {
    assert.isTrue(ToolSearch.namesSomeone("forget everything about Bob"))
    assert.isTrue(ToolSearch.namesSomeone("what's in Carol's notes?"))
    assert.isFalse(ToolSearch.namesSomeone("Forget everything"))
    assert.isFalse(ToolSearch.namesSomeone("read the README and the PDF"))
    assert.isFalse(ToolSearch.namesSomeone("ask the LLM"))
    assert.isFalse(ToolSearch.namesSomeone("locate the Dockerfile"), "a file's name")
  })
})

describe("ToolSearch.build", () => {
  it("finds a tool by parameter name, by instance and by title; a disabled tool is never found", () => {
    const { names } = fixture()
    assert.strictEqual(names("region")[0], "weather__get_alerts")
    assert.strictEqual(names("meteorology")[0], "weather__get_forecast")
    assert.includeMembers(names("weather"), ["weather__get_forecast", "weather__get_alerts"])
    assert.notInclude(names("never listed switched off hidden tool", 50), "weather__hidden_tool")
    assert.strictEqual(names("diagnose")[0], "SourceHealth", "core tools are found by their keywords")
    assert.notInclude(names("discover search tools catalog"), "ToolSearch", "ToolSearch never finds itself")
  })

  it("prefix search from three characters, fuzzy search from five", () => {
    const { names } = fixture()
    assert.strictEqual(names("reposit")[0], "repo__commit")
    assert.include(names("rep"), "repo__commit", "three characters are a prefix query")
    assert.deepStrictEqual(names("repa"), [], "four characters are not fuzzy")
    assert.deepStrictEqual(names("co"), [], "two characters are not a prefix query")
    assert.strictEqual(names("repositroy")[0], "repo__commit", "one transposition is within the fuzzy distance")
    assert.strictEqual(names("comit")[0], "repo__commit", "five characters allow one edit")
    assert.deepStrictEqual(names("comt"), [], "four characters are matched exactly")
  })

  it("equal scores come out in wire-name order; limit cuts the list; scores are rounded to 3 decimals", () => {
    const { catalog, index, names } = fixture()
    const hits = index.search("zebra", 10)
    assert.deepStrictEqual(
      hits.map((hit) => hit.name),
      ["repo__alpha", "repo__beta"]
    )
    assert.strictEqual(hits[0]!.score, hits[1]!.score)
    const thousandths = hits[0]!.score * 1000
    assert.isAbove(hits[0]!.score, 0)
    assert.isBelow(hits[0]!.score, 100)
    assert.isBelow(Math.abs(thousandths - Math.round(thousandths)), 1e-6, "at most three decimals")
    assert.deepStrictEqual(names("zebra", 1), ["repo__alpha"])
    assert.strictEqual(index.hash, catalog.hash)
  })

  it("a question ranks a tool annotated as changing things below one annotated read-only; no annotations, no change", () => {
    const catalog = Catalog.build({
      manifest,
      sources: [
        {
          instance: "w",
          tools: [
            tool("a_change", "Widget records", {}, { annotations: { readOnlyHint: false } }),
            tool("b_look", "Widget records", {}, { annotations: { readOnlyHint: true } }),
            tool("c_plain", "Widget records")
          ]
        }
      ],
      toolConfig: {},
      budget: 64
    })
    const index = ToolSearch.build(catalog, manifest)
    const names = (query: string) => index.search(query, 10).map((hit) => hit.name)
    assert.deepStrictEqual(names("widget records"), ["w__a_change", "w__b_look", "w__c_plain"])
    assert.deepStrictEqual(names("which widget records"), ["w__b_look", "w__c_plain", "w__a_change"])
    const [looked, plain, changed] = index.search("which widget records", 10)
    assert.strictEqual(looked!.score, plain!.score)
    assert.closeTo(changed!.score, looked!.score * 0.5, 0.001, "half the score")
  })

  it("the kinds of thing a query names raise the tools whose own name or title names them, half the score per kind", () => {
    assert.deepStrictEqual(
      [...ToolSearch.objectsNamed("remove the friendship between two people")],
      ["relation", "entity"]
    )
    assert.deepStrictEqual([...ToolSearch.objectsNamed("read_text_file")], ["file"])
    assert.deepStrictEqual([...ToolSearch.objectsNamed("what's the git status")], ["command"], "a program is a command")
    const catalog = Catalog.build({
      manifest,
      sources: [
        {
          instance: "memory",
          tools: [
            tool("delete_entities", "Delete items from the store"),
            tool("delete_relations", "Delete items from the store"),
            tool("zz_b", "", {}, { title: "Zebra relations" }),
            tool("zz_a", "", {}, { title: "Zebra entities" })
          ]
        }
      ],
      toolConfig: {},
      budget: 64
    })
    const index = ToolSearch.build(catalog, manifest)
    const [relations, entities] = index.search("delete the friendship", 2)
    assert.strictEqual(relations!.name, "memory__delete_relations")
    assert.strictEqual(entities!.name, "memory__delete_entities")
    assert.isAbove(relations!.score, entities!.score * 1.5, "the kind's name found too")
    // A name is an entity, and names no word a tool has: the boost alone.
    const [named, other] = index.search("delete Bob", 2)
    assert.strictEqual(named!.name, "memory__delete_entities")
    assert.strictEqual(other!.name, "memory__delete_relations")
    assert.closeTo(named!.score, other!.score * 1.5, 0.001)
    assert.deepStrictEqual(
      index.search("who manages whom", 5).map((hit) => hit.name),
      ["memory__delete_relations", "memory__zz_b"],
      "a word naming a kind finds the tools named for it"
    )
    const zebras = index.search("zebra friendship", 5).map((hit) => hit.name)
    assert.isBelow(
      zebras.indexOf("memory__zz_b"),
      zebras.indexOf("memory__zz_a"),
      "a title names what the tool acts on"
    )
    assert.isAtLeast(zebras.indexOf("memory__zz_b"), 0)
  })

  it("a hit carries the tool's description and input schema; better matches rank higher", () => {
    const { index } = fixture()
    const [first, second] = index.search("forecast city", 10)
    assert.strictEqual(first!.name, "weather__get_forecast")
    assert.strictEqual(first!.description, "Forecast for a city")
    assert.deepStrictEqual(first!.inputSchema, { properties: { city: { type: "string" } }, type: "object" })
    assert.isTrue(second === undefined || second.score < first!.score)
  })
})
