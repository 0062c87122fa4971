import { assert, describe, it } from "@effect/vitest"
import { assertSome } from "@effect/vitest/utils"
import { Either, Option } from "effect"
import type { InstanceSurface } from "../src/domain/Surface.js"
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
