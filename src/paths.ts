import * as os from "node:os"
import * as path from "node:path"

/**
 * clawtool's folders on the host, each `CLAWTOOL_<X>` (when set and not empty), else `$XDG_<X>_HOME/clawtool`, else the
 * XDG default under the home folder. A module of its own, free of Effect, because the bin's launcher (src/launcher.ts)
 * needs the code cache's folder before anything else is loaded; Effect callers pass the env they read (ProcessEnv).
 */
export type Env = Readonly<Record<string, string | undefined>>

const nonEmpty = (value: string | undefined): value is string => value !== undefined && value !== ""

/** `$HOME` when set and not empty, else the account's home folder. */
const homeDir = (env: Env): string => (nonEmpty(env.HOME) ? env.HOME : os.homedir())

/** `$<xdg>/clawtool`, else `<home>/<fallback>/clawtool`. */
const xdgDir = (env: Env, xdg: string, fallback: ReadonlyArray<string>): string =>
  path.join(nonEmpty(env[xdg]) ? env[xdg] : path.join(homeDir(env), ...fallback), "clawtool")

/**
 * The default config file (without `--config`): `$CLAWTOOL_CONFIG` > `$XDG_CONFIG_HOME/clawtool/config.toml` >
 * `~/.config/clawtool/config.toml`, and which of them it is. Relative as given (services/Config/Location.ts resolves
 * it).
 */
export const defaultConfigFile = (
  env: Env = process.env
): { readonly file: string; readonly origin: "env" | "xdg" | "home" } =>
  nonEmpty(env.CLAWTOOL_CONFIG)
    ? { file: env.CLAWTOOL_CONFIG, origin: "env" }
    : {
        file: path.join(xdgDir(env, "XDG_CONFIG_HOME", [".config"]), "config.toml"),
        origin: nonEmpty(env.XDG_CONFIG_HOME) ? "xdg" : "home"
      }

/** The state folder (OAuth tokens, services/OAuth/Store.ts): `$CLAWTOOL_STATE_DIR`, else `$XDG_STATE_HOME/clawtool`, else `~/.local/state/clawtool`. */
export const stateDir = (env: Env = process.env): string =>
  nonEmpty(env.CLAWTOOL_STATE_DIR) ? env.CLAWTOOL_STATE_DIR : xdgDir(env, "XDG_STATE_HOME", [".local", "state"])

/**
 * The cache folder: `$CLAWTOOL_CACHE_DIR`, else `$XDG_CACHE_HOME/clawtool`, else `~/.cache/clawtool`. It holds the
 * persisted catalog (services/CatalogCache.ts) and, under `code/`, V8's code cache of the bin (src/launcher.ts).
 */
export const cacheDir = (env: Env = process.env): string =>
  nonEmpty(env.CLAWTOOL_CACHE_DIR) ? env.CLAWTOOL_CACHE_DIR : xdgDir(env, "XDG_CACHE_HOME", [".cache"])

/** V8's code cache of the bin (src/launcher.ts), inside the cache folder; `clawtool cache clear` removes it. */
export const codeCacheDir = (env: Env = process.env): string => path.join(cacheDir(env), "code")
