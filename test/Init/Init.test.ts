import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Option } from "effect"
import * as Jsonc from "jsonc-parser"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Toml from "smol-toml"
import { parseConfig } from "../../src/services/Config.js"
import { type HostFile, hostFiles } from "../../src/cli/Init/Hosts.js"
import {
  configText,
  extractSecrets,
  instanceName,
  isSecret,
  planSources,
  secretsText
} from "../../src/cli/Init/Plan.js"
import { type FileReading, type ReadContext, readHostFile, translateVariables } from "../../src/cli/Init/Read.js"
import { rewriteHostFile } from "../../src/cli/Init/Rewrite.js"
import { replaceHostFile } from "../../src/cli/Init/Run.js"
import { tempDir } from "../lib/temp.js"
import { githubToken, hostTexts, linearToken } from "./hosts.js"

const home = "/home/alice"
const project = "/home/alice/src/app"
const context: ReadContext = { home, project, bin: "/opt/clawtool/dist/main.js" }
const files = hostFiles({ HOME: home }, home, project, "linux")
const hostFile = (file: string): HostFile => files.find((candidate) => candidate.file === path.join(home, file))!
const texts = hostTexts(project)

const read = (file: string, text = texts[file]!): FileReading =>
  Either.getOrThrow(readHostFile(hostFile(file), text, context))
const problem = (file: string, text: string) =>
  Either.getOrThrow(Either.flip(readHostFile(hostFile(file), text, context)))

const everyHost = () =>
  Object.keys(texts)
    .filter((file) => file !== "src/app/.gemini/settings.json")
    .map((file) => read(file))

describe("init: where the hosts keep their servers", () => {
  it("user files under HOME (XDG for the desktop apps, the hosts' own overrides) and the project's files", () => {
    const found = hostFiles(
      { HOME: home, XDG_CONFIG_HOME: "/x", CODEX_HOME: "/c", GEMINI_CLI_HOME: "/g", CLAUDE_CONFIG_DIR: "/cc" },
      home,
      project,
      "linux"
    )
    assert.deepStrictEqual(
      found.map((file) => [file.host, file.scope, file.file, file.format]),
      [
        ["claude-code", "user", "/cc/.claude.json", "jsonc"],
        ["claude-desktop", "user", "/x/Claude/claude_desktop_config.json", "jsonc"],
        ["cursor", "user", "/home/alice/.cursor/mcp.json", "jsonc"],
        ["vscode", "user", "/x/Code/User/mcp.json", "jsonc"],
        ["windsurf", "user", "/home/alice/.codeium/windsurf/mcp_config.json", "jsonc"],
        ["gemini", "user", "/g/.gemini/settings.json", "jsonc"],
        ["codex", "user", "/c/config.toml", "toml"],
        ["claude-code", "project", `${project}/.mcp.json`, "jsonc"],
        ["vscode", "project", `${project}/.vscode/mcp.json`, "jsonc"],
        ["cursor", "project", `${project}/.cursor/mcp.json`, "jsonc"],
        ["gemini", "project", `${project}/.gemini/settings.json`, "jsonc"],
        ["codex", "project", `${project}/.codex/config.toml`, "toml"]
      ]
    )
    assert.deepStrictEqual(found[0]!.sections, [["mcpServers"], ["projects", project, "mcpServers"]])
    assert.strictEqual(
      hostFiles({ HOME: home }, home, undefined, "darwin")[1]!.file,
      "/home/alice/Library/Application Support/Claude/claude_desktop_config.json"
    )
    // Run in the home folder, ~/.cursor/mcp.json is read once, as the user's file.
    const inHome = hostFiles({ HOME: home }, home, home, "linux").map((file) => file.file)
    assert.strictEqual(new Set(inHome).size, inHome.length)
  })
})

describe("init: reading a host's file", () => {
  it("translates each host's variables to ${VAR}", () => {
    assert.strictEqual(
      translateVariables("Bearer ${env:TOKEN} ${input:gh-token}", "editor", context),
      "Bearer ${TOKEN} ${GH_TOKEN}"
    )
    assert.strictEqual(
      translateVariables("${userHome}/n ${workspaceFolder}", "editor", context),
      `${home}/n ${project}`
    )
    assert.strictEqual(translateVariables("$FOO ${BAR:-x}", "gemini", context), "${FOO} ${BAR}")
    assert.strictEqual(translateVariables("$FOO ${BAR:-x}", "claude", context), "$FOO ${BAR}")
    assert.strictEqual(translateVariables("$FOO", "none", context), "$FOO")
  })

  it("JSONC with comments and trailing commas, remote types, disabled entries, Codex tables, clawtool's own entry", () => {
    const vscode = read(".config/Code/User/mcp.json")
    assert.deepStrictEqual(
      vscode.servers.map((server) => [server.name, server.server]),
      [
        [
          "fs",
          {
            _tag: "Stdio",
            command: ["npx", "-y", "@modelcontextprotocol/server-filesystem", `${home}/notes`],
            env: {},
            cwd: undefined
          }
        ],
        [
          "copilot",
          {
            _tag: "Remote",
            url: "https://api.githubcopilot.com/mcp/",
            transport: "streamable-http",
            headers: { Authorization: "Bearer ${GH_TOKEN}" }
          }
        ]
      ]
    )
    const windsurf = read(".codeium/windsurf/mcp_config.json")
    assert.deepStrictEqual(
      windsurf.servers.map((server) => [server.name, server.enabled, server.server._tag]),
      [
        ["brave_search", false, "Stdio"],
        ["remote", true, "Remote"]
      ]
    )
    const codex = read(".codex/config.toml")
    assert.deepStrictEqual(
      codex.servers.map((server) => [server.name, server.enabled, server.server]),
      [
        [
          "notes",
          true,
          {
            _tag: "Stdio",
            command: ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/alice/notes"],
            env: { FOO: "bar" },
            cwd: undefined
          }
        ],
        [
          "remote",
          false,
          {
            _tag: "Remote",
            url: "https://mcp.example.com/mcp",
            transport: "streamable-http",
            headers: { Authorization: "Bearer ${EXAMPLE_TOKEN}" }
          }
        ]
      ]
    )
    const claude = read(".claude.json")
    assert.deepStrictEqual(
      claude.servers.map((server) => [server.section.join("."), server.name]),
      [
        ["mcpServers", "github"],
        ["mcpServers", "sentry"],
        [`projects.${project}.mcpServers`, "local-notes"]
      ]
    )
    assert.deepStrictEqual(
      claude.skipped.map((entry) => [entry.name, entry.reason]),
      [["ide", 'type "ws-ide" is not stdio, http or sse']]
    )
    const withClawtool = read(
      ".cursor/mcp.json",
      `{ "mcpServers": { "clawtool": { "command": "node", "args": ["x"] }, "other": { "command": "/usr/bin/node", "args": ["${context.bin}", "serve"] } } }`
    )
    assert.deepStrictEqual([withClawtool.clawtool, withClawtool.servers], [["clawtool", "other"], []])
  })

  it("an invalid file is a problem with its line; a server section that is not an object too", () => {
    const broken = problem(".gemini/settings.json", texts["src/app/.gemini/settings.json"]!)
    assert.deepStrictEqual([broken.line, broken.detail], [4, "invalid JSON: CommaExpected"])
    const toml = problem(".codex/config.toml", 'model = "x"\n[mcp_servers.a\ncommand = "y"\n')
    assert.strictEqual(toml.line, 2)
    assert.match(toml.detail, /^invalid TOML: /)
    const notObject = problem(".cursor/mcp.json", '{\n  "a": 1,\n  "mcpServers": []\n}')
    assert.deepStrictEqual([notObject.line, notObject.detail], [3, "mcpServers is not an object of servers"])
  })
})

describe("init: the plan", () => {
  it("the same server under different names (and hosts) is one source; names are kebab-case and unique", () => {
    const sources = planSources(everyHost(), undefined)
    const github = sources.find((source) => source.name === "github")!
    assert.deepStrictEqual(
      github.members.map((member) => `${member.host} ${member.name}`),
      ["claude-code github", "cursor GitHub MCP"]
    )
    const remote = sources.find((source) => source.name === "remote")!
    assert.deepStrictEqual(
      remote.members.map((member) => `${member.host} ${member.enabled}`),
      ["windsurf true", "codex false"]
    )
    assert.strictEqual(remote.enabled, true)
    assert.strictEqual(sources.find((source) => source.name === "brave-search")!.enabled, false)
    // With HOME /home/alice, VS Code's ${userHome}/notes is Claude Code's local-notes: 11 servers in 13 entries.
    const notes = sources.find((source) => source.name === "local-notes")!
    assert.deepStrictEqual(
      notes.members.map((member) => `${member.host} ${member.name}`),
      ["claude-code local-notes", "vscode fs"]
    )
    assert.strictEqual(sources.length, 11)
    assert.strictEqual(instanceName("GitHub MCP", new Set()), "github-mcp")
    assert.strictEqual(instanceName("x", new Set()), "server-x")
    assert.strictEqual(instanceName("fs", new Set(["fs", "fs-2"])), "fs-3")
    assert.strictEqual(instanceName("a".repeat(40), new Set(["a".repeat(32)])), `${"a".repeat(30)}-2`)
  })

  it("what counts as a secret: credential names, Authorization, long random values; never a ${VAR}", () => {
    assert.isTrue(isSecret("GITHUB_TOKEN", "abc"))
    assert.isTrue(isSecret("OPENAI_API_KEY", "sk-1"))
    assert.isTrue(isSecret("X-Api-Key", "k"))
    assert.isTrue(isSecret("Authorization", "Bearer abc"))
    assert.isTrue(isSecret("CONFIG", "aK9dL2mQ7xW4pZ8rT1vB6nY3"))
    assert.isFalse(isSecret("GITHUB_TOKEN", "${GITHUB_TOKEN}"))
    assert.isFalse(isSecret("Authorization", "Bearer ${env:X}".replace("env:", "")))
    assert.isFalse(isSecret("LOG_LEVEL", "debug"))
    assert.isFalse(isSecret("ROOT", "/home/alice/projects/notes-archive"))
    const extracted = extractSecrets({
      _tag: "Remote",
      url: "https://x",
      transport: "auto",
      headers: { Authorization: `Bearer ${linearToken}`, "X-Trace": "on" }
    })
    assert.deepStrictEqual(extracted.server, {
      _tag: "Remote",
      url: "https://x",
      transport: "auto",
      headers: { Authorization: "Bearer ${AUTHORIZATION}", "X-Trace": "on" }
    })
    assert.deepStrictEqual(extracted.secrets, [["AUTHORIZATION", linearToken]])
  })

  it("the config text is valid, keeps the text before it and disabled entries; the secrets go under the source's scope", () => {
    const sources = planSources(everyHost(), undefined)
    const text = configText("", sources, home)
    const parsed = Either.getOrThrow(parseConfig(text, "config.toml"))
    assert.strictEqual(Object.keys(parsed.sources).length, 11)
    assert.isFalse(parsed.sources["brave-search"]!.enabled)
    assert.notInclude(text, githubToken)
    const secrets = Toml.parse(Either.getOrThrow(secretsText("", sources))) as {
      scopes: Record<string, Record<string, string>>
    }
    assert.strictEqual(secrets.scopes["github"]!["GITHUB_PERSONAL_ACCESS_TOKEN"], githubToken)
  })

  it("--merge: a server already in the config is present under its name, a different one under a taken name a conflict", () => {
    const existing = Either.getOrThrow(
      parseConfig(
        '[sources.my-github]\ncommand = ["npx", "-y", "@modelcontextprotocol/server-github"]\nenv = { GITHUB_PERSONAL_ACCESS_TOKEN = "${GITHUB_PERSONAL_ACCESS_TOKEN}" }\n\n[sources.fetch]\ncommand = ["other"]\n',
        "config.toml"
      )
    )
    const sources = planSources(everyHost(), existing)
    const status = (host: string, name: string) => {
      const found = sources.find((source) =>
        source.members.some((member) => member.host === host && member.name === name)
      )!
      return [found.status, found.name]
    }
    assert.deepStrictEqual(status("cursor", "GitHub MCP"), ["present", "my-github"])
    assert.deepStrictEqual(status("gemini", "fetch"), ["conflict", "fetch"])
    assert.deepStrictEqual(status("codex", "notes"), ["new", "notes"])
    const before = '# mine\n[sources.my-github]\ncommand = ["x"]\n'
    const after = configText(before, sources, home)
    assert.isTrue(after.startsWith(before))
    assert.notInclude(after, "[sources.fetch]")
  })
})

describe("init: rewriting a host's file", () => {
  const entry = { command: "/usr/bin/node", args: [context.bin, "serve"] }
  const rewrite = (file: string, names?: ReadonlyArray<string>) => {
    const reading = read(file)
    const remove = reading.servers.filter((server) => names === undefined || names.includes(server.name))
    return rewriteHostFile(reading, remove, entry, context)
  }

  it("JSONC: only the server section changes; comments and keys around it stay", () => {
    const after = Either.getOrThrow(rewrite(".config/Code/User/mcp.json"))
    const before = texts[".config/Code/User/mcp.json"]!
    const lines = after.split("\n")
    assert.deepStrictEqual(lines.slice(0, 4), before.split("\n").slice(0, 4))
    assert.deepStrictEqual(lines.slice(-5), before.split("\n").slice(-5))
    assert.deepStrictEqual((Jsonc.parse(after, [], { allowTrailingComma: true }) as { servers: unknown }).servers, {
      clawtool: { type: "stdio", ...entry }
    })
  })

  it("JSON: entries not imported stay, in the same section; the project section of ~/.claude.json loses its own", () => {
    const after = Either.getOrThrow(rewrite(".claude.json", ["sentry", "local-notes"]))
    const document = Jsonc.parse(after) as {
      mcpServers: Record<string, unknown>
      projects: Record<string, { mcpServers: unknown; hasTrustDialogAccepted: boolean }>
      userID: string
    }
    assert.deepStrictEqual(Object.keys(document.mcpServers), ["github", "ide", "clawtool"])
    assert.deepStrictEqual(document.projects[project]!.mcpServers, {})
    assert.strictEqual(document.userID, "4f1c0e")
  })

  it("TOML: the imported tables go, one [mcp_servers.clawtool] is added, the rest stays", () => {
    const after = Either.getOrThrow(rewrite(".codex/config.toml"))
    assert.isTrue(after.startsWith('model = "gpt-5"   # unrelated settings must survive\n'))
    assert.deepStrictEqual(Toml.parse(after), {
      model: "gpt-5",
      projects: { "/home/alice/src/app": { trust_level: "trusted" } },
      mcp_servers: { clawtool: entry }
    })
    const inline = read(".codex/config.toml", 'mcp_servers = { a = { command = "x" } }\n')
    assert.isTrue(Either.isLeft(rewriteHostFile(inline, inline.servers, entry, context)))
  })

  it.effect("a file changed since it was read is left alone; an unchanged one is backed up first", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const file = path.join(dir, "mcp.json")
      fs.writeFileSync(file, "changed by the host")
      const skipped = yield* replaceHostFile(file, "as read", "new", "20260101T000000.000Z")
      assert.isTrue(Option.isNone(skipped))
      assert.deepStrictEqual(fs.readdirSync(dir), ["mcp.json"])
      assert.strictEqual(fs.readFileSync(file, "utf8"), "changed by the host")
      const written = yield* replaceHostFile(file, "changed by the host", "new", "20260101T000000.000Z")
      assert.isTrue(Option.isSome(written))
      assert.strictEqual(fs.readFileSync(file, "utf8"), "new")
      assert.strictEqual(fs.readFileSync(`${file}.clawtool-backup-20260101T000000.000Z`, "utf8"), "changed by the host")
    })
  )
})
