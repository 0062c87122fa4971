// Mutation-testing follow-ups (docs/mutation.md): ToolSearch over an in-process catalog, so that the index and the
// ranking rules are pinned without the reference servers (test/RegistryToolSearch.test.ts runs those).
import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import { randomUUID } from "node:crypto"
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
  it("listed tools only, discovery tools (ToolSearch, RunCode) excepted; a source tool carries its original name, a core tool its keywords and hint", () => {
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
      [...catalog.tools.map((t) => t.name)].filter((name) => name !== "ToolSearch" && name !== "RunCode").sort(),
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

describe("ToolSearch's word tables, as a fresh copy of the module builds them", () => {
  // The contraction pattern, the synonym and object tables, the link, file-name and quote patterns, the discovery
  // tools, the fields synonyms match and the question words are built once, when the module loads. Each case imports a
  // copy of its own, so that it checks what a load builds (and so that mutation testing, which switches a change on
  // only at run time, can see a change there: docs/mutation.md).
  const source = new URL("../../src/services/Registry/ToolSearch.ts", import.meta.url).href
  // A key unique to each call: a test run that loads this file again must not get a copy a previous run cached.
  const fresh = (): Promise<typeof ToolSearch> => import(/* @vite-ignore */ `${source}?copy=${randomUUID()}`)
  const keys = (search: typeof ToolSearch, query: string) =>
    search.concepts(query).map((concept) => [...concept.keys()])

  it("drops contractions and possessives; a word's synonyms are the other words of its groups, stemmed", async () => {
    const search = await fresh()
    assert.deepStrictEqual(search.tokenize("it doesn't open Carol's files"), ["open", "carol", "files"])
    assert.deepStrictEqual(keys(search, "folders"), [["folder", "directori", "dir", "subfold", "subdirectori"]])
    assert.isTrue(search.namesSomeone("forget everything about Bob"))
  })

  it("the kinds of thing a word names, each word once per kind", async () => {
    const search = await fresh()
    assert.deepStrictEqual([...search.objectsNamed("read_text_file")], ["file"])
    assert.deepStrictEqual([...search.objectsNamed("the friendship between people")], ["relation", "entity"])
  })

  it("a link is a URL from its scheme or www.; a file name has a short extension with a letter", async () => {
    const search = await fresh()
    const kind = (token: string) => keys(search, token)[0]?.find((term) => term !== "")
    assert.strictEqual(kind("https://example.com"), "url")
    assert.strictEqual(kind("svn+ssh://host/repo"), "url")
    assert.strictEqual(kind("www.example.com"), "url")
    assert.strictEqual(keys(search, "mywww.site")[0]?.[0], "mywww", "www. only at the start")
    assert.deepStrictEqual(keys(search, "a.txt"), [["file", "document"], ["txt"]])
    assert.deepStrictEqual(keys(search, "main.c"), [["main", "file", "document"], ["c"]], "one letter")
    assert.deepStrictEqual(keys(search, "clip.3gp"), [["clip", "file", "document"], ["3gp"]], "a digit first")
    assert.deepStrictEqual(keys(search, "notes.markdown")[1], ["markdown"], "up to nine characters")
    assert.deepStrictEqual(keys(search, "notes.abcdefghij"), [["note", "observ", "fact", "remark"], ["abcdefghij"]])
    assert.deepStrictEqual(keys(search, "v1.2"), [["v1"]], "a version is no file")
    assert.deepStrictEqual(keys(search, ".env.md"), [["env", "environ", "variabl", "var"], ["md"]], "a dotfile")
  })

  it("a quoted phrase starts after a space or at the start and ends before a space, punctuation or the end", async () => {
    const search = await fresh()
    const texts = (query: string) => search.concepts(query).filter((concept) => concept.get("text") === 1).length
    assert.strictEqual(texts("'connection refused' in the logs"), 1)
    assert.strictEqual(texts("grep 'connection refused' in the logs"), 1)
    assert.strictEqual(texts("grep 'connection refused'"), 1)
    assert.strictEqual(texts("grep 'connection refused', then stop"), 1)
    assert.strictEqual(texts("grep x'connection refused'"), 0)
  })

  it("the discovery tools, the question words and the how-to words", async () => {
    const search = await fresh()
    assert.deepStrictEqual([...search.discoveryTools], ["ToolSearch", "CallTool", "RunCode"])
    assert.isTrue(search.isQuestion("what files are here"))
    assert.isTrue(search.isQuestion("have we got a backup"))
    assert.isFalse(search.isQuestion("how do I delete a file"))
    assert.isFalse(search.isQuestion("how to center a div"))
  })

  it("a synonym matches a tool's name, title, keywords, hint and parameters, never its description", async () => {
    const search = await fresh()
    const catalog = Catalog.build({
      manifest,
      sources: [
        {
          instance: "z",
          tools: [
            tool("list_a", "x"),
            tool("b", "x", {}, { title: "List" }),
            tool("c", "list"),
            tool("d", "x", { list: {} }),
            tool("e", "x")
          ]
        }
      ],
      toolConfig: { "z.e": new ToolConfig({ usage_hint: "list" }) },
      budget: 64
    })
    const index = search.build(catalog, manifest)
    assert.deepStrictEqual(
      index
        .search("display", 20)
        .map((hit) => hit.name)
        .filter((name) => name.startsWith("z__"))
        .sort(),
      ["z__b", "z__d", "z__e", "z__list_a"]
    )
    assert.includeMembers(
      index.search("display", 20).map((hit) => hit.name),
      ["Read", "Glob"],
      "and a core tool's keywords (Read's view, show and print; Glob's ls)"
    )
  })
})

describe("ToolSearch's reading of a query's words", () => {
  const keys = (query: string) => ToolSearch.concepts(query).map((concept) => [...concept.keys()])

  it("numbers alone are values whatever their length; capitals are words in any case for the kinds of thing", () => {
    assert.deepStrictEqual(ToolSearch.tokenize("top 100 files"), ["top", "files"])
    assert.deepStrictEqual([...ToolSearch.objectsNamed("the FILE list")], ["file"])
  })

  it("a link, a glob or a file name brings its kind and extension, and only the name's own words as parts", () => {
    assert.deepStrictEqual(keys("https://example.com")[0]?.slice(0, 2), ["url", "web"])
    assert.deepStrictEqual(keys("src/*"), [["glob"], ["file", "document"]], "a glob's words are no parts")
    assert.deepStrictEqual(keys("*.md"), [["glob"], ["file", "document"], ["md"]])
    assert.deepStrictEqual(keys("notes.txt"), [["note", "file", "observ", "fact", "remark", "document"], ["txt"]])
    assert.deepStrictEqual(keys("Dockerfile")[0]?.slice(0, 2), ["docker", "file"])
    assert.deepStrictEqual(keys("list *"), [["list", "show", "displai", "view", "print", "ls", "see"]], "no glob")
    assert.deepStrictEqual(keys("ls /"), [["ls", "show", "list", "displai", "view", "print", "see"]], "no folder")
    assert.notStrictEqual(
      ToolSearch.concepts("edit myDockerfile")[1]?.get("file"),
      1,
      "a compound, not a file named for its use"
    )
    assert.deepStrictEqual(keys("the Makefiles"), [["makefil"]], "a plural is not a file's name")
  })

  it("a token's brackets, quotes and trailing punctuation are not part of it; inner ones split it", () => {
    assert.deepStrictEqual(
      keys('fetch ("https://example.com")').map((concept) => concept[0]),
      ["fetch", "url"]
    )
    assert.deepStrictEqual(
      keys("open notes.txt!!").map((concept) => concept.includes("file")),
      [false, true, false]
    )
    assert.deepStrictEqual(keys("open foo(bar)"), [
      ["open", "read", "load", "cat", "peek", "inspect", "examin"],
      ["foo"],
      ["bar"]
    ])
    assert.deepStrictEqual(keys("read_text v2"), [
      ["read", "open", "load", "cat", "peek", "inspect", "examin"],
      ["text", "content"],
      ["v2"]
    ])
  })

  it("files side by side or joined by a comma and `and` are listed, and the listing adds only its word", () => {
    const several = (query: string) =>
      ToolSearch.concepts(query).filter((concept) => concept.get("multipl") === 1).length
    assert.strictEqual(several("diff a.txt b.txt"), 1)
    assert.strictEqual(several("open a.txt, and b.txt"), 1)
    assert.deepStrictEqual(
      keys("diff *.md and a.txt").find((concept) => concept[0] === "multipl"),
      undefined,
      "a glob is not a file listed"
    )
    assert.deepStrictEqual(keys("compare a.txt and b.txt")[3], ["multipl", "sever", "mani", "batch", "bulk"])
  })

  it("a capitalised word names someone with its punctuation trimmed; identifiers and file names do not", () => {
    assert.isTrue(ToolSearch.namesSomeone("tell Bob, then Carol"))
    assert.isTrue(ToolSearch.namesSomeone("what about Bob?!"))
    assert.isFalse(ToolSearch.namesSomeone("open Config.json"))
    assert.isFalse(ToolSearch.namesSomeone("call getUser on MyClass"))
  })

  it("a question word after leading spaces or punctuation, or a question mark before trailing spaces", () => {
    assert.isTrue(ToolSearch.isQuestion("  what changed"))
    assert.isTrue(ToolSearch.isQuestion("(which files)"))
    assert.isTrue(ToolSearch.isQuestion("list files?  "))
  })
})

describe("ToolSearch.documents' titles", () => {
  it("a title and an annotated title are both indexed, a space between; null annotations are no annotations", () => {
    const catalog = Catalog.build({
      manifest,
      sources: [
        {
          instance: "t",
          tools: [
            tool("both", "x", {}, { title: "Meteorology", annotations: { title: "Weather" } }),
            tool("nulled", "x", {}, { annotations: null })
          ]
        }
      ],
      toolConfig: {},
      budget: 64
    })
    const titles = ToolSearch.documents(catalog, manifest)
      .filter((doc) => doc.id.startsWith("t__"))
      .map((doc) => [doc.id, doc.title])
    assert.deepStrictEqual(titles, [
      ["t__both", "Meteorology Weather"],
      ["t__nulled", ""]
    ])
    const index = ToolSearch.build(catalog, manifest)
    assert.deepStrictEqual(
      index.search("which nulled", 5).map((hit) => hit.name),
      ["t__nulled"],
      "a question with null annotations"
    )
  })
})

describe("ToolSearch.build's fields and weights", () => {
  it("a word ranks a tool by where it has it: name, title, parameters, description, then usage hint", () => {
    const catalog = Catalog.build({
      manifest,
      sources: [
        {
          instance: "z",
          tools: [
            tool("zephyr", "x"),
            tool("b", "x", {}, { title: "zephyr" }),
            tool("c", "zephyr"),
            tool("d", "x", { zephyr: {} }),
            tool("e", "x")
          ]
        }
      ],
      toolConfig: { "z.e": new ToolConfig({ usage_hint: "zephyr" }) },
      budget: 64
    })
    const index = ToolSearch.build(catalog, manifest)
    assert.deepStrictEqual(
      index.search("zephyr", 10).map((hit) => hit.name),
      ["z__zephyr", "z__b", "z__d", "z__c", "z__e"]
    )
  })

  it("a core tool is found by a keyword nothing else has", () => {
    const { names } = fixture()
    assert.strictEqual(names("typo")[0], "Edit")
  })

  it("a written word is searched as the stem it is, even when that stem is a function word", () => {
    const catalog = Catalog.build({
      manifest,
      sources: [{ instance: "w", tools: [tool("count", "Count the uses of a word")] }],
      toolConfig: {},
      budget: 64
    })
    const index = ToolSearch.build(catalog, manifest)
    assert.strictEqual(index.search("uses", 5)[0]?.name, "w__count")
  })

  it("a synonym matches exactly: no fuzzy match on it", () => {
    const catalog = Catalog.build({
      manifest,
      sources: [{ instance: "w", tools: [tool("list_directors", "Films' makers")] }],
      toolConfig: {},
      budget: 64
    })
    const index = ToolSearch.build(catalog, manifest)
    assert.notInclude(
      index.search("folder", 20).map((hit) => hit.name),
      "w__list_directors"
    )
  })
})

describe("ToolSearch.build's kinds of thing", () => {
  const catalog = () =>
    Catalog.build({
      manifest,
      sources: [
        {
          instance: "news",
          tools: [
            tool("fetch_page", "Fetch the items"),
            tool("fetch_item", "Fetch the items"),
            tool("fetch_one", "Fetch the items", {}, { title: "Page reader" }),
            tool("fetch_two", "Fetch the items", {}, { title: "Item reader" })
          ]
        },
        {
          instance: "memory",
          tools: [tool("delete_entities", "Delete items"), tool("delete_relations", "Delete items")]
        }
      ],
      toolConfig: {},
      budget: 64
    })
  const scores = (index: ToolSearch.Index, query: string) =>
    new Map(index.search(query, 30).map((hit) => [hit.name, hit.score]))

  it("a tool's own name and title name what it acts on; its instance's name does not", () => {
    const found = scores(ToolSearch.build(catalog(), manifest), "fetch the news")
    assert.closeTo(found.get("news__fetch_page")!, found.get("news__fetch_item")! * 1.5, 0.002)
    assert.closeTo(found.get("news__fetch_one")!, found.get("news__fetch_two")! * 1.5, 0.002)
  })

  it("no kind named, no gain; a name adds the entity kind once", () => {
    const index = ToolSearch.build(catalog(), manifest)
    const plain = scores(index, "delete the items")
    assert.strictEqual(plain.get("memory__delete_entities"), plain.get("memory__delete_relations"))
    assert.strictEqual(
      scores(index, "delete the person Bob").get("memory__delete_entities"),
      scores(index, "delete the person").get("memory__delete_entities")
    )
  })
})
