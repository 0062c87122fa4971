/**
 * A temporary home holding the MCP config of every host `clawtool init` knows, in each host's real format (from
 * /work/shared/reference/host-configs.md): stdio and remote entries, disabled ones, comments, literal tokens, the same
 * server under two names (and across hosts), an entry clawtool cannot use, and an invalid project file.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { tempDir } from "../lib/temp.js"

export const githubToken = "ghp_R8x2Lq9ZtW4vB7nK3mP6sJ1dF5hC0yAe2uGi"
export const linearToken = "lin_api_Xk29fJ3mQ8pL2vN7rT4wY6zB1cD5eH0s"
export const braveKey = "BSAk3j4h5g6f7d8s9a0"

export interface HostHome {
  readonly home: string
  readonly project: string
  /** Every host file written, relative to home. */
  readonly files: Readonly<Record<string, string>>
  /** HOME and XDG folders inside the temp home, so nothing touches the real one. */
  readonly env: Readonly<Record<string, string>>
}

export const hostTexts = (project: string): Readonly<Record<string, string>> => ({
  ".claude.json": `{
  "numStartups": 4,
  "userID": "4f1c0e",
  "projects": {
    ${JSON.stringify(project)}: {
      "mcpServers": {
        "local-notes": {
          "type": "stdio",
          "command": "npx",
          "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/alice/notes"],
          "env": {}
        }
      },
      "enabledMcpjsonServers": [],
      "hasTrustDialogAccepted": false
    }
  },
  "mcpServers": {
    "github": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": "${githubToken}" }
    },
    "sentry": {
      "type": "http",
      "url": "https://mcp.sentry.dev/mcp",
      "headers": { "Authorization": "Bearer \${SENTRY_TOKEN:-none}" }
    },
    "ide": { "type": "ws-ide", "url": "ws://127.0.0.1:9000" }
  }
}
`,
  ".config/Claude/claude_desktop_config.json": `{
  "mcpServers": {
    "remote-via-bridge": { "command": "npx", "args": ["-y", "mcp-remote", "https://mcp.example.com/mcp"] }
  },
  "preferences": { "sidebarMode": "chat" }
}
`,
  ".cursor/mcp.json": `{
  "mcpServers": {
    "GitHub MCP": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": "${githubToken}" }
    },
    "linear": {
      "url": "https://mcp.linear.app/sse",
      "headers": { "Authorization": "Bearer ${linearToken}" }
    }
  }
}
`,
  ".config/Code/User/mcp.json": `// My MCP servers (VS Code keeps comments here)
{
  "inputs": [{ "type": "promptString", "id": "gh-token", "description": "GitHub token", "password": true }],
  "servers": {
    // the filesystem server
    "fs": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "\${userHome}/notes"]
    },
    "copilot": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/",
      "headers": { "Authorization": "Bearer \${input:gh-token}" }
    },
  },
  /* settings below the servers stay too */
  "chat.mcp.discovery.enabled": false
}
`,
  ".codeium/windsurf/mcp_config.json": `{
  "mcpServers": {
    "brave_search": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-brave-search"],
      "env": { "BRAVE_API_KEY": "${braveKey}" },
      "disabled": true
    },
    "remote": {
      "serverUrl": "https://mcp.example.com/mcp",
      "headers": { "Authorization": "Bearer \${env:EXAMPLE_TOKEN}" }
    }
  }
}
`,
  ".gemini/settings.json": `{
  "theme": "Default", // the host's own settings must survive
  "mcpServers": {
    "fetch": { "command": "uvx", "args": ["mcp-server-fetch"], "env": { "FOO": "$FOO" }, "timeout": 30000 }
  }
}
`,
  ".codex/config.toml": `model = "gpt-5"   # unrelated settings must survive

# notes, read-only
[mcp_servers.notes]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "/home/alice/notes"]

[mcp_servers.notes.env]
FOO = "bar"

[mcp_servers.remote]
url = "https://mcp.example.com/mcp"
bearer_token_env_var = "EXAMPLE_TOKEN"
enabled = false

[projects."/home/alice/src/app"]
trust_level = "trusted"
`,
  "src/app/.mcp.json": `{
  "mcpServers": {
    "puppeteer": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-puppeteer"] }
  }
}
`,
  "src/app/.gemini/settings.json": `{
  "mcpServers": {
    "broken": { "command": "node", }
    "missing-comma": {}
  }
}
`
})

/** Writes every host file under a new temp home (removed when the test ends); ~/.claude.json is 0600, as Claude keeps it. */
export const makeHostHome = (): HostHome => {
  const home = tempDir("clawtool-init-home-")
  const project = path.join(home, "src", "app")
  const files = hostTexts(project)
  for (const [relative, text] of Object.entries(files)) {
    const file = path.join(home, relative)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, text)
  }
  fs.chmodSync(path.join(home, ".claude.json"), 0o600)
  return {
    home,
    project,
    files,
    env: {
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, ".config"),
      XDG_STATE_HOME: path.join(home, ".local", "state"),
      XDG_CACHE_HOME: path.join(home, ".cache"),
      XDG_DATA_HOME: path.join(home, ".local", "share")
    }
  }
}

/** Every file under `dir` (relative path → content), to show what a run changed or that it changed nothing. */
export const snapshot = (dir: string): Record<string, string> => {
  const out: Record<string, string> = {}
  const walk = (folder: string) => {
    for (const item of fs.readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, item.name)
      if (item.isDirectory()) walk(full)
      else out[path.relative(dir, full)] = fs.readFileSync(full, "utf8")
    }
  }
  walk(dir)
  return out
}
