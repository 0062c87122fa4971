import * as os from "node:os"
import * as path from "node:path"

/**
 * clawtool's cache folder: `CLAWTOOL_CACHE_DIR`, else `$XDG_CACHE_HOME/clawtool`, else `~/.cache/clawtool`. It holds
 * the persisted catalog (services/CatalogCache.ts) and, under `code/`, V8's code cache of the bin (src/launcher.ts).
 * A module of its own, free of Effect, because the bin's launcher needs it before anything else is loaded.
 */
export const cacheDir = (env: NodeJS.ProcessEnv = process.env): string =>
  env.CLAWTOOL_CACHE_DIR !== undefined && env.CLAWTOOL_CACHE_DIR !== ""
    ? env.CLAWTOOL_CACHE_DIR
    : path.join(
        env.XDG_CACHE_HOME !== undefined && env.XDG_CACHE_HOME !== ""
          ? env.XDG_CACHE_HOME
          : path.join(os.homedir(), ".cache"),
        "clawtool"
      )

/** V8's code cache of the bin (src/launcher.ts), inside the cache folder; `clawtool cache clear` removes it. */
export const codeCacheDir = (env: NodeJS.ProcessEnv = process.env): string => path.join(cacheDir(env), "code")
