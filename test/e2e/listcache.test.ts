// Issue 10's persisted catalog beyond tools, through `serve`: a warm start answers resources/list,
// resources/templates/list and prompts/list at once with what the source listed last time, even while its child hangs
// in initialize; identical fresh lists announce nothing, different ones one list_changed per kind, and a source that
// ends down for good has its cached lists removed.
import { assert, beforeAll, describe, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import {
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema
} from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { ensureBuilt, serveClient, writeConfig } from "../lib/cli.js"
import { eventually, pollUntil, root, stub, tempDir } from "../lib/sources.js"

beforeAll(ensureBuilt, 120_000)

const lateServer = path.join(root, "test/fixtures/late-server.mjs")

/**
 * One source whose command line never changes (so its cache key does not) while what it runs does: the command runs a
 * wrapper that loads the fixture server and flags written in a file, as a new release of a server would behave.
 */
const switchable = () => {
  const dir = tempDir()
  const choice = path.join(dir, "server.json")
  const wrapper = path.join(dir, "switch-server.mjs")
  fs.writeFileSync(
    wrapper,
    [
      `import { readFileSync } from "node:fs"`,
      `const { server, args } = JSON.parse(readFileSync(process.argv[2], "utf8"))`,
      `process.argv.splice(2, process.argv.length, ...args)`,
      `await import(server)`
    ].join("\n")
  )
  return {
    command: JSON.stringify([process.execPath, wrapper, choice]),
    run: (server: string, ...args: ReadonlyArray<string>) =>
      fs.writeFileSync(choice, JSON.stringify({ server: pathToFileURL(server).href, args }))
  }
}

/** Well under list_wait and startup_timeout below: an answer within it did not wait for the hung child. */
const atOnce = { timeout: 20_000 }

interface Row {
  readonly name: string
  readonly status: string
  readonly reason: string
}

const lists = (client: Client) =>
  Effect.gen(function* () {
    const tools = (yield* Effect.promise(() => client.listTools({}, atOnce))).tools.map((t) => t.name)
    const resources = (yield* Effect.promise(() => client.listResources({}, atOnce))).resources
    const templates = (yield* Effect.promise(() => client.listResourceTemplates({}, atOnce))).resourceTemplates
    const prompts = (yield* Effect.promise(() => client.listPrompts({}, atOnce))).prompts
    return { tools, resources, templates, prompts }
  })

const rowOf = (client: Client, name: string) =>
  Effect.promise(async () => {
    const result = await client.callTool({ name: "SourceHealth", arguments: {} })
    return (result.structuredContent as { sources: ReadonlyArray<Row> }).sources.find((row) => row.name === name)!
  })

const countNotices = (client: Client) => {
  const notices = { tools: 0, resources: 0, prompts: 0 }
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void notices.tools++)
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void notices.resources++)
  client.setNotificationHandler(PromptListChangedNotificationSchema, () => void notices.prompts++)
  return notices
}

const cacheFileOf = (cacheDir: string) =>
  fs.existsSync(cacheDir) ? fs.readdirSync(cacheDir).find((name) => name.endsWith(".json")) : undefined

/** A cold session: the source starts, lists everything, and the cache entry holds its resources. */
const coldSession = (config: string, cacheDir: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const client = yield* serveClient(config, {}, cacheDir)
      yield* pollUntil(rowOf(client, "src"), (row) => row.status === "running", "src running", 30_000)
      yield* eventually(
        () => {
          const file = cacheFileOf(cacheDir)
          return file !== undefined && fs.readFileSync(path.join(cacheDir, file), "utf8").includes("late://items/{id}")
        },
        10_000,
        "the cache entry with every list"
      )
      return yield* lists(client)
    })
  )

/** One source (list_wait and startup_timeout 60 s) that ran late-server with `flags` once: its cache entry is written. */
const warmed = (...flags: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const cacheDir = path.join(tempDir(), "cache")
    const source = switchable()
    const config = writeConfig(
      `list_wait = "60s"\n[sources.src]\ncommand = ${source.command}\nstartup_timeout = "60s"\n`
    )
    source.run(lateServer, ...flags)
    const cold = yield* coldSession(config, cacheDir)
    return { cacheDir, source, config, cold }
  })

describe("persisted resources, templates and prompts (built CLI, SDK client as the host)", () => {
  it.live(
    "warm: a source hanging in initialize lists its cached resources, templates and prompts at once; a read waits",
    () =>
      Effect.gen(function* () {
        const { cacheDir, source, config, cold } = yield* warmed()
        assert.deepStrictEqual(cold.resources, [{ uri: "late://info", name: "src__info" }])
        assert.deepStrictEqual(cold.templates, [{ uriTemplate: "late://items/{id}", name: "src__item" }])
        assert.deepStrictEqual(cold.prompts, [{ name: "src__greet", arguments: [{ name: "who" }] }])

        // The same command line now hangs in initialize: every list is answered from the cache, not after list_wait.
        source.run(lateServer, "--hang")
        yield* Effect.scoped(
          Effect.gen(function* () {
            const client = yield* serveClient(config, {}, cacheDir)
            const warm = yield* lists(client)
            assert.deepStrictEqual(warm, cold)
            const row = yield* rowOf(client, "src")
            assert.deepStrictEqual([row.status, row.reason], ["starting", "catalog: cached"])
          })
        )

        // Initialize after 2 s: a read and a prompt sent at once, routed by the cached lists, wait for the child.
        source.run(lateServer, "--init-delay", "2000")
        yield* Effect.scoped(
          Effect.gen(function* () {
            const client = yield* serveClient(config, {}, cacheDir)
            const notices = countNotices(client)
            const warm = yield* lists(client)
            assert.deepStrictEqual(warm, cold)
            assert.strictEqual((yield* rowOf(client, "src")).status, "starting")
            const [read, template, prompt] = yield* Effect.all(
              [
                Effect.promise(() => client.readResource({ uri: "late://info" }, atOnce)),
                Effect.promise(() => client.readResource({ uri: "late://items/7" }, atOnce)),
                Effect.promise(() => client.getPrompt({ name: "src__greet", arguments: { who: "you" } }, atOnce))
              ],
              { concurrency: "unbounded" }
            )
            assert.deepStrictEqual(read.contents, [{ uri: "late://info", text: "read late://info" }])
            assert.deepStrictEqual(template.contents, [{ uri: "late://items/7", text: "read late://items/7" }])
            assert.deepStrictEqual(prompt.messages, [{ role: "user", content: { type: "text", text: "greet you" } }])
            assert.strictEqual((yield* rowOf(client, "src")).status, "running")
            // The child listed what was cached, so nothing is announced (that nothing comes once the Gateway's debounce is
            // over either is shown under TestClock in test/Gateway.test.ts).
            assert.deepStrictEqual(notices, { tools: 0, resources: 0, prompts: 0 })
            assert.deepStrictEqual(yield* lists(client), cold)
          })
        )
      }),
    120_000
  )

  it.live(
    "a source with resources and prompts but no tools serves its cached lists while its child hangs in initialize",
    () =>
      Effect.gen(function* () {
        const { cacheDir, source, config, cold } = yield* warmed("--no-tools")
        assert.isFalse(cold.tools.some((name) => name.startsWith("src__")))
        assert.deepStrictEqual(cold.resources, [{ uri: "late://info", name: "src__info" }])

        source.run(lateServer, "--no-tools", "--hang")
        yield* Effect.scoped(
          Effect.gen(function* () {
            const client = yield* serveClient(config, {}, cacheDir)
            assert.deepStrictEqual(yield* lists(client), cold)
            const row = yield* rowOf(client, "src")
            assert.deepStrictEqual([row.status, row.reason], ["starting", "catalog: cached"])
          })
        )
      }),
    120_000
  )

  it.live(
    "a child that lists differently than its cache: one list_changed per kind, then the fresh lists",
    () =>
      Effect.gen(function* () {
        const cacheDir = path.join(tempDir(), "cache")
        const source = switchable()
        const config = writeConfig(`list_wait = "60s"\n[sources.src]\ncommand = ${source.command}\n`)
        source.run(lateServer)
        const cold = yield* coldSession(config, cacheDir)

        // Another server behind the same command line (a new release): other tools, resources and prompts.
        source.run(stub, "--resources", "--slow-start", "2000")
        yield* Effect.scoped(
          Effect.gen(function* () {
            const client = yield* serveClient(config, {}, cacheDir)
            const notices = countNotices(client)
            assert.deepStrictEqual(yield* lists(client), cold)
            yield* eventually(
              () => notices.tools >= 1 && notices.resources >= 1 && notices.prompts >= 1,
              30_000,
              "list_changed for every kind"
            )
            // One notice per kind, sent together once the Gateway's debounce is over (that no second one follows is shown
            // under TestClock in test/Gateway.test.ts).
            assert.deepStrictEqual(notices, { tools: 1, resources: 1, prompts: 1 })
            const fresh = yield* lists(client)
            assert.include(fresh.tools, "src__link")
            assert.deepStrictEqual(
              fresh.resources.map((r) => r.uri),
              ["stub://info"]
            )
            assert.deepStrictEqual(fresh.templates, [])
            assert.deepStrictEqual(
              fresh.prompts.map((p) => p.name),
              ["src__greet"]
            )
            assert.notDeepEqual(fresh.prompts, cold.prompts)
          })
        )
        // The entry now holds the fresh lists.
        const entry = fs.readFileSync(path.join(cacheDir, cacheFileOf(cacheDir)!), "utf8")
        assert.include(entry, "stub://info")
        assert.notInclude(entry, "late://info")
      }),
    120_000
  )

  it.live(
    "a cached source that ends down for good: its cached lists are removed, with one list_changed per kind",
    () =>
      Effect.gen(function* () {
        const cacheDir = path.join(tempDir(), "cache")
        const source = switchable()
        const config = writeConfig(
          `list_wait = "60s"\n[sources.src]\ncommand = ${source.command}\nrestart = "never"\nstartup_timeout = "5s"\n`
        )
        source.run(lateServer)
        const cold = yield* coldSession(config, cacheDir)

        source.run(lateServer, "--hang")
        yield* Effect.scoped(
          Effect.gen(function* () {
            const client = yield* serveClient(config, {}, cacheDir)
            const notices = countNotices(client)
            assert.deepStrictEqual(yield* lists(client), cold)
            const row = yield* pollUntil(rowOf(client, "src"), (row) => row.status === "down", "src down", 30_000)
            assert.include(row.reason, "Timeout")
            yield* eventually(
              () => notices.tools >= 1 && notices.resources >= 1 && notices.prompts >= 1,
              10_000,
              "list_changed for every kind"
            )
            // One notice per kind, sent together once the Gateway's debounce is over (that no second one follows is shown
            // under TestClock in test/Gateway.test.ts).
            assert.deepStrictEqual(notices, { tools: 1, resources: 1, prompts: 1 })
            const after = yield* lists(client)
            assert.isFalse(after.tools.some((name) => name.startsWith("src__")))
            assert.deepStrictEqual([after.resources, after.templates, after.prompts], [[], [], []])
          })
        )
      }),
    120_000
  )
})
