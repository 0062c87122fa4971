/**
 * Help pages that read like a man page (NAME, SYNOPSIS, DESCRIPTION, ARGUMENTS, OPTIONS, COMMANDS, EXAMPLES), drawn
 * from the command tree itself: each command's name, description, options and arguments as @effect/cli holds them,
 * plus what a command declares beside it (its examples, its group on the main page). A command added later gets its
 * page by being in the tree and declaring examples. Plain text: no escape codes, wrapped to the terminal or 80 columns.
 *
 * @effect/cli exposes no data view of a command (only its own rendered HelpDoc, with a "This setting is optional." per
 * option and the built-in options on every page), so the descriptors are read here; their shapes are pinned with the
 * package (0.77).
 */
import type { Command } from "@effect/cli"

/** One option as a page shows it. */
export interface OptionDoc {
  /** `-c, --config` */
  readonly names: string
  /** `FILE`; empty for a flag. */
  readonly placeholder: string
  readonly description: string
  readonly optional: boolean
  readonly repeated: boolean
}

export interface ArgDoc {
  readonly name: string
  readonly description: string
  readonly optional: boolean
  readonly repeated: boolean
}

export interface CommandDoc {
  readonly name: string
  readonly description: string
  readonly options: ReadonlyArray<OptionDoc>
  readonly args: ReadonlyArray<ArgDoc>
  readonly children: ReadonlyArray<CommandDoc>
}

/** What a command declares for its page besides the tree: examples, and (top-level commands) its group. */
export interface PageExtras {
  readonly examples: Readonly<Record<string, string | ReadonlyArray<string>>>
  readonly groups: Readonly<Record<string, string>>
  /** The order of the groups on the main page. */
  readonly groupOrder: ReadonlyArray<string>
  /** Options every command takes, shown on the main page only. */
  readonly globalOptions: ReadonlyArray<OptionDoc>
  /** Commands outside the tree (built into the runner), listed on the main page: name → [group, summary]. */
  readonly extraCommands: Readonly<Record<string, readonly [string, string]>>
}

type Node = { readonly _tag: string; readonly [key: string]: unknown }

/** The plain text of a Span. */
const spanText = (span: unknown): string => {
  const node = span as Node
  if (node._tag === "Sequence") return `${spanText(node.left)}${spanText(node.right)}`
  return typeof node.value === "string" ? node.value : node.value === undefined ? "" : spanText(node.value)
}

/** The plain text of a HelpDoc: paragraphs joined by a blank line. */
const docText = (doc: unknown): string => {
  const node = doc as Node
  switch (node._tag) {
    case "Header":
    case "Paragraph":
      return spanText(node.value)
    case "Sequence":
      return [docText(node.left), docText(node.right)].filter((text) => text !== "").join("\n\n")
    default:
      return ""
  }
}

const placeholderOf = (single: Node): string => {
  const pseudo = single.pseudoName as { readonly _tag: string; readonly value?: string }
  if (pseudo._tag === "Some") return pseudo.value!
  const primitive = single.primitiveType as Node
  if (primitive._tag === "Bool") return ""
  if (primitive._tag === "Choice") {
    return (primitive.alternatives as ReadonlyArray<readonly [string, unknown]>).map(([name]) => name).join("|")
  }
  return primitive._tag.toUpperCase()
}

const optionsOf = (node: Node, optional = false, repeated = false): ReadonlyArray<OptionDoc> => {
  switch (node._tag) {
    case "Single": {
      const aliases = (node.aliases as ReadonlyArray<string>).map((alias) =>
        alias.length === 1 ? `-${alias}` : `--${alias}`
      )
      return [
        {
          names: [...aliases, node.fullName as string].join(", "),
          placeholder: placeholderOf(node),
          description: docText(node.description),
          optional,
          repeated
        }
      ]
    }
    case "Both":
    case "OrElse":
      return [...optionsOf(node.left as Node, optional, repeated), ...optionsOf(node.right as Node, optional, repeated)]
    case "WithDefault":
      return optionsOf(node.options as Node, true, repeated)
    case "Variadic":
    case "KeyValueMap":
      return optionsOf(node.argumentOption as Node, optional, true)
    default:
      return node.options === undefined ? [] : optionsOf(node.options as Node, optional, repeated)
  }
}

const argsOf = (node: Node, optional = false, repeated = false): ReadonlyArray<ArgDoc> => {
  switch (node._tag) {
    case "Single":
      // @effect/cli keeps an argument's name as `<name>`.
      return [
        {
          name: (node.name as string).replace(/^<(.*)>$/, "$1"),
          description: docText(node.description),
          optional,
          repeated
        }
      ]
    case "Both":
      return [...argsOf(node.left as Node, optional, repeated), ...argsOf(node.right as Node, optional, repeated)]
    case "WithDefault":
      return argsOf(node.args as Node, true, repeated)
    case "Variadic": {
      const min = node.min as { readonly _tag: string; readonly value?: number }
      return argsOf(node.args as Node, optional || min._tag === "None" || min.value === 0, true)
    }
    default:
      return node.args === undefined ? [] : argsOf(node.args as Node, optional, repeated)
  }
}

const fromDescriptor = (node: Node): CommandDoc => {
  switch (node._tag) {
    case "Subcommands":
      return {
        ...fromDescriptor(node.parent as Node),
        children: (node.children as ReadonlyArray<Node>).map(fromDescriptor)
      }
    case "Standard":
      return {
        name: node.name as string,
        description: docText(node.description),
        options: optionsOf(node.options as Node),
        args: argsOf(node.args as Node),
        children: []
      }
    case "GetUserInput":
      return { name: node.name as string, description: docText(node.description), options: [], args: [], children: [] }
    default:
      return fromDescriptor(node.command as Node)
  }
}

/** The command tree as pages see it. */
export const commandTree = (command: Command.Command<string, never, unknown, unknown>): CommandDoc =>
  fromDescriptor(command.descriptor as unknown as Node)

/** The command at `path` under `root`, and the commands on the way. */
export const find = (root: CommandDoc, path: ReadonlyArray<string>): CommandDoc | undefined => {
  let at: CommandDoc | undefined = root
  for (const name of path) at = at?.children.find((child) => child.name === name)
  return at
}

/** Every command path of the tree (the root is []). */
export const paths = (root: CommandDoc, prefix: ReadonlyArray<string> = []): ReadonlyArray<ReadonlyArray<string>> => [
  prefix,
  ...root.children.flatMap((child) => paths(child, [...prefix, child.name]))
]

/** `text` wrapped to `width` columns, every line indented by `indent` (the first by `first` when given). */
export const wrap = (text: string, width: number, indent: number, first = indent): ReadonlyArray<string> => {
  const lines: Array<string> = []
  for (const paragraph of text.split("\n")) {
    let line = ""
    let pad = lines.length === 0 ? first : indent
    for (const word of paragraph.split(/ +/).filter((w) => w !== "")) {
      if (line !== "" && pad + line.length + 1 + word.length > width) {
        lines.push(`${" ".repeat(pad)}${line}`)
        line = word
        pad = indent
      } else {
        line = line === "" ? word : `${line} ${word}`
      }
    }
    lines.push(line === "" ? "" : `${" ".repeat(pad)}${line}`)
  }
  return lines
}

/** A NAME line's summary: the description's first sentence, before any colon. */
export const summaryOf = (description: string): string => {
  const sentence = /^(.*?[.!?])(\s|$)/s.exec(description)?.[1] ?? description
  const beforeColon = sentence.split(/:\s/)[0]!
  return beforeColon.replace(/[.!?]$/, "")
}

const optionUsage = (option: OptionDoc) => {
  const name = option.names.split(", ").at(-1)!
  const core = option.placeholder === "" ? name : `${name} ${option.placeholder}`
  const shown = option.optional || option.repeated ? `[${core}]` : core
  return option.repeated ? `${shown}...` : shown
}

const argUsage = (arg: ArgDoc) => {
  const core = `<${arg.name}>`
  const shown = arg.optional ? `[${core}]` : core
  return arg.repeated ? `${shown}...` : shown
}

/** Term and text in two aligned columns; a term too wide for the column puts its text on the next line. */
const columnOf = (rows: ReadonlyArray<readonly [string, string]>) =>
  Math.min(Math.max(...rows.map(([term]) => term.length)) + 4 + 2, 32)

const definitions = (
  rows: ReadonlyArray<readonly [string, string]>,
  width: number,
  column = columnOf(rows)
): ReadonlyArray<string> => {
  return rows.flatMap(([term, text]) => {
    const lead = `    ${term}`
    if (lead.length + 2 > column) return [lead, ...wrap(text, width, column)]
    const [firstLine = "", ...rest] = wrap(text, width, column)
    return [`${lead}${firstLine.slice(lead.length)}`, ...rest]
  })
}

const section = (title: string, lines: ReadonlyArray<string>) => (lines.length === 0 ? [] : [title, ...lines, ""])

const examplesOf = (extras: PageExtras, key: string): ReadonlyArray<string> => {
  const declared = extras.examples[key]
  return declared === undefined ? [] : typeof declared === "string" ? [declared] : declared
}

/** The page of the command at `path` (the main page for []). */
export const page = (root: CommandDoc, path: ReadonlyArray<string>, extras: PageExtras, width: number): string => {
  const command = find(root, path)
  if (command === undefined) throw new Error(`no command ${path.join(" ")}`)
  const full = [root.name, ...path].join(" ")
  const isRoot = path.length === 0
  const options = isRoot ? extras.globalOptions : command.options
  const synopsis = isRoot
    ? [`${full} <command> [options]`, `${full} help <command>`]
    : command.children.length > 0
      ? [`${full} <command> [options]`]
      : [[full, ...command.options.map(optionUsage), ...command.args.map(argUsage)].join(" ")]
  const childRows = (children: ReadonlyArray<CommandDoc>, prefix: string) =>
    children.map((child): readonly [string, string] => [`${prefix}${child.name}`, summaryOf(child.description)])
  const commands: Array<string> = []
  if (isRoot) {
    const groups = [...extras.groupOrder]
    const inGroup = (name: string) => extras.groups[name] ?? extras.extraCommands[name]?.[0] ?? "other"
    const all = [
      ...command.children.map((child) => ({ name: child.name, summary: summaryOf(child.description) })),
      ...Object.entries(extras.extraCommands).map(([name, [, summary]]) => ({ name, summary }))
    ]
    for (const name of all.map((entry) => inGroup(entry.name))) if (!groups.includes(name)) groups.push(name)
    // One column for every group, so the summaries line up down the page.
    const column = columnOf(all.map((entry) => [entry.name, ""] as const))
    for (const group of groups) {
      const rows = all
        .filter((entry) => inGroup(entry.name) === group)
        .map((entry): readonly [string, string] => [entry.name, entry.summary])
      if (rows.length === 0) continue
      commands.push(`  ${group}`, ...definitions(rows, width, column), "")
    }
    commands.pop()
  } else if (command.children.length > 0) {
    commands.push(...definitions(childRows(command.children, ""), width))
  }
  // A long example goes on over lines ending in ` \\`, so it still pastes into a shell as one command.
  const examples = examplesOf(extras, path.join(" ")).flatMap((example) => {
    const lines = wrap(`$ ${example}`, width - 2, 8, 4)
    return lines.map((line, i) => (i < lines.length - 1 ? `${line} \\` : line))
  })
  return [
    ...section("NAME", wrap(`${full} - ${summaryOf(command.description)}`, width, 8, 4)),
    ...section(
      "SYNOPSIS",
      synopsis.flatMap((line) => wrap(line, width, 8, 4))
    ),
    ...section("DESCRIPTION", wrap(command.description, width, 4)),
    ...section(
      "ARGUMENTS",
      command.args.length === 0
        ? []
        : definitions(
            command.args.map((arg): readonly [string, string] => [`<${arg.name}>`, arg.description]),
            width
          )
    ),
    ...section(
      "OPTIONS",
      options.length === 0
        ? []
        : definitions(
            options.map((option): readonly [string, string] => [
              option.placeholder === "" ? option.names : `${option.names} ${option.placeholder}`,
              option.description
            ]),
            width
          )
    ),
    ...section("COMMANDS", commands),
    ...section("EXAMPLES", examples)
  ]
    .join("\n")
    .replace(/\n+$/, "\n")
}

/** What the arguments ask of help: nothing, a page (by command path), or a page of no command (with the close names). */
export type HelpRequest =
  | { readonly _tag: "None" }
  | { readonly _tag: "Page"; readonly path: ReadonlyArray<string> }
  | { readonly _tag: "Unknown"; readonly name: string; readonly known: ReadonlyArray<string> }

/**
 * `clawtool help [command…]`, `… --help` / `-h` anywhere before `--`, or a command group alone (`clawtool`,
 * `clawtool tools`): its page.
 */
export const helpRequest = (args: ReadonlyArray<string>, root: CommandDoc): HelpRequest => {
  const words = args.filter((arg) => !arg.startsWith("-"))
  const walk = (names: ReadonlyArray<string>) => {
    const path: Array<string> = []
    let at = root
    for (const name of names) {
      const child = at.children.find((candidate) => candidate.name === name)
      if (child === undefined) break
      path.push(name)
      at = child
    }
    return { path, at }
  }
  if (args[0] === "help") {
    const asked = words.slice(1)
    const { path, at } = walk(asked)
    if (path.length === asked.length) return { _tag: "Page", path }
    return {
      _tag: "Unknown",
      name: asked.join(" "),
      known: at.children.map((child) => [...path, child.name].join(" "))
    }
  }
  if (args.includes("--help") || args.includes("-h")) return { _tag: "Page", path: walk(words).path }
  const { path, at } = walk(words)
  return at.children.length > 0 && path.length === args.length ? { _tag: "Page", path } : { _tag: "None" }
}
