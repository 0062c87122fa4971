// src/services/Redaction.ts: which secrets a config makes known (issue 25), and OAuth tokens learned while serving
// (a refreshed token replaces the one before it under the same name).
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { Config } from "../../src/services/Config.js"
import { knownSecrets, Redaction } from "../../src/services/Redaction.js"
import { makeSecrets, Secrets, SecretStore } from "../../src/services/Secrets.js"
import { configFrom } from "../lib/sources.js"

const toml = `
  [http]
  token = "\${DAEMON_TOKEN}"

  [sources.github]
  command = ["node", "\${HOME}/server.js"]
  env = { GITHUB_TOKEN = "\${GH_PAT}", HOME = "\${HOME}", MODE = "production-mode" }

  [sources.linear]
  url = "https://linear.example/mcp"
  headers = { Authorization = "Bearer \${LINEAR_KEY}", Accept = "application/json" }
  oauth = { client_id = "clawtool", client_secret = "\${LINEAR_CLIENT_SECRET}" }
`

const scopes = { global: { DAEMON_TOKEN: "daemon-token-123" }, github: { UNUSED_BUT_STORED: "stored-value-1" } }
const env = {
  GH_PAT: "ghp_from_the_env_123",
  HOME: "/home/someone",
  LINEAR_KEY: "lin_key_0123456",
  LINEAR_CLIENT_SECRET: "client-secret-9"
}

describe("Redaction", () => {
  it("knows every secrets.toml value and what ${VAR}s resolve to in env, headers, client_secret and [http] token", () => {
    const config = configFrom(toml)
    const secrets = makeSecrets(new SecretStore({ scopes }), env, config.sources)
    const known = knownSecrets(config, secrets.store, secrets.lookup)
    const byName = new Map(known.map(({ name, value }) => [name, value]))
    assert.deepStrictEqual(Object.fromEntries(byName), {
      DAEMON_TOKEN: "daemon-token-123",
      UNUSED_BUT_STORED: "stored-value-1",
      GH_PAT: "ghp_from_the_env_123",
      LINEAR_KEY: "lin_key_0123456",
      LINEAR_CLIENT_SECRET: "client-secret-9"
    })
    // Literal values and well-known non-secret variables (${HOME}) are not secrets.
    assert.isFalse(known.some(({ value }) => value === "/home/someone" || value === "production-mode"))
    assert.isFalse(byName.has("HOME"))
  })

  it("a literal [http] token is known as HTTP_TOKEN", () => {
    const config = configFrom(`[http]\ntoken = "literal-daemon-token"`)
    assert.deepStrictEqual(
      knownSecrets(config, SecretStore.empty, () => Option.none()),
      [{ name: "HTTP_TOKEN", value: "literal-daemon-token" }]
    )
  })

  const layer = (trust = "") => {
    const config = configFrom(`${trust}\n${toml}`)
    return Redaction.DefaultWithoutDependencies.pipe(
      Layer.provide(Layer.merge(Config.layerTest(config), Secrets.layerTest({ scopes, env, sources: config.sources })))
    )
  }

  it.effect("learns OAuth tokens as they come, a refreshed one replacing the old", () =>
    Effect.gen(function* () {
      const redaction = yield* Redaction
      assert.strictEqual(redaction.current().text("x ghp_from_the_env_123"), "x [REDACTED:GH_PAT]")
      redaction.learnTokens("my-remote", { access_token: "access-token-1", refresh_token: "refresh-token-1" })
      assert.strictEqual(
        redaction.current().text("access-token-1 refresh-token-1"),
        "[REDACTED:OAUTH_MY_REMOTE_ACCESS] [REDACTED:OAUTH_MY_REMOTE_REFRESH]"
      )
      redaction.learnTokens("my-remote", { access_token: "access-token-2" })
      assert.strictEqual(
        redaction.current().text("access-token-2 refresh-token-1"),
        "[REDACTED:OAUTH_MY_REMOTE_ACCESS] [REDACTED:OAUTH_MY_REMOTE_REFRESH]"
      )
    }).pipe(Effect.provide(layer()))
  )

  it.effect("a reload's config and secrets replace the secrets known before; learned tokens stay", () =>
    Effect.gen(function* () {
      const redaction = yield* Redaction
      redaction.learnTokens("my-remote", { access_token: "access-token-1" })
      const next = configFrom(`[sources.github]\ncommand = ["node"]\nenv = { GITHUB_TOKEN = "\${NEW_PAT}" }`)
      const secrets = makeSecrets(new SecretStore({ scopes: {} }), { NEW_PAT: "ghp_the_new_one_456" }, next.sources)
      yield* redaction.reconfigure(next, secrets.store, secrets.lookup)
      assert.strictEqual(
        redaction.current().text("ghp_the_new_one_456 ghp_from_the_env_123 access-token-1"),
        "[REDACTED:NEW_PAT] ghp_from_the_env_123 [REDACTED:OAUTH_MY_REMOTE_ACCESS]"
      )
    }).pipe(Effect.provide(layer()))
  )

  it.effect("redact_secrets = false: nothing is redacted, nothing learned", () =>
    Effect.gen(function* () {
      const redaction = yield* Redaction
      redaction.learnTokens("my-remote", { access_token: "access-token-1" })
      assert.isFalse(redaction.current().active)
      assert.strictEqual(
        redaction.current().text("ghp_from_the_env_123 access-token-1"),
        "ghp_from_the_env_123 access-token-1"
      )
    }).pipe(Effect.provide(layer("[trust]\nredact_secrets = false")))
  )
})
