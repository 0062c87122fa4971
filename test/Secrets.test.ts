import { afterAll, assert, describe, it } from "@effect/vitest"
import { assertNone, assertSome } from "@effect/vitest/utils"
import { Effect, Layer, Logger, LogLevel, Option } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { ClawtoolConfig, SourceConfig } from "../src/domain/Config.js"
import type { ConfigError } from "../src/domain/Errors.js"
import { Config, ConfigLocation, type Env, parseConfig, ProcessEnv } from "../src/services/Config.js"
import {
  expand,
  lookupSecret,
  resolveSource,
  SecretStore,
  Secrets,
  loadSecrets as loadSecretsFile,
  makeSecrets
} from "../src/services/Secrets.js"

const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "clawtool-secrets-"))
afterAll(() => Fs.rmSync(root, { recursive: true, force: true }))

let dirs = 0
const tempDir = (): string => {
  const dir = Path.join(root, `case-${dirs++}`)
  Fs.mkdirSync(dir, { recursive: true })
  return dir
}

const write = (file: string, content: string, mode = 0o600) => {
  Fs.writeFileSync(file, content)
  Fs.chmodSync(file, mode) // writeFileSync's mode is filtered by the umask; set it exactly
}

const source = (command: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  SourceConfig.make({ command: command as [string, ...Array<string>], env })

const store = new SecretStore({
  scopes: {
    global: { TOKEN: "global-token", SHARED: "from-global", EMPTY_STORED: "" },
    gh: { TOKEN: "gh-token" }
  }
})

describe("lookupSecret / expand", () => {
  it("instance scope, then global, then the process env", () => {
    const env = { TOKEN: "env-token", SHARED: "env-shared", ONLY_ENV: "env-only" }
    assertSome(lookupSecret(store, env, "gh", "TOKEN"), "gh-token")
    assertSome(lookupSecret(store, env, "other", "TOKEN"), "global-token")
    assertSome(lookupSecret(store, env, "gh", "SHARED"), "from-global")
    assertSome(lookupSecret(store, env, "gh", "ONLY_ENV"), "env-only")
    assertNone(lookupSecret(store, env, "gh", "NOWHERE"))
  })

  it("an empty env var is missing; an empty stored secret is present (as in Go)", () => {
    assertNone(lookupSecret(store, { BLANK: "" }, "gh", "BLANK"))
    assertSome(lookupSecret(store, { EMPTY_STORED: "env" }, "gh", "EMPTY_STORED"), "")
  })

  it("only ${NAME} is a reference; unresolved ones become empty and are reported", () => {
    const lookup = (name: string) => (name === "A" ? Option.some("x") : Option.none())
    assert.deepStrictEqual(expand("pre-${A}-${A}-post", lookup), { value: "pre-x-x-post", missing: [] })
    assert.deepStrictEqual(expand("$A ${A:-d} ${1A} ${A", lookup), { value: "$A ${A:-d} ${1A} ${A", missing: [] })
    assert.deepStrictEqual(expand(" and ${B} and ${B}", lookup), { value: " and  and ", missing: ["B", "B"] })
    assert.deepStrictEqual(expand("literal", lookup), { value: "literal", missing: [] })
  })
})

describe("resolveSource", () => {
  it("expands argv elements and env values", () => {
    const resolved = resolveSource(
      store,
      { ROOT: "/data" },
      "gh",
      source(["npx", "-y", "server-filesystem", "${ROOT}", "--token=${TOKEN}"], {
        GITHUB_TOKEN: "${TOKEN}",
        LITERAL: "plain",
        MIXED: "Bearer ${TOKEN}"
      })
    )
    assert.deepStrictEqual(resolved, {
      command: ["npx", "-y", "server-filesystem", "/data", "--token=gh-token"],
      env: { GITHUB_TOKEN: "gh-token", LITERAL: "plain", MIXED: "Bearer gh-token" },
      headers: {},
      missing: []
    })
  })

  it("missing lists variable names (not env keys), sorted and de-duplicated", () => {
    const resolved = resolveSource(
      SecretStore.empty,
      { BLANK: "" },
      "fs",
      source(["run", "${ZETA}", "${ALPHA}"], { KEY_ONE: "${ZETA}", KEY_TWO: "${BLANK}-${ALPHA}", OK: "fine" })
    )
    assert.deepStrictEqual(resolved.missing, ["ALPHA", "BLANK", "ZETA"])
    assert.deepStrictEqual(resolved.command, ["run", "", ""])
    assert.deepStrictEqual(resolved.env, { KEY_ONE: "", KEY_TWO: "-", OK: "fine" })
  })

  it("expands a remote source's header values; a missing one is named", () => {
    const resolved = resolveSource(store, {}, "gh", {
      command: undefined,
      env: {},
      headers: { Authorization: "Bearer ${TOKEN}", "X-Other": "${NOPE}", Plain: "p" }
    })
    assert.deepStrictEqual(resolved.headers, { Authorization: "Bearer gh-token", "X-Other": "", Plain: "p" })
    assert.deepStrictEqual(resolved.command, [])
    assert.deepStrictEqual(resolved.missing, ["NOPE"])
  })
})

/** Real Config + Secrets over a config dir, with the given env and the warnings captured. */
const loadSecrets = (
  configDir: string,
  env: Env,
  flags: { readonly secrets?: string } = {}
): Effect.Effect<{ secrets: Secrets; warnings: ReadonlyArray<string> }, ConfigError> => {
  const warnings: Array<string> = []
  const capture = Logger.make(({ logLevel, message }) => {
    if (LogLevel.greaterThanEqual(logLevel, LogLevel.Warning)) warnings.push(String(message))
  })
  const layer = Secrets.Default.pipe(
    Layer.provide(Config.Default),
    Layer.provide(
      ConfigLocation.layer({
        config: Option.some(Path.join(configDir, "config.toml")),
        secrets: Option.fromNullable(flags.secrets)
      })
    )
  )
  return Secrets.pipe(
    Effect.map((secrets) => ({ secrets, warnings })),
    Effect.provide(layer),
    Effect.provide(Logger.add(capture)),
    Effect.provideService(ProcessEnv, env)
  )
}

const configText = [
  "[sources.gh]",
  `command = ["npx", "server-github"]`,
  `env = { GITHUB_TOKEN = "\${GITHUB_TOKEN}" }`,
  "",
  "[sources.fs]",
  `command = ["npx", "server-filesystem", "\${FS_ROOT}"]`,
  "enabled = false"
].join("\n")

describe("Secrets service", () => {
  it.effect("reads secrets.toml beside the config and resolves against it and the env", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      write(Path.join(dir, "config.toml"), configText)
      write(Path.join(dir, "secrets.toml"), `[scopes.gh]\nGITHUB_TOKEN = "ghp_stored"\n`)
      const { secrets, warnings } = yield* loadSecrets(dir, { FS_ROOT: "/data" })
      assertSome(secrets.file, Path.join(dir, "secrets.toml"))
      assert.deepStrictEqual(warnings, [])
      const config = yield* Effect.orDie(parseConfig(configText, "config.toml"))
      assert.deepStrictEqual(secrets.resolve("gh", config.sources["gh"]!), {
        command: ["npx", "server-github"],
        env: { GITHUB_TOKEN: "ghp_stored" },
        headers: {},
        missing: []
      })
      assert.deepStrictEqual(secrets.resolve("fs", config.sources["fs"]!).command, [
        "npx",
        "server-filesystem",
        "/data"
      ])
    })
  )

  it.effect("readiness reports ready/missing per instance without spawning", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      write(Path.join(dir, "config.toml"), configText)
      const { secrets } = yield* loadSecrets(dir, { FS_ROOT: "" })
      assert.deepStrictEqual(secrets.readiness(), [
        { instance: "fs", enabled: false, ready: false, missing: ["FS_ROOT"] },
        { instance: "gh", enabled: true, ready: false, missing: ["GITHUB_TOKEN"] }
      ])
    })
  )

  it.effect("--secrets replaces the file beside the config; a missing file is an empty store", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      write(Path.join(dir, "config.toml"), configText)
      write(Path.join(dir, "secrets.toml"), `[scopes.global]\nGITHUB_TOKEN = "beside"\n`)
      const other = Path.join(tempDir(), "other.toml")
      write(other, `[scopes.global]\nGITHUB_TOKEN = "flag"\n`)
      const fromFlag = yield* loadSecrets(dir, {}, { secrets: other })
      assertSome(fromFlag.secrets.lookup("gh", "GITHUB_TOKEN"), "flag")
      const missing = yield* loadSecrets(dir, {}, { secrets: Path.join(dir, "none.toml") })
      assert.deepStrictEqual(missing.secrets.store, SecretStore.empty)
    })
  )

  it.effect("warns when group or others can read the file, suggesting chmod 600", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      write(Path.join(dir, "config.toml"), configText)
      const file = Path.join(dir, "secrets.toml")
      write(file, `[scopes.global]\nGITHUB_TOKEN = "x"\n`, 0o644)
      const { warnings } = yield* loadSecrets(dir, {})
      assert.deepStrictEqual(warnings, [
        `secrets file ${file} can be read or changed by group or others (mode 644); run: chmod 600 ${file}`
      ])
    })
  )

  it.effect("bad TOML or a wrong shape is a ConfigError naming the secrets file", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      write(Path.join(dir, "config.toml"), configText)
      const file = Path.join(dir, "secrets.toml")
      write(file, `[scopes.gh]\nGITHUB_TOKEN = \n`)
      const syntax = yield* Effect.flip(loadSecrets(dir, {}))
      assert.strictEqual(syntax.message, `config ${file}:2:16: invalid TOML: invalid value`)
      write(file, `[scopes.gh]\nGITHUB_TOKEN = 42\n`)
      const shape = yield* Effect.flip(loadSecrets(dir, {}))
      assert.strictEqual(shape.message, `config ${file}:2 at scopes.gh.GITHUB_TOKEN: expected a string, got 42`)
      write(file, `[global]\nGITHUB_TOKEN = "x"\n`)
      const unknown = yield* Effect.flip(loadSecrets(dir, {}))
      assert.strictEqual(unknown.message, `config ${file}:1 at global: unknown key "global"; known keys are scopes`)
    })
  )

  it.effect("layerTest resolves from a fixed store and env", () =>
    Effect.gen(function* () {
      const secrets = yield* Secrets
      const config = ClawtoolConfig.make({ sources: { gh: source(["gh", "${A}"], { T: "${B}" }) } })
      assert.deepStrictEqual(secrets.resolve("gh", config.sources["gh"]!), {
        command: ["gh", "a"],
        env: { T: "b" },
        headers: {},
        missing: []
      })
    }).pipe(Effect.provide(Secrets.layerTest({ scopes: { gh: { A: "a" } }, env: { B: "b" } })))
  )
})

// Mutation-testing follow-ups (docs/mutation.md): Secrets lookups compared with assertSome/assertNone (an Option
// under deepStrictEqual compares equal to any other Option), the secrets file's shape errors and its mode warning.
let files = 0
const secretsFile = (content: string, mode = 0o600) => {
  const file = Path.join(root, `secrets-${files++}.toml`)
  Fs.writeFileSync(file, content)
  Fs.chmodSync(file, mode)
  return file
}

const sourceWith = (
  command: ReadonlyArray<string>,
  options: { env?: Record<string, string>; enabled?: boolean } = {}
) =>
  SourceConfig.make({
    command: command as [string, ...Array<string>],
    env: options.env ?? {},
    enabled: options.enabled
  })

const lookupStore = new SecretStore({
  scopes: { global: { TOKEN: "global", EMPTY: "" }, gh: { TOKEN: "gh" } }
})

/** loadSecrets with its warnings captured. */
const load = (file: string) => {
  const warnings: Array<string> = []
  const capture = Logger.make(({ logLevel, message }) => {
    if (LogLevel.greaterThanEqual(logLevel, LogLevel.Warning)) warnings.push(String(message))
  })
  return loadSecretsFile(file).pipe(
    Effect.map((loaded) => ({ loaded, warnings })),
    Effect.provide(Logger.replace(Logger.defaultLogger, capture))
  )
}

describe("lookupSecret", () => {
  it("instance scope, then global, then a non-empty env variable", () => {
    const env = { TOKEN: "env", ONLY_ENV: "env-only", BLANK: "" }
    assertSome(lookupSecret(lookupStore, env, "gh", "TOKEN"), "gh")
    assertSome(lookupSecret(lookupStore, env, "fs", "TOKEN"), "global")
    assertSome(lookupSecret(lookupStore, env, "gh", "ONLY_ENV"), "env-only")
    assertSome(lookupSecret(lookupStore, env, "gh", "EMPTY"), "")
    assertNone(lookupSecret(lookupStore, env, "gh", "BLANK"))
    assertNone(lookupSecret(lookupStore, env, "gh", "NOWHERE"))
  })
})

describe("makeSecrets", () => {
  it("readiness: every source sorted by instance, with enabled, ready and the missing names", () => {
    const secrets = makeSecrets(
      lookupStore,
      { ROOT: "/data" },
      {
        zeta: sourceWith(["z", "${ROOT}"]),
        alpha: sourceWith(["a"], { env: { KEY: "${NOPE}" }, enabled: false }),
        gh: sourceWith(["gh"], { env: { T: "${TOKEN}" } })
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
    }).pipe(Effect.provide(Secrets.layerTest({ sources: { gh: sourceWith(["gh", "${T}"]) } })))
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
