/**
 * A host file's text → the servers it lists, in clawtool's terms (pure). JSON and JSONC (comments, trailing commas)
 * through jsonc-parser, Codex's TOML through smol-toml; a syntax error, or a server section that is not an object, makes
 * the whole file a FileProblem (with its line) and it is skipped, never rewritten. One entry clawtool cannot use is
 * skipped alone, with why.
 */
import { Either } from "effect"
import * as Jsonc from "jsonc-parser"
import * as Path from "node:path"
import * as Toml from "smol-toml"
import type { HostFile, HostId, VariableStyle } from "./Hosts.js"

export type Transport = "auto" | "streamable-http" | "sse"

/** A server as clawtool would run it: what makes two entries the same server. */
export type Server =
  | {
      readonly _tag: "Stdio"
      readonly command: ReadonlyArray<string>
      readonly env: Readonly<Record<string, string>>
      readonly cwd: string | undefined
    }
  | {
      readonly _tag: "Remote"
      readonly url: string
      readonly transport: Transport
      readonly headers: Readonly<Record<string, string>>
    }

export interface HostServer {
  readonly host: HostId
  readonly file: string
  readonly section: ReadonlyArray<string>
  /** The entry's key in the host file. */
  readonly name: string
  readonly server: Server
  readonly enabled: boolean
}

export interface SkippedEntry {
  readonly host: HostId
  readonly file: string
  readonly name: string
  readonly reason: string
}

/** A host file as read: its servers, the entries left out, and the names of entries that already run clawtool. */
export interface FileReading {
  readonly hostFile: HostFile
  readonly text: string
  readonly servers: ReadonlyArray<HostServer>
  readonly skipped: ReadonlyArray<SkippedEntry>
  readonly clawtool: ReadonlyArray<string>
}

/** A host file that cannot be read or parsed: reported and left alone. */
export interface FileProblem {
  readonly host: HostId
  readonly file: string
  readonly line: number | undefined
  readonly detail: string
}

/** What variables mean where the file is: `${workspaceFolder}` is the project, `${userHome}` the home. */
export interface ReadContext {
  readonly home: string
  readonly project: string | undefined
  /** The running clawtool's bin: an entry that runs it is clawtool's own, never imported. */
  readonly bin: string
}

const lineAt = (text: string, offset: number): number => text.slice(0, offset).split("\n").length

const upperSnake = (name: string) =>
  name
    .replace(/[^A-Za-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .toUpperCase()

/** The host's variable syntax turned into clawtool's only one, `${VAR}` (defaults are dropped: clawtool has none). */
export const translateVariables = (value: string, style: VariableStyle, context: ReadContext): string => {
  switch (style) {
    case "none":
      return value
    case "claude":
      return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*):-[^}]*\}/g, "${$1}")
    case "gemini":
      return value
        .replace(/\$\{([A-Za-z_][A-Za-z0-9_]*):-[^}]*\}/g, "${$1}")
        .replace(/\$([A-Za-z_][A-Za-z0-9_]*)/g, "${$1}")
    case "editor":
      return value.replace(/\$\{(env|input):([^}]+)\}|\$\{(workspaceFolder|userHome)\}/g, (whole, kind, name, known) =>
        kind === "env"
          ? `\${${name}}`
          : kind === "input"
            ? `\${${upperSnake(name)}}`
            : known === "userHome"
              ? context.home
              : (context.project ?? whole)
      )
  }
}

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const stringTable = (value: unknown, what: string): Either.Either<Record<string, string>, string> => {
  if (value === undefined) return Either.right({})
  if (!isRecord(value) || !Object.values(value).every((item) => typeof item === "string")) {
    return Either.left(`${what} is not an object of strings`)
  }
  return Either.right({ ...(value as Record<string, string>) })
}

const remoteTypes: Readonly<Record<string, Transport>> = {
  http: "streamable-http",
  "streamable-http": "streamable-http",
  streamableHttp: "streamable-http",
  sse: "sse"
}

/** A JSON host entry (every host but Codex) as a Server, or why it is skipped. */
const jsonEntry = (entry: unknown): Either.Either<{ server: Server; enabled: boolean }, string> => {
  if (!isRecord(entry)) return Either.left("is not an object")
  const { type, command, args, env, cwd, headers } = entry
  const url = entry.url ?? entry.serverUrl ?? entry.httpUrl
  const enabled = entry.disabled !== true && entry.enabled !== false
  if (type !== undefined && type !== "stdio" && !(typeof type === "string" && type in remoteTypes)) {
    return Either.left(`type ${JSON.stringify(type)} is not stdio, http or sse`)
  }
  if (command !== undefined && url !== undefined) return Either.left("has both a command and a url")
  if (url !== undefined) {
    if (typeof url !== "string" || url === "") return Either.left("url is not a string")
    return Either.map(stringTable(headers, "headers"), (table) => ({
      server: {
        _tag: "Remote" as const,
        url,
        transport:
          typeof type === "string" && type in remoteTypes
            ? remoteTypes[type]!
            : entry.httpUrl !== undefined
              ? "streamable-http"
              : "auto",
        headers: table
      },
      enabled
    }))
  }
  if (typeof command !== "string" || command === "") return Either.left("has neither a command nor a url")
  if (args !== undefined && !(Array.isArray(args) && args.every((arg) => typeof arg === "string"))) {
    return Either.left("args is not a list of strings")
  }
  if (cwd !== undefined && typeof cwd !== "string") return Either.left("cwd is not a string")
  return Either.map(stringTable(env, "env"), (table) => ({
    server: {
      _tag: "Stdio" as const,
      command: [command, ...((args as ReadonlyArray<string> | undefined) ?? [])],
      env: table,
      cwd
    },
    enabled
  }))
}

/** A Codex `[mcp_servers.<name>]` table as a Server: env-var names become `${VAR}` references. */
const codexEntry = (entry: unknown): Either.Either<{ server: Server; enabled: boolean }, string> => {
  if (!isRecord(entry)) return Either.left("is not a table")
  const enabled = entry.enabled !== false
  if (typeof entry.url === "string") {
    const literal = stringTable(entry.http_headers, "http_headers")
    const fromEnv = stringTable(entry.env_http_headers, "env_http_headers")
    if (Either.isLeft(literal)) return Either.left(literal.left)
    if (Either.isLeft(fromEnv)) return Either.left(fromEnv.left)
    const headers: Record<string, string> = { ...literal.right }
    for (const [header, variable] of Object.entries(fromEnv.right)) headers[header] = `\${${variable}}`
    if (typeof entry.bearer_token_env_var === "string") {
      headers["Authorization"] = `Bearer \${${entry.bearer_token_env_var}}`
    }
    return Either.right({ server: { _tag: "Remote", url: entry.url, transport: "streamable-http", headers }, enabled })
  }
  const passthrough = entry.env_vars
  if (passthrough !== undefined && !(Array.isArray(passthrough) && passthrough.every((v) => typeof v === "string"))) {
    return Either.left("env_vars is not a list of strings")
  }
  return Either.flatMap(
    jsonEntry({ command: entry.command, args: entry.args, env: entry.env, cwd: entry.cwd }),
    (read) => {
      if (read.server._tag !== "Stdio") return Either.right({ ...read, enabled })
      const env = { ...read.server.env }
      for (const name of (passthrough as ReadonlyArray<string> | undefined) ?? []) env[name] = `\${${name}}`
      return Either.right({ server: { ...read.server, env }, enabled })
    }
  )
}

const translateServer = (server: Server, style: VariableStyle, context: ReadContext): Server => {
  const t = (value: string) => translateVariables(value, style, context)
  const table = (values: Readonly<Record<string, string>>) =>
    Object.fromEntries(Object.entries(values).map(([key, value]) => [key, t(value)]))
  return server._tag === "Stdio"
    ? {
        ...server,
        command: server.command.map(t),
        env: table(server.env),
        cwd: server.cwd === undefined ? undefined : t(server.cwd)
      }
    : { ...server, url: t(server.url), headers: table(server.headers) }
}

/** Whether an entry runs clawtool itself (its name, or the running bin, or a `clawtool` program). */
const runsClawtool = (name: string, server: Server, context: ReadContext) =>
  name === "clawtool" ||
  (server._tag === "Stdio" &&
    (server.command.slice(0, 2).includes(context.bin) || Path.basename(server.command[0]!) === "clawtool"))

const parseDocument = (hostFile: HostFile, text: string): Either.Either<unknown, FileProblem> => {
  const problem = (line: number | undefined, detail: string): FileProblem => ({
    host: hostFile.host,
    file: hostFile.file,
    line,
    detail
  })
  if (hostFile.format === "toml") {
    try {
      return Either.right(Toml.parse(text))
    } catch (cause) {
      return Either.left(
        cause instanceof Toml.TomlError
          ? problem(cause.line, `invalid TOML: ${cause.message.replace(/^Invalid TOML document: /, "").split("\n")[0]}`)
          : problem(undefined, `invalid TOML: ${String(cause)}`)
      )
    }
  }
  const errors: Array<Jsonc.ParseError> = []
  const value: unknown = Jsonc.parse(text, errors, { allowTrailingComma: true, disallowComments: false })
  const first = errors[0]
  if (first !== undefined) {
    return Either.left(problem(lineAt(text, first.offset), `invalid JSON: ${Jsonc.printParseErrorCode(first.error)}`))
  }
  if (!isRecord(value)) return Either.left(problem(1, "the file is not a JSON object"))
  return Either.right(value)
}

/** The servers of one host file, or the problem that makes it unusable. */
export const readHostFile = (
  hostFile: HostFile,
  text: string,
  context: ReadContext
): Either.Either<FileReading, FileProblem> =>
  Either.flatMap(parseDocument(hostFile, text), (document) => {
    const servers: Array<HostServer> = []
    const skipped: Array<SkippedEntry> = []
    const clawtool: Array<string> = []
    for (const section of hostFile.sections) {
      const entries = section.reduce<unknown>((node, key) => (isRecord(node) ? node[key] : undefined), document)
      if (entries === undefined) continue
      if (!isRecord(entries)) {
        const node =
          hostFile.format === "jsonc" ? Jsonc.findNodeAtLocation(Jsonc.parseTree(text)!, [...section]) : undefined
        return Either.left({
          host: hostFile.host,
          file: hostFile.file,
          line: node === undefined ? undefined : lineAt(text, node.offset),
          detail: `${section.join(".")} is not an object of servers`
        })
      }
      for (const [name, entry] of Object.entries(entries)) {
        const read = hostFile.format === "toml" ? codexEntry(entry) : jsonEntry(entry)
        if (Either.isLeft(read)) {
          skipped.push({ host: hostFile.host, file: hostFile.file, name, reason: read.left })
          continue
        }
        const server = translateServer(read.right.server, hostFile.variables, context)
        if (runsClawtool(name, server, context)) {
          clawtool.push(name)
          continue
        }
        servers.push({ host: hostFile.host, file: hostFile.file, section, name, server, enabled: read.right.enabled })
      }
    }
    return Either.right({ hostFile, text, servers, skipped, clawtool })
  })
