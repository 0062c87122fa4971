import { Args, type CliApp, Command } from "@effect/cli"
import { Console, Effect, Either, Logger, Option } from "effect"
import { extractLogLevel } from "./cli/Argv.js"
import { audit } from "./cli/commands/audit.js"
import { auth } from "./cli/commands/auth.js"
import { cache } from "./cli/commands/cache.js"
import { call } from "./cli/commands/call.js"
import { connect } from "./cli/commands/connect.js"
import { doctor } from "./cli/commands/doctor.js"
import { health } from "./cli/commands/health.js"
import { init } from "./cli/commands/init.js"
import { profile } from "./cli/commands/profile.js"
import { serve } from "./cli/commands/serve.js"
import { source } from "./cli/commands/source.js"
import { tools } from "./cli/commands/tools.js"
import { trust } from "./cli/commands/trust.js"
import * as Help from "./cli/Help.js"
import { ui } from "./cli/commands/ui.js"
import { withHelpText } from "./cli/HelpText.js"
import { suggest } from "./domain/Suggest.js"
import { ExitStatus } from "./cli/Shared.js"
import * as Version from "./version.js"

export { ExitStatus } from "./cli/Shared.js"

/** The whole tree, for `completions` (declared inside it). */
let tree: Command.Command<string, never, unknown, unknown> | undefined

const completions = Command.make(
  "completions",
  {
    shell: Args.choice(
      [
        ["bash", "bash"],
        ["fish", "fish"],
        ["sh", "sh"],
        ["zsh", "zsh"]
      ] as const,
      { name: "shell" }
    ).pipe(Args.withDescription("bash, fish, sh or zsh"))
  },
  ({ shell }) =>
    Effect.flatMap(
      shell === "fish"
        ? Command.getFishCompletions(tree!, "clawtool")
        : shell === "zsh"
          ? Command.getZshCompletions(tree!, "clawtool")
          : Command.getBashCompletions(tree!, "clawtool"),
      (lines) => Console.log(lines.join("\n"))
    )
).pipe(
  Command.withDescription(
    "Print a completion script for the shell. Load it in your shell's startup file, e.g. source <(clawtool completions bash)."
  )
)

const root = Command.make("clawtool").pipe(
  Command.withDescription("One MCP server for all your MCP servers: spawns, supervises and serves configured sources."),
  Command.withSubcommands([
    init,
    serve,
    connect,
    health,
    call,
    source,
    tools,
    profile,
    cache,
    auth,
    trust,
    audit,
    ui,
    doctor,
    completions
  ])
)
tree = root as unknown as Command.Command<string, never, unknown, unknown>

/** Where each top-level command is listed on the main page (`clawtool --help`); a command not here is under "other". */
const groups: Record<string, string> = {
  serve: "serving",
  connect: "serving",
  init: "sources",
  source: "sources",
  health: "sources",
  tools: "tools",
  call: "tools",
  profile: "serving",
  ui: "serving",
  trust: "trust",
  audit: "trust",
  auth: "auth",
  doctor: "maintenance",
  cache: "maintenance",
  completions: "maintenance"
}

/** Examples per command, shown under EXAMPLES on its page (keyed by the command path; one string or several). */
const examples: Record<string, string | ReadonlyArray<string>> = {
  "": ["clawtool init", "clawtool doctor", "clawtool serve --config ~/.config/clawtool/config.toml"],
  completions: "source <(clawtool completions bash)",
  serve: "clawtool serve --config ~/.config/clawtool/config.toml",
  connect: "claude mcp add clawtool -- clawtool connect http://127.0.0.1:8765/mcp",
  health: "clawtool health --json",
  call: "clawtool call notes__add_note --arg title=groceries --arg body='milk, eggs'",
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
  "tools search": 'clawtool tools search "create issue" --limit 3',
  "tools enable": "clawtool tools enable github.create_issue",
  "tools disable": "clawtool tools disable github.delete_repo",
  "tools export-typescript": "clawtool tools export-typescript --output ./clawtool-tools --check",
  profile: "clawtool profile list",
  "profile list": "clawtool profile list --json",
  cache: "clawtool cache clear",
  doctor: "clawtool doctor --json",
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

const pages: Help.PageExtras = {
  examples,
  groups,
  groupOrder: ["serving", "sources", "tools", "trust", "auth", "maintenance"],
  globalOptions: [
    {
      names: "-h, --help",
      placeholder: "",
      description: "This page; with a command, its page (also: clawtool help <command>)",
      optional: true,
      repeated: false
    },
    { names: "--version", placeholder: "", description: "Print the version", optional: true, repeated: false },
    {
      names: "--log-level",
      placeholder: "LEVEL",
      description: "Least level of the log lines on stderr: all, trace, debug, info, warning, error, fatal, none",
      optional: true,
      repeated: false
    }
  ],
  extraCommands: {}
}

/** Every command's path and its help page at `width` columns (for the help's tests). */
export const helpPages = (width: number): ReadonlyArray<{ readonly path: string; readonly text: string }> => {
  const docs = Help.commandTree(tree!)
  return Help.paths(docs).map((path) => ({ path: path.join(" "), text: Help.page(docs, path, pages, width) }))
}

/** The help page asked for, written to stdout; an unknown command's page is a usage error with the close names. */
const showHelp = (asked: Help.HelpRequest) => {
  if (asked._tag === "Unknown") {
    return Effect.zipRight(
      Console.error(
        `clawtool: no command ${JSON.stringify(asked.name)}${suggest(asked.name, asked.known, { label: "commands", none: "it has no subcommands" })}`
      ),
      Effect.fail(new ExitStatus({ code: 2 }))
    )
  }
  const width = process.stdout.isTTY === true ? Math.max(40, process.stdout.columns) : 80
  return Console.log(
    Help.page(Help.commandTree(tree!), asked._tag === "Page" ? asked.path : [], pages, width).trimEnd()
  )
}

/** @effect/cli's own usage text (after a usage error) shows a command's first example. */
const firstExamples = Object.fromEntries(
  Object.entries(examples).map(([path, given]) => [path, typeof given === "string" ? given : given[0]!])
)

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
  const asked = Help.helpRequest(own, Help.commandTree(tree!))
  if (asked._tag !== "None") return showHelp(asked)
  const level = extractLogLevel(own)
  if (Either.isLeft(level)) return usage(level.left)
  const rest = [...level.right.args, ...(forced === -1 ? [] : args.slice(forced))]
  const program = withHelpText(cliApp([...argv.slice(0, 2), ...rest]), rest, firstExamples)
  return Option.match(level.right.level, {
    onNone: () => program,
    onSome: (minimum) => Logger.withMinimumLogLevel(program, minimum)
  })
}
