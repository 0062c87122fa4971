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
