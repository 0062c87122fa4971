import { assert, beforeAll, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { ensureBuilt, runCliAsync as runCli, writeConfig } from "../lib/cli.js"
import { isRunning, root, stubCommand, tempDir } from "../lib/sources.js"

beforeAll(ensureBuilt, 120_000)

const demo = path.join(root, "examples/demo.toml")

/** Whether `pid` is still running after at most 5 s (a killed group may take the kernel a moment). */
const stillRunning = async (pid: number) => {
  for (let waited = 0; waited < 5_000 && isRunning(pid); waited += 50) await new Promise((ok) => setTimeout(ok, 50))
  return isRunning(pid)
}

describe("clawtool call (built CLI)", () => {
  it("calls a demo tool and prints its text; --json prints the whole result; stdout holds nothing else", async () => {
    const added = await runCli([
      "call",
      "--config",
      demo,
      "notes__add_note",
      "--arg",
      "title=milk",
      "--arg",
      "body=2 l"
    ])
    assert.strictEqual(added.code, 0, added.stderr)
    assert.match(added.stdout, /^Added #\d+ milk: 2 l\n$/)

    // <instance>.<tool> names the tool as `tools list` shows its origin; the JSON argument, over --json.
    const now = await runCli(["call", "--config", demo, "--json", "clock.now", '{"timezone":"UTC"}'])
    assert.strictEqual(now.code, 0, now.stderr)
    const result = JSON.parse(now.stdout) as { structuredContent: { timezone: string }; isError?: boolean }
    assert.strictEqual(result.structuredContent.timezone, "UTC")
    assert.isUndefined(result.isError)

    // A core tool, with a string argument kept as text.
    const readme = await runCli(["call", "--config", demo, "Read", "--arg", `file_path=${path.join(root, "LICENSE")}`])
    assert.strictEqual(readme.code, 0, readme.stderr)
    assert.include(readme.stdout, "MIT License")
  })

  it("an unknown tool, bad JSON, an --arg without = are usage errors (exit 2, nothing on stdout)", async () => {
    const unknown = await runCli(["call", "--config", demo, "notes__add_not"])
    assert.strictEqual(unknown.code, 2)
    assert.strictEqual(unknown.stdout, "")
    assert.include(unknown.stderr, 'clawtool: unknown tool "notes__add_not"; did you mean "notes__add_note"?')

    const bad = await runCli(["call", "--config", demo, "clock__now", "{timezone"])
    assert.strictEqual(bad.code, 2)
    assert.strictEqual(bad.stdout, "")
    assert.include(bad.stderr, "clawtool: the arguments are not valid JSON: ")

    const noValue = await runCli(["call", "--config", demo, "clock__now", "--arg", "timezone"])
    assert.strictEqual(noValue.code, 2)
    assert.include(noValue.stderr, 'clawtool: --arg "timezone" is not key=value')
  })

  it("--profile: the session sees that profile (a tool outside it is unknown, as to its hosts); an unknown profile exits 2 naming the known ones", async () => {
    const config = writeConfig(`[sources.stub]\ncommand = ${stubCommand()}\n\n[profiles.adder]\ntools = ["stub.add"]\n`)
    const added = await runCli(["call", "--config", config, "--profile", "adder", "stub__add", '{"a":1,"b":2}'])
    assert.strictEqual(added.code, 0, added.stderr)
    assert.include(added.stdout, "3")

    const outside = await runCli(["call", "--config", config, "--profile", "adder", "stub__echo", '{"text":"x"}'])
    assert.strictEqual(outside.code, 2)
    assert.strictEqual(outside.stdout, "")
    assert.include(outside.stderr, 'clawtool: unknown tool "stub__echo"')
    // The same tool without the profile: the whole catalog.
    const whole = await runCli(["call", "--config", config, "stub__echo", '{"text":"x"}'])
    assert.strictEqual(whole.code, 0, whole.stderr)

    const unknown = await runCli(["call", "--config", config, "--profile", "addr", "stub__add", '{"a":1,"b":2}'])
    assert.strictEqual(unknown.code, 2)
    assert.include(unknown.stderr, 'clawtool: no profile named "addr"')
    assert.include(unknown.stderr, "adder")
  })

  it("an error result exits 1 with its text on stderr; [trust] confirm refuses without a terminal; the call is audited; the children stop", async () => {
    const dir = tempDir("clawtool-call-")
    const pidFile = path.join(dir, "pid")
    const state = path.join(dir, "state")
    const config = writeConfig(
      `[sources.stub]\ncommand = ${stubCommand("--grandchild", pidFile)}\n\n[trust]\nconfirm = ["stub.add"]\n`
    )
    const env = { CLAWTOOL_STATE_DIR: state }
    const failed = await runCli(["call", "--config", config, "stub__echo"], env)
    assert.strictEqual(failed.code, 1)
    assert.strictEqual(failed.stdout, "")
    assert.include(failed.stderr, "missing text")
    // Nothing the command started outlives it: the child and the child's own child.
    for (const file of [pidFile, `${pidFile}.self`]) {
      const pid = Number(fs.readFileSync(file, "utf8"))
      assert.isFalse(await stillRunning(pid), `${file}: pid ${pid} still running`)
    }

    const refused = await runCli(["call", "--config", config, "stub__add", '{"a":1,"b":2}'], env)
    assert.strictEqual(refused.code, 1)
    assert.include(refused.stderr, "[trust] confirm")
    assert.include(refused.stderr, "this host cannot be asked")

    const echoed = await runCli(["call", "--config", config, "stub__echo", "--arg", "text=hi"], env)
    assert.strictEqual(echoed.code, 0, echoed.stderr)
    assert.strictEqual(echoed.stdout, "echo:hi\n")

    const lines = fs
      .readFileSync(path.join(state, "audit.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { tool: string; outcome: string; client: string })
    assert.deepStrictEqual(
      lines.map(({ tool, outcome, client }) => [tool, outcome, client]),
      [
        ["echo", "error", "clawtool-call"],
        ["add", "denied", "clawtool-call"],
        ["echo", "ok", "clawtool-call"]
      ]
    )
  })
})

describe("clawtool tools search (built CLI)", () => {
  it("ranks the demo's tools for a query with their scores; --json and --limit; an empty query is a usage error", async () => {
    const table = await runCli(["tools", "search", "--config", demo, "add a note"])
    assert.strictEqual(table.code, 0, table.stderr)
    const [header, ...rows] = table.stdout.trim().split("\n")
    assert.match(header!, /^SCORE\s+NAME\s+DESCRIPTION$/)
    const cells = rows.map((row) => row.split(/\s{2,}/))
    assert.strictEqual(cells[0]![1], "notes__add_note")
    const scores = cells.map((row) => Number(row[0]))
    assert.isTrue(
      scores.every((score, i) => Number.isFinite(score) && score > 0 && (i === 0 || score <= scores[i - 1]!)),
      table.stdout
    )
    assert.strictEqual(rows.length, 5) // the default limit, as ToolSearch's

    const json = await runCli(["tools", "search", "--config", demo, "--json", "--limit", "2", "time zone"])
    assert.strictEqual(json.code, 0, json.stderr)
    const found = JSON.parse(json.stdout) as {
      query: string
      results: ReadonlyArray<{ name: string; score: number; inputSchema: { properties: object } }>
      catalogHash: string
    }
    assert.strictEqual(found.query, "time zone")
    assert.deepStrictEqual(
      found.results.map((hit) => hit.name),
      ["clock__now", found.results[1]!.name]
    )
    assert.strictEqual(found.results.length, 2)
    assert.property(found.results[0]!.inputSchema.properties, "timezone")
    assert.match(found.catalogHash, /^[0-9a-f]{64}$/)

    const empty = await runCli(["tools", "search", "--config", demo, " "])
    assert.strictEqual(empty.code, 2)
    assert.include(empty.stderr, "clawtool: the query is empty")
    const tooMany = await runCli(["tools", "search", "--config", demo, "--limit", "51", "note"])
    assert.strictEqual(tooMany.code, 2)
    assert.include(tooMany.stderr, "clawtool: --limit is 1 to 50, got 51")
  })
})

/** A port nothing listens on (bound, then closed). */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })

const writeFile = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

describe("clawtool doctor (built CLI)", () => {
  it("a healthy setup: every check passes, the hosts pointing at clawtool are named; exit 0", async () => {
    const home = tempDir("clawtool-doctor-home-")
    writeFile(
      path.join(home, ".cursor", "mcp.json"),
      JSON.stringify({ mcpServers: { clawtool: { command: "clawtool", args: ["serve"] } } })
    )
    const env = { HOME: home, CLAWTOOL_STATE_DIR: path.join(home, "state") }
    const report = await runCli(["doctor", "--config", demo], env)
    assert.strictEqual(report.code, 0, report.stdout + report.stderr)
    const lines = report.stdout.split("\n")
    for (const check of [
      "config",
      "secrets",
      "source notes",
      "source clock",
      "cache folder",
      "state folder",
      "node",
      "ripgrep"
    ]) {
      assert.isTrue(
        lines.some((line) => new RegExp(`^ok\\s+${check}\\s`).test(line)),
        `${check}:\n${report.stdout}`
      )
    }
    assert.match(report.stdout, /^ok\s+source notes\s+running, 3 tools \(\d+ ms\)$/m)
    assert.match(report.stdout, /^ok\s+host Cursor\s+~\/\.cursor\/mcp\.json: points at clawtool \(clawtool\)$/m)
    assert.notInclude(report.stdout, "fix:")
    assert.match(report.stdout, /\nall \d+ checks passed\n$/)

    const json = await runCli(["doctor", "--config", demo, "--json"], env)
    assert.strictEqual(json.code, 0, json.stderr)
    const { checks } = JSON.parse(json.stdout) as { checks: ReadonlyArray<{ check: string; status: string }> }
    assert.deepStrictEqual(
      checks.filter((check) => check.status !== "ok"),
      []
    )
  })

  it("an OAuth source without tokens: its login is a failed check with the login command as the fix", async () => {
    const port = await closedPort()
    const config = writeConfig(`[sources.linear]\nurl = "http://127.0.0.1:${port}/mcp"\noauth = true\n`, "oauth.toml")
    const home = tempDir("clawtool-doctor-home-")
    const report = await runCli(["doctor", "--config", config], {
      HOME: home,
      CLAWTOOL_STATE_DIR: path.join(home, "state")
    })
    assert.strictEqual(report.code, 1, report.stdout + report.stderr)
    assert.match(
      report.stdout,
      new RegExp(
        `^FAIL\\s+oauth linear\\s+not logged in \\(http://127\\.0\\.0\\.1:${port}/mcp\\)\\n\\s+fix: clawtool auth login linear$`,
        "m"
      )
    )
  })

  it("a broken setup: each problem explained with its fix; exit 1", async () => {
    const home = tempDir("clawtool-doctor-home-")
    writeFile(
      path.join(home, ".cursor", "mcp.json"),
      JSON.stringify({ mcpServers: { github: { command: "npx", args: ["-y", "github-mcp"] } } })
    )
    writeFile(path.join(home, ".gemini", "settings.json"), '{\n  "mcpServers": {\n    "x": \n}\n')
    const cacheFile = path.join(home, "not-a-folder")
    writeFile(cacheFile, "")
    const port = await closedPort()
    const config = writeConfig(
      `[sources.bad]\ncommand = ${stubCommand("--exit-at-once", "3")}\n\n[sources.good]\ncommand = ${stubCommand()}\n\n[http]\nlisten = "127.0.0.1:${port}"\n`,
      "doctor.toml"
    )
    const secrets = path.join(path.dirname(config), "secrets.toml")
    writeFile(secrets, '[scopes.global]\nTOKEN = "x"\n')
    fs.chmodSync(secrets, 0o644)
    const env = { HOME: home, CLAWTOOL_CACHE_DIR: cacheFile, CLAWTOOL_STATE_DIR: path.join(home, "state") }
    const report = await runCli(["doctor", "--config", config], env)
    assert.strictEqual(report.code, 1, report.stdout + report.stderr)
    const fixOf = (check: RegExp) => {
      const lines = report.stdout.split("\n")
      const at = lines.findIndex((line) => check.test(line))
      assert.notStrictEqual(at, -1, `${check}:\n${report.stdout}`)
      return lines[at + 1]!.trim()
    }
    assert.strictEqual(
      fixOf(/^FAIL\s+secrets mode\s+.*mode 0644: other users can read the secrets$/),
      `fix: chmod 600 ${secrets}`
    )
    assert.match(
      fixOf(/^FAIL\s+source bad\s/),
      /^fix: run it by hand to see why: .*stub-server\.mjs --exit-at-once 3; /
    )
    assert.match(report.stdout, /^ok\s+source good\s+running, \d+ tools \(\d+ ms\)$/m)
    assert.strictEqual(
      fixOf(new RegExp(`^FAIL\\s+daemon\\s+http://127\\.0\\.0\\.1:${port}/healthz: no answer$`)),
      `fix: start it: clawtool serve (it listens on [http] listen = "127.0.0.1:${port}"), or remove [http] listen`
    )
    assert.strictEqual(
      fixOf(/^FAIL\s+cache folder\s+.*not-a-folder is not writable/),
      "fix: make it writable by you, or set CLAWTOOL_CACHE_DIR to a folder that is"
    )
    assert.strictEqual(
      fixOf(/^WARN\s+host Cursor\s+~\/\.cursor\/mcp\.json: still lists 1 server itself \(github\)$/),
      "fix: clawtool init --apply-hosts moves them into clawtool (--dry-run shows the changes first)"
    )
    assert.match(
      fixOf(/^WARN\s+host Gemini CLI\s+~\/\.gemini\/settings\.json:4: /),
      /^fix: fix .*settings\.json; clawtool init skips it$/
    )
    assert.match(report.stdout, /\n4 of \d+ checks failed, 3 warnings\n$/)

    // A config that does not parse: named with its line, and nothing started.
    const invalid = writeConfig("[sources.x\ncommand = 1\n", "invalid.toml")
    const parse = await runCli(["doctor", "--config", invalid], env)
    assert.strictEqual(parse.code, 1)
    assert.match(parse.stdout, /^FAIL\s+config\s+.*invalid\.toml.*1/m)
    assert.include(parse.stdout, `fix: edit ${invalid} where the message says, then run clawtool doctor again`)
    assert.notInclude(parse.stdout, "source ")

    // Secrets that do not parse: named, and no source is started without them.
    fs.writeFileSync(secrets, "TOKEN = 1\n")
    const badSecrets = await runCli(["doctor", "--config", config], env)
    assert.strictEqual(badSecrets.code, 1)
    assert.match(badSecrets.stdout, /^FAIL\s+secrets\s+.*secrets\.toml:1/m)
    assert.include(
      badSecrets.stdout,
      `fix: edit ${secrets} where the message says ([scopes.<name>] tables of KEY = "value")`
    )
    assert.notInclude(badSecrets.stdout, "source bad")
  })
})
