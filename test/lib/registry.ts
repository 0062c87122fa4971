import { Either, Layer } from "effect"
import * as Path from "node:path"
import { CatalogCache } from "../../src/services/CatalogCache.js"
import { Config, parseConfig } from "../../src/services/Config.js"
import { CoreTools } from "../../src/services/CoreTools.js"
import { Registry } from "../../src/services/Registry.js"
import { Secrets } from "../../src/services/Secrets.js"
import { SourceClient } from "../../src/services/SourceClient/SourceClient.js"
import { Sources } from "../../src/services/Sources.js"
import { tempDir } from "./temp.js"

export const root = Path.resolve(import.meta.dirname, "../..")
const server = (name: string) => Path.join(root, `node_modules/@modelcontextprotocol/server-${name}/dist/index.js`)

export const makeTempDir = (prefix = "clawtool-registry-") => tempDir(prefix)

/** `[sources.*]` tables for the reference servers: everything, filesystem (over `dir`) and memory (file in `dir`). */
export const referenceSources = (dir: string, which: ReadonlyArray<"everything" | "filesystem" | "memory">) =>
  which
    .map((name) => {
      switch (name) {
        case "everything":
          return `[sources.everything]\ncommand = ${JSON.stringify([process.execPath, server("everything"), "stdio"])}\n`
        case "filesystem":
          return `[sources.filesystem]\ncommand = ${JSON.stringify([process.execPath, server("filesystem"), dir])}\n`
        case "memory":
          return `[sources.memory]\ncommand = ${JSON.stringify([process.execPath, server("memory")])}\nenv = { MEMORY_FILE_PATH = ${JSON.stringify(Path.join(dir, "memory.jsonl"))} }\n`
      }
    })
    .join("\n")

/** Registry over real Sources (real children), from a TOML text; Registry and Sources share one Config. */
export const registryLayer = (toml: string, cache: Layer.Layer<CatalogCache> = CatalogCache.Test()) => {
  const config = Either.getOrThrow(parseConfig(toml, "test.toml", "toml"))
  const configLayer = Config.layerTest(config)
  const sources = Sources.DefaultWithoutDependencies.pipe(
    Layer.provide(
      Layer.mergeAll(configLayer, Secrets.layerTest({ sources: config.sources }), SourceClient.Default, cache)
    )
  )
  return Registry.DefaultWithoutDependencies.pipe(
    Layer.provide(CoreTools.ProviderWithoutDependencies),
    Layer.provideMerge(Layer.merge(sources, configLayer))
  )
}
