// The Config service (src/services/Config.ts): the file found, read and loaded; its test layer.
import { afterAll, assert, describe, it } from "@effect/vitest"
import { assertNone, assertSome } from "@effect/vitest/utils"
import { Effect, Either, Layer, Logger, LogLevel, Option } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { ClawtoolConfig } from "../../src/domain/Config.js"
import { configChainVariable } from "../../src/domain/Environment.js"
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

describe("Config service: reread, the live value, the test layer", () => {
  it.effect("reread reads the file again as it is now; a file removed since is NotFound, not an empty config", () =>
    Effect.gen(function* () {
      const dir = tempDir({ "config.toml": fs })
      const file = Path.join(dir, "config.toml")
      const loaded = yield* loadConfig({}, { config: file })
      Fs.writeFileSync(file, `[sources.other]\ncommand = ["b"]\n`)
      const again = yield* loaded.reread
      assert.deepStrictEqual(Object.keys(again.config.sources), ["other"])
      assert.strictEqual(again.skipped.length, 0)
      Fs.rmSync(file)
      const error = yield* Effect.flip(loaded.reread)
      assert.strictEqual(error.reason, "NotFound")
      assert.strictEqual(error.message, `config ${file}: no such file (it was removed or renamed)`)
    })
  )

  it.effect("live starts at the loaded config and takes what set gives it", () =>
    Effect.gen(function* () {
      const dir = tempDir({ "config.toml": fs })
      const loaded = yield* loadConfig({}, { config: Path.join(dir, "config.toml") })
      assert.strictEqual(loaded.live.get(), loaded.config)
      yield* loaded.live.set(ClawtoolConfig.empty)
      assert.strictEqual(loaded.live.get(), ClawtoolConfig.empty)
    })
  )

  it.effect("layerTest: the given config and file, its format, no chain, nothing skipped, reread gives it back", () =>
    Effect.gen(function* () {
      const config = ClawtoolConfig.empty
      const loaded = yield* Effect.provide(
        Config,
        Config.layerTest(config, { file: "/x/mcp.json", secretsFile: "/x/s.toml" })
      )
      assertSome(loaded.file, "/x/mcp.json")
      assertSome(loaded.secretsFile, "/x/s.toml")
      assert.strictEqual(loaded.path, "/x/mcp.json")
      assert.strictEqual(loaded.format, "json")
      assert.strictEqual(loaded.chain.files.length, 0)
      assertNone(loaded.chain.repeated)
      assert.strictEqual(loaded.skipped.length, 0)
      assert.strictEqual(loaded.live.get(), config)
      const again = yield* loaded.reread
      assert.strictEqual(again.config, config)
      assert.strictEqual(again.skipped.length, 0)
      const bare = yield* Effect.provide(Config, Config.layerTest(config))
      assertNone(bare.file)
      assert.strictEqual(bare.path, "config.toml")
      assert.strictEqual(bare.format, "toml")
    })
  )

  it.effect("relative command parts and cwd resolve from the config's folder; others, and remote sources, stay", () =>
    Effect.gen(function* () {
      const dir = tempDir({
        "config.toml": [
          "[sources.local]",
          `command = ["./bin/server", "lib/./x.js", "../up.js", "node"]`,
          `cwd = "./work"`,
          "",
          "[sources.far]",
          `url = "https://example.com/mcp"`,
          ""
        ].join("\n")
      })
      const loaded = yield* loadConfig({}, { config: Path.join(dir, "config.toml") })
      const local = loaded.config.sources["local"]!
      assert.deepStrictEqual(local.command, [
        Path.join(dir, "bin", "server"),
        "lib/./x.js",
        Path.resolve(dir, "..", "up.js"),
        "node"
      ])
      assert.strictEqual(local.cwd, Path.join(dir, "work"))
      assert.strictEqual(loaded.config.sources["far"]!.url, "https://example.com/mcp")
      assert.strictEqual(loaded.config.sources["far"]!.command, undefined)
    })
  )
})

describe("Config service: what it logs", () => {
  /** The load's log lines (debug included), as "LEVEL message". */
  const logged = <A, E>(effect: Effect.Effect<A, E>) =>
    Effect.gen(function* () {
      const lines: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) =>
        lines.push(`${logLevel.label} ${Array.isArray(message) ? message.join(" ") : String(message)}`)
      )
      const result = yield* effect.pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
        Logger.withMinimumLogLevel(LogLevel.Debug)
      )
      return { result, lines }
    })

  it.effect("says at debug level which file it read and how many sources, or that there was none", () =>
    Effect.gen(function* () {
      const dir = tempDir({ "config.toml": fs })
      const file = Path.join(dir, "config.toml")
      const read = yield* logged(loadConfig({}, { config: file }))
      assert.include(read.lines, `DEBUG config ${file}: 1 source(s)`)
      const empty = tempDir()
      const none = yield* logged(loadConfig({ XDG_CONFIG_HOME: empty }))
      assert.include(
        none.lines,
        `DEBUG no config at ${Path.join(empty, "clawtool", "config.toml")}; starting with no sources`
      )
      assert.strictEqual(none.result.skipped.length, 0)
    })
  )

  it.effect(
    "a config already served above warns once and keeps its other settings, with no source and nothing skipped",
    () =>
      Effect.gen(function* () {
        const dir = tempDir({ "config.toml": `name_budget = 40\n\n${fs}` })
        const file = Fs.realpathSync(Path.join(dir, "config.toml"))
        const { result, lines } = yield* logged(
          loadConfig({ [configChainVariable]: JSON.stringify([file]) }, { config: file })
        )
        assert.deepStrictEqual(
          lines.filter((line) => line.startsWith("WARN")),
          [
            `WARN config ${file} is already served by a clawtool above this one (${configChainVariable}): starting none of its sources`
          ]
        )
        assert.strictEqual(Object.keys(result.config.sources).length, 0)
        assert.strictEqual(result.config.name_budget, 40)
        assert.strictEqual(result.skipped.length, 0)
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
