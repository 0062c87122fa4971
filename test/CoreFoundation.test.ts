import * as Fs from "node:fs"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Exit, Option, Schema } from "effect"
import { CoreToolConfig, CoreToolsConfig } from "../src/domain/Config.js"
import type { ConfigError } from "../src/domain/Errors.js"
import { parseConfig } from "../src/services/Config.js"
import * as Catalog from "../src/services/Registry/Catalog.js"
import { coreGate } from "../src/services/CoreTools.js"
import * as Budget from "../src/services/CoreTools/Budget.js"
import { Ledger, stampOf } from "../src/services/CoreTools/Ledger.js"
import * as Roots from "../src/services/CoreTools/Roots.js"
import * as Manifest from "../src/services/CoreTools/Manifest.js"
import { removeWhenDone, tempDir } from "./lib/temp.js"

const failure = (text: string): ConfigError => {
  const result = parseConfig(text, "/x/config.toml")
  if (Either.isRight(result)) return assert.fail(`expected a ConfigError, got ${JSON.stringify(result.right)}`)
  return result.left
}

describe("config: roots, catalog, [core_tools]", () => {
  it("defaults: no roots, the full catalog, every core tool on, 30,000 characters", () => {
    const config = Either.getOrThrow(parseConfig("", "/x/config.toml"))
    assert.deepStrictEqual(config.roots, [])
    assert.strictEqual(config.catalog, "full")
    assert.strictEqual(config.core_tools.enabled, true)
    assert.strictEqual(config.core_tools.max_output, 30_000)
    assert.strictEqual(config.core_tools.Read.enabled, true)
    assert.strictEqual(config.core_tools.WebFetch.allow_private, false)
  })

  it("reads every key", () => {
    const text = [
      `roots = ["~/code", "work"]`,
      `catalog = "search"`,
      "[core_tools]",
      "enabled = false",
      "max_output = 5000",
      "[core_tools.Bash]",
      "enabled = false",
      "[core_tools.WebFetch]",
      "allow_private = true"
    ].join("\n")
    const config = Either.getOrThrow(parseConfig(text, "/x/config.toml"))
    assert.deepStrictEqual(config.roots, ["~/code", "work"])
    assert.strictEqual(config.catalog, "search")
    assert.strictEqual(config.core_tools.enabled, false)
    assert.strictEqual(config.core_tools.max_output, 5000)
    assert.strictEqual(config.core_tools.Bash.enabled, false)
    assert.strictEqual(config.core_tools.Grep.enabled, true)
    assert.strictEqual(config.core_tools.WebFetch.allow_private, true)
  })

  it("an unknown core tool name is rejected naming the known ones", () => {
    const error = failure("[core_tools.Reed]\nenabled = false\n")
    assert.strictEqual(error.keyPath, "core_tools.Reed")
    assert.include(error.detail, `unknown key "Reed"`)
    for (const name of ["Bash", "Read", "Edit", "Write", "Glob", "Grep", "WebFetch", "WebSearch"]) {
      assert.include(error.detail, name)
    }
  })

  it("allow_private belongs to WebFetch only", () => {
    const error = failure("[core_tools.Read]\nallow_private = true\n")
    assert.strictEqual(error.keyPath, "core_tools.Read.allow_private")
  })

  it("catalog and max_output are checked", () => {
    assert.include(failure(`catalog = "some"`).detail, `catalog is "full" or "search"`)
    assert.include(failure("[core_tools]\nmax_output = 10").detail, "max_output must be between")
    assert.include(failure(`roots = [""]`).detail, "a root must not be empty")
  })
})

describe("Budget.fit", () => {
  const lines = Array.from({ length: 5000 }, (_, i) => `line ${i + 1}`).join("\n")

  it("leaves a text that fits alone", () => {
    assert.deepStrictEqual(Budget.fit("short", 100, "hint"), { text: "short", truncated: false, omitted: 0 })
  })

  it("keeps head and tail within the budget, with a marker saying what was cut and how to get it", () => {
    const fitted = Budget.fit(lines, 1000, "pass offset to read on")
    assert.isTrue(fitted.truncated)
    assert.isAtMost(fitted.text.length, 1000)
    assert.isTrue(fitted.text.startsWith("line 1\n"))
    assert.isTrue(fitted.text.endsWith("line 5000"))
    assert.match(fitted.text, /\[… [\d,]+ characters \([\d,]+ lines\) omitted; pass offset to read on …\]/)
    const [head, tail] = fitted.text.split(/\n\[….*…\]\n/)
    assert.strictEqual(head!.length + fitted.omitted + tail!.length, lines.length, "head + omitted + tail is the whole")
    assert.include(lines, `${head}\n`)
    assert.include(lines, `\n${tail}`)
  })

  it("keeps whole lines at the cut when a line boundary is near", () => {
    const fitted = Budget.fit(lines, 2000, "h")
    const [head, tail] = fitted.text.split(/\n\[….*…\]\n/)
    assert.match(head!, /line \d+$/)
    assert.match(tail!, /^line \d+/)
  })

  it("a result counts its structured content against the budget", () => {
    const structured = { items: Array.from({ length: 100 }, (_, i) => `item-${i}`) }
    const result = Budget.fitResult({ text: lines, structured }, 3000, "narrow it")
    assert.isAtMost(result.text.length + Budget.sizeOf(result.structured), 3000)
    assert.deepStrictEqual(result.structured, structured)
  })

  it("never splits a surrogate pair", () => {
    const fitted = Budget.fit("😀".repeat(1000), 200, "h")
    assert.isFalse(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(fitted.text))
  })
})

const tempRoot = () => tempDir("clawtool-roots-")

describe("Roots.resolve", () => {
  const outside = tempDir("clawtool-outside-")
  Fs.writeFileSync(Path.join(outside, "secret.txt"), "secret")
  const root = tempRoot()
  Fs.mkdirSync(Path.join(root, "src"))
  Fs.writeFileSync(Path.join(root, "src", "a.ts"), "a")
  Fs.symlinkSync(Path.join(outside, "secret.txt"), Path.join(root, "link-out"))
  Fs.symlinkSync(outside, Path.join(root, "dir-out"))
  Fs.symlinkSync(Path.join(root, "src", "a.ts"), Path.join(root, "link-in"))
  Fs.symlinkSync(Path.join(outside, "nothing"), Path.join(root, "dangling"))
  const sibling = removeWhenDone(`${root}-sibling`)
  Fs.mkdirSync(sibling, { recursive: true })
  Fs.writeFileSync(Path.join(sibling, "x"), "x")

  const refusal = (input: string, options?: Roots.ResolveOptions) =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(Roots.resolve("Read", input, [root], options))
      if (Exit.isSuccess(exit)) return assert.fail(`${input} was accepted as ${exit.value.real}`)
      const error = yield* Effect.flip(Roots.resolve("Read", input, [root], options))
      assert.strictEqual(error.reason, "OutsideRoots", input)
      assert.include(error.detail, root, "the error names the roots")
      return error
    })

  it.effect("accepts relative and absolute paths inside, showing them relative to the root", () =>
    Effect.gen(function* () {
      const relative = yield* Roots.resolve("Read", "src/a.ts", [root])
      assert.strictEqual(relative.real, Path.join(root, "src", "a.ts"))
      assert.strictEqual(relative.display, "src/a.ts")
      assert.isTrue(relative.stat?.isFile())
      const absolute = yield* Roots.resolve("Read", Path.join(root, "src", "..", "src", "a.ts"), [root])
      assert.strictEqual(absolute.real, Path.join(root, "src", "a.ts"))
      const viaLink = yield* Roots.resolve("Read", "link-in", [root])
      assert.strictEqual(viaLink.real, Path.join(root, "src", "a.ts"))
    })
  )

  it.effect("refuses .., absolute paths outside, a root-prefix sibling, /proc/self/root, // and NUL", () =>
    Effect.gen(function* () {
      yield* refusal("../../../../etc/passwd")
      yield* refusal("src/../../x")
      yield* refusal("/etc/passwd")
      yield* refusal(Path.join(sibling, "x"))
      yield* refusal("/proc/self/root/etc/passwd")
      yield* refusal(`/${root}/../../etc/passwd`)
      yield* refusal("//etc/passwd")
      const nul = yield* refusal("src/a.ts\0.png")
      assert.include(nul.detail, "NUL")
    })
  )

  it.effect("refuses symlinks that lead out (file, directory, dangling), also for writes", () =>
    Effect.gen(function* () {
      yield* refusal("link-out")
      yield* refusal("dir-out/secret.txt")
      yield* refusal("dir-out/new.txt", { write: true })
      yield* refusal("dangling")
      yield* refusal("dangling", { write: true })
    })
  )

  it.effect("a path to create is judged by its nearest existing ancestor", () =>
    Effect.gen(function* () {
      const created = yield* Roots.resolve("Write", "new/deep/file.txt", [root], { write: true })
      assert.strictEqual(created.real, Path.join(root, "new", "deep", "file.txt"))
      assert.isUndefined(created.stat)
      const missing = yield* Roots.resolve("Read", "missing.txt", [root])
      assert.isUndefined(missing.stat)
    })
  )

  it.effect("no roots: every path is refused, saying so", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(Roots.resolve("Read", "a", []))
      assert.strictEqual(error.reason, "OutsideRoots")
      assert.include(error.detail, "no allowed root")
    })
  )

  it.effect("normalize: file URIs, relative to a base, real paths, missing roots dropped", () =>
    Effect.gen(function* () {
      const { roots, dropped } = yield* Roots.normalize(
        [`file://${root}`, "src", Path.join(root, "missing"), Path.join(root, "src", "a.ts")],
        root
      )
      assert.deepStrictEqual(roots, [root, Path.join(root, "src")])
      assert.strictEqual(dropped.length, 2)
    })
  )
})

describe("Ledger", () => {
  const bytes = new TextEncoder().encode("content")
  const stat = { mtimeMs: 1000, size: bytes.length }

  it.effect("refuses a file never read, accepts it after a record", () =>
    Effect.gen(function* () {
      const ledger = new Ledger()
      const error = yield* Effect.flip(ledger.check("Edit", "/r/a", "a", stat, bytes))
      assert.strictEqual(error.reason, "NotRead")
      ledger.record("/r/a", stampOf(stat, bytes))
      yield* ledger.check("Edit", "/r/a", "a", stat, bytes)
    })
  )

  it.effect("a changed content is stale; a touch (same content, new mtime) is accepted and refreshed", () =>
    Effect.gen(function* () {
      const ledger = new Ledger()
      ledger.record("/r/a", stampOf(stat, bytes))
      const touched = { mtimeMs: 2000, size: bytes.length }
      yield* ledger.check("Edit", "/r/a", "a", touched, bytes)
      assert.strictEqual(ledger.get("/r/a")?.mtimeMs, 2000)
      const changed = new TextEncoder().encode("CONTENT")
      const error = yield* Effect.flip(ledger.check("Edit", "/r/a", "a", { mtimeMs: 3000, size: 7 }, changed))
      assert.strictEqual(error.reason, "StaleRead")
    })
  )

  it.live("the lock serialises work on one file", () =>
    Effect.gen(function* () {
      const ledger = new Ledger()
      const order: Array<string> = []
      const step = (name: string) =>
        ledger.withLock(
          "/r/a",
          Effect.gen(function* () {
            order.push(`${name} in`)
            yield* Effect.yieldNow()
            yield* Effect.sleep("5 millis")
            order.push(`${name} out`)
          })
        )
      yield* Effect.all([step("a"), step("b")], { concurrency: "unbounded" })
      assert.deepStrictEqual(order, ["a in", "a out", "b in", "b out"])
    })
  )
})

describe("core tool gating", () => {
  const spec = (name: string, unavailable?: Manifest.ToolSpec<object, object>["unavailable"]) =>
    Manifest.defineTool({
      name,
      description: name,
      keywords: [],
      category: "file",
      usageHint: "a usage hint long enough to count",
      alwaysLoad: false,
      input: Schema.Struct({}),
      output: Schema.Struct({}),
      handler: () => Effect.die("not called"),
      ...(unavailable === undefined ? {} : { unavailable })
    })
  const specs = [
    spec("Read"),
    spec("Grep"),
    spec("ToolSearch"),
    spec("WebSearch", (setup) =>
      Option.isNone(setup.secret("BRAVE_API_KEY")) ? "BRAVE_API_KEY is not configured" : undefined
    )
  ]
  const setup = (settings: CoreToolsConfig, secrets: Record<string, string> = {}): Manifest.CoreSetup => ({
    settings,
    secret: (name) => Option.fromNullable(secrets[name])
  })

  it("all on by default; a spec's own rule decides the rest", () => {
    const off = coreGate(specs, setup(new CoreToolsConfig({})))
    assert.deepStrictEqual([...off], [["WebSearch", "BRAVE_API_KEY is not configured"]])
    assert.deepStrictEqual([...coreGate(specs, setup(new CoreToolsConfig({}), { BRAVE_API_KEY: "k" }))], [])
  })

  it("[core_tools] enabled = false turns the eight off, never ToolSearch", () => {
    const off = coreGate(specs, setup(new CoreToolsConfig({ enabled: false }), { BRAVE_API_KEY: "k" }))
    assert.deepStrictEqual([...off.keys()].sort(), ["Grep", "Read", "WebSearch"])
    assert.strictEqual(off.get("Read"), "core_tools.enabled")
  })

  it("a switched-off core tool is listed nowhere but shown in the entries with its rule", () => {
    const manifest = Either.getOrThrow(Manifest.make(specs))
    const off = coreGate(
      specs,
      setup(new CoreToolsConfig({ Grep: new CoreToolConfig({ enabled: false }) }), { BRAVE_API_KEY: "k" })
    )
    const catalog = Catalog.build({ manifest, sources: [], toolConfig: {}, budget: 64, coreDisabled: off })
    assert.deepStrictEqual(
      catalog.tools.map((tool) => tool.name),
      ["Read", "ToolSearch", "WebSearch"]
    )
    const grep = catalog.entries.find((entry) => entry.wire === "Grep")!
    assert.strictEqual(grep.status, "disabled")
    assert.strictEqual(grep.rule, "core_tools.Grep.enabled")
    assert.strictEqual(catalog.entries.find((entry) => entry.wire === "Read")!.rule, "core")
  })

  it("[core_tools.Read] enabled = false turns one off", () => {
    const config = Either.getOrThrow(parseConfig("[core_tools.Read]\nenabled = false", "/x/config.toml"))
    const off = coreGate(specs, setup(config.core_tools, { BRAVE_API_KEY: "k" }))
    assert.deepStrictEqual([...off], [["Read", "core_tools.Read.enabled"]])
  })
})
