import { Effect, Layer, Option } from "effect"
import { createHash, createHmac, randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { type EraVerdict, verdictFromJson } from "../domain/Era.js"
import type { JsonObject, Tool } from "../domain/Mcp.js"
import { isJsonObject, type Prompt, type Resource, type ResourceTemplate } from "../domain/Surface.js"
import { isAtomicTemp, writeFileAtomicSync } from "../atomicWrite.js"
import { cacheDir } from "../paths.js"
import * as Version from "../version.js"

/**
 * The persisted catalog (issue 10): each source's last listings (tools, resources, resource templates, prompts), so
 * the next start serves them before the child answers. One file per source spec, named by a keyed hash (HMAC under a
 * random key of this cache folder) of everything that determines the child; a changed spec gets a new key and never
 * reuses an old entry. The files hold what the child listed and its server capabilities only: env values enter the
 * key as a hash, and the name cannot be recomputed from a guessed value without the folder's key.
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

/**
 * The cache key of a child: env names in clear (sorted), their values only as one hash. Held in memory only: a file is
 * named by the HMAC of this key under the folder's install key (`fileCache`), never by the key itself.
 */
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
  /**
   * The era the source was found to speak (ADR 033), adopted by the next start instead of a probe; re-probed when a
   * start on it fails. Absent in entries of earlier clawtools and of sources with an explicit `protocol`.
   */
  readonly era?: EraVerdict | undefined
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
  const era = verdictFromJson(value.era)
  return Option.some({
    tools,
    lists: Option.some({
      capabilities: value.capabilities,
      resources: value.resources as ReadonlyArray<Resource>,
      resourceTemplates: value.resourceTemplates as ReadonlyArray<ResourceTemplate>,
      prompts: value.prompts as ReadonlyArray<Prompt>,
      ...(era === undefined ? {} : { era })
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

/**
 * An entry's file, `catalog-<key id>-<HMAC of the key>.json`: the key id (an HMAC of a constant) tells the entries of
 * the current install key from those of an earlier one, and from the plain SHA-256 names of earlier clawtools.
 */
const isOurs = (name: string) => /^catalog-(?:[0-9a-f]{16}-)?[0-9a-f]{64}\.json(?:\.\d+\.tmp)?$/.test(name)

/** The install key: random bytes in the cache folder, 0600, made on first use. */
export const installKeyFile = "catalog.key"
const installKeyBytes = 32
const isKeyTemp = (name: string) => name.startsWith(`${installKeyFile}.`) && name.endsWith(".tmp")

const errnoOf = (cause: unknown) => (cause as NodeJS.ErrnoException | undefined)?.code

/** The install key in `file`, or why there is none: missing, or unusable (unreadable, the wrong size, open to others). */
const readInstallKey = (file: string): Buffer | "missing" | "unusable" => {
  try {
    const key = fs.readFileSync(file)
    const ownerOnly = process.platform === "win32" || (fs.statSync(file).mode & 0o077) === 0
    return key.length === installKeyBytes && ownerOnly ? key : "unusable"
  } catch (cause) {
    return errnoOf(cause) === "ENOENT" ? "missing" : "unusable"
  }
}

/**
 * Makes the install key in `file` (its folder exists): new random bytes written whole to a temp file (0600), then
 * linked to `file` when there was none, so of several processes starting at once the first wins and the others read
 * its key; renamed over an unusable one. Returns the key the file holds after that (undefined if it is still unusable).
 */
export const createInstallKey = (file: string, replace: boolean): Buffer | undefined => {
  const temp = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`
  try {
    fs.writeFileSync(temp, randomBytes(installKeyBytes), { mode: 0o600, flag: "wx" })
    if (replace) fs.renameSync(temp, file)
    else {
      try {
        fs.linkSync(temp, file)
      } catch (cause) {
        // EEXIST: another process made it first. Anything else (no hard links here): rename, as close as it gets.
        if (errnoOf(cause) !== "EEXIST") fs.renameSync(temp, file)
      }
    }
  } finally {
    fs.rmSync(temp, { force: true })
  }
  const key = readInstallKey(file)
  return Buffer.isBuffer(key) ? key : undefined
}

export interface CatalogCacheApi {
  /** The cached catalog of a key; none when there is no entry, or it is unreadable (one warning, never a failure). */
  readonly load: (key: string) => Effect.Effect<Option.Option<CachedCatalog>>
  /** Stores a catalog (atomically) unless the entry holds it already; a write that fails is one warning, never a failure. */
  readonly store: (key: string, catalog: CachedCatalog) => Effect.Effect<void>
  /** Removes every entry (of any key) and the install key; returns how many entries. */
  readonly clear: Effect.Effect<number>
}

/** How the entries of one install key are named. */
interface Naming {
  /** `catalog-<key id>-`: every entry file of this key starts with it. */
  readonly prefix: string
  /** The HMAC of a child's key: what its file is named by and what the file records. */
  readonly name: (key: string) => string
}

const namingOf = (installKey: Buffer): Naming => {
  const hmac = (text: string) => createHmac("sha256", installKey).update(text).digest("hex")
  return { prefix: `catalog-${hmac("clawtool catalog key id").slice(0, 16)}-`, name: hmac }
}

const messageOf = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause))

const fileCache = (dir: string): CatalogCacheApi => {
  const ensureDir = () => {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    fs.chmodSync(dir, 0o700)
  }
  const keyFile = path.join(dir, installKeyFile)
  /** The install key's naming, once known: read by the first use, made by the first write (a load finds nothing without it). */
  let naming: Naming | undefined
  let warned = false
  const namingFor = (write: boolean): Effect.Effect<Option.Option<Naming>> =>
    Effect.suspend(() => {
      if (naming !== undefined) return Effect.succeed(Option.some(naming))
      const found = readInstallKey(keyFile)
      if (Buffer.isBuffer(found)) return Effect.succeed(Option.some((naming = namingOf(found))))
      if (!write) return Effect.succeed(Option.none())
      let problem: string
      try {
        ensureDir()
        const made = createInstallKey(keyFile, found === "unusable")
        if (made !== undefined) return Effect.succeed(Option.some((naming = namingOf(made))))
        problem = `${keyFile} stays unusable`
      } catch (cause) {
        problem = `cannot make ${keyFile}: ${messageOf(cause)}`
      }
      if (warned) return Effect.succeed(Option.none())
      warned = true
      return Effect.as(Effect.logWarning(`catalog cache: ${problem}; nothing is stored`), Option.none())
    })
  /** Entries nothing can name any more (an earlier install key's, or an earlier clawtool's plain SHA-256 names). */
  let pruned = false
  const prune = (current: Naming) => {
    if (pruned) return
    pruned = true
    try {
      for (const name of fs.readdirSync(dir)) {
        if (isOurs(name) && !name.startsWith(current.prefix)) fs.rmSync(path.join(dir, name), { force: true })
      }
    } catch {
      // the next process tries again
    }
  }
  return {
    load: (key) =>
      Effect.flatMap(namingFor(false), (known) => {
        if (Option.isNone(known)) return Effect.succeed(Option.none())
        const name = known.value.name(key)
        const file = path.join(dir, `${known.value.prefix}${name}.json`)
        const text = readText(file)
        if (text === undefined) return Effect.succeed(Option.none())
        let parsed: unknown
        try {
          parsed = JSON.parse(text)
        } catch {
          parsed = undefined
        }
        const entry = entryOf(parsed, name)
        return Option.isSome(entry)
          ? Effect.succeed(entry)
          : Effect.as(
              Effect.logWarning(`catalog cache: ignoring unreadable ${file}; it is rewritten on the next listing`),
              Option.none()
            )
      }),
    store: (key, catalog) =>
      Effect.flatMap(namingFor(true), (known) => {
        if (Option.isNone(known)) return Effect.void
        const name = known.value.name(key)
        const text = textOf(name, catalog)
        const file = path.join(dir, `${known.value.prefix}${name}.json`)
        // A start that lists what was cached writes nothing.
        if (readText(file) === text) return Effect.void
        try {
          ensureDir()
          // Not flushed to disk: an entry torn by a power cut is unreadable, ignored and written again.
          writeFileAtomicSync(file, text, { mode: 0o600, fsync: false })
        } catch (cause) {
          return Effect.logWarning(`catalog cache: cannot write ${file}: ${messageOf(cause)}`)
        }
        prune(known.value)
        return Effect.void
      }),
    clear: Effect.sync(() => {
      let names: Array<string>
      try {
        names = fs.readdirSync(dir)
      } catch {
        return 0
      }
      const ours = names.filter(isOurs)
      // The install key goes too: the cache starts over under a new one.
      for (const name of [...ours, ...names.filter(isKeyTemp), ...names.filter(isAtomicTemp), installKeyFile]) {
        fs.rmSync(path.join(dir, name), { force: true })
      }
      naming = undefined
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
