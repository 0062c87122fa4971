import { Effect, Layer, Option } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import type { JsonObject, Tool } from "../domain/Mcp.js"
import { isJsonObject, type Prompt, type Resource, type ResourceTemplate } from "../domain/Surface.js"
import { cacheDir } from "../cacheDir.js"
import * as Version from "../version.js"

/**
 * The persisted catalog (issue 10): each source's last listings (tools, resources, resource templates, prompts), so
 * the next start serves them before the child answers. One file per source spec, named by a hash of everything that
 * determines the child; a changed spec gets a new key and never reuses an old entry. The files hold what the child
 * listed and its server capabilities only: env values enter the key as a hash.
 */

/** What determines a child: its command line, working directory and final environment, and clawtool's version. */
export interface ChildSpec {
  readonly command: ReadonlyArray<string>
  readonly cwd: string | undefined
  readonly env: Readonly<Record<string, string>>
  /**
   * The client capabilities declared to the child (the host's sampling/elicitation/roots, ADR 005): a child may list
   * other tools for another host (server-everything adds its roots, sampling and elicitation tools).
   */
  readonly capabilities?: Readonly<Record<string, unknown>> | undefined
  /** A remote source's address and resolved headers (their names in clear, their values only as one hash). */
  readonly remote?:
    { readonly url: string; readonly transport: string; readonly headers: Readonly<Record<string, string>> } | undefined
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

/** JSON with object keys sorted at every level: the same capabilities give the same key whatever the host's order. */
const canonical = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(canonical)
    : typeof value === "object" && value !== null
      ? Object.fromEntries(
          Object.keys(value)
            .sort()
            .map((k) => [k, canonical((value as Record<string, unknown>)[k])])
        )
      : value

/** The cache key of a child: env names in clear (sorted), their values only as one hash. */
export const keyOf = (spec: ChildSpec): string => {
  const names = Object.keys(spec.env).sort()
  return sha256(
    JSON.stringify({
      clawtool: Version.version,
      command: spec.command,
      cwd: spec.cwd ?? null,
      env: names,
      values: sha256(JSON.stringify(names.map((name) => spec.env[name]))),
      capabilities: canonical(spec.capabilities ?? {}),
      ...(spec.remote === undefined ? {} : { remote: remoteKey(spec.remote) })
    })
  )
}

/** What a source listed beyond tools, and the server capabilities the routing of its URIs and prompts reads. */
export interface CachedLists {
  readonly capabilities: JsonObject
  readonly resources: ReadonlyArray<Resource>
  readonly resourceTemplates: ReadonlyArray<ResourceTemplate>
  readonly prompts: ReadonlyArray<Prompt>
}

/** A remote source in a key: the url (it may carry a token in its query) and header values only as hashes. */
const remoteKey = (remote: NonNullable<ChildSpec["remote"]>) => {
  const names = Object.keys(remote.headers).sort()
  return {
    url: sha256(remote.url),
    transport: remote.transport,
    headers: names,
    values: sha256(JSON.stringify(names.map((name) => remote.headers[name])))
  }
}

/** One source's persisted catalog. */
export interface CachedCatalog {
  readonly tools: ReadonlyArray<Tool>
  /** None in an entry written before the other lists were cached (format 1: tools only). */
  readonly lists: Option.Option<CachedLists>
}

/** The file's own marker: anything else in the folder is foreign and ignored. Format 1 (tools only) is still read. */
const format = "clawtool-catalog/2"
const toolsOnly = "clawtool-catalog/1"

const arrayOf = (value: unknown, ...strings: ReadonlyArray<string>): boolean =>
  Array.isArray(value) &&
  value.every((item) => isJsonObject(item) && strings.every((field) => typeof item[field] === "string"))

/** The entry of `key` in a parsed file; none when the file is not one (foreign, truncated, another key). */
const entryOf = (value: unknown, key: string): Option.Option<CachedCatalog> => {
  if (!isJsonObject(value) || value.key !== key || !arrayOf(value.tools, "name")) return Option.none()
  const tools = value.tools as ReadonlyArray<Tool>
  if (value.format === toolsOnly) return Option.some({ tools, lists: Option.none() })
  if (
    value.format !== format ||
    !isJsonObject(value.capabilities) ||
    !arrayOf(value.resources, "uri", "name") ||
    !arrayOf(value.resourceTemplates, "uriTemplate", "name") ||
    !arrayOf(value.prompts, "name")
  ) {
    return Option.none()
  }
  return Option.some({
    tools,
    lists: Option.some({
      capabilities: value.capabilities,
      resources: value.resources as ReadonlyArray<Resource>,
      resourceTemplates: value.resourceTemplates as ReadonlyArray<ResourceTemplate>,
      prompts: value.prompts as ReadonlyArray<Prompt>
    })
  })
}

/** The file's text for an entry (read back as the same catalog). */
const textOf = (key: string, catalog: CachedCatalog): string =>
  JSON.stringify(
    Option.match(catalog.lists, {
      onNone: () => ({ format: toolsOnly, key, tools: catalog.tools }),
      onSome: (lists) => ({ format, key, tools: catalog.tools, ...lists })
    })
  )

const readText = (file: string): string | undefined => {
  try {
    return fs.readFileSync(file, "utf8")
  } catch {
    return undefined
  }
}

const fileName = (key: string) => `catalog-${key}.json`
const isOurs = (name: string) => /^catalog-[0-9a-f]{64}\.json(\.\d+\.tmp)?$/.test(name)

export interface CatalogCacheApi {
  /** The cached catalog of a key; none when there is no entry, or it is unreadable (one warning, never a failure). */
  readonly load: (key: string) => Effect.Effect<Option.Option<CachedCatalog>>
  /** Stores a catalog (atomically) unless the entry holds it already; a write that fails is one warning, never a failure. */
  readonly store: (key: string, catalog: CachedCatalog) => Effect.Effect<void>
  /** Removes every entry; returns how many. */
  readonly clear: Effect.Effect<number>
}

const fileCache = (dir: string): CatalogCacheApi => {
  const ensureDir = () => {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    fs.chmodSync(dir, 0o700)
  }
  return {
    load: (key) =>
      Effect.suspend(() => {
        const file = path.join(dir, fileName(key))
        const text = readText(file)
        if (text === undefined) return Effect.succeed(Option.none())
        let parsed: unknown
        try {
          parsed = JSON.parse(text)
        } catch {
          parsed = undefined
        }
        const entry = entryOf(parsed, key)
        return Option.isSome(entry)
          ? Effect.succeed(entry)
          : Effect.as(
              Effect.logWarning(`catalog cache: ignoring unreadable ${file}; it is rewritten on the next listing`),
              Option.none()
            )
      }),
    store: (key, catalog) =>
      Effect.suspend(() => {
        const text = textOf(key, catalog)
        const file = path.join(dir, fileName(key))
        // A start that lists what was cached writes nothing.
        if (readText(file) === text) return Effect.void
        const temp = `${file}.${process.pid}.tmp`
        try {
          ensureDir()
          fs.writeFileSync(temp, text, { mode: 0o600 })
          fs.renameSync(temp, file)
          return Effect.void
        } catch (cause) {
          try {
            fs.rmSync(temp, { force: true })
          } catch {
            // nothing to clean
          }
          return Effect.logWarning(
            `catalog cache: cannot write ${file}: ${cause instanceof Error ? cause.message : String(cause)}`
          )
        }
      }),
    clear: Effect.sync(() => {
      let names: Array<string>
      try {
        names = fs.readdirSync(dir)
      } catch {
        return 0
      }
      const ours = names.filter(isOurs)
      for (const name of ours) fs.rmSync(path.join(dir, name), { force: true })
      return ours.length
    })
  }
}

/** An in-memory cache: tests never touch the user's cache folder. */
export const memoryCache = (entries: Map<string, CachedCatalog> = new Map()): CatalogCacheApi => ({
  load: (key) => Effect.sync(() => Option.fromNullable(entries.get(key))),
  store: (key, catalog) => Effect.sync(() => void entries.set(key, catalog)),
  clear: Effect.sync(() => {
    const count = entries.size
    entries.clear()
    return count
  })
})

export class CatalogCache extends Effect.Service<CatalogCache>()("clawtool/CatalogCache", {
  sync: (): CatalogCacheApi => fileCache(cacheDir())
}) {
  /** A cache in memory, empty unless given entries. */
  static Test = (entries?: Map<string, CachedCatalog>) =>
    Layer.succeed(CatalogCache, CatalogCache.make(memoryCache(entries)))
  /** The file cache in a given folder. */
  static layerDir = (dir: string) => Layer.succeed(CatalogCache, CatalogCache.make(fileCache(dir)))
}
