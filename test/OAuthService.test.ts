import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SourceError } from "../src/domain/Errors.js"
import { OAuthConfig } from "../src/domain/Config.js"
import { Config, ProcessEnv } from "../src/services/Config.js"
import { OAuth } from "../src/services/OAuth.js"
import { OAuthError } from "../src/services/OAuth/Errors.js"
import * as Store from "../src/services/OAuth/Store.js"
import { Redaction } from "../src/services/Redaction.js"
import { Secrets } from "../src/services/Secrets.js"
import { configFrom, tempDir } from "./lib/sources.js"

const toml = `
  [sources.linear]
  url = "https://mcp.example.com/mcp"
  oauth = { client_id = "abc", client_secret = "\${LINEAR_SECRET}" }
  [sources.notion]
  url = "https://user:pw@mcp.notion.example/mcp?key=1"
  oauth = true
  [sources.plain]
  url = "https://plain.example/mcp"
  [sources.local]
  command = ["node"]
`

/** The OAuth service over a fixed config, secrets and state directory. */
const oauthLayer = (dir: string, scopes: Record<string, Record<string, string>> = {}) => {
  const config = configFrom(toml)
  return OAuth.DefaultWithoutDependencies.pipe(
    Layer.provide(Redaction.DefaultWithoutDependencies),
    Layer.provide(Layer.merge(Config.layerTest(config), Secrets.layerTest({ scopes, sources: config.sources }))),
    Layer.provide(Layer.succeed(ProcessEnv, { CLAWTOOL_STATE_DIR: dir }))
  )
}

describe("OAuth service", () => {
  it.effect("RemoteAuth: no tokens → unauthenticated with the login command; a missing client_secret names it", () =>
    Effect.gen(function* () {
      const oauth = yield* OAuth
      const none = yield* Effect.flip(oauth.provider("notion", "https://mcp.notion.example/mcp", OAuthConfig.defaults))
      assert.instanceOf(none, SourceError)
      assert.strictEqual(none.reason, "Unauthenticated")
      assert.include(none.detail, "clawtool auth login notion")
      const secret = yield* Effect.flip(
        oauth.provider("linear", "https://mcp.example.com/mcp", new OAuthConfig({ client_secret: "${LINEAR_SECRET}" }))
      )
      assert.strictEqual(secret.reason, "Unauthenticated")
      assert.include(secret.detail, "${LINEAR_SECRET}")
    }).pipe(Effect.provide(oauthLayer(tempDir("clawtool-state-"))))
  )

  it.effect(
    "with stored tokens the provider is given; status shows them without the token, the URL without credentials",
    () =>
      Effect.gen(function* () {
        const dir = tempDir("clawtool-state-")
        yield* Effect.promise(() =>
          Store.updateGrant(
            dir,
            "notion",
            "https://user:pw@mcp.notion.example/mcp?key=1",
            "https://as.example/",
            () => ({
              tokens: {
                access_token: "SECRET-ACCESS",
                token_type: "bearer",
                expires_in: 60,
                refresh_token: "SECRET-RT"
              },
              obtainedAt: Date.now()
            })
          )
        )
        const oauth = yield* Effect.provide(OAuth, oauthLayer(dir, { linear: { LINEAR_SECRET: "s" } }))
        const provider = yield* oauth.provider(
          "notion",
          "https://user:pw@mcp.notion.example/mcp?key=1",
          OAuthConfig.defaults
        )
        assert.strictEqual((yield* Effect.promise(async () => provider.tokens()))?.access_token, "SECRET-ACCESS")
        const rows = yield* oauth.status
        assert.deepStrictEqual(
          rows.map((row) => [row.instance, row.url, row.loggedIn, row.issuer, row.refreshable]),
          [
            ["linear", "https://mcp.example.com/mcp", false, null, false],
            ["notion", "https://mcp.notion.example/mcp", true, "https://as.example/", true]
          ]
        )
        assert.notInclude(JSON.stringify(rows), "SECRET")
        const expiresAt = Date.parse(rows[1]!.expiresAt!)
        assert.isTrue(expiresAt > Date.now() && expiresAt <= Date.now() + 60_000)
      })
  )

  it.effect("login and logout refuse what is not an OAuth source, naming why", () =>
    Effect.gen(function* () {
      const oauth = yield* OAuth
      const local = yield* Effect.flip(oauth.logout("local"))
      assert.instanceOf(local, OAuthError)
      assert.strictEqual(local.reason, "NotRemote")
      const plain = yield* Effect.flip(oauth.logout("plain"))
      assert.strictEqual(plain.reason, "NoOAuth")
      assert.include(plain.detail, "oauth = true")
      const unknown = yield* Effect.flip(oauth.login("nope", () => undefined))
      assert.include(unknown.detail, "sources with oauth: linear, notion")
      const typo = yield* Effect.flip(oauth.logout("linaer"))
      assert.include(typo.detail, `no source named "linaer"; did you mean "linear"?`)
    }).pipe(Effect.provide(oauthLayer(tempDir("clawtool-state-"))))
  )
})
