import { assert, beforeAll, describe, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, freshCacheDir, main, runCliAsync as runCli, tempDirEnv, writeConfig } from "../lib/cli.js"
import { root, stubCommand } from "../lib/sources.js"
import { makeHostHome, snapshot } from "../Init/hosts.js"

beforeAll(ensureBuilt, 120_000)

const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`

/**
 * Runs the built CLI on a pseudo-terminal (util-linux `script`), so stdin and stderr are TTYs; `answer` is typed once
 * the question has been asked.
 */
const runOnTerminal = (args: ReadonlyArray<string>, env: Record<string, string>, answer: string) =>
  new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const command = [process.execPath, main, ...args].map(quote).join(" ")
    const child = spawn("script", ["-qfec", command, "/dev/null"], {
      cwd: root,
      env: { PATH: process.env.PATH ?? "", TERM: "dumb", ...tempDirEnv, CLAWTOOL_CACHE_DIR: freshCacheDir(), ...env },
      timeout: 60_000
    })
    let output = ""
    let answered = false
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk
      if (!answered && output.includes("[y/N] ")) {
        answered = true
        child.stdin.write(answer)
      }
    })
    child.stderr.resume()
    child.once("error", reject)
    child.once("close", (code) => resolve({ code, output }))
  })

const backupsBeside = (file: string) =>
  fs.readdirSync(path.dirname(file)).filter((name) => name.startsWith(`${path.basename(file)}.clawtool-backup-`))

describe("clawtool init on a terminal (built CLI, a pseudo-terminal)", () => {
  it("asks before touching the hosts: a yes rewrites them (with backups), a no leaves them as they are", async () => {
    const yes = makeHostHome()
    const cursor = path.join(yes.home, ".cursor", "mcp.json")
    const before = fs.readFileSync(cursor, "utf8")
    const said = await runOnTerminal(["init", "--project", yes.project], yes.env, "y\r")
    assert.strictEqual(said.code, 0, said.output)
    assert.match(said.output, /Point \d+ host file\(s\) at clawtool instead \(a backup of each is kept\)\? \[y\/N\] /)
    assert.match(said.output, /rewrote Cursor ~\/\.cursor\/mcp\.json \(backup: mcp\.json\.clawtool-backup-/)
    assert.notStrictEqual(fs.readFileSync(cursor, "utf8"), before)
    assert.include(fs.readFileSync(cursor, "utf8"), '"clawtool"')
    assert.strictEqual(backupsBeside(cursor).length, 1)
    assert.strictEqual(fs.readFileSync(path.join(path.dirname(cursor), backupsBeside(cursor)[0]!), "utf8"), before)

    const no = makeHostHome()
    const hostsBefore = snapshot(no.home)
    const refused = await runOnTerminal(["init", "--project", no.project], no.env, "n\r")
    assert.strictEqual(refused.code, 0, refused.output)
    assert.include(
      refused.output,
      "the hosts' files are unchanged; clawtool init --apply-hosts points them at clawtool"
    )
    const after = snapshot(no.home)
    for (const file of Object.keys(hostsBefore)) assert.strictEqual(after[file], hostsBefore[file], file)
  })
})

describe("clawtool init with a host file it cannot read (built CLI)", () => {
  it("reports it with host and file (an invalid one with its line), skips it, and never rewrites it", async () => {
    const { home, project, env } = makeHostHome()
    // Root reads any file whatever its mode: a folder where the file should be cannot be read by anyone.
    const cursor = path.join(home, ".cursor", "mcp.json")
    fs.rmSync(cursor)
    fs.mkdirSync(cursor)
    const unreadable: Array<string> = []
    if (process.getuid?.() !== 0) {
      const windsurf = path.join(home, ".codeium", "windsurf", "mcp_config.json")
      fs.chmodSync(windsurf, 0o000)
      unreadable.push(windsurf)
    }
    const gemini = path.join(project, ".gemini", "settings.json")
    const geminiBefore = fs.readFileSync(gemini, "utf8")
    const result = await runCli(["init", "--project", project, "--apply-hosts"], env)
    for (const file of unreadable) fs.chmodSync(file, 0o600)
    assert.strictEqual(result.code, 0, result.stderr)
    assert.match(result.stdout, /skipped file: Cursor ~\/\.cursor\/mcp\.json: .*\(left as it is\)/)
    assert.match(result.stdout, /skipped file: Gemini CLI ~\/src\/app\/\.gemini\/settings\.json:4: .*\(left as it is\)/)
    for (const file of unreadable) assert.include(result.stdout, `skipped file: Windsurf ${file.replace(home, "~")}: `)
    assert.isTrue(fs.statSync(cursor).isDirectory())
    assert.deepStrictEqual(fs.readdirSync(cursor), [])
    assert.deepStrictEqual(backupsBeside(cursor), [])
    assert.strictEqual(fs.readFileSync(gemini, "utf8"), geminiBefore)
    assert.deepStrictEqual(backupsBeside(gemini), [])
    // The readable hosts were still rewritten.
    assert.match(result.stdout, /rewrote Claude Code ~\/\.claude\.json \(backup: /)
  })
})

describe("clawtool call on a terminal (built CLI, a pseudo-terminal)", () => {
  it("[trust] confirm asks the user: a yes runs the call, a no refuses it (exit 1)", async () => {
    const config = writeConfig(`[sources.stub]\ncommand = ${stubCommand()}\n\n[trust]\nconfirm = ["stub.add"]\n`)
    const call = ["call", "--config", config, "stub__add", '{"a":1,"b":2}']
    const yes = await runOnTerminal(call, {}, "y\r")
    assert.strictEqual(yes.code, 0, yes.output)
    assert.include(yes.output, "clawtool asks before running stub__add")
    assert.include(yes.output, 'Arguments: {"a":1,"b":2}')
    assert.match(yes.output, /Run stub__add\? \[y\/N\] [^\n]*y\r*\n3\r?\n$/)

    const no = await runOnTerminal(call, {}, "n\r")
    assert.strictEqual(no.code, 1, no.output)
    assert.include(no.output, "stub__add was not run")
    assert.include(no.output, "the user declined it")
  })
})
