// Mutation-testing follow-ups (docs/mutation.md): Secrets lookups compared with assertSome/assertNone (an Option
// under deepStrictEqual compares equal to any other Option), the secrets file's shape errors and its mode warning.
import { afterAll, assert, describe, it } from "@effect/vitest"
import { assertNone, assertSome } from "@effect/vitest/utils"
import { Effect, Logger, LogLevel } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { SourceConfig } from "../../src/domain/Config.js"
import { loadSecrets, lookupSecret, makeSecrets, SecretStore, Secrets } from "../../src/services/Secrets.js"

const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "clawtool-mutants-secrets-"))
afterAll(() => Fs.rmSync(root, { recursive: true, force: true }))
let files = 0
const secretsFile = (content: string, mode = 0o600) => {
  const file = Path.join(root, `secrets-${files++}.toml`)
  Fs.writeFileSync(file, content)
  Fs.chmodSync(file, mode)
  return file
}

const source = (command: ReadonlyArray<string>, options: { env?: Record<string, string>; enabled?: boolean } = {}) =>
  SourceConfig.make({
    command: command as [string, ...Array<string>],
    env: options.env ?? {},
    enabled: options.enabled
  })

const store = new SecretStore({
  scopes: { global: { TOKEN: "global", EMPTY: "" }, gh: { TOKEN: "gh" } }
})

/** loadSecrets with its warnings captured. */
const load = (file: string) => {
  const warnings: Array<string> = []
  const capture = Logger.make(({ logLevel, message }) => {
    if (LogLevel.greaterThanEqual(logLevel, LogLevel.Warning)) warnings.push(String(message))
  })
  return loadSecrets(file).pipe(
    Effect.map((loaded) => ({ loaded, warnings })),
    Effect.provide(Logger.replace(Logger.defaultLogger, capture))
  )
}

describe("lookupSecret", () => {
  it("instance scope, then global, then a non-empty env variable", () => {
    const env = { TOKEN: "env", ONLY_ENV: "env-only", BLANK: "" }
    assertSome(lookupSecret(store, env, "gh", "TOKEN"), "gh")
    assertSome(lookupSecret(store, env, "fs", "TOKEN"), "global")
    assertSome(lookupSecret(store, env, "gh", "ONLY_ENV"), "env-only")
    assertSome(lookupSecret(store, env, "gh", "EMPTY"), "")
    assertNone(lookupSecret(store, env, "gh", "BLANK"))
    assertNone(lookupSecret(store, env, "gh", "NOWHERE"))
  })
})

describe("makeSecrets", () => {
  it("readiness: every source sorted by instance, with enabled, ready and the missing names", () => {
    const secrets = makeSecrets(
      store,
      { ROOT: "/data" },
      {
        zeta: source(["z", "${ROOT}"]),
        alpha: source(["a"], { env: { KEY: "${NOPE}" }, enabled: false }),
        gh: source(["gh"], { env: { T: "${TOKEN}" } })
      }
    )
    assert.deepStrictEqual(secrets.readiness(), [
      { instance: "alpha", enabled: false, ready: false, missing: ["NOPE"] },
      { instance: "gh", enabled: true, ready: true, missing: [] },
      { instance: "zeta", enabled: true, ready: true, missing: [] }
    ])
    assertSome(secrets.lookup("gh", "TOKEN"), "gh")
    assertNone(secrets.lookup("gh", "NOPE"))
    assertNone(secrets.file)
  })
})

describe("Secrets.layerTest", () => {
  it.effect("serves readiness over the sources it was given", () =>
    Effect.gen(function* () {
      const secrets = yield* Secrets
      assert.deepStrictEqual(secrets.readiness(), [{ instance: "gh", enabled: true, ready: false, missing: ["T"] }])
    }).pipe(Effect.provide(Secrets.layerTest({ sources: { gh: source(["gh", "${T}"]) } })))
  )
})

describe("loadSecrets", () => {
  it.effect("a missing file is an empty store", () =>
    Effect.gen(function* () {
      const { loaded } = yield* load(Path.join(root, "absent.toml"))
      assert.deepStrictEqual(loaded.scopes, {})
    })
  )

  it.effect("a file only its owner can read loads without a warning; a group-readable one warns with its mode", () =>
    Effect.gen(function* () {
      const quiet = yield* load(secretsFile(`[scopes.gh]\nTOKEN = "x"\n`))
      assert.deepStrictEqual(quiet.loaded.scopes, { gh: { TOKEN: "x" } })
      assert.deepStrictEqual(quiet.warnings, [])
      const file = secretsFile(`[scopes.gh]\nTOKEN = "x"\n`, 0o640)
      const loud = yield* load(file)
      assert.deepStrictEqual(loud.warnings, [
        `secrets file ${file} can be read or changed by group or others (mode 640); run: chmod 600 ${file}`
      ])
    })
  )

  it.effect("shape errors say what a scope and a scope table look like", () =>
    Effect.gen(function* () {
      const scopes = secretsFile(`scopes = 1\n`)
      const notTable = yield* Effect.flip(load(scopes))
      assert.include(notTable.message, `at scopes: expected a table of scopes, like [scopes.global]`)
      const scope = secretsFile(`scopes = { gh = 1 }\n`)
      const notStrings = yield* Effect.flip(load(scope))
      assert.include(notStrings.message, `at scopes.gh: expected a table of KEY = "value" strings, like [scopes.gh]`)
    })
  )
})
