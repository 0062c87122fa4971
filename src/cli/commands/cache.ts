import { Command } from "@effect/cli"
import { Console, Effect } from "effect"
import * as Fs from "node:fs"
import { cacheDir, codeCacheDir } from "../../paths.js"
import { CatalogCache } from "../../services/CatalogCache.js"

const cacheClear = Command.make("clear", {}, () =>
  Effect.gen(function* () {
    const removed = yield* (yield* CatalogCache).clear
    // The bin's V8 code cache (src/launcher.ts) lives beside the catalogs; it is rebuilt on the next start.
    yield* Effect.sync(() => Fs.rmSync(codeCacheDir(), { recursive: true, force: true }))
    yield* Console.log(
      `removed ${removed} cached catalog${removed === 1 ? "" : "s"} and the code cache from ${cacheDir()}`
    )
  }).pipe(Effect.provide(CatalogCache.Default))
).pipe(
  Command.withDescription(
    "Remove every persisted catalog (the tools each source last listed, kept so the next start serves them at once) and the bin's code cache. Sources list again on their next start."
  )
)

export const cache = Command.make("cache").pipe(
  Command.withDescription(
    "Manage the persisted catalog in $CLAWTOOL_CACHE_DIR, else $XDG_CACHE_HOME/clawtool, else ~/.cache/clawtool."
  ),
  Command.withSubcommands([cacheClear])
)
