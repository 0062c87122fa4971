// The Config service (src/services/Config.ts): the file found, read and loaded; its test layer.
import { afterAll, assert, describe, it } from "@effect/vitest"
import { assertNone, assertSome } from "@effect/vitest/utils"
import { Effect, Either, Layer, Option } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { ClawtoolConfig } from "../../src/domain/Config.js"
import { Config, ConfigLocation, type Env, errno, ProcessEnv, tomlDocument } from "../../src/services/Config.js"
import { fs } from "./lib.js"

const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "clawtool-config-"))
afterAll(() => Fs.rmSync(root, { recursive: true, force: true }))

let dirs = 0
/** A fresh directory holding the given files. */
const tempDir = (files: Record<string, string> = {}): string => {
  const dir = Path.join(root, `case-${dirs++}`)
  for (const [name, content] of Object.entries(files)) {
    Fs.mkdirSync(Path.dirname(Path.join(dir, name)), { recursive: true })
    Fs.writeFileSync(Path.join(dir, name), content)
  }
  Fs.mkdirSync(dir, { recursive: true })
  return dir
}

/** Builds the real Config service with the given flags and process env. */
const loadConfig = (env: Env, flags: { readonly config?: string; readonly secrets?: string } = {}) =>
  Config.pipe(
    Effect.provide(
      Config.Default.pipe(
        Layer.provide(
          ConfigLocation.layer({
            config: Option.fromNullable(flags.config),
            secrets: Option.fromNullable(flags.secrets)
          })
        )
      )
    ),
    Effect.provideService(ProcessEnv, env)
  )

describe("Config service", () => {
  it.effect("reads $XDG_CONFIG_HOME/clawtool/config.toml; secrets beside it", () =>
    Effect.gen(function* () {
      const xdg = tempDir({ "clawtool/config.toml": fs })
      const loaded = yield* loadConfig({ XDG_CONFIG_HOME: xdg, HOME: "/nonexistent" })
      assertSome(loaded.file, Path.join(xdg, "clawtool", "config.toml"))
      assertSome(loaded.secretsFile, Path.join(xdg, "clawtool", "secrets.toml"))
      assert.deepStrictEqual(Object.keys(loaded.config.sources), ["fs"])
      assert.strictEqual(loaded.format, "toml")
    })
  )

  it.effect("falls back to ~/.config/clawtool/config.toml", () =>
    Effect.gen(function* () {
      const home = tempDir({ ".config/clawtool/config.toml": fs })
      const loaded = yield* loadConfig({ HOME: home })
      assertSome(loaded.file, Path.join(home, ".config", "clawtool", "config.toml"))
    })
  )

  it.effect("a missing default file means no sources, with secrets beside the default path", () =>
    Effect.gen(function* () {
      const xdg = tempDir()
      const loaded = yield* loadConfig({ XDG_CONFIG_HOME: xdg })
      assertNone(loaded.file)
      assert.strictEqual(loaded.path, Path.join(xdg, "clawtool", "config.toml"))
      assert.deepStrictEqual(loaded.config.sources, {})
      assertSome(loaded.secretsFile, Path.join(xdg, "clawtool", "secrets.toml"))
    })
  )

  it.effect("--config beats $CLAWTOOL_CONFIG, which beats XDG", () =>
    Effect.gen(function* () {
      const flag = tempDir({ "flag.toml": `[sources.from-flag]\ncommand = ["a"]\n` })
      const env = tempDir({ "env.toml": `[sources.from-env]\ncommand = ["a"]\n` })
      const xdg = tempDir({ "clawtool/config.toml": `[sources.from-xdg]\ncommand = ["a"]\n` })
      const processEnv = { CLAWTOOL_CONFIG: Path.join(env, "env.toml"), XDG_CONFIG_HOME: xdg }
      const withFlag = yield* loadConfig(processEnv, { config: Path.join(flag, "flag.toml") })
      assert.deepStrictEqual(Object.keys(withFlag.config.sources), ["from-flag"])
      const withEnv = yield* loadConfig(processEnv)
      assert.deepStrictEqual(Object.keys(withEnv.config.sources), ["from-env"])
      assertSome(withEnv.secretsFile, Path.join(env, "secrets.toml"))
      const withXdg = yield* loadConfig({ XDG_CONFIG_HOME: xdg })
      assert.deepStrictEqual(Object.keys(withXdg.config.sources), ["from-xdg"])
    })
  )

  it.effect("a missing --config or $CLAWTOOL_CONFIG file is NotFound", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const missing = Path.join(dir, "nope.toml")
      const fromFlag = yield* Effect.flip(loadConfig({ XDG_CONFIG_HOME: dir }, { config: missing }))
      assert.strictEqual(fromFlag.reason, "NotFound")
      assert.strictEqual(fromFlag.message, `config ${missing}: no such file (given by --config)`)
      const fromEnv = yield* Effect.flip(loadConfig({ CLAWTOOL_CONFIG: missing }))
      assert.strictEqual(fromEnv.message, `config ${missing}: no such file (given by $CLAWTOOL_CONFIG)`)
    })
  )

  it.effect("a directory in place of the file is Unreadable", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const error = yield* Effect.flip(loadConfig({}, { config: dir }))
      assert.strictEqual(error.reason, "Unreadable")
      assert.strictEqual(error.message, `config ${dir}: cannot read the file (EISDIR)`)
    })
  )

  it.effect("a bad file fails the whole load with one ConfigError naming the file", () =>
    Effect.gen(function* () {
      const dir = tempDir({ "config.toml": `${fs}\n[sources.bad]\ncommand = ["a"]\nstartup_timeout = "soon"\n` })
      const file = Path.join(dir, "config.toml")
      const error = yield* Effect.flip(loadConfig({}, { config: file }))
      assert.strictEqual(
        error.message,
        `config ${file}:6 at sources.bad.startup_timeout: expected a duration like "500ms", "60s", "2m" or "1h", got "soon"`
      )
    })
  )

  it.effect("reads a .json config; --secrets overrides the secrets path", () =>
    Effect.gen(function* () {
      const dir = tempDir({ "mcp.json": JSON.stringify({ mcpServers: { memory: { command: "npx", args: ["m"] } } }) })
      const loaded = yield* loadConfig({}, { config: Path.join(dir, "mcp.json"), secrets: "/elsewhere/s.toml" })
      assert.strictEqual(loaded.format, "json")
      assert.deepStrictEqual(loaded.config.sources["memory"]!.command, ["npx", "m"])
      assertSome(loaded.secretsFile, "/elsewhere/s.toml")
    })
  )
})

describe("Config helpers", () => {
  it("errno reads only a string code of an object", () => {
    assert.strictEqual(errno({ code: "ENOENT" }), "ENOENT")
    assert.strictEqual(errno({ code: 2 }), undefined)
    assert.strictEqual(errno({}), undefined)
    assert.strictEqual(errno(null), undefined)
    assert.strictEqual(errno("ENOENT"), undefined)
  })

  it("tomlDocument keeps only the parser's reason", () => {
    const result = tomlDocument("a = ", "/x/s.toml")
    assert.isTrue(Either.isLeft(result))
    if (Either.isLeft(result)) assert.strictEqual(result.left.detail, "invalid TOML: invalid value")
  })

  it.effect("layerTest without a file stands for config.toml", () =>
    Effect.gen(function* () {
      const config = yield* Config
      assert.strictEqual(config.path, "config.toml")
      assert.strictEqual(config.format, "toml")
      assert.isTrue(Option.isNone(config.file))
    }).pipe(Effect.provide(Config.layerTest(ClawtoolConfig.empty)))
  )

  it.effect("layerTest with a JSON file reads as JSON", () =>
    Effect.gen(function* () {
      const config = yield* Config
      assert.strictEqual(config.path, "/x/c.json")
      assert.strictEqual(config.format, "json")
    }).pipe(Effect.provide(Config.layerTest(ClawtoolConfig.empty, { file: "/x/c.json" })))
  )
})
