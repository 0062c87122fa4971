import { type CliApp, Command } from "@effect/cli"
import { Console, Effect, Either, Logger, Option } from "effect"
import { extractLogLevel } from "./cli/Argv.js"
import { audit } from "./cli/commands/audit.js"
import { auth } from "./cli/commands/auth.js"
import { cache } from "./cli/commands/cache.js"
import { connect } from "./cli/commands/connect.js"
import { health } from "./cli/commands/health.js"
import { init } from "./cli/commands/init.js"
import { serve } from "./cli/commands/serve.js"
import { source } from "./cli/commands/source.js"
import { tools } from "./cli/commands/tools.js"
import { trust } from "./cli/commands/trust.js"
import { ui } from "./cli/commands/ui.js"
import { withHelpText } from "./cli/HelpText.js"
import { ExitStatus } from "./cli/Shared.js"
import * as Version from "./version.js"

export { ExitStatus } from "./cli/Shared.js"

const root = Command.make("clawtool").pipe(
  Command.withDescription("One MCP server for all your MCP servers: spawns, supervises and serves configured sources."),
  Command.withSubcommands([init, serve, connect, health, source, tools, cache, auth, trust, audit, ui])
)

/** One example per command, shown under EXAMPLE in its --help (keyed by the command path). */
const examples: Record<string, string> = {
  "": "clawtool serve --config ~/.config/clawtool/config.toml",
  serve: "clawtool serve --config ~/.config/clawtool/config.toml",
  connect: "claude mcp add clawtool -- clawtool connect http://127.0.0.1:8765/mcp",
  health: "clawtool health --json",
  init: "clawtool init --dry-run",
  source: "clawtool source list",
  "source list": "clawtool source list --json",
  "source add": "clawtool source add fs --env ROOT=${FS_ROOT} -- npx -y @modelcontextprotocol/server-filesystem /tmp",
  "source remove": "clawtool source remove fs",
  "source enable": "clawtool source enable fs",
  "source disable": "clawtool source disable fs",
  "source set-secret": "clawtool source set-secret github GITHUB_TOKEN < token.txt",
  tools: "clawtool tools list",
  "tools list": "clawtool tools list --json",
  "tools enable": "clawtool tools enable github.create_issue",
  "tools disable": "clawtool tools disable github.delete_repo",
  "tools export-typescript": "clawtool tools export-typescript --output ./clawtool-tools --check",
  cache: "clawtool cache clear",
  auth: "clawtool auth status",
  "auth login": "clawtool auth login linear",
  "auth status": "clawtool auth status --json",
  "auth logout": "clawtool auth logout linear",
  "cache clear": "clawtool cache clear",
  trust: "clawtool trust status",
  "trust status": "clawtool trust status --json",
  "trust diff": "clawtool trust diff github.search_issues",
  "trust approve": "clawtool trust approve github.search_issues",
  audit: "clawtool audit --since 10m --tool github.*",
  ui: "clawtool ui"
}

const cliApp = Command.run(root, { name: "clawtool", version: Version.version })

/**
 * The CLI with readable help (plain text when stdout is not a terminal or NO_COLOR is set, full `clawtool …` usage
 * lines, an example per command) and a `--wizard` that refuses to start without a terminal instead of hanging.
 */
export const run = (argv: ReadonlyArray<string>): Effect.Effect<void, unknown, CliApp.CliApp.Environment> => {
  const usage = (message: string) =>
    Effect.zipRight(Console.error(`clawtool: ${message}`), Effect.fail(new ExitStatus({ code: 2 })))
  const args = argv.slice(2)
  const forced = args.indexOf("--")
  const own = forced === -1 ? args : args.slice(0, forced)
  if (own.includes("--wizard") && process.stdin.isTTY !== true) {
    return usage("--wizard asks questions on a terminal; stdin is not one (give the options instead)")
  }
  const level = extractLogLevel(own)
  if (Either.isLeft(level)) return usage(level.left)
  const rest = [...level.right.args, ...(forced === -1 ? [] : args.slice(forced))]
  const program = withHelpText(cliApp([...argv.slice(0, 2), ...rest]), rest, examples)
  return Option.match(level.right.level, {
    onNone: () => program,
    onSome: (minimum) => Logger.withMinimumLogLevel(program, minimum)
  })
}
