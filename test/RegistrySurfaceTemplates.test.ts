import { assert, describe, it } from "@effect/vitest"
import { assertLeft, assertRight } from "@effect/vitest/utils"
import { Either } from "effect"
import type { InstanceSurface, ResourceTemplate } from "../src/domain/Surface.js"
import { RpcError } from "../src/domain/Surface.js"
import * as S from "../src/services/Registry/Surface.js"

/**
 * Routing a URI that several instances' resource templates match (README, "The URI scheme", step 3): refused with
 * -32602 naming every qualified form, whatever the instances' order; never silently given to one of them.
 */

const withResources = { resources: {} }

const instance = (
  name: string,
  resourceTemplates: ReadonlyArray<ResourceTemplate>,
  resources: InstanceSurface["resources"] = []
): S.SurfaceInput => ({
  instance: name,
  capabilities: withResources,
  surface: { tools: [], resources, resourceTemplates, prompts: [] }
})

const alpha = instance("alpha", [{ uriTemplate: "file:///{+path}", name: "any-file" }])
const beta = instance("beta", [{ uriTemplate: "file:///data/{name}", name: "data-file" }])

const refusal = (uri: string, instances: ReadonlyArray<string>) =>
  new RpcError({
    reason: "InvalidParams",
    code: -32602,
    detail: `${JSON.stringify(uri)} is served by ${instances.join(" and ")}; use ${instances
      .map((name) => `clawtool://${name}/${uri}`)
      .join(" or ")}`
  })

describe("Registry surface: a URI that two instances' templates match", () => {
  it("is refused with -32602 naming both qualified forms, in either instance order", () => {
    const uri = "file:///data/x.txt"
    assertLeft(S.routeUri(S.build([alpha, beta]), uri), refusal(uri, ["alpha", "beta"]))
    assertLeft(S.routeUri(S.build([beta, alpha]), uri), refusal(uri, ["beta", "alpha"]))
  })

  it("a URI only one of them matches routes to that one; the qualified forms route to the instance they name", () => {
    for (const surface of [S.build([alpha, beta]), S.build([beta, alpha])]) {
      assertRight(S.routeUri(surface, "file:///other/y.txt"), { instance: "alpha", uri: "file:///other/y.txt" })
      assertRight(S.routeUri(surface, "clawtool://beta/file:///data/x.txt"), {
        instance: "beta",
        uri: "file:///data/x.txt"
      })
      assertRight(S.routeUri(surface, "clawtool://alpha/file:///data/x.txt"), {
        instance: "alpha",
        uri: "file:///data/x.txt"
      })
    }
  })

  it("two templates of the same instance matching one URI are not ambiguous", () => {
    const both = instance("solo", [
      { uriTemplate: "file:///{+path}", name: "any-file" },
      { uriTemplate: "file:///data/{name}", name: "data-file" }
    ])
    const other = instance("other", [{ uriTemplate: "other://{id}", name: "other" }])
    assertRight(S.routeUri(S.build([both, other]), "file:///data/x.txt"), {
      instance: "solo",
      uri: "file:///data/x.txt"
    })
  })

  it("a URI one instance lists exactly wins over another instance's matching template (step 2 before 3)", () => {
    const lister = instance("lister", [], [{ uri: "file:///data/x.txt", name: "x" }])
    assertRight(S.routeUri(S.build([alpha, lister]), "file:///data/x.txt"), {
      instance: "lister",
      uri: "file:///data/x.txt"
    })
    // ...but not over a second lister: that is the listed-URI refusal.
    const twin = instance("twin", [], [{ uri: "file:///data/x.txt", name: "x" }])
    assertLeft(
      S.routeUri(S.build([lister, twin, alpha]), "file:///data/x.txt"),
      refusal("file:///data/x.txt", ["lister", "twin"])
    )
  })

  it("the same template string on two instances: listed qualified, the bare URI refused, subscriptions too", () => {
    const one = instance("one", [{ uriTemplate: "notes://{id}", name: "note" }])
    const two = instance("two", [{ uriTemplate: "notes://{id}", name: "note" }])
    const surface = S.build([one, two])
    assert.deepStrictEqual(
      surface.resourceTemplates.map((t) => t.uriTemplate),
      ["clawtool://one/notes://{id}", "clawtool://two/notes://{id}"]
    )
    assertLeft(S.routeUri(surface, "notes://7"), refusal("notes://7", ["one", "two"]))
    assertRight(S.routeUri(surface, "clawtool://two/notes://7"), { instance: "two", uri: "notes://7" })
    // completion/complete ref/resource names the template string itself: refused the same way.
    assertLeft(S.routeTemplate(surface, "notes://{id}"), refusal("notes://{id}", ["one", "two"]))
  })

  it("with no template matching, two resource servers refuse with -32002 instead of picking one", () => {
    const result = S.routeUri(S.build([alpha, beta]), "https://example.com/")
    assert.isTrue(Either.isLeft(result))
    assert.strictEqual(Either.flip(result).pipe(Either.getOrThrow).code, -32002)
  })
})
