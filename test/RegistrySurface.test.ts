import { assert, describe, it } from "@effect/vitest"
import { assertSome } from "@effect/vitest/utils"
import { Either, Option } from "effect"
import type { JsonObject } from "../src/domain/Mcp.js"
import type { InstanceSurface, RpcError } from "../src/domain/Surface.js"
import * as S from "../src/services/Registry/Surface.js"

const surface = (parts: Partial<InstanceSurface>): InstanceSurface => ({
  tools: [],
  resources: [],
  resourceTemplates: [],
  prompts: [],
  ...parts
})

const withResources = { resources: { subscribe: true } }

const built = S.build([
  {
    instance: "alpha",
    capabilities: withResources,
    surface: surface({
      resources: [
        { uri: "file:///shared.txt", name: "shared" },
        { uri: "alpha://only", name: "only" },
        { uri: "clawtool://looks/ours", name: "tricky" }
      ],
      resourceTemplates: [{ uriTemplate: "alpha://items/{id}", name: "item" }],
      prompts: [{ name: "greet", arguments: [{ name: "who" }] }]
    })
  },
  {
    instance: "beta",
    capabilities: withResources,
    surface: surface({
      resources: [{ uri: "file:///shared.txt", name: "shared" }],
      resourceTemplates: [{ uriTemplate: "beta://{+path}", name: "path" }]
    })
  }
])

describe("Registry surface: names and the URI scheme", () => {
  it("prefixes names, keeps unique URIs, qualifies clashing ones and URIs in clawtool's own scheme", () => {
    assert.deepStrictEqual(
      built.resources.map((r) => [r.name, r.uri]),
      [
        ["alpha__only", "alpha://only"],
        ["alpha__shared", "clawtool://alpha/file:///shared.txt"],
        ["alpha__tricky", "clawtool://alpha/clawtool://looks/ours"],
        ["beta__shared", "clawtool://beta/file:///shared.txt"]
      ]
    )
    assert.deepStrictEqual(
      built.resourceTemplates.map((t) => [t.name, t.uriTemplate]),
      [
        ["alpha__item", "alpha://items/{id}"],
        ["beta__path", "beta://{+path}"]
      ]
    )
    assert.deepStrictEqual(built.prompts, [{ name: "alpha__greet", arguments: [{ name: "who" }] }])
  })

  it("every qualified URI decodes to its instance and the child's URI, verbatim", () => {
    for (const resource of built.resources) {
      const route = Either.getOrThrow(S.routeUri(built, resource.uri))
      assert.strictEqual(S.hostUri(built, route.instance, route.uri), resource.uri)
    }
    assertSome(S.unqualify("clawtool://beta/file:///shared.txt"), { instance: "beta", uri: "file:///shared.txt" })
    assert.isTrue(Option.isNone(S.unqualify("clawtool:///no-instance")))
  })

  it("routes by listed URI, then by template; ambiguity and unknown URIs are errors", () => {
    assert.deepStrictEqual(Either.getOrThrow(S.routeUri(built, "alpha://only")), {
      instance: "alpha",
      uri: "alpha://only"
    })
    assert.deepStrictEqual(Either.getOrThrow(S.routeUri(built, "alpha://items/7")), {
      instance: "alpha",
      uri: "alpha://items/7"
    })
    assert.deepStrictEqual(Either.getOrThrow(S.routeUri(built, "beta://a/b/c")), {
      instance: "beta",
      uri: "beta://a/b/c"
    })
    const ambiguous = Either.flip(S.routeUri(built, "file:///shared.txt")).pipe(Either.getOrThrow)
    assert.strictEqual(ambiguous.code, -32602)
    assert.include(ambiguous.detail, "clawtool://alpha/file:///shared.txt")
    assert.strictEqual(Either.flip(S.routeUri(built, "gamma://x")).pipe(Either.getOrThrow).code, -32002)
    assert.strictEqual(Either.flip(S.routeUri(built, "clawtool://gamma/x")).pipe(Either.getOrThrow).code, -32002)
  })

  it("a qualified URI keeps routing after the clash is gone; the only resource server takes unlisted URIs", () => {
    const alone = S.build([
      {
        instance: "alpha",
        capabilities: withResources,
        surface: surface({ resources: [{ uri: "file:///shared.txt", name: "shared" }] })
      }
    ])
    assert.deepStrictEqual(
      alone.resources.map((r) => r.uri),
      ["file:///shared.txt"]
    )
    assert.deepStrictEqual(Either.getOrThrow(S.routeUri(alone, "clawtool://alpha/file:///shared.txt")), {
      instance: "alpha",
      uri: "file:///shared.txt"
    })
    assert.deepStrictEqual(Either.getOrThrow(S.routeUri(alone, "anything://else")), {
      instance: "alpha",
      uri: "anything://else"
    })
  })

  it("RFC 6570 templates match their expansions", () => {
    assert.isTrue(
      S.templatePattern("demo://resource/dynamic/text/{resourceId}").test("demo://resource/dynamic/text/42")
    )
    assert.isFalse(
      S.templatePattern("demo://resource/dynamic/text/{resourceId}").test("demo://resource/dynamic/text/4/2")
    )
    assert.isTrue(S.templatePattern("file://{+path}").test("file:///a/b.txt"))
    assert.isTrue(S.templatePattern("search://q{?term,limit}").test("search://q?term=x&limit=2"))
    assert.isTrue(S.templatePattern("a.b://{x}").test("a.b://y"))
    assert.isFalse(S.templatePattern("a.b://{x}").test("aXb://y"))
  })

  it("completion refs route by the template string; prompts by their wire name", () => {
    assert.deepStrictEqual(Either.getOrThrow(S.routeTemplate(built, "beta://{+path}")), {
      instance: "beta",
      uri: "beta://{+path}"
    })
    assert.deepStrictEqual(Either.getOrThrow(S.routeName("alpha__greet", "prompt")), {
      instance: "alpha",
      name: "greet"
    })
    assert.strictEqual(Either.flip(S.routeName("greet", "prompt")).pipe(Either.getOrThrow).code, -32602)
  })

  it("task ids: the child's id under the instance prefix, reversible, related-task _meta rewritten", () => {
    const host = S.hostTaskId("everything", "abc__def")
    assert.strictEqual(host, "everything__abc__def")
    assert.deepStrictEqual(Either.getOrThrow(S.routeTaskId(host)), { instance: "everything", taskId: "abc__def" })
    assert.deepStrictEqual(S.mapTask("everything", { taskId: "t1", status: "working" }), {
      taskId: "everything__t1",
      status: "working"
    })
    assert.deepStrictEqual(
      S.mapRelatedTask({ other: 1, [S.relatedTaskKey]: { taskId: "t1" } }, (id) => `x__${id}`),
      { other: 1, [S.relatedTaskKey]: { taskId: "x__t1" } }
    )
  })

  it("URIs inside results: resource links and embedded resources get the host's URI", () => {
    const result = S.mapToolResult(built, "beta", {
      content: [
        { type: "text", text: "see" },
        { type: "resource_link", uri: "file:///shared.txt", name: "shared" },
        { type: "resource", resource: { uri: "beta://x", text: "x" } }
      ]
    })
    assert.deepStrictEqual(result.content, [
      { type: "text", text: "see" },
      { type: "resource_link", uri: "clawtool://beta/file:///shared.txt", name: "shared" },
      { type: "resource", resource: { uri: "beta://x", text: "x" } }
    ])
    const untouched = { content: [{ type: "text", text: "plain" }] }
    assert.strictEqual(S.mapToolResult(built, "beta", untouched), untouched)
    assert.deepStrictEqual(
      S.mapReadResult(built, "alpha", { contents: [{ uri: "file:///shared.txt", text: "a" }] }).contents,
      [{ uri: "clawtool://alpha/file:///shared.txt", text: "a" }]
    )
  })
})

// Mutation-testing follow-ups (docs/mutation.md): the resource URI scheme, routing and result mapping. Every
// fixture is built inside its test: a surface built when the file loads is invisible to Stryker's per-test runs.
const resourcesCapability: JsonObject = { resources: {} }
const left = <A>(either: Either.Either<A, RpcError>): RpcError => Either.getOrThrow(Either.flip(either))
const right = <A>(either: Either.Either<A, RpcError>): A => Either.getOrThrow(either)

/** alpha and beta both list file:///shared.txt; alpha lists one URI twice; gamma has no resources capability. */
const twoServers = () =>
  S.build([
    {
      instance: "beta",
      capabilities: resourcesCapability,
      surface: surface({
        resources: [
          { uri: "file:///shared.txt", name: "shared" },
          { uri: "beta://b", name: "b" }
        ],
        resourceTemplates: [
          { uriTemplate: "t://{id}", name: "t" },
          { uriTemplate: "beta://items/{id}", name: "item" }
        ],
        prompts: [{ name: "zed" }, { name: "ask" }]
      })
    },
    {
      instance: "alpha",
      capabilities: resourcesCapability,
      surface: surface({
        resources: [
          { uri: "file:///shared.txt", name: "shared" },
          { uri: "alpha://twice", name: "twice" },
          { uri: "alpha://twice", name: "twice" }
        ],
        resourceTemplates: [
          { uriTemplate: "t://{id}", name: "t" },
          { uriTemplate: "alpha://{+path}", name: "path" }
        ],
        prompts: [{ name: "greet", arguments: [] }]
      })
    },
    { instance: "gamma", capabilities: {}, surface: surface({ prompts: [{ name: "ask" }] }) }
  ])

describe("Surface.build", () => {
  it("prefixed names, sorted by name then URI; only URIs listed by two instances are qualified", () => {
    const built = twoServers()
    assert.deepStrictEqual(
      built.resources.map((r) => [r.name, r.uri]),
      [
        ["alpha__shared", "clawtool://alpha/file:///shared.txt"],
        ["alpha__twice", "alpha://twice"],
        ["alpha__twice", "alpha://twice"],
        ["beta__b", "beta://b"],
        ["beta__shared", "clawtool://beta/file:///shared.txt"]
      ]
    )
    assert.deepStrictEqual(
      built.resourceTemplates.map((t) => [t.name, t.uriTemplate]),
      [
        ["alpha__path", "alpha://{+path}"],
        ["alpha__t", "clawtool://alpha/t://{id}"],
        ["beta__item", "beta://items/{id}"],
        ["beta__t", "clawtool://beta/t://{id}"]
      ]
    )
    assert.deepStrictEqual(
      built.prompts.map((p) => p.name),
      ["alpha__greet", "beta__ask", "beta__zed", "gamma__ask"]
    )
    assert.deepStrictEqual([...built.clashing].sort(), ["file:///shared.txt", "t://{id}"])
    assert.deepStrictEqual(built.owners.get("alpha://twice"), ["alpha"], "one instance listing a URI twice")
    assert.deepStrictEqual(built.owners.get("file:///shared.txt"), ["beta", "alpha"])
    assert.deepStrictEqual([...built.capabilities.keys()], ["beta", "alpha", "gamma"])
    assert.strictEqual(built.templates.length, 4)
  })

  it("change keys follow the listings", () => {
    const one = S.build([
      {
        instance: "a",
        capabilities: resourcesCapability,
        surface: surface({ resources: [{ uri: "x://1", name: "1" }] })
      }
    ])
    const other = S.build([
      {
        instance: "a",
        capabilities: resourcesCapability,
        surface: surface({ resources: [{ uri: "x://2", name: "1" }] })
      }
    ])
    const templated = S.build([
      {
        instance: "a",
        capabilities: resourcesCapability,
        surface: surface({ resourceTemplates: [{ uriTemplate: "x://{y}", name: "y" }] })
      }
    ])
    assert.notStrictEqual(one.resourcesKey, other.resourcesKey)
    assert.notStrictEqual(S.build([]).resourcesKey, templated.resourcesKey)
    assert.strictEqual(one.promptsKey, other.promptsKey)
    const prompted = S.build([{ instance: "a", capabilities: {}, surface: surface({ prompts: [{ name: "p" }] }) }])
    assert.notStrictEqual(one.promptsKey, prompted.promptsKey)
  })
})

describe("Surface.build ordering", () => {
  it("entries with the same name are ordered by URI (or URI template), whatever order the child used", () => {
    const built = S.build([
      {
        instance: "a",
        capabilities: resourcesCapability,
        surface: surface({
          resources: [
            { uri: "x://3", name: "dup" },
            { uri: "x://1", name: "dup" },
            { uri: "x://2", name: "dup" },
            { uri: "x://0", name: "zz" }
          ],
          resourceTemplates: [
            { uriTemplate: "x://c/{id}", name: "dup" },
            { uriTemplate: "x://a/{id}", name: "dup" },
            { uriTemplate: "x://b/{id}", name: "dup" }
          ]
        })
      }
    ])
    assert.deepStrictEqual(
      built.resources.map((r) => r.uri),
      ["x://1", "x://2", "x://3", "x://0"]
    )
    assert.deepStrictEqual(
      built.resourceTemplates.map((t) => t.uriTemplate),
      ["x://a/{id}", "x://b/{id}", "x://c/{id}"]
    )
  })
})

describe("Surface.templatePattern", () => {
  it("anchored at both ends; each RFC 6570 operator matches its own expansions", () => {
    assert.isFalse(S.templatePattern("a://{id}").test("za://1"), "anchored at the start")
    assert.isFalse(S.templatePattern("a://{id}/x").test("a://1/xy"), "anchored at the end")
    assert.isTrue(S.templatePattern("a://{+path}").test("a://x/y?z"))
    assert.isFalse(S.templatePattern("a://{id}").test("a://x/y"))
    assert.isTrue(S.templatePattern("a://x{#frag}").test("a://x#a/b"))
    assert.isTrue(S.templatePattern("a://x{?q}").test("a://x?q=1"))
    assert.isTrue(S.templatePattern("a://x{?q}").test("a://x"))
    assert.isTrue(S.templatePattern("a://x?q=1{&more}").test("a://x?q=1&r=2"))
    assert.isTrue(S.templatePattern("a://x?q=1{&path}").test("a://x?q=1&path=a/b"))
    assert.isTrue(S.templatePattern("a://x{/seg}").test("a://x/p/q"))
    assert.isFalse(S.templatePattern("a://x{/seg}").test("a://x/p?q"))
    assert.isFalse(S.templatePattern("a://x{/seg}").test("a://xp"))
  })
})

describe("Surface.routeUri and routeTemplate", () => {
  it("a qualified URI for an instance that is not running is -32002 naming it", () => {
    const error = left(S.routeUri(twoServers(), "clawtool://delta/x://1"))
    assert.strictEqual(error.code, -32002)
    assert.strictEqual(error.detail, `Resource not found: no running source "delta" for clawtool://delta/x://1`)
  })

  it("a URI listed by two instances is ambiguous, and the error says which qualified URIs to use", () => {
    const error = left(S.routeUri(twoServers(), "file:///shared.txt"))
    assert.strictEqual(error.code, -32602)
    assert.strictEqual(
      error.detail,
      `"file:///shared.txt" is served by beta and alpha; use clawtool://beta/file:///shared.txt or clawtool://alpha/file:///shared.txt`
    )
  })

  it("templates of two instances matching one URI are ambiguous; one match routes", () => {
    const built = twoServers()
    assert.strictEqual(left(S.routeUri(built, "t://7")).code, -32602)
    assert.deepStrictEqual(right(S.routeUri(built, "beta://items/9")), { instance: "beta", uri: "beta://items/9" })
    assert.deepStrictEqual(right(S.routeUri(built, "alpha://twice")), { instance: "alpha", uri: "alpha://twice" })
  })

  it("an unlisted URI goes to the only instance with the resources capability, else it is not found", () => {
    const single = S.build([
      { instance: "only", capabilities: resourcesCapability, surface: surface({}) },
      { instance: "other", capabilities: {}, surface: surface({}) }
    ])
    assert.deepStrictEqual(right(S.routeUri(single, "x://y")), { instance: "only", uri: "x://y" })
    const error = left(S.routeUri(twoServers(), "nowhere://x"))
    assert.strictEqual(error.code, -32002)
    assert.strictEqual(error.detail, "Resource not found: nowhere://x")
  })

  it("routeTemplate: by the exact template string; shared templates are ambiguous; qualified ones route", () => {
    const built = twoServers()
    assert.deepStrictEqual(right(S.routeTemplate(built, "alpha://{+path}")), {
      instance: "alpha",
      uri: "alpha://{+path}"
    })
    assert.strictEqual(left(S.routeTemplate(built, "t://{id}")).code, -32602)
    assert.deepStrictEqual(right(S.routeTemplate(built, "clawtool://beta/t://{id}")), {
      instance: "beta",
      uri: "t://{id}"
    })
    assert.strictEqual(left(S.routeTemplate(built, "clawtool://nobody/t://{id}")).code, -32002)
    assert.deepStrictEqual(right(S.routeTemplate(built, "beta://b")), { instance: "beta", uri: "beta://b" })
  })

  it("routeTemplate: a template whose text no pattern matches still routes by its exact string", () => {
    const built = S.build([
      {
        instance: "one",
        capabilities: resourcesCapability,
        surface: surface({ resourceTemplates: [{ uriTemplate: "x://items{/id}", name: "i" }] })
      },
      {
        instance: "two",
        capabilities: resourcesCapability,
        surface: surface({ resourceTemplates: [{ uriTemplate: "y://items{/id}", name: "i" }] })
      },
      {
        instance: "three",
        capabilities: resourcesCapability,
        surface: surface({ resourceTemplates: [{ uriTemplate: "y://items{/id}", name: "i" }] })
      }
    ])
    assert.deepStrictEqual(right(S.routeTemplate(built, "x://items{/id}")), { instance: "one", uri: "x://items{/id}" })
    const error = left(S.routeTemplate(built, "y://items{/id}"))
    assert.strictEqual(error.code, -32602)
    assert.include(error.detail, "is served by two and three")
  })
})

describe("names and task ids", () => {
  it("an unknown name says what it was and how names look", () => {
    assert.strictEqual(
      left(S.routeName("greet", "prompt")).detail,
      `unknown prompt "greet" (names are <instance>__<name>)`
    )
    assert.strictEqual(left(S.routeTaskId("t1")).detail, `unknown task "t1" (names are <instance>__<name>)`)
  })

  it("a task id that is not a string is InvalidParams", () => {
    const error = left(S.routeTaskId(42))
    assert.strictEqual(error.code, -32602)
    assert.strictEqual(error.detail, "taskId must be a string")
  })

  it("mapRelatedTask and mapTask leave anything without a string task id untouched", () => {
    const f = (id: string) => `x__${id}`
    assert.strictEqual(S.mapRelatedTask("text", f), "text")
    assert.strictEqual(S.mapRelatedTask(null, f), null)
    const noRelated = { other: 1 }
    assert.strictEqual(S.mapRelatedTask(noRelated, f), noRelated)
    const numeric = { [S.relatedTaskKey]: { taskId: 7 } }
    assert.strictEqual(S.mapRelatedTask(numeric, f), numeric)
    const task = { taskId: 7, status: "working" }
    assert.strictEqual(S.mapTask("a", task), task)
  })
})

describe("URIs inside results", () => {
  const qualify = (uri: string) => `q:${uri}`

  it("mapContentItem rewrites resource links and embedded resources only", () => {
    assert.strictEqual(S.mapContentItem(null, qualify), null)
    const text = { type: "text", uri: "x://1", text: "t" }
    assert.strictEqual(S.mapContentItem(text, qualify), text)
    const badLink = { type: "resource_link", uri: 7 }
    assert.strictEqual(S.mapContentItem(badLink, qualify), badLink)
    assert.deepStrictEqual(S.mapContentItem({ type: "resource_link", uri: "x://1" }, qualify), {
      type: "resource_link",
      uri: "q:x://1"
    })
    const noResource = { type: "resource", resource: "x://1" }
    assert.strictEqual(S.mapContentItem(noResource, qualify), noResource)
    const badResource = { type: "resource", resource: { uri: 7 } }
    assert.strictEqual(S.mapContentItem(badResource, qualify), badResource)
    const linkNotResource = { type: "resource_link", resource: { uri: "x://1" } }
    assert.strictEqual(S.mapContentItem(linkNotResource, qualify), linkNotResource)
    assert.deepStrictEqual(S.mapContentItem({ type: "resource", resource: { uri: "x://1", text: "t" } }, qualify), {
      type: "resource",
      resource: { uri: "q:x://1", text: "t" }
    })
  })

  it("identity when nothing changes: the very same objects come back", () => {
    const same = (uri: string) => uri
    const link = { type: "resource_link", uri: "x://1" }
    assert.strictEqual(S.mapContentItem(link, same), link)
    const embedded = { type: "resource", resource: { uri: "x://1" } }
    assert.strictEqual(S.mapContentItem(embedded, same), embedded)
    const built = twoServers()
    const notArray = { content: "x" }
    assert.strictEqual(S.mapToolResult(built, "alpha", notArray), notArray)
  })

  it("resources/read and prompts/get results get the host's URIs", () => {
    const built = twoServers()
    assert.deepStrictEqual(
      S.mapReadResult(built, "beta", {
        contents: [{ uri: "file:///shared.txt" }, { uri: 7 }, "raw", { uri: "beta://b" }]
      }),
      { contents: [{ uri: "clawtool://beta/file:///shared.txt" }, { uri: 7 }, "raw", { uri: "beta://b" }] }
    )
    assert.deepStrictEqual(
      S.mapPromptResult(built, "alpha", {
        description: "d",
        messages: [
          { role: "user", content: { type: "resource_link", uri: "file:///shared.txt" } },
          { role: "user", content: { type: "text", text: "hi" } },
          "raw"
        ]
      }),
      {
        description: "d",
        messages: [
          { role: "user", content: { type: "resource_link", uri: "clawtool://alpha/file:///shared.txt" } },
          { role: "user", content: { type: "text", text: "hi" } },
          "raw"
        ]
      }
    )
  })
})
