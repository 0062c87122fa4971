// Start-up safety (issue 10, ADR 013): the config chain marker and relative paths, without processes. The real
// processes are in test/e2e/startsafe.test.ts.
import { assert, describe, it } from "@effect/vitest"
import { assertNone, assertSome } from "@effect/vitest/utils"
import { Effect, Layer, Option } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import {
  configChainVariable,
  parseConfigChain,
  recursionErrorCode,
  recursionRefusal,
  repeatedConfigOf,
  withConfigChain
} from "../../src/domain/Environment.js"
import { Config, ConfigLocation, type Env, ProcessEnv } from "../../src/services/Config.js"
import * as Temp from "../lib/temp.js"

const tempDir = () => Temp.tempDir("clawtool-chain-")

const loadConfig = (file: string, env: Env = {}) =>
  Config.pipe(
    Effect.provide(Config.Default.pipe(Layer.provide(ConfigLocation.layer({ config: Option.some(file) })))),
    Effect.provideService(ProcessEnv, env)
  )

describe("the config chain marker", () => {
  it("is a JSON array of paths; unset, empty or garbled is an empty chain", () => {
    assert.deepStrictEqual(parseConfigChain(undefined), [])
    assert.deepStrictEqual(parseConfigChain(""), [])
    assert.deepStrictEqual(parseConfigChain("/a.toml:/b.toml"), [])
    assert.deepStrictEqual(parseConfigChain(`{"a":1}`), [])
    assert.deepStrictEqual(parseConfigChain(`["/a:b.toml", 3, "/c.json"]`), ["/a:b.toml", "/c.json"])
  })

  it("is set last in a child's environment (no config env can drop it), and not at all for an empty chain", () => {
    const env = { PATH: "/bin", [configChainVariable]: "[]" }
    assert.strictEqual(withConfigChain(env, []), env)
    const marked = withConfigChain(env, ["/a.toml", "/b.json"])
    assert.deepStrictEqual(parseConfigChain(marked[configChainVariable]), ["/a.toml", "/b.json"])
    assert.strictEqual(marked.PATH, "/bin")
  })

  it("a nested clawtool's refusal is recognised by its code and a path of this chain, never by its text", () => {
    const refusal = recursionRefusal("/a.toml")
    assert.strictEqual(refusal.code, recursionErrorCode)
    assertSome(repeatedConfigOf(refusal.code, refusal.data, ["/a.toml"]), "/a.toml")
    assertNone(repeatedConfigOf(refusal.code, refusal.data, ["/other.toml"]))
    assertNone(repeatedConfigOf(-32603, refusal.data, ["/a.toml"]))
    assertNone(repeatedConfigOf(refusal.code, undefined, ["/a.toml"]))
    assertNone(repeatedConfigOf(refusal.code, { configPath: 3 }, ["/a.toml"]))
  })
})

describe("Config's place in the chain", () => {
  it.effect("first in a chain: its real path is appended for the children, its sources are kept", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const file = Path.join(dir, "config.toml")
      Fs.writeFileSync(file, `[sources.fs]\ncommand = ["srv"]\n`)
      const loaded = yield* loadConfig(file, { [configChainVariable]: JSON.stringify(["/above.toml"]) })
      assert.deepStrictEqual(loaded.chain.files, ["/above.toml", file])
      assertNone(loaded.chain.repeated)
      assert.deepStrictEqual(Object.keys(loaded.config.sources), ["fs"])
    })
  )

  it.effect("already in the chain (through a symlink too): repeated, and no source is started", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const file = Path.join(dir, "config.toml")
      Fs.writeFileSync(file, `[sources.fs]\ncommand = ["srv"]\n`)
      const link = Path.join(dir, "link.toml")
      Fs.symlinkSync(file, link)
      const loaded = yield* loadConfig(link, { [configChainVariable]: JSON.stringify([file, "/below.toml"]) })
      assertSome(loaded.chain.repeated, file)
      assert.deepStrictEqual(loaded.chain.files, [file, "/below.toml"])
      assert.deepStrictEqual(Object.keys(loaded.config.sources), [])
    })
  )
})

describe("relative paths in a config", () => {
  it.effect("TOML: ./ and ../ command elements and a relative cwd resolve against the file's folder", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const file = Path.join(dir, "config.toml")
      Fs.writeFileSync(
        file,
        [
          `[sources.rel]`,
          `command = ["./bin/srv", "--root", "../data", "plain.js", "/abs/x", ".hidden", "."]`,
          `cwd = "work"`,
          `[sources.abs]`,
          `command = ["node"]`,
          `cwd = "/srv"`,
          `[sources.none]`,
          `command = ["node"]`
        ].join("\n")
      )
      const { sources } = (yield* loadConfig(file)).config
      assert.deepStrictEqual(sources["rel"]!.command, [
        Path.join(dir, "bin/srv"),
        "--root",
        Path.join(Path.dirname(dir), "data"),
        "plain.js",
        "/abs/x",
        ".hidden",
        "."
      ])
      assert.strictEqual(sources["rel"]!.cwd, Path.join(dir, "work"))
      assert.strictEqual(sources["abs"]!.cwd, "/srv")
      assert.isFalse("cwd" in sources["none"]!)
    })
  )

  it.effect("mcpServers JSON: command, args and cwd the same way", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const file = Path.join(dir, "mcp.json")
      Fs.writeFileSync(
        file,
        JSON.stringify({ mcpServers: { srv: { command: "./run.sh", args: ["../x.js", "y"], cwd: "." } } })
      )
      const source = (yield* loadConfig(file)).config.sources["srv"]!
      assert.deepStrictEqual(source.command, [Path.join(dir, "run.sh"), Path.join(Path.dirname(dir), "x.js"), "y"])
      assert.strictEqual(source.cwd, dir)
    })
  )
})
