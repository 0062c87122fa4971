// resolveConfigPaths (src/services/Config/Location.ts): which config and secrets files, from the flags and the environment.
import { assert, describe, it } from "@effect/vitest"
import { Option } from "effect"
import * as Path from "node:path"
import { resolveConfigPaths } from "../../src/services/Config.js"

describe("resolveConfigPaths", () => {
  const none = { config: Option.none<string>(), secrets: Option.none<string>() }

  it("--config > $CLAWTOOL_CONFIG > $XDG_CONFIG_HOME > ~/.config", () => {
    const env = { CLAWTOOL_CONFIG: "/env/c.toml", XDG_CONFIG_HOME: "/xdg", HOME: "/home/u" }
    assert.deepStrictEqual(resolveConfigPaths({ ...none, config: Option.some("/flag/c.toml") }, env), {
      file: "/flag/c.toml",
      origin: "flag",
      secretsFile: "/flag/secrets.toml"
    })
    assert.deepStrictEqual(resolveConfigPaths(none, env), {
      file: "/env/c.toml",
      origin: "env",
      secretsFile: "/env/secrets.toml"
    })
    assert.deepStrictEqual(resolveConfigPaths(none, { ...env, CLAWTOOL_CONFIG: "" }), {
      file: "/xdg/clawtool/config.toml",
      origin: "xdg",
      secretsFile: "/xdg/clawtool/secrets.toml"
    })
    assert.deepStrictEqual(resolveConfigPaths(none, { HOME: "/home/u", XDG_CONFIG_HOME: "" }), {
      file: "/home/u/.config/clawtool/config.toml",
      origin: "home",
      secretsFile: "/home/u/.config/clawtool/secrets.toml"
    })
  })

  it("--secrets wins over the file beside the config; relative paths become absolute", () => {
    const paths = resolveConfigPaths(
      { config: Option.some("conf/c.json"), secrets: Option.some("/s/secrets.toml") },
      { HOME: "/home/u" }
    )
    assert.strictEqual(paths.file, Path.resolve("conf/c.json"))
    assert.strictEqual(paths.secretsFile, "/s/secrets.toml")
  })
})
