// The daemon's tokens across a reload (issue 26, ADR 031): what changed, by name, and which open sessions may go on.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Option } from "effect"
import { assertLeft } from "@effect/vitest/utils"
import { ConfigError } from "../../src/domain/Errors.js"
import type { NamedToken } from "../../src/services/Daemon/Access.js"
import { changes, resolve, stillAllowed } from "../../src/services/Daemon/Tokens.js"
import { configFrom } from "../lib/sources.js"

const main: NamedToken = { name: "http", value: "main-token", reaches: "every" }
const ci: NamedToken = { name: "ci", value: "ci-token", reaches: new Set(["ro"]) }
const team: NamedToken = { name: "team", value: "team-token", reaches: new Set(["code", "default"]) }

describe("Daemon tokens", () => {
  it("changes: added, removed and changed (value or views) by name, never by value", () => {
    const after: ReadonlyArray<NamedToken> = [
      main,
      { ...ci, reaches: new Set(["ro", "code"]) },
      { name: "new", value: "n", reaches: new Set(["ro"]) }
    ]
    assert.deepStrictEqual(changes([main, ci, team], after), { added: ["new"], removed: ["team"], changed: ["ci"] })
    assert.deepStrictEqual(changes([main, ci], [{ ...main, value: "other" }, ci]), {
      added: [],
      removed: [],
      changed: ["http"]
    })
    assert.deepStrictEqual(changes([main, ci], [main, ci]), { added: [], removed: [], changed: [] })
  })

  it("stillAllowed: a session goes on while its profile exists and its token is there, the same, reaching its view", () => {
    const profiles = ["code", "ro"]
    assert.isTrue(stillAllowed({ profile: "code", token: team }, [main, team], profiles))
    assert.isTrue(stillAllowed({ profile: undefined, token: team }, [main, team], profiles))
    assert.isFalse(stillAllowed({ profile: "code", token: team }, [main], profiles), "removed")
    assert.isFalse(stillAllowed({ profile: "code", token: team }, [{ ...team, value: "x" }], profiles), "new value")
    assert.isFalse(
      stillAllowed({ profile: "code", token: team }, [{ ...team, reaches: new Set(["default"]) }], profiles),
      "no longer reaches code"
    )
    assert.isFalse(stillAllowed({ profile: "gone", token: main }, [main], profiles), "profile removed")
    // No tokens asked for: every session with a profile that exists goes on; tokens now asked: a session without one ends.
    assert.isTrue(stillAllowed({ profile: "ro", token: undefined }, [], profiles))
    assert.isFalse(stillAllowed({ profile: "ro", token: undefined }, [ci], profiles))
  })

  it("resolve: two tokens with one value are refused, naming the second's key", () => {
    const { http } = configFrom(`
      [profiles.ro]
      [profiles.code]
      [http.tokens.a]
      token = "same"
      profiles = ["ro"]
      [http.tokens.b]
      token = "same"
      profiles = ["code"]
    `)
    const result = Effect.runSync(
      Effect.either(
        resolve(
          http,
          () => Option.none(),
          (keyPath, detail) => new ConfigError({ reason: "Invalid", file: "x", keyPath, detail })
        )
      )
    )
    assert.isTrue(Either.isLeft(result))
    assertLeft(
      Either.mapLeft(result, (error) => error.keyPath),
      "http.tokens.b.token"
    )
  })
})
