import { assert, beforeAll, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, main, runCliAsync as runCli, writeConfig } from "../lib/cli.js"
import { stubCommand } from "../lib/sources.js"

beforeAll(ensureBuilt, 120_000)

const original = `# my clawtool config: this comment must survive every edit
name_budget = 64   # a trailing comment too

# the stub
[sources.stub]
command = ${stubCommand()}  # inline comment
`

const filesIn = (file: string) => fs.readdirSync(path.dirname(file)).sort()

describe("clawtool source add/remove/enable/disable (built CLI, temp config)", () => {
  it("edits keep comments, write atomically with the file's mode, and validate first", async () => {
    const config = writeConfig(original)
    fs.chmodSync(config, 0o640)
    // Options after the positional name, the command after --.
    const added = await runCli([
      "source",
      "add",
      "zed",
      "--config",
      config,
      "--env",
      "A=${TOKEN}",
      "--",
      "node",
      "server.mjs",
      "--flag"
    ])
    assert.strictEqual(added.code, 0, added.stderr)
    const text = fs.readFileSync(config, "utf8")
    assert.isTrue(text.startsWith(original), text)
    assert.include(text, `[sources.zed]\ncommand = ["node", "server.mjs", "--flag"]\nenv = { A = "\${TOKEN}" }\n`)
    assert.strictEqual(fs.statSync(config).mode & 0o777, 0o640)
    assert.deepStrictEqual(filesIn(config), ["config.toml"]) // no temp file left behind

    const listed = await runCli(["source", "list", "--json", "--config", config])
    assert.deepStrictEqual(
      (JSON.parse(listed.stdout) as Array<{ instance: string }>).map((row) => row.instance),
      ["stub", "zed"]
    )

    const disabled = await runCli(["source", "disable", "zed", "--config", config])
    assert.strictEqual(disabled.code, 0, disabled.stderr)
    assert.include(fs.readFileSync(config, "utf8"), "[sources.zed]\nenabled = false\n")
    const enabled = await runCli(["source", "enable", "zed", "--config", config])
    assert.strictEqual(enabled.code, 0, enabled.stderr)
    assert.include(fs.readFileSync(config, "utf8"), "[sources.zed]\nenabled = true\n")

    const removed = await runCli(["source", "remove", "zed", "--config", config])
    assert.strictEqual(removed.code, 0, removed.stderr)
    assert.strictEqual(fs.readFileSync(config, "utf8"), original)
  })

  it("refuses bad edits with exit 2 and leaves the file as it was", async () => {
    const config = writeConfig(original)
    const cases: ReadonlyArray<[ReadonlyArray<string>, string]> = [
      [["source", "add", "stub", "--", "node"], "already exists"],
      [["source", "add", "Bad_Name", "--", "node"], `use "bad-name"`],
      [["source", "add", "web", "--url", "ftp://example.com/mcp"], "url must be an http(s) URL"],
      [["source", "add", "web", "--url", "https://example.com/mcp", "--", "node"], "a command or a --url, not both"],
      [["source", "add", "web", "--header", "A=b", "--", "node"], "--header is for remote sources"],
      [["source", "add", "zed", "--env", "1BAD=x", "--", "node"], "environment variable name"],
      [["source", "remove", "stbu"], `did you mean "stub"`],
      // No close name: the configured ones are named instead.
      [["source", "remove", "nope"], `no source named "nope"; configured sources: stub`],
      [["source", "enable", "nope"], `no source named "nope"; configured sources: stub`],
      [["source", "disable", "nope"], `no source named "nope"; configured sources: stub`],
      [["auth", "login", "nope"], `no source named "nope"; no source has oauth set`],
      [["auth", "logout", "nope"], `no source named "nope"; no source has oauth set`]
    ]
    for (const [args, message] of cases) {
      const result = await runCli([...args.slice(0, 2), "--config", config, ...args.slice(2)])
      assert.strictEqual(result.code, 2, `${args.join(" ")}: ${result.stderr}`)
      assert.include(result.stderr, message)
      assert.strictEqual(fs.readFileSync(config, "utf8"), original)
    }
    // A config that is already invalid is not edited further.
    const broken = writeConfig(`${original}restart_window = "soon"\n`, "broken.toml")
    const result = await runCli(["source", "add", "zed", "--config", broken, "--", "node"])
    assert.strictEqual(result.code, 2)
    assert.include(result.stderr, "fix the config before editing it")
    assert.strictEqual(fs.readFileSync(broken, "utf8"), `${original}restart_window = "soon"\n`)
  })

  it("set-secret writes [scopes.<name>] beside the config, mode 0600, from --value or stdin", async () => {
    const config = writeConfig(original)
    const secrets = path.join(path.dirname(config), "secrets.toml")
    const fromFlag = await runCli(["source", "set-secret", "global", "API_KEY", "--value", 'v"1', "--config", config])
    assert.strictEqual(fromFlag.code, 0, fromFlag.stderr)
    assert.notInclude(fromFlag.stdout, 'v"1')
    assert.strictEqual(fs.statSync(secrets).mode & 0o777, 0o600)
    assert.strictEqual(fs.readFileSync(secrets, "utf8"), `[scopes.global]\nAPI_KEY = "v\\"1"\n`)

    const fromStdin = spawnSync(process.execPath, [main, "source", "set-secret", "stub", "TOKEN", "--config", config], {
      input: "s3cret\n",
      encoding: "utf8"
    })
    assert.strictEqual(fromStdin.status, 0, fromStdin.stderr)
    assert.strictEqual(
      fs.readFileSync(secrets, "utf8"),
      `[scopes.global]\nAPI_KEY = "v\\"1"\n\n[scopes.stub]\nTOKEN = "s3cret"\n`
    )
    const unknown = await runCli(["source", "set-secret", "stbu", "TOKEN", "--value", "x", "--config", config])
    assert.strictEqual(unknown.code, 2)
    assert.include(unknown.stderr, `did you mean "stub"`)
    const far = await runCli(["source", "set-secret", "nope", "TOKEN", "--value", "x", "--config", config])
    assert.strictEqual(far.code, 2)
    assert.include(far.stderr, `give an instance name or global; configured sources: stub`)
  })
})

describe("clawtool tools enable/disable and unknown selectors (built CLI)", () => {
  it("disables a known tool, refuses an unknown one with the closest names, warns about unknown selectors", async () => {
    const config = writeConfig(original)
    const disabled = await runCli(["tools", "disable", "stub.echo", "--config", config])
    assert.strictEqual(disabled.code, 0, disabled.stderr)
    assert.isTrue(fs.readFileSync(config, "utf8").endsWith(`\n[tools."stub.echo"]\nenabled = false\n`))
    // A disabled tool is still known: enabling it again works.
    const enabled = await runCli(["tools", "enable", "stub.echo", "--config", config])
    assert.strictEqual(enabled.code, 0, enabled.stderr)
    assert.isTrue(fs.readFileSync(config, "utf8").endsWith(`\n[tools."stub.echo"]\nenabled = true\n`))

    const typo = await runCli(["tools", "disable", "stub.ecoh", "--config", config])
    assert.strictEqual(typo.code, 2)
    assert.include(typo.stderr, `did you mean "stub.echo"`)
    const instance = await runCli(["tools", "disable", "stbu.echo", "--config", config])
    assert.strictEqual(instance.code, 2)
    assert.include(instance.stderr, `did you mean "stub.echo"`)
    // No close name: the source's tools, or the configured sources, are named instead.
    const noTool = await runCli(["tools", "disable", "stub.no_such_tool", "--config", config])
    assert.strictEqual(noTool.code, 2)
    assert.include(
      noTool.stderr,
      `source stub has no tool "no_such_tool"; stub has: add, big, cancelled, echo, env_names, meta, slow`
    )
    const noSource = await runCli(["tools", "enable", "nosuch.ping", "--config", config])
    assert.strictEqual(noSource.code, 2)
    assert.include(noSource.stderr, `no source named "nosuch"; configured sources: stub`)

    const withGhosts = writeConfig(
      `${original}\n[tools."ghost.x"]\nenabled = false\n[tools."stub.ecoh"]\nalways_load = true\n`,
      "ghosts.toml"
    )
    for (const command of [["tools", "list"], ["health"]]) {
      const result = await runCli([...command, "--config", withGhosts])
      assert.strictEqual(result.code, 0, result.stderr)
      assert.include(result.stderr, `warning: [tools."ghost.x"] matches nothing: no source named "ghost"`)
      assert.include(
        result.stderr,
        `warning: [tools."stub.ecoh"] matches nothing: source stub has no tool "ecoh"; did you mean "stub.echo"?`
      )
    }
  })
})

describe("help and flags (built CLI, piped)", () => {
  const commands = [
    [],
    ["serve"],
    ["health"],
    ["source", "list"],
    ["source", "add"],
    ["source", "remove"],
    ["source", "enable"],
    ["source", "disable"],
    ["source", "set-secret"],
    ["tools", "list"],
    ["tools", "enable"],
    ["tools", "disable"],
    ["tools", "export-typescript"],
    ["trust", "status"],
    ["trust", "diff"],
    ["trust", "approve"],
    ["call"],
    ["tools", "search"],
    ["doctor"],
    ["completions"]
  ]

  it("--help of every command (piped): no escape codes, no filler, the synopsis with the full path, examples; help <command> the same", async () => {
    for (const command of commands) {
      const result = await runCli([...command, "--help"])
      assert.strictEqual(result.code, 0, `${command.join(" ")}: ${result.stderr}`)
      assert.notInclude(result.stdout, "\x1b[", command.join(" "))
      assert.notInclude(result.stdout, "A user-defined piece of text", command.join(" "))
      assert.include(result.stdout, `SYNOPSIS\n    ${["clawtool", ...command].join(" ")}`, command.join(" "))
      assert.match(result.stdout, /EXAMPLES\n {4}\$ /, command.join(" "))
      assert.notInclude(result.stdout, "This setting is optional", command.join(" "))
      // `clawtool help <command>` is the same page.
      if (command.length === 2 && command[0] === "tools") {
        assert.strictEqual((await runCli(["help", ...command])).stdout, result.stdout, command.join(" "))
      }
    }
    const root = (await runCli(["--help"])).stdout
    assert.match(root, /\n {2}serving\n {4}serve /)
    assert.match((await runCli(["source"])).stdout, /\nCOMMANDS\n(.*\n)* {4}add +Add a source/)
    const unknown = await runCli(["help", "sorce"])
    assert.strictEqual(unknown.code, 2)
    assert.include(unknown.stderr, 'clawtool: no command "sorce"; did you mean "source"?')
    const completions = await runCli(["completions", "bash"])
    assert.strictEqual(completions.code, 0, completions.stderr)
    assert.include(completions.stdout, "complete -F _clawtool_bash_completions")
  }, 150_000)

  it("a --secrets file that does not exist exits 2; --log-level after the subcommand works; --wizard without a terminal exits 2", async () => {
    const config = writeConfig(original)
    for (const command of [["source", "list"], ["health"], ["tools", "list"]]) {
      const result = await runCli([...command, "--config", config, "--secrets", "/no/such/secrets.toml"])
      assert.strictEqual(result.code, 2, command.join(" "))
      assert.include(result.stderr, "/no/such/secrets.toml")
    }
    const debug = await runCli(["source", "list", "--config", config, "--log-level", "debug"])
    assert.strictEqual(debug.code, 0, debug.stderr)
    assert.include(debug.stderr, "DEBUG")
    const wizard = await runCli(["--wizard"])
    assert.strictEqual(wizard.code, 2)
    assert.include(wizard.stderr, "terminal")
  })
})
