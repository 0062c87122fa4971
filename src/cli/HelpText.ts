/**
 * Touches up @effect/cli's help as it is printed. The library always writes ANSI styles, describes every text option
 * as "A user-defined piece of text.", and shows a subcommand's usage as `$ list …`; its HelpDoc offers no hook for any
 * of it, so the text is adjusted on its way through Console: styles dropped when the stream is not a terminal or
 * NO_COLOR is set, the filler lines removed, usage lines given the full `clawtool <command>` path, an EXAMPLE added.
 */
import { Console, Effect } from "effect"

const ansi = /\x1b\[[0-9;]*m/g

/** no-color.org: NO_COLOR set to anything non-empty turns colour off. */
const plain = (stream: NodeJS.WriteStream) =>
  stream.isTTY !== true || (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== "")

const filler = /^\s*(A user-defined piece of text( that is confidential)?\.|A true or false value\.)\s*$/

/** The command path named in `args` (`["source", "add", "x", "--", …]` → "source add"), as a key of `examples`. */
export const commandPath = (args: ReadonlyArray<string>, known: ReadonlySet<string>): ReadonlyArray<string> => {
  const path: Array<string> = []
  for (const arg of args) {
    if (arg === "--") break
    if (known.has([...path, arg].join(" "))) path.push(arg)
  }
  return path
}

/** Rewrites one help text (already stripped of styles or not) for the command at `path`. */
export const rewriteHelp = (text: string, path: ReadonlyArray<string>, example: string | undefined): string => {
  if (!/^(\x1b\[[0-9;]*m)*USAGE/m.test(text)) return text
  const full = ["clawtool", ...path].join(" ")
  const lines = text.split("\n")
  const out: Array<string> = []
  let section = ""
  let shown = example === undefined
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    const bare = line.replace(ansi, "")
    if (/^[A-Z]+$/.test(bare.trim()) && !bare.startsWith(" ")) {
      if (bare.trim() === "OPTIONS" && !shown) {
        out.push("EXAMPLE", "", `  $ ${example}`, "")
        shown = true
      }
      section = bare.trim()
    }
    if (filler.test(bare)) {
      if (lines[i + 1]?.trim() === "") i++ // and the blank line after it
      continue
    }
    if (section === "USAGE" && bare.startsWith("$ ")) {
      // `$ list [...]` (the leaf name) or `$ clawtool` (the root): the full path either way.
      const rest = bare.slice(2).replace(/^\S+/, "")
      out.push(`$ ${full}${rest}`)
      continue
    }
    if (section === "COMMANDS" && /^\s*- /.test(bare)) {
      const indent = /^\s*- /.exec(bare)![0]
      const rest = bare.slice(indent.length)
      // Listed subcommands read from the parent's position: `- list …` under `source` → `- clawtool source list …`.
      const parent = path.length > 0 && !rest.startsWith(`${path.at(-1)} `) ? full : full
      out.push(`${indent}${rest.startsWith("clawtool ") ? rest : `${parent} ${rest}`}`)
      continue
    }
    out.push(line)
  }
  if (!shown) out.push("", "EXAMPLE", "", `  $ ${example}`, "")
  return out.join("\n")
}

/** Runs `effect` (the CLI) with Console.log/error rewriting help text for the command `args` name. */
export const withHelpText = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  args: ReadonlyArray<string>,
  examples: Readonly<Record<string, string>>
): Effect.Effect<A, E, R> =>
  Console.consoleWith((console) => {
    const path = commandPath(args, new Set(Object.keys(examples)))
    const fix = (stream: NodeJS.WriteStream) => (value: unknown) => {
      if (typeof value !== "string") return value
      const styled = plain(stream) ? value.replace(ansi, "") : value
      return rewriteHelp(styled, path, examples[path.join(" ")])
    }
    const out = fix(process.stdout)
    const err = fix(process.stderr)
    return Console.withConsole(effect, {
      ...console,
      log: (...values: ReadonlyArray<unknown>) => console.log(...values.map(out)),
      error: (...values: ReadonlyArray<unknown>) => console.error(...values.map(err)),
      unsafe: {
        ...console.unsafe,
        log: (...values: ReadonlyArray<unknown>) => console.unsafe.log(...values.map(out)),
        error: (...values: ReadonlyArray<unknown>) => console.unsafe.error(...values.map(err))
      }
    })
  })
