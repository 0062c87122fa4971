import { Context, Option } from "effect"

/**
 * Child environments are default-deny (peers.md §2.8): a child sees only this documented safe set, the
 * names its source lists in `env_passthrough`, and its resolved `env`. Proxy and CA-bundle variables are in
 * the safe set because dropping them breaks children behind corporate proxies.
 */
export const safeNames: ReadonlyArray<string> = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "TERM",
  "LANG",
  "LANGUAGE",
  "TZ",
  "TMPDIR",
  "TEMP",
  "TMP",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "ALL_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "all_proxy",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "NODE_EXTRA_CA_CERTS",
  "REQUESTS_CA_BUNDLE",
  "CURL_CA_BUNDLE"
]
const safeSet = new Set(safeNames)
/** Locale variables (LC_ALL, LC_CTYPE, …) pass as a family. */
const safePrefix = "LC_"

export const isSafe = (name: string): boolean => safeSet.has(name) || name.startsWith(safePrefix)

export const childEnvironment = (
  parent: Readonly<Record<string, string | undefined>>,
  passthrough: ReadonlyArray<string>,
  resolved: Readonly<Record<string, string>>
): Record<string, string> => {
  const allowed = new Set(passthrough)
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(parent)) {
    if (value !== undefined && (isSafe(name) || allowed.has(name))) env[name] = value
  }
  return { ...env, ...resolved }
}

/**
 * The config files of the clawtools above a child, outermost first (ADR 013). clawtool hands it to every child, past
 * default-deny, so a source that starts clawtool again with a config already in the chain is refused at once instead
 * of forking a new clawtool per restart.
 */
export const configChainVariable = "CLAWTOOL_CONFIG_CHAIN"

/** The chain as clawtool received it: a JSON array of paths; anything else (unset, garbled) is an empty chain. */
export const parseConfigChain = (value: string | undefined): ReadonlyArray<string> => {
  if (value === undefined || value === "") return []
  try {
    const parsed: unknown = JSON.parse(value)
    return Array.isArray(parsed) ? parsed.filter((item): item is string => typeof item === "string") : []
  } catch {
    return []
  }
}

/**
 * What this clawtool knows of its place in the chain: `files` are the config files above its children (its own last),
 * `repeated` is its own config when a clawtool above it already serves that file: then it starts no source and refuses
 * `initialize` with `recursionErrorCode`.
 */
export interface ConfigChainShape {
  readonly files: ReadonlyArray<string>
  readonly repeated: Option.Option<string>
}

/** The chain in effect: the config's in the app (layers/Main.ts); none anywhere else (tests), which adds no marker. */
export class ConfigChain extends Context.Reference<ConfigChain>()("clawtool/ConfigChain", {
  defaultValue: (): ConfigChainShape => ({ files: [], repeated: Option.none() })
}) {}

/** A child's final environment with the marker set last, so no `env` entry of the config can remove it. */
export const withConfigChain = (
  env: Readonly<Record<string, string>>,
  files: ReadonlyArray<string>
): Readonly<Record<string, string>> =>
  files.length === 0 ? env : { ...env, [configChainVariable]: JSON.stringify(files) }

/**
 * The JSON-RPC error code of a nested clawtool's refusal of `initialize` (the server-defined range of JSON-RPC); its
 * `data.configPath` names the repeated config. The parent trusts it only when that path is in its own chain.
 */
export const recursionErrorCode = -32090

/** The repeated config a child's initialize error names, when it is a nested clawtool's refusal of this chain. */
export const repeatedConfigOf = (code: number, data: unknown, files: ReadonlyArray<string>): Option.Option<string> => {
  if (code !== recursionErrorCode || typeof data !== "object" || data === null || !("configPath" in data)) {
    return Option.none()
  }
  const path = data.configPath
  return typeof path === "string" && files.includes(path) ? Option.some(path) : Option.none()
}

/** The nested clawtool's answer to `initialize` (thrown from its handler, answered as a JSON-RPC error). */
export const recursionRefusal = (configPath: string): Error & { code: number; data: { configPath: string } } =>
  Object.assign(
    new Error(
      `clawtool: config ${configPath} is already served by a clawtool above this one (${configChainVariable}); this one starts no source`
    ),
    { code: recursionErrorCode, data: { configPath } }
  )
