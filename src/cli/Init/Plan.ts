/**
 * The import plan (pure): host entries grouped into distinct servers (same command + args + env + cwd, or same URL +
 * headers), each given a kebab-case instance name, its literal secrets moved out to `${VAR}` references, and judged
 * against the clawtool config already there (new, present under some name, or a conflict that is left alone).
 */
import { Either } from "effect"
import type { ClawtoolConfig } from "../../domain/Config.js"
import { kebabCase } from "../../domain/Config.js"
import { renderTable } from "../../text.js"
import { setSecret } from "../Manage.js"
import { appendTable, tomlArray, tomlInlineTable, tomlString } from "../TomlEdit.js"
import { hostNames } from "./Hosts.js"
import type { FileProblem, FileReading, HostServer, Server } from "./Read.js"

/** One distinct server: the host entries that run it, and what clawtool does with it. */
export interface PlannedSource {
  readonly name: string
  /** With literal secrets replaced by `${VAR}`. */
  readonly server: Server
  /** Enabled when any of its entries is. */
  readonly enabled: boolean
  readonly members: ReadonlyArray<HostServer>
  /** `VAR` → the literal value it replaced, for secrets.toml's `[scopes.<name>]`. */
  readonly secrets: ReadonlyArray<readonly [string, string]>
  /** new: added; present: the config has it already (as `name`); conflict: the config has another server by that name. */
  readonly status: "new" | "present" | "conflict"
}

const sortedEntries = (table: Readonly<Record<string, string>>) =>
  Object.entries(table).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))

/** Two entries are the same server when clawtool would start them the same way. */
export const identity = (server: Server): string =>
  server._tag === "Stdio"
    ? JSON.stringify(["stdio", server.command, sortedEntries(server.env), server.cwd ?? null])
    : JSON.stringify(["remote", server.url, sortedEntries(server.headers)])

/** Header and env names that carry credentials whatever their value. */
const secretName = (name: string): boolean =>
  /^(authorization|proxy-authorization|cookie)$/i.test(name) ||
  /(token|key|secret|password|passwd|credentials?|pat)$/i.test(name)

/** Bits per character of the value's own character distribution. */
const entropy = (value: string): number => {
  const counts = new Map<string, number>()
  for (const char of value) counts.set(char, (counts.get(char) ?? 0) + 1)
  return [...counts.values()].reduce((sum, count) => {
    const p = count / value.length
    return sum - p * Math.log2(p)
  }, 0)
}

/** A long random-looking value (API keys, JWTs): letters and digits mixed, no spaces, about 3.5+ bits per char. */
export const looksRandom = (value: string): boolean =>
  value.length >= 24 && !/\s/.test(value) && /[0-9]/.test(value) && /[A-Za-z]/.test(value) && entropy(value) >= 3.5

/**
 * Whether a literal value should move to secrets.toml: a value already written as a reference stays, a credential
 * name's value moves, and so does any long random-looking value (a token under a name like `CONFIG`).
 */
export const isSecret = (name: string, value: string): boolean =>
  value !== "" &&
  !value.includes("${") &&
  (secretName(name) || looksRandom(value.replace(/^(Bearer|Basic|token)\s+/i, "")))

export const variableName = (name: string): string => {
  const snake = name
    .replace(/[^A-Za-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .toUpperCase()
  return /^[A-Z_]/.test(snake) ? snake : `_${snake}`
}

/** The server with its literal secrets replaced by `${VAR}` (an `Authorization: Bearer x` keeps its scheme). */
export const extractSecrets = (
  server: Server
): { readonly server: Server; readonly secrets: ReadonlyArray<readonly [string, string]> } => {
  const secrets: Array<readonly [string, string]> = []
  const taken = new Set<string>()
  const move = (name: string, value: string): string => {
    if (!isSecret(name, value)) return value
    let variable = variableName(name)
    for (let n = 2; taken.has(variable); n++) variable = `${variableName(name)}_${n}`
    taken.add(variable)
    const scheme = /^(Bearer|Basic|token)\s+(\S.*)$/i.exec(value)
    secrets.push([variable, scheme === null ? value : scheme[2]!])
    return scheme === null ? `\${${variable}}` : `${scheme[1]} \${${variable}}`
  }
  const table = (values: Readonly<Record<string, string>>) =>
    Object.fromEntries(sortedEntries(values).map(([key, value]) => [key, move(key, value)]))
  return server._tag === "Stdio"
    ? { server: { ...server, env: table(server.env) }, secrets }
    : { server: { ...server, headers: table(server.headers) }, secrets }
}

/** A valid instance name (kebab-case, 2-32 characters) from a host's key, unique among `taken`. */
export const instanceName = (hostName: string, taken: ReadonlySet<string>): string => {
  const kebab = kebabCase(hostName)
  const base = kebab.length >= 2 ? kebab.slice(0, 32).replace(/-+$/, "") : `server${kebab === "" ? "" : `-${kebab}`}`
  if (!taken.has(base)) return base
  for (let n = 2; ; n++) {
    const suffix = `-${n}`
    const name = `${base.slice(0, 32 - suffix.length).replace(/-+$/, "")}${suffix}`
    if (!taken.has(name)) return name
  }
}

/** The existing config's sources in the same terms, to tell a server already imported from a new one. */
const existingServers = (config: ClawtoolConfig): ReadonlyArray<readonly [string, string]> =>
  Object.entries(config.sources).flatMap(([name, source]): ReadonlyArray<readonly [string, string]> => {
    if (source.url !== undefined) {
      return [[name, identity({ _tag: "Remote", url: source.url, transport: "auto", headers: source.headers })]]
    }
    if (source.command === undefined) return []
    return [[name, identity({ _tag: "Stdio", command: source.command, env: source.env, cwd: source.cwd })]]
  })

/** Groups the entries of every file read into sources, in the order found; `existing` is the config already there. */
export const planSources = (
  readings: ReadonlyArray<FileReading>,
  existing: ClawtoolConfig | undefined
): ReadonlyArray<PlannedSource> => {
  const groups = new Map<string, Array<HostServer>>()
  for (const entry of readings.flatMap((reading) => reading.servers)) {
    const key = identity(entry.server)
    groups.set(key, [...(groups.get(key) ?? []), entry])
  }
  const present = existing === undefined ? [] : existingServers(existing)
  const taken = new Set(existing === undefined ? [] : Object.keys(existing.sources))
  return [...groups.values()].map((members): PlannedSource => {
    const first = members[0]!
    const extracted = extractSecrets(first.server)
    const enabled = members.some((member) => member.enabled)
    const already = present.find(([, key]) => key === identity(extracted.server) || key === identity(first.server))
    if (already !== undefined) {
      return { name: already[0], server: extracted.server, enabled, members, secrets: [], status: "present" }
    }
    const wanted = kebabCase(first.name)
    if (existing !== undefined && wanted in existing.sources) {
      return { name: wanted, server: extracted.server, enabled, members, secrets: [], status: "conflict" }
    }
    const name = instanceName(first.name, taken)
    taken.add(name)
    return { name, server: extracted.server, enabled, members, secrets: extracted.secrets, status: "new" }
  })
}

/** `/home/alice/.cursor/mcp.json` → `~/.cursor/mcp.json`. */
export const shortPath = (file: string, home: string): string =>
  file === home || file.startsWith(`${home}/`) ? `~${file.slice(home.length)}` : file

const kindOf = (server: Server) => (server._tag === "Stdio" ? "stdio" : `remote (${server.transport})`)

/** The lines `clawtool init` prints before it writes anything: what it found, what it will do and what it left out. */
export const renderPlan = (
  sources: ReadonlyArray<PlannedSource>,
  readings: ReadonlyArray<FileReading>,
  problems: ReadonlyArray<FileProblem>,
  home: string
): string => {
  const rows = sources.flatMap((source) =>
    source.members.map((member) => [
      hostNames[member.host],
      shortPath(member.file, home),
      member.name,
      `${kindOf(member.server)}${member.enabled ? "" : ", disabled"}`,
      source.status === "new"
        ? source.name
        : source.status === "present"
          ? `${source.name} (already in the config)`
          : `not imported: the config has another source named ${source.name}`
    ])
  )
  const lines: Array<string> = []
  lines.push(
    rows.length === 0
      ? "No MCP servers to import were found in the hosts' configs."
      : renderTable(["HOST", "FILE", "SERVER", "KIND", "CLAWTOOL SOURCE"], rows)
  )
  for (const source of sources.filter((source) => source.members.length > 1)) {
    lines.push(
      `same server: ${source.members.map((member) => `${hostNames[member.host]} ${member.name}`).join(" = ")} → ${source.name}`
    )
  }
  for (const source of sources) {
    for (const [variable] of source.secrets) {
      lines.push(`secret: ${source.name} ${variable} moves to secrets.toml as \${${variable}}`)
    }
  }
  for (const reading of readings) {
    for (const name of reading.clawtool) {
      lines.push(
        `already clawtool: ${hostNames[reading.hostFile.host]} ${shortPath(reading.hostFile.file, home)} ${name}`
      )
    }
    for (const entry of reading.skipped) {
      lines.push(`skipped: ${hostNames[entry.host]} ${shortPath(entry.file, home)} ${entry.name}: ${entry.reason}`)
    }
  }
  for (const problem of problems) {
    lines.push(
      `skipped file: ${hostNames[problem.host]} ${shortPath(problem.file, home)}${problem.line === undefined ? "" : `:${problem.line}`}: ${problem.detail} (left as it is)`
    )
  }
  return lines.join("\n")
}

const sourceBody = (source: PlannedSource): ReadonlyArray<string> => {
  const server = source.server
  const body =
    server._tag === "Stdio"
      ? [
          `command = ${tomlArray(server.command)}`,
          ...(Object.keys(server.env).length === 0 ? [] : [`env = ${tomlInlineTable(sortedEntries(server.env))}`]),
          ...(server.cwd === undefined ? [] : [`cwd = ${tomlString(server.cwd)}`])
        ]
      : [
          `url = ${tomlString(server.url)}`,
          ...(server.transport === "auto" ? [] : [`transport = ${tomlString(server.transport)}`]),
          ...(Object.keys(server.headers).length === 0
            ? []
            : [`headers = ${tomlInlineTable(sortedEntries(server.headers))}`])
        ]
  return source.enabled ? body : [...body, "enabled = false"]
}

/** The config text with every new source appended (the existing text, if any, kept byte for byte before them). */
export const configText = (before: string, sources: ReadonlyArray<PlannedSource>, home: string): string =>
  sources
    .filter((source) => source.status === "new")
    .reduce(
      (text, source) => {
        const from = source.members
          .map((member) => `${hostNames[member.host]} ${shortPath(member.file, home)} ${JSON.stringify(member.name)}`)
          .join(", ")
        const withComment = appendTable(text, ["sources", source.name], sourceBody(source))
        // The comment goes right above the header, so `clawtool source remove` takes it along.
        const header = `[sources.${source.name}]`
        const at = withComment.lastIndexOf(header)
        return `${withComment.slice(0, at)}# imported by clawtool init from ${from}\n${withComment.slice(at)}`
      },
      before === "" ? "# Written by clawtool init: one source per MCP server found in the hosts' configs.\n" : before
    )

/** The secrets text with each new source's secrets under `[scopes.<name>]`. */
export const secretsText = (before: string, sources: ReadonlyArray<PlannedSource>): Either.Either<string, string> => {
  let text = before
  for (const source of sources.filter((source) => source.status === "new")) {
    for (const [variable, value] of source.secrets) {
      const next = setSecret(text, source.name, variable, value)
      if (Either.isLeft(next)) return Either.left(next.left.detail)
      text = next.right
    }
  }
  return Either.right(text)
}
