/**
 * Where each MCP host keeps its servers (docs/decisions/030-init.md, from the host-configs reference): the files
 * `clawtool init` looks at, given the environment (HOME and the hosts' own overrides, so tests use a temporary home)
 * and the project folder. Pure: nothing here touches the disk.
 */
import * as Path from "node:path"
import type { Env } from "../../paths.js"

export type HostId = "claude-code" | "claude-desktop" | "cursor" | "vscode" | "windsurf" | "gemini" | "codex"

/** How a host writes variables in its entries, so they can be turned into clawtool's `${VAR}`. */
export type VariableStyle = "claude" | "editor" | "gemini" | "none"

export interface HostFile {
  readonly host: HostId
  readonly scope: "user" | "project"
  readonly file: string
  readonly format: "jsonc" | "toml"
  /** The key paths of the server sections in the file; the first gets the `clawtool` entry. */
  readonly sections: ReadonlyArray<ReadonlyArray<string>>
  readonly variables: VariableStyle
  /** Whether a stdio entry written to this host carries `"type": "stdio"` (VS Code's and Claude Code's own style). */
  readonly typedEntries: boolean
}

export const hostNames: Readonly<Record<HostId, string>> = {
  "claude-code": "Claude Code",
  "claude-desktop": "Claude Desktop",
  cursor: "Cursor",
  vscode: "VS Code",
  windsurf: "Windsurf",
  gemini: "Gemini CLI",
  codex: "Codex CLI"
}

const nonEmpty = (value: string | undefined): value is string => value !== undefined && value !== ""

/** The user's application-data folder of a desktop app (Claude Desktop, VS Code) on this platform. */
const appData = (env: Env, home: string, platform: NodeJS.Platform): string =>
  platform === "darwin"
    ? Path.join(home, "Library", "Application Support")
    : platform === "win32"
      ? nonEmpty(env.APPDATA)
        ? env.APPDATA
        : Path.join(home, "AppData", "Roaming")
      : nonEmpty(env.XDG_CONFIG_HOME)
        ? env.XDG_CONFIG_HOME
        : Path.join(home, ".config")

/**
 * The user-level files of every host under `home`, then the project-level files under `project` (when given). Claude
 * Code's `~/.claude.json` also holds the project's local-scope servers under `projects.<project>.mcpServers`.
 */
export const hostFiles = (
  env: Env,
  home: string,
  project: string | undefined,
  platform: NodeJS.Platform = process.platform
): ReadonlyArray<HostFile> => {
  const user = (
    host: HostId,
    file: string,
    sections: ReadonlyArray<ReadonlyArray<string>>,
    variables: VariableStyle,
    format: "jsonc" | "toml" = "jsonc"
  ): HostFile => ({
    host,
    scope: "user",
    file,
    format,
    sections,
    variables,
    typedEntries: host === "vscode" || host === "claude-code"
  })
  const claudeDir = nonEmpty(env.CLAUDE_CONFIG_DIR) ? env.CLAUDE_CONFIG_DIR : home
  const files: Array<HostFile> = [
    user(
      "claude-code",
      Path.join(claudeDir, ".claude.json"),
      project === undefined ? [["mcpServers"]] : [["mcpServers"], ["projects", project, "mcpServers"]],
      "claude"
    ),
    user(
      "claude-desktop",
      Path.join(appData(env, home, platform), "Claude", "claude_desktop_config.json"),
      [["mcpServers"]],
      "none"
    ),
    user("cursor", Path.join(home, ".cursor", "mcp.json"), [["mcpServers"]], "editor"),
    user("vscode", Path.join(appData(env, home, platform), "Code", "User", "mcp.json"), [["servers"]], "editor"),
    user("windsurf", Path.join(home, ".codeium", "windsurf", "mcp_config.json"), [["mcpServers"]], "editor"),
    user(
      "gemini",
      Path.join(nonEmpty(env.GEMINI_CLI_HOME) ? env.GEMINI_CLI_HOME : home, ".gemini", "settings.json"),
      [["mcpServers"]],
      "gemini"
    ),
    user(
      "codex",
      Path.join(nonEmpty(env.CODEX_HOME) ? env.CODEX_HOME : Path.join(home, ".codex"), "config.toml"),
      [["mcp_servers"]],
      "none",
      "toml"
    )
  ]
  if (project === undefined) return files
  const inProject = (
    host: HostId,
    relative: string,
    section: string,
    variables: VariableStyle,
    format: "jsonc" | "toml" = "jsonc"
  ): HostFile => ({ ...user(host, Path.join(project, relative), [[section]], variables, format), scope: "project" })
  const projectFiles = [
    inProject("claude-code", ".mcp.json", "mcpServers", "claude"),
    inProject("vscode", Path.join(".vscode", "mcp.json"), "servers", "editor"),
    inProject("cursor", Path.join(".cursor", "mcp.json"), "mcpServers", "editor"),
    inProject("gemini", Path.join(".gemini", "settings.json"), "mcpServers", "gemini"),
    inProject("codex", Path.join(".codex", "config.toml"), "mcp_servers", "none", "toml")
  ]
  // Run in the home folder, a project file can be a user file (~/.cursor/mcp.json): it is read once, as the user's.
  return [...files, ...projectFiles.filter((candidate) => !files.some((file) => file.file === candidate.file))]
}
