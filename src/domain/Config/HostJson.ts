import { Option, ParseResult, Record, Schema } from "effect"
import { ClawtoolConfig } from "./Clawtool.js"
import { SourceConfig } from "./Source.js"
import { Env, Headers, InstanceName, type RemoteTransport, RemoteUrl } from "./Values.js"

/*
 * The mcpServers (Claude Desktop, Cursor) / servers (VS Code) JSON, imported as a ClawtoolConfig.
 */

/** Keys of an entry that only steer the host's approval UI; they mean nothing to clawtool, so they are dropped. */
const hostOnlyKeys: ReadonlyArray<string> = ["autoApprove", "alwaysAllow"]

/** The `type` values of remote entries, and the transport each means (VS Code writes "http", others "sse"). */
const remoteTypes: Readonly<Record<string, RemoteTransport>> = {
  http: "streamable-http",
  "streamable-http": "streamable-http",
  streamableHttp: "streamable-http",
  sse: "sse"
}

/** What one host entry is to clawtool: a local server, a remote one, or one it cannot use (and why). */
type EntryKind =
  | { readonly _tag: "Stdio" }
  | { readonly _tag: "Remote"; readonly transport: RemoteTransport }
  | { readonly _tag: "Unusable"; readonly why: string }

/** Judged on the entry's raw keys, so an unusable entry is skipped before its keys are checked. */
const entryKind = (entry: { readonly [key: string]: unknown }): EntryKind => {
  const { type, command, url } = entry
  if (type !== undefined && type !== "stdio" && (typeof type !== "string" || !(type in remoteTypes))) {
    return { _tag: "Unusable", why: `type ${JSON.stringify(type)} is not stdio, http or sse` }
  }
  const remote = typeof type === "string" ? remoteTypes[type] : undefined
  if (type === "stdio" || (type === undefined && url === undefined)) {
    return command === undefined
      ? { _tag: "Unusable", why: url === undefined ? "has neither a command nor a url" : `type "stdio" has no command` }
      : { _tag: "Stdio" }
  }
  if (url === undefined) return { _tag: "Unusable", why: `type ${JSON.stringify(type)} has no url` }
  if (command !== undefined) return { _tag: "Unusable", why: "has both a command and a url" }
  return { _tag: "Remote", transport: remote ?? "auto" }
}

/** Any object; its kind picks the keys it is checked against. */
const HostEntryObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  description: `an object with a "command" or a "url"`
})

/** One local server entry in the host's own key names. */
const StdioEntryFields = Schema.Struct({
  type: Schema.optional(Schema.Literal("stdio")),
  command: Schema.propertySignature(
    Schema.String.pipe(Schema.nonEmptyString({ description: "a non-empty string" }))
  ).annotations({ missingMessage: () => "this entry has no command" }),
  args: Schema.optional(Schema.Array(Schema.String).annotations({ description: "a list of strings" })),
  env: Schema.optional(Env),
  cwd: SourceConfig.fields.cwd,
  disabled: Schema.optional(Schema.Boolean.annotations({ description: "true or false" }))
})

/** One remote server entry (Cursor, Claude, VS Code: `url`, optional `type` and `headers`). */
const RemoteEntryFields = Schema.Struct({
  type: Schema.optional(Schema.String),
  url: RemoteUrl,
  headers: Schema.optional(Headers),
  disabled: Schema.optional(Schema.Boolean.annotations({ description: "true or false" }))
})

/** A host entry as a source's fields, or a note that it was skipped. */
type HostSource =
  | { readonly _tag: "Source"; readonly fields: Readonly<Record<string, unknown>> }
  | { readonly _tag: "Skipped"; readonly why: string }

const HostSourceValue = Schema.declare(
  (input: unknown): input is HostSource => typeof input === "object" && input !== null && "_tag" in input
)

const HostEntry = Schema.transformOrFail(HostEntryObject, HostSourceValue, {
  strict: true,
  decode: (raw, options) => {
    const entry = Record.filter(raw, (_, key) => !hostOnlyKeys.includes(key))
    const kind = entryKind(entry)
    switch (kind._tag) {
      case "Unusable":
        return ParseResult.succeed<HostSource>({ _tag: "Skipped", why: kind.why })
      case "Stdio":
        return ParseResult.map(ParseResult.decodeUnknown(StdioEntryFields)(entry, options), (local): HostSource => ({
          _tag: "Source",
          fields: {
            command: [local.command, ...(local.args ?? [])],
            ...(local.env === undefined ? {} : { env: local.env }),
            ...(local.cwd === undefined ? {} : { cwd: local.cwd }),
            enabled: local.disabled !== true
          }
        }))
      case "Remote":
        return ParseResult.map(ParseResult.decodeUnknown(RemoteEntryFields)(entry, options), (remote): HostSource => ({
          _tag: "Source",
          fields: {
            url: remote.url,
            transport: kind.transport,
            ...(remote.headers === undefined ? {} : { headers: remote.headers }),
            enabled: remote.disabled !== true
          }
        }))
    }
  },
  encode: (entry, _, ast) =>
    ParseResult.fail(new ParseResult.Forbidden(ast, entry, "clawtool does not write host entries"))
})

const HostServers = Schema.Record({ key: InstanceName, value: HostEntry }).annotations({
  description: `an object of servers, like { "my-server": { "command": "npx" } }`
})

/** The host owns the file: its other top-level keys (globalShortcut, inputs, …) are left alone. */
const HostDocument = Schema.Struct(
  { mcpServers: Schema.optional(HostServers), servers: Schema.optional(HostServers) },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
).annotations({ description: `a JSON object with "mcpServers" or "servers"` })

/** An entry of a host's JSON file that clawtool cannot use: left out of the sources, named in a warning and in Health. */
export class SkippedEntry extends Schema.Class<SkippedEntry>("SkippedEntry")({
  /** The entry's key. */
  name: Schema.String,
  /** Why clawtool cannot use it, like `type "ws" is not stdio, http or sse`. */
  reason: Schema.String
}) {}

/** A config as decoded from its file, with the host entries left out of it (a TOML config skips none: it rejects). */
export const DecodedConfig = Schema.Struct({ config: ClawtoolConfig, skipped: Schema.Array(SkippedEntry) })
export type DecodedConfig = typeof DecodedConfig.Type

/**
 * A host's JSON file as a ClawtoolConfig: each entry becomes a source, `command` + `args` its command (or `url`,
 * `type` and `headers` a remote source's keys) and `disabled` its `enabled`. An entry clawtool cannot use is left out
 * and listed in `skipped` (by name) with why, never a reason to reject the others. One way only: clawtool writes its
 * own config as TOML.
 */
export const McpServersJson = Schema.transformOrFail(HostDocument, DecodedConfig, {
  strict: true,
  decode: (document, _, ast) => {
    const { mcpServers, servers } = document
    if (mcpServers !== undefined && servers !== undefined) {
      return ParseResult.fail(new ParseResult.Type(ast, document, `has both "mcpServers" and "servers"; keep one`))
    }
    const entries = mcpServers ?? servers
    if (entries === undefined) {
      return ParseResult.fail(
        new ParseResult.Type(
          ast,
          document,
          `expected a JSON object with "mcpServers" (Claude Desktop, Cursor) or "servers" (VS Code)`
        )
      )
    }
    return ParseResult.succeed({
      config: {
        sources: Record.filterMap(entries, (entry) =>
          entry._tag === "Source" ? Option.some(entry.fields) : Option.none()
        )
      },
      skipped: Object.entries(entries)
        .flatMap(([name, entry]) => (entry._tag === "Skipped" ? [{ name, reason: entry.why }] : []))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    })
  },
  encode: (decoded, _, ast) =>
    ParseResult.fail(
      new ParseResult.Forbidden(ast, decoded, "clawtool writes its config as TOML, not as mcpServers JSON")
    )
})
