import { assert, describe, it } from "@effect/vitest"
import * as Os from "node:os"
import * as Path from "node:path"
import { cacheDir, codeCacheDir, defaultConfigFile, stateDir } from "../src/paths.js"

/** Each folder: its override, its XDG variable, and its default under the home folder. */
const folders = [
  { name: "state", dir: stateDir, override: "CLAWTOOL_STATE_DIR", xdg: "XDG_STATE_HOME", home: [".local", "state"] },
  { name: "cache", dir: cacheDir, override: "CLAWTOOL_CACHE_DIR", xdg: "XDG_CACHE_HOME", home: [".cache"] }
] as const

describe("paths", () => {
  for (const { name, dir, override, xdg, home } of folders) {
    it(`${name}: $${override} > $${xdg}/clawtool > ~/${home.join("/")}/clawtool; empty counts as unset`, () => {
      const env = { [override]: "/over", [xdg]: "/xdg", HOME: "/home/u" }
      assert.strictEqual(dir(env), "/over")
      assert.strictEqual(dir({ ...env, [override]: "" }), "/xdg/clawtool")
      assert.strictEqual(dir({ HOME: "/home/u", [xdg]: "" }), Path.join("/home/u", ...home, "clawtool"))
      // Without $HOME (or with an empty one), the account's home folder.
      assert.strictEqual(dir({ HOME: "" }), Path.join(Os.homedir(), ...home, "clawtool"))
      // A relative override is kept as given: the caller resolves it against its working directory.
      assert.strictEqual(dir({ [override]: "rel/dir" }), "rel/dir")
    })
  }

  it("the code cache is code/ in the cache folder", () => {
    assert.strictEqual(codeCacheDir({ CLAWTOOL_CACHE_DIR: "/over" }), "/over/code")
    assert.strictEqual(codeCacheDir({ XDG_CACHE_HOME: "/xdg" }), "/xdg/clawtool/code")
  })

  it("default config file: $CLAWTOOL_CONFIG > $XDG_CONFIG_HOME/clawtool > ~/.config/clawtool, and which", () => {
    const env = { CLAWTOOL_CONFIG: "c.toml", XDG_CONFIG_HOME: "/xdg", HOME: "/home/u" }
    assert.deepStrictEqual(defaultConfigFile(env), { file: "c.toml", origin: "env" })
    assert.deepStrictEqual(defaultConfigFile({ ...env, CLAWTOOL_CONFIG: "" }), {
      file: "/xdg/clawtool/config.toml",
      origin: "xdg"
    })
    assert.deepStrictEqual(defaultConfigFile({ HOME: "/home/u", XDG_CONFIG_HOME: "" }), {
      file: "/home/u/.config/clawtool/config.toml",
      origin: "home"
    })
    assert.deepStrictEqual(defaultConfigFile({}), {
      file: Path.join(Os.homedir(), ".config", "clawtool", "config.toml"),
      origin: "home"
    })
  })
})
