// Who reaches which view on the daemon (issue 26): the path names the view, the token must reach it.
import { assert, describe, it } from "@effect/vitest"
import { decide, mcpPath, type NamedToken } from "../../src/services/Daemon/Access.js"

const tokens: ReadonlyArray<NamedToken> = [
  { name: "http", value: "main-token", reaches: "every" },
  { name: "ci", value: "ci-token", reaches: new Set(["ro"]) },
  { name: "team", value: "team-token", reaches: new Set(["code", "default"]) }
]
const profiles = ["code", "ro"]
const as = (token: string | undefined, profile: string | undefined) =>
  decide({ tokens, authorization: token === undefined ? undefined : `Bearer ${token}`, profile, profiles })

describe("Daemon access", () => {
  it("paths: /mcp is the default view, /mcp/<name> a profile, anything else none", () => {
    assert.deepStrictEqual(mcpPath("/mcp"), { profile: undefined })
    assert.deepStrictEqual(mcpPath("/mcp/"), { profile: undefined })
    assert.deepStrictEqual(mcpPath("/mcp/code"), { profile: "code" })
    assert.isUndefined(mcpPath("/mcp/code/x"))
    assert.isUndefined(mcpPath("/mcpx"))
    assert.isUndefined(mcpPath("/metrics"))
  })

  it("[http] token reaches every view; a named token only its own, 403 elsewhere, /mcp only with default", () => {
    assert.deepStrictEqual(as("main-token", undefined), { ok: true, profile: undefined, token: "http" })
    assert.deepStrictEqual(as("main-token", "ro"), { ok: true, profile: "ro", token: "http" })
    assert.deepStrictEqual(as("ci-token", "ro"), { ok: true, profile: "ro", token: "ci" })
    assert.deepStrictEqual(as("ci-token", "code"), {
      ok: false,
      status: 403,
      message: `Forbidden: token "ci" does not reach /mcp/code`,
      token: "ci"
    })
    assert.deepStrictEqual(as("ci-token", undefined), {
      ok: false,
      status: 403,
      message: `Forbidden: token "ci" does not reach /mcp`,
      token: "ci"
    })
    assert.deepStrictEqual(as("team-token", undefined), { ok: true, profile: undefined, token: "team" })
  })

  it("no or a wrong token: 401 before anything is said of the profiles; an unknown profile: 404", () => {
    for (const token of [undefined, "nope", "ci-token-but-longer"]) {
      assert.deepStrictEqual(as(token, "missing"), {
        ok: false,
        status: 401,
        message: "Unauthorized: a valid Authorization: Bearer token is required"
      })
    }
    assert.deepStrictEqual(as("ci-token", "missing"), {
      ok: false,
      status: 404,
      message: `Not found: no profile "missing"; profiles: code, ro (and /mcp)`,
      token: "ci"
    })
  })

  it("no tokens configured (loopback): every view, no token name", () => {
    assert.deepStrictEqual(decide({ tokens: [], authorization: undefined, profile: "code", profiles }), {
      ok: true,
      profile: "code",
      token: undefined
    })
  })
})
