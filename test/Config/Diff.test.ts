import { assert, describe, it } from "@effect/vitest"
import { canonical, diff, isEmpty, nothing } from "../../src/domain/ConfigDiff.js"
import type { SourceConfig } from "../../src/domain/Config.js"
import { configFrom } from "../lib/sources.js"

/** What a source resolves to under a secrets store: its `${VAR}`s filled from `values`. */
const resolver = (values: Record<string, string>) => (_instance: string, source: SourceConfig) => ({
  command: (source.command ?? [""]).map((part) =>
    part.replace(/\$\{(\w+)\}/g, (_, name: string) => values[name] ?? "")
  ),
  env: Object.fromEntries(
    Object.entries(source.env).map(([key, value]) => [
      key,
      value.replace(/\$\{(\w+)\}/g, (_, name: string) => values[name] ?? "")
    ])
  )
})

const plain = resolver({})

describe("ConfigDiff.diff", () => {
  it("sorts instances into start, stop, restart and keep", () => {
    const old = configFrom(`
      [sources.kept]
      command = ["node", "a.js"]
      [sources.changed]
      command = ["node", "b.js"]
      [sources.removed]
      command = ["node", "c.js"]
    `)
    const next = configFrom(`
      [sources.kept]
      command = ["node", "a.js"]
      [sources.changed]
      command = ["node", "b.js", "--flag"]
      [sources.added]
      command = ["node", "d.js"]
    `)
    const result = diff(old, next, { old: plain, next: plain })
    assert.deepStrictEqual(result, {
      start: ["added"],
      stop: ["removed"],
      restart: ["changed"],
      keep: ["kept"],
      retag: [],
      settings: []
    })
    assert.isFalse(isEmpty(result))
  })

  it("the same config written differently (key order, equal durations) changes nothing", () => {
    const old = configFrom(`
      [sources.one]
      command = ["node", "a.js"]
      startup_timeout = "60s"
      env = { A = "1", B = "2" }
    `)
    const next = configFrom(`
      # a comment
      [sources.one]
      env = { B = "2", A = "1" }
      startup_timeout = "1m"
      command = ["node", "a.js"]
    `)
    const result = diff(old, next, { old: plain, next: plain })
    assert.deepStrictEqual(result, { start: [], stop: [], restart: [], keep: ["one"], retag: [], settings: [] })
    assert.isTrue(isEmpty(result))
  })

  it("every source key counts: env, cwd, restart keys, start keys and call_timeout restart the source", () => {
    const base = `[sources.one]\ncommand = ["node", "a.js"]\n`
    for (const line of [
      `env = { A = "1" }`,
      `cwd = "/tmp"`,
      `max_restarts = 3`,
      `restart = "never"`,
      `restart_backoff = "1s"`,
      `start = "lazy"`,
      `idle_timeout = "5m"`,
      `call_timeout = "30s"`,
      `startup_timeout = "5s"`,
      `env_passthrough = ["HOME"]`
    ]) {
      const result = diff(configFrom(base), configFrom(base + line), { old: plain, next: plain })
      assert.deepStrictEqual(result.restart, ["one"], line)
    }
  })

  it("a secret's new value restarts only the sources that use it", () => {
    const config = configFrom(`
      [sources.uses]
      command = ["node", "a.js"]
      env = { TOKEN = "\${TOKEN}" }
      [sources.other]
      command = ["node", "b.js"]
    `)
    const result = diff(config, config, { old: resolver({ TOKEN: "old" }), next: resolver({ TOKEN: "new" }) })
    assert.deepStrictEqual(result, { start: [], stop: [], restart: ["uses"], keep: ["other"], retag: [], settings: [] })
  })

  it("enabling starts, disabling stops; disabled sources never restart", () => {
    const old = configFrom(`
      [sources.on]
      command = ["node", "a.js"]
      [sources.off]
      command = ["node", "b.js"]
      enabled = false
      [sources.still-off]
      command = ["node", "c.js"]
      enabled = false
    `)
    const next = configFrom(`
      [sources.on]
      command = ["node", "a.js"]
      enabled = false
      [sources.off]
      command = ["node", "b.js"]
      [sources.still-off]
      command = ["node", "c.js", "changed"]
      enabled = false
    `)
    assert.deepStrictEqual(diff(old, next, { old: plain, next: plain }), {
      start: ["off"],
      stop: ["on"],
      restart: [],
      keep: [],
      retag: [],
      settings: []
    })
  })

  it("tool rules and name_budget are settings: no source restarts", () => {
    const old = configFrom(`
      [sources.one]
      command = ["node", "a.js"]
    `)
    const next = configFrom(`
      name_budget = 40
      [sources.one]
      command = ["node", "a.js"]
      [tools."one.echo"]
      enabled = false
    `)
    assert.deepStrictEqual(diff(old, next, { old: plain, next: plain }), {
      start: [],
      stop: [],
      restart: [],
      keep: ["one"],
      retag: [],
      settings: ["name_budget", "tools"]
    })
  })
})

describe("ConfigDiff.canonical", () => {
  it("sorts keys at every depth and leaves undefined members out", () => {
    assert.strictEqual(
      canonical({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: undefined } }),
      `{"a":{"d":[1,{"x":1,"y":2}]},"b":1}`
    )
  })

  it("tags alone are metadata: the source is kept and retagged, not restarted; with another key it restarts", () => {
    const old = configFrom(`
      [sources.one]
      command = ["node", "a.js"]
      tags = ["code"]
      [sources.two]
      command = ["node", "b.js"]
    `)
    const retagged = configFrom(`
      [sources.one]
      command = ["node", "a.js"]
      tags = ["chat", "code"]
      [sources.two]
      command = ["node", "b.js"]
    `)
    const result = diff(old, retagged, { old: plain, next: plain })
    assert.deepStrictEqual(result, { ...nothing, keep: ["one", "two"], retag: ["one"] })
    assert.isFalse(isEmpty(result))
    const changed = configFrom(`
      [sources.one]
      command = ["node", "a2.js"]
      [sources.two]
      command = ["node", "b.js"]
    `)
    assert.deepStrictEqual(diff(old, changed, { old: plain, next: plain }), {
      ...nothing,
      restart: ["one"],
      keep: ["two"]
    })
  })
})
