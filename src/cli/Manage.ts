/**
 * What each management command does to the text of a file, as pure functions (old text → new text, or why not).
 * The caller validates the result as a whole config before writing it (ConfigEdit.commitConfig).
 */
import { Either, Option } from "effect"
import { instanceNameProblem } from "../domain/Config.js"
import { envNameProblem } from "./ConfigEdit.js"
import {
  appendTable,
  hasTable,
  removeTable,
  setKey,
  tomlArray,
  tomlInlineTable,
  tomlString,
  type EditProblem
} from "./TomlEdit.js"

export type Edit = Either.Either<string, EditProblem>

const problem = (detail: string): Edit => Either.left({ detail })

/** `K=V` pairs from repeated `--env`/`--header` options, in order; a later K replaces an earlier one. */
export const parsePairs = (
  flag: string,
  pairs: ReadonlyArray<string>
): Either.Either<ReadonlyArray<readonly [string, string]>, EditProblem> => {
  const out = new Map<string, string>()
  for (const pair of pairs) {
    const eq = pair.indexOf("=")
    if (eq <= 0) return Either.left({ detail: `--${flag} ${JSON.stringify(pair)}: expected KEY=VALUE` })
    const key = pair.slice(0, eq)
    const bad = envNameProblem(key)
    if (flag === "env" && Option.isSome(bad)) return Either.left({ detail: `--env: ${bad.value}` })
    out.set(key, pair.slice(eq + 1))
  }
  return Either.right([...out])
}

/** Appends `[sources.<name>]` with its command (and env). Refuses a bad or taken name and an empty command. */
export const addSource = (
  text: string,
  existing: ReadonlyArray<string>,
  name: string,
  command: ReadonlyArray<string>,
  env: ReadonlyArray<readonly [string, string]>
): Edit => {
  const bad = instanceNameProblem(name)
  if (Option.isSome(bad)) return problem(`source name ${JSON.stringify(name)}: ${bad.value}`)
  if (existing.includes(name) || hasTable(text, ["sources", name])) {
    return problem(
      `a source named ${JSON.stringify(name)} already exists; remove it first (clawtool source remove ${name})`
    )
  }
  if (command.length === 0 || command[0] === "") {
    return problem(`give the command after --, like: clawtool source add ${name} -- npx -y some-mcp-server`)
  }
  const body = [`command = ${tomlArray(command)}`, ...(env.length === 0 ? [] : [`env = ${tomlInlineTable(env)}`])]
  return Either.right(appendTable(text, ["sources", name], body))
}

/** Appends `[sources.<name>]` for a remote server: its url (and headers). The config schema judges the url. */
export const addRemoteSource = (
  text: string,
  existing: ReadonlyArray<string>,
  name: string,
  url: string,
  headers: ReadonlyArray<readonly [string, string]>
): Edit => {
  const bad = instanceNameProblem(name)
  if (Option.isSome(bad)) return problem(`source name ${JSON.stringify(name)}: ${bad.value}`)
  if (existing.includes(name) || hasTable(text, ["sources", name])) {
    return problem(
      `a source named ${JSON.stringify(name)} already exists; remove it first (clawtool source remove ${name})`
    )
  }
  const body = [`url = ${tomlString(url)}`, ...(headers.length === 0 ? [] : [`headers = ${tomlInlineTable(headers)}`])]
  return Either.right(appendTable(text, ["sources", name], body))
}

/** Removes `[sources.<name>]` and its sub-tables. */
export const removeSource = (text: string, existing: ReadonlyArray<string>, name: string, known: string): Edit =>
  !existing.includes(name)
    ? problem(`no source named ${JSON.stringify(name)}${known}`)
    : Either.mapLeft(removeTable(text, ["sources", name]), (why) => ({
        detail: `cannot remove ${name}: ${why.detail} (is it written inline under [sources]? edit the file by hand)`
      }))

/** Sets `enabled` of `[sources.<name>]`. */
export const setSourceEnabled = (
  text: string,
  existing: ReadonlyArray<string>,
  name: string,
  enabled: boolean,
  known: string
): Edit => {
  if (!existing.includes(name)) return problem(`no source named ${JSON.stringify(name)}${known}`)
  return Either.mapLeft(setKey(text, ["sources", name], "enabled", String(enabled)), (why) => ({
    detail: `cannot edit ${name}: ${why.detail} (is it written inline under [sources]? edit the file by hand)`
  }))
}

/** Sets `enabled` of `[tools."<selector>"]`, adding the table when disabling a tool that has none. */
export const setToolEnabled = (
  text: string,
  configured: ReadonlyArray<string>,
  selector: string,
  enabled: boolean
): Edit => {
  const path = ["tools", selector]
  if (hasTable(text, path)) return setKey(text, path, "enabled", String(enabled))
  if (configured.includes(selector)) {
    return problem(
      `tools.${tomlString(selector)} is written inline, not as a [tools.${tomlString(selector)}] table; edit it by hand`
    )
  }
  // No rules for this tool: it is enabled already; only disabling needs a table.
  return enabled ? Either.right(text) : Either.right(appendTable(text, path, ["enabled = false"]))
}

/** Sets `KEY = "value"` under `[scopes.<scope>]` of a secrets file. */
export const setSecret = (text: string, scope: string, key: string, value: string): Edit => {
  const bad = envNameProblem(key)
  if (Option.isSome(bad)) return problem(bad.value)
  const path = ["scopes", scope]
  return hasTable(text, path)
    ? setKey(text, path, key, tomlString(value))
    : Either.right(appendTable(text, path, [`${key} = ${tomlString(value)}`]))
}
