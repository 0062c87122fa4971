import { assert, beforeAll, describe, it } from "@effect/vitest"
import * as Jsonc from "jsonc-parser"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Toml from "smol-toml"
import { ensureBuilt, main, runCliAsync as runCli } from "../lib/cli.js"
import { braveKey, githubToken, linearToken, makeHostHome, snapshot } from "../Init/hosts.js"

beforeAll(ensureBuilt, 120_000)

/** The host files, parsed, with their server section taken out: what must not change when the servers do. */
const withoutServers = (file: string, text: string): unknown => {
  if (file.endsWith(".toml")) {
    const document = Toml.parse(text) as Record<string, unknown>
    delete document["mcp_servers"]
    return document
  }
  const document = Jsonc.parse(text, [], { allowTrailingComma: true }) as Record<string, unknown>
  delete document["mcpServers"]
  delete document["servers"]
  const projects = document["projects"] as Record<string, Record<string, unknown>> | undefined
  for (const entry of Object.values(projects ?? {})) delete entry["mcpServers"]
  return document
}

const serversOf = (file: string, text: string): Record<string, unknown> => {
  if (file.endsWith(".toml")) return (Toml.parse(text) as { mcp_servers: Record<string, unknown> }).mcp_servers
  const document = Jsonc.parse(text, [], { allowTrailingComma: true }) as Record<string, Record<string, unknown>>
  return document["mcpServers"] ?? document["servers"] ?? {}
}

const sortedKeys = (value: Record<string, unknown>) => Object.keys(value).sort()

describe("clawtool init (built CLI, a temporary HOME with every host's config)", () => {
  it("plans, writes the config and secrets, rewrites the hosts, undoes, and changes nothing the second time", async () => {
    const { home, project, files, env } = makeHostHome()
    const init = (...args: ReadonlyArray<string>) => runCli(["init", "--project", project, ...args], env)
    const original = snapshot(home)
    const configFile = path.join(home, ".config", "clawtool", "config.toml")
    const secretsFile = path.join(home, ".config", "clawtool", "secrets.toml")
    const secrets = [githubToken, linearToken, braveKey]

    // --dry-run: the plan and the diff of every file, nothing written, no secret printed.
    const dry = await init("--dry-run", "--apply-hosts")
    assert.strictEqual(dry.code, 0, dry.stderr)
    assert.deepStrictEqual(snapshot(home), original)
    for (const secret of secrets) assert.notInclude(dry.stdout + dry.stderr, secret)
    for (const file of [
      configFile,
      secretsFile,
      ...Object.keys(files).filter((file) => !file.includes("src/app/.gemini"))
    ]) {
      assert.include(dry.stdout, `+++ ${path.resolve(home, file)}\t`, file)
    }
    assert.include(dry.stdout, 'GITHUB_PERSONAL_ACCESS_TOKEN = "********"')

    // The plan: host, file, server, kind; the same server under two names; the invalid file with its line.
    const plain = await init()
    assert.strictEqual(plain.code, 0, plain.stderr)
    const rows = plain.stdout.split("\n").map((line) => line.split(/\s{2,}/))
    const row = (host: string, server: string) => rows.find((cells) => cells[0] === host && cells[2] === server)
    assert.deepStrictEqual(row("Claude Code", "github"), ["Claude Code", "~/.claude.json", "github", "stdio", "github"])
    assert.deepStrictEqual(row("Cursor", "GitHub MCP"), [
      "Cursor",
      "~/.cursor/mcp.json",
      "GitHub MCP",
      "stdio",
      "github"
    ])
    assert.deepStrictEqual(row("Windsurf", "brave_search"), [
      "Windsurf",
      "~/.codeium/windsurf/mcp_config.json",
      "brave_search",
      "stdio, disabled",
      "brave-search"
    ])
    assert.deepStrictEqual(row("VS Code", "copilot")?.slice(3), ["remote (streamable-http)", "copilot"])
    assert.deepStrictEqual(row("Codex CLI", "remote")?.slice(3), ["remote (streamable-http), disabled", "remote"])
    assert.deepStrictEqual(row("Claude Code", "puppeteer")?.slice(1, 2), ["~/src/app/.mcp.json"])
    assert.include(plain.stdout, "same server: Claude Code github = Cursor GitHub MCP → github")
    assert.include(plain.stdout, "same server: Windsurf remote = Codex CLI remote → remote")
    assert.include(plain.stdout, "skipped file: Gemini CLI ~/src/app/.gemini/settings.json:4: invalid JSON")
    assert.include(plain.stdout, 'skipped: Claude Code ~/.claude.json ide: type "ws-ide"')

    // The config: one source per distinct server, kebab-case, disabled kept, secrets as references; secrets 0600.
    const config = Toml.parse(fs.readFileSync(configFile, "utf8")) as {
      sources: Record<string, { env?: Record<string, string>; headers?: Record<string, string>; enabled?: boolean }>
    }
    assert.deepStrictEqual(sortedKeys(config.sources), [
      "brave-search",
      "copilot",
      "fetch",
      "fs",
      "github",
      "linear",
      "local-notes",
      "notes",
      "puppeteer",
      "remote",
      "remote-via-bridge",
      "sentry"
    ])
    assert.strictEqual(config.sources["brave-search"]!.enabled, false)
    assert.strictEqual(config.sources["remote"]!.enabled, undefined) // enabled in Windsurf, disabled in Codex
    assert.deepStrictEqual(config.sources["github"]!.env, {
      GITHUB_PERSONAL_ACCESS_TOKEN: "${GITHUB_PERSONAL_ACCESS_TOKEN}"
    })
    assert.deepStrictEqual(config.sources["linear"]!.headers, { Authorization: "Bearer ${AUTHORIZATION}" })
    assert.deepStrictEqual(config.sources["sentry"]!.headers, { Authorization: "Bearer ${SENTRY_TOKEN}" })
    assert.deepStrictEqual(config.sources["fetch"]!.env, { FOO: "${FOO}" })
    for (const secret of secrets) assert.notInclude(fs.readFileSync(configFile, "utf8"), secret)
    assert.strictEqual(fs.statSync(secretsFile).mode & 0o777, 0o600)
    assert.deepStrictEqual(Toml.parse(fs.readFileSync(secretsFile, "utf8")), {
      scopes: {
        github: { GITHUB_PERSONAL_ACCESS_TOKEN: githubToken },
        linear: { AUTHORIZATION: linearToken },
        "brave-search": { BRAVE_API_KEY: braveKey }
      }
    })
    // clawtool itself reads what init wrote, secrets resolved.
    const listed = await runCli(["source", "list", "--json", "--config", configFile], env)
    assert.strictEqual(listed.code, 0, listed.stderr)
    const github = (JSON.parse(listed.stdout) as Array<{ instance: string; secrets: string }>).find(
      (item) => item.instance === "github"
    )
    assert.strictEqual(github?.secrets, "ready")
    // Without --apply-hosts (and no terminal to ask on), the hosts' files are as they were.
    for (const [file, text] of Object.entries(files))
      assert.strictEqual(fs.readFileSync(path.join(home, file), "utf8"), text)

    // An existing config is never overwritten: a new server without --merge is refused, with --merge added.
    const cursorFile = path.join(home, ".cursor", "mcp.json")
    const withNew = files[".cursor/mcp.json"]!.replace(
      '"mcpServers": {',
      '"mcpServers": {\n    "memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"] },'
    )
    fs.writeFileSync(cursorFile, withNew)
    const configText = fs.readFileSync(configFile, "utf8")
    const refused = await init()
    assert.strictEqual(refused.code, 2)
    assert.include(refused.stderr, "--merge")
    assert.strictEqual(fs.readFileSync(configFile, "utf8"), configText)
    const merged = await init("--merge")
    assert.strictEqual(merged.code, 0, merged.stderr)
    const mergedText = fs.readFileSync(configFile, "utf8")
    assert.isTrue(mergedText.startsWith(configText))
    assert.include(mergedText, "[sources.memory]")
    fs.writeFileSync(cursorFile, files[".cursor/mcp.json"]!)

    // --apply-hosts: each host file has one clawtool entry instead of its imported servers; nothing else changed.
    const applied = await init("--apply-hosts")
    assert.strictEqual(applied.code, 0, applied.stderr)
    const bin = path.resolve(main)
    for (const [relative, before] of Object.entries(files)) {
      const file = path.join(home, relative)
      const after = fs.readFileSync(file, "utf8")
      if (relative === "src/app/.gemini/settings.json") {
        assert.strictEqual(after, before, "an invalid file is never rewritten")
        continue
      }
      assert.deepStrictEqual(withoutServers(file, after), withoutServers(file, before), relative)
      const servers = serversOf(file, after)
      assert.deepStrictEqual(
        sortedKeys(servers),
        relative === ".claude.json" ? ["clawtool", "ide"] : ["clawtool"],
        relative
      )
      const entry = servers["clawtool"] as { command: string; args: Array<string> }
      assert.strictEqual(entry.command, process.execPath)
      assert.deepStrictEqual(entry.args, [bin, "serve"])
      const backups = fs
        .readdirSync(path.dirname(file))
        .filter((name) => name.startsWith(`${path.basename(file)}.clawtool-backup-`))
      assert.strictEqual(backups.length, 1, relative)
      assert.match(backups[0]!, /\.clawtool-backup-\d{8}T\d{6}\.\d{3}Z$/)
      assert.strictEqual(fs.readFileSync(path.join(path.dirname(file), backups[0]!), "utf8"), before)
    }
    const claudeJson = path.join(home, ".claude.json")
    assert.strictEqual(fs.statSync(claudeJson).mode & 0o777, 0o600)
    assert.deepStrictEqual(
      (Jsonc.parse(fs.readFileSync(claudeJson, "utf8")) as { projects: Record<string, { mcpServers: unknown }> })
        .projects[project]!.mcpServers,
      {}
    )
    const vscode = fs.readFileSync(path.join(home, ".config/Code/User/mcp.json"), "utf8")
    assert.include(vscode, '// My MCP servers (VS Code keeps comments here)\n{\n  "inputs"')
    assert.include(vscode, '  /* settings below the servers stay too */\n  "chat.mcp.discovery.enabled": false\n}\n')
    const codex = fs.readFileSync(path.join(home, ".codex/config.toml"), "utf8")
    assert.include(codex, 'model = "gpt-5"   # unrelated settings must survive\n')
    assert.include(codex, '[projects."/home/alice/src/app"]\ntrust_level = "trusted"\n')
    assert.include(
      fs.readFileSync(path.join(home, ".gemini/settings.json"), "utf8"),
      '"theme": "Default", // the host\'s own settings must survive'
    )

    // A second run changes nothing: the clawtool entries are not imported, every server is in the config already.
    const settled = snapshot(home)
    const again = await init("--apply-hosts")
    assert.strictEqual(again.code, 0, again.stderr)
    assert.deepStrictEqual(snapshot(home), settled)
    assert.include(again.stdout, "already clawtool: Cursor ~/.cursor/mcp.json clawtool")

    // --undo: every host file byte for byte as it was, the backups gone; the config and secrets stay.
    const undone = await init("--undo")
    assert.strictEqual(undone.code, 0, undone.stderr)
    const restored = snapshot(home)
    for (const [relative, text] of Object.entries(original)) {
      if (!relative.startsWith(".config/clawtool/")) assert.strictEqual(restored[relative], text, relative)
    }
    assert.deepStrictEqual(
      Object.keys(restored).filter((file) => file.includes(".clawtool-backup-")),
      []
    )
    assert.strictEqual(fs.statSync(claudeJson).mode & 0o777, 0o600)
  })

  it("--daemon URL: the hosts get `connect URL`; --config FILE: the config goes there", async () => {
    const { home, project, env } = makeHostHome()
    const original = snapshot(home)
    const custom = path.join(home, "custom", "clawtool.toml")
    const url = "http://127.0.0.1:9999/mcp"
    const dry = await runCli(["init", "--project", project, "--dry-run", "--daemon", url, "--config", custom], env)
    assert.strictEqual(dry.code, 0, dry.stderr)
    assert.deepStrictEqual(snapshot(home), original)
    assert.include(dry.stdout, `+++ ${custom}\t`)
    assert.include(dry.stdout, `+++ ${path.join(home, "custom", "secrets.toml")}\t`)
    assert.include(dry.stdout, `+args = [${JSON.stringify(path.resolve(main))}, "connect", ${JSON.stringify(url)}]`)
    assert.notInclude(dry.stdout, "npx clawtool")
  })
})
