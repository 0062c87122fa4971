import { Command, Options } from "@effect/cli"
import { Effect } from "effect"
import { reportEdit } from "../Shared.js"

const flag = (name: string, description: string) => Options.boolean(name).pipe(Options.withDescription(description))

export const init = Command.make(
  "init",
  {
    config: Options.text("config").pipe(
      Options.withAlias("c"),
      Options.withPseudoName("FILE"),
      Options.optional,
      Options.withDescription(
        "The clawtool config to write (secrets.toml goes beside it). Default: $CLAWTOOL_CONFIG, else $XDG_CONFIG_HOME/clawtool/config.toml, else ~/.config/clawtool/config.toml"
      )
    ),
    project: Options.text("project").pipe(
      Options.withPseudoName("DIR"),
      Options.optional,
      Options.withDescription(
        "Project whose files are read too (.mcp.json, .vscode/mcp.json, .cursor/mcp.json, .gemini/settings.json, .codex/config.toml). Default: the current folder"
      )
    ),
    merge: flag(
      "merge",
      "Add the servers not yet in an existing config to it; keep what is there, report name conflicts"
    ),
    applyHosts: flag(
      "apply-hosts",
      "Then rewrite each host's file to have one clawtool entry instead of the imported servers (a backup of each first)"
    ),
    dryRun: flag("dry-run", "Print the plan and the diff of every file it would change; write nothing"),
    undo: flag("undo", "Restore each host file from its latest <file>.clawtool-backup-<time> (and remove that backup)"),
    daemon: Options.text("daemon").pipe(
      Options.withPseudoName("URL"),
      Options.optional,
      Options.withDescription(
        "Hosts get `clawtool connect URL` (a shared daemon, clawtool serve --listen) instead of `clawtool serve`"
      )
    )
  },
  // Loaded on first use: the hosts' parsers and the diff are for this command only (test/StartPath.test.ts).
  (options) =>
    Effect.promise(() => import("../Init/Run.js")).pipe(
      Effect.flatMap(({ runInit }) => runInit(options)),
      reportEdit
    )
).pipe(
  Command.withDescription(
    "Import the MCP servers of the hosts on this machine (Claude Code, Claude Desktop, Cursor, VS Code, Windsurf, Gemini CLI, Codex) into one clawtool config, literal secrets into secrets.toml, then (with --apply-hosts) point each host at clawtool. Prints the plan first; never overwrites an existing config without --merge; --undo restores the hosts' files."
  )
)
