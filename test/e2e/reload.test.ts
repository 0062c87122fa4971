// Hot reload of `serve` (issue 13, ADR 016): the config and secrets files are watched (and SIGHUP reloads); a change is
// applied per instance (pids compared), as one settled change the host hears about at most once per list kind.
import { assert, beforeAll, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, freshCacheDir, main, tempDirEnv } from "../lib/cli.js"
import { isAlive, pollUntil, readPid, root, stubCommand, tempDir } from "../lib/sources.js"

beforeAll(ensureBuilt, 120_000)

interface Row {
  readonly name: string
  readonly status: string
  readonly reason: string
  readonly pid: number | null
}

/**
 * `clawtool serve` on `config` with an SDK host: its pid (for SIGHUP), the SourceHealth rows, the tool names, and the
 * tool list as it was right after each tools/list_changed (listed in the handler, so in the order they came).
 */
const serve = (config: string) =>
  Effect.gen(function* () {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [main, "serve", "--config", config],
      cwd: root,
      env: { ...getDefaultEnvironment(), ...tempDirEnv, CLAWTOOL_CACHE_DIR: freshCacheDir() },
      stderr: "pipe"
    })
    const stderr: Array<string> = []
    transport.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk.toString()))
    const client = new Client({ name: "reload-host", version: "1.0.0" }, { capabilities: {} })
    yield* Effect.acquireRelease(
      Effect.promise(() => client.connect(transport)),
      () => Effect.promise(() => client.close())
    )
    const names = Effect.map(
      Effect.promise(() => client.listTools()),
      ({ tools }) => tools.map((tool) => tool.name).filter((name) => name.includes("__"))
    )
    const notices: Array<Promise<ReadonlyArray<string>>> = []
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      const listed = client.listTools().then(({ tools }) => tools.map((tool) => tool.name))
      // A notice can land while the test closes the host; that late list fails with "Not connected" and nobody awaits
      // it. `noticed` still sees a failure of any list made while the test runs.
      listed.catch(() => undefined)
      notices.push(listed)
    })
    const rows = Effect.map(
      Effect.promise(() => client.callTool({ name: "SourceHealth", arguments: {} })),
      (result) => (result.structuredContent as { sources: ReadonlyArray<Row> }).sources
    )
    const noticed = Effect.promise(() => Promise.all(notices))
    // The host has listed: every later change of the catalog is announced.
    yield* names
    return { pid: transport.pid!, client, names, rows, noticed, stderr } as const
  })

const pidOf = (rows: ReadonlyArray<Row>, name: string) => rows.find((row) => row.name === name)?.pid ?? null
const running = (rows: ReadonlyArray<Row>, name: string) =>
  rows.some((row) => row.name === name && row.status === "running")

/** Replaces the file as editors do: write a temporary file beside it, then rename it over the original. */
const renameSave = (file: string, text: string) => {
  const temporary = `${file}.${process.pid}.tmp`
  fs.writeFileSync(temporary, text)
  fs.renameSync(temporary, file)
}

const source = (name: string, flags: ReadonlyArray<string> = [], extra = "") => `
[sources.${name}]
command = ${stubCommand("--name", name, ...flags)}
${extra}
`

describe("clawtool serve reloads its config", () => {
  it.scopedLive(
    "adds, removes and restarts per instance (the kept one keeps its pid) with one list_changed; a tool rule applies without any restart",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const config = path.join(dir, "config.toml")
        fs.writeFileSync(config, source("keep") + source("change") + source("gone"))
        const host = yield* serve(config)
        const before = yield* host.rows
        const [keep, change, gone] = ["keep", "change", "gone"].map((name) => pidOf(before, name)!)
        assert.isTrue([keep, change, gone].every((pid) => pid !== null && isAlive(pid)))

        // change: a new env value (same tools); gone: removed; added: new. The host does not list meanwhile (a list
        // shows it the change, and then there is nothing to announce): it waits for the notice.
        fs.writeFileSync(config, source("keep") + source("change", [], `env = { MODE = "two" }`) + source("added"))
        const [announced] = yield* pollUntil(host.noticed, (lists) => lists.length > 0, "the reload's list_changed")
        assert.includeMembers([...announced!], ["added__echo", "change__echo", "keep__echo"])
        assert.notInclude(announced!, "gone__echo")
        const after = yield* pollUntil(
          host.rows,
          (rows) => running(rows, "added") && running(rows, "change") && pidOf(rows, "change") !== change,
          "the reload applied",
          20_000
        )
        assert.deepStrictEqual(
          after.map((row) => row.name),
          ["added", "change", "keep"]
        )
        assert.strictEqual(pidOf(after, "keep"), keep, "the untouched source keeps its child")
        assert.isFalse(isAlive(gone), "the removed source's child is stopped")
        assert.isFalse(isAlive(change), "the changed source's old child is stopped")

        // A tool rule: re-applied to the catalog, no child restarted.
        renameSave(
          config,
          source("keep") +
            source("change", [], `env = { MODE = "two" }`) +
            source("added") +
            `[tools."keep.echo"]\nenabled = false\n`
        )
        const lists = yield* pollUntil(
          host.noticed,
          (lists) => lists.some((names) => !names.includes("keep__echo")),
          "the tool rule's list_changed"
        )
        // One notice for the first reload, one for the rule: nothing in between.
        assert.strictEqual(lists.length, 2)
        assert.include(lists[0]!, "keep__echo")
        assert.notInclude(lists[1]!, "keep__echo")
        assert.include(lists[1]!, "keep__add")
        const last = yield* host.rows
        for (const name of ["keep", "change", "added"]) {
          assert.strictEqual(pidOf(last, name), pidOf(after, name), `${name} was not restarted by a tool rule`)
        }
      })
  )

  it.scopedLive("an invalid config is rejected as a whole and shown in health until a good one clears it", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const config = path.join(dir, "config.toml")
      fs.writeFileSync(config, source("one") + source("two"))
      const host = yield* serve(config)
      const before = yield* host.rows
      // Valid TOML, one source removed, but a bad key elsewhere: nothing of it is applied.
      fs.writeFileSync(config, source("one") + `[sources.three]\ncommand = []\n`)
      const failed = yield* pollUntil(
        host.rows,
        (rows) => rows.some((row) => row.name === "config"),
        "the failed reload in health"
      )
      const row = failed.find((row) => row.name === "config")!
      assert.strictEqual(row.status, "down")
      assert.match(row.reason, /^last reload failed: config .*config\.toml:\d+ at sources\.three\.command/)
      assert.deepStrictEqual(
        failed.filter((row) => row.name !== "config").map((row) => [row.name, row.pid]),
        before.map((row) => [row.name, row.pid])
      )
      assert.includeMembers(yield* host.names, ["one__echo", "two__echo"])
      assert.isTrue(host.stderr.join("").includes("config reload rejected"), "the rejection is logged")

      // Fixed: applied, and the failure row is gone.
      fs.writeFileSync(config, source("one"))
      const fixed = yield* pollUntil(
        host.rows,
        (rows) => rows.length === 1 && rows[0]!.name === "one",
        "the good reload"
      )
      assert.strictEqual(pidOf(fixed, "one"), pidOf(before, "one"))
      assert.isFalse(isAlive(pidOf(before, "two")!))
    })
  )

  it.scopedLive("a burst of writes and rename-saves is one reload: the changed source restarts once", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const config = path.join(dir, "config.toml")
      // Each state records its child's start in its own file: the files say which states were ever applied.
      const withMode = (mode: number) => source("one", ["--record-start", path.join(dir, `starts-${mode}`)])
      fs.writeFileSync(config, withMode(0))
      const host = yield* serve(config)
      // A burst: saves a few milliseconds apart (well within the 250 ms debounce), some by rename.
      for (let i = 1; i <= 5; i++) {
        if (i % 2 === 0) renameSave(config, withMode(i))
        else fs.writeFileSync(config, withMode(i))
        yield* Effect.sleep("20 millis")
      }
      const last = path.join(dir, "starts-5")
      yield* pollUntil(
        host.rows,
        (rows) => running(rows, "one") && fs.existsSync(last) && pidOf(rows, "one") === readPid(last),
        "the last state running"
      )
      // Reloads run one after another: once the last state runs, any earlier reload would have started its own child.
      assert.deepStrictEqual(
        fs
          .readdirSync(dir)
          .filter((name) => name.startsWith("starts-"))
          .sort(),
        ["starts-0", "starts-5"]
      )
    })
  )

  it.scopedLive(
    "SIGHUP with nothing changed restarts and announces nothing; a secret's new value restarts only its user",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const config = path.join(dir, "config.toml")
        const secrets = path.join(dir, "secrets.toml")
        fs.writeFileSync(secrets, `[scopes.global]\nTOKEN = "first"\n`, { mode: 0o600 })
        fs.writeFileSync(config, source("user", [], `env = { TOKEN = "\${TOKEN}" }`) + source("other"))
        const host = yield* serve(config)
        const before = yield* host.rows

        process.kill(host.pid, "SIGHUP")
        yield* pollUntil(
          Effect.sync(() => host.stderr.join("")),
          (text) => text.includes("config reloaded: nothing changed"),
          "the SIGHUP reload"
        )
        assert.isTrue(isAlive(host.pid), "SIGHUP does not end serve")
        assert.deepStrictEqual(
          (yield* host.rows).map((row) => [row.name, row.pid]),
          before.map((row) => [row.name, row.pid])
        )

        fs.writeFileSync(secrets, `[scopes.global]\nTOKEN = "second"\n`, { mode: 0o600 })
        const after = yield* pollUntil(
          host.rows,
          (rows) => running(rows, "user") && pidOf(rows, "user") !== pidOf(before, "user"),
          "the secret's restart"
        )
        assert.strictEqual(
          pidOf(after, "other"),
          pidOf(before, "other"),
          "the source without the secret kept its child"
        )
        // The later observable event: a real change with new tools, and its one notice; none came before it.
        fs.writeFileSync(
          config,
          source("user", [], `env = { TOKEN = "\${TOKEN}" }`) + source("other") + source("third")
        )
        const lists = yield* pollUntil(
          host.noticed,
          (lists) => lists.some((names) => names.includes("third__echo")),
          "the third source's list_changed"
        )
        assert.strictEqual(lists.length, 1)

        // A setting read only at start: said on stderr, nothing restarted.
        fs.writeFileSync(
          config,
          source("user", [], `env = { TOKEN = "\${TOKEN}" }`) +
            source("other") +
            source("third") +
            "\n[core_tools]\nmax_output = 5000\n"
        )
        yield* pollUntil(
          Effect.sync(() => host.stderr.join("")),
          (text) => text.includes("config: core_tools changed; takes effect when serve restarts"),
          "the warning for a start-only setting"
        )
      })
  )

  it.scopedLive("SIGHUP follows a config symlink re-pointed since start", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const first = path.join(tempDir(), "first.toml")
      const second = path.join(tempDir(), "second.toml")
      fs.writeFileSync(first, source("one"))
      fs.writeFileSync(second, source("one") + source("two"))
      const link = path.join(dir, "config.toml")
      fs.symlinkSync(first, link)
      const host = yield* serve(link)
      const before = yield* host.rows
      // Re-pointed atomically (a new link renamed over the old one), then SIGHUP.
      fs.symlinkSync(second, `${link}.new`)
      fs.renameSync(`${link}.new`, link)
      process.kill(host.pid, "SIGHUP")
      const after = yield* pollUntil(host.rows, (rows) => running(rows, "two"), "the second file's source")
      assert.strictEqual(pidOf(after, "one"), pidOf(before, "one"))
    })
  )
})
