import { Effect, Layer, Option } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Tool } from "../domain/Mcp.js"
import * as Version from "../version.js"

/**
 * The persisted catalog (issue 10): each source's last tools listing, so the next start serves it before the child
 * answers. One file per source spec, named by a hash of everything that determines the child; a changed spec gets a
 * new key and never reuses an old entry. The files hold tool definitions only: env values enter the key as a hash.
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

/** The file's own marker: anything else in the folder is foreign and ignored. */
const format = "clawtool-catalog/1"

interface Entry {
  readonly format: typeof format
  readonly key: string
  readonly tools: ReadonlyArray<Tool>
}

const isEntry = (value: unknown, key: string): value is Entry => {
  if (typeof value !== "object" || value === null) return false
  const entry = value as Record<string, unknown>
  return (
    entry.format === format &&
    entry.key === key &&
    Array.isArray(entry.tools) &&
    entry.tools.every(
      (tool) => typeof tool === "object" && tool !== null && typeof (tool as { name?: unknown }).name === "string"
    )
  )
}

/** `CLAWTOOL_CACHE_DIR`, else `$XDG_CACHE_HOME/clawtool`, else `~/.cache/clawtool`. */
export const cacheDir = (env: NodeJS.ProcessEnv = process.env): string =>
  env.CLAWTOOL_CACHE_DIR !== undefined && env.CLAWTOOL_CACHE_DIR !== ""
    ? env.CLAWTOOL_CACHE_DIR
    : path.join(
        env.XDG_CACHE_HOME !== undefined && env.XDG_CACHE_HOME !== ""
          ? env.XDG_CACHE_HOME
          : path.join(os.homedir(), ".cache"),
        "clawtool"
      )

const fileName = (key: string) => `catalog-${key}.json`
const isOurs = (name: string) => /^catalog-[0-9a-f]{64}\.json(\.\d+\.tmp)?$/.test(name)

export interface CatalogCacheApi {
  /** The cached tools of a key; none when there is no entry, or it is unreadable (one warning, never a failure). */
  readonly load: (key: string) => Effect.Effect<Option.Option<ReadonlyArray<Tool>>>
  /** Stores a listing (atomically); a write that fails is one warning, never a failure. */
  readonly store: (key: string, tools: ReadonlyArray<Tool>) => Effect.Effect<void>
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
        let text: string
        try {
          text = fs.readFileSync(file, "utf8")
        } catch {
          return Effect.succeed(Option.none())
        }
        let parsed: unknown
        try {
          parsed = JSON.parse(text)
        } catch {
          parsed = undefined
        }
        return isEntry(parsed, key)
          ? Effect.succeed(Option.some(parsed.tools))
          : Effect.as(
              Effect.logWarning(`catalog cache: ignoring unreadable ${file}; it is rewritten on the next listing`),
              Option.none()
            )
      }),
    store: (key, tools) =>
      Effect.suspend(() => {
        const file = path.join(dir, fileName(key))
        const temp = `${file}.${process.pid}.tmp`
        try {
          ensureDir()
          const entry: Entry = { format, key, tools }
          fs.writeFileSync(temp, JSON.stringify(entry), { mode: 0o600 })
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
export const memoryCache = (entries: Map<string, ReadonlyArray<Tool>> = new Map()): CatalogCacheApi => ({
  load: (key) => Effect.sync(() => Option.fromNullable(entries.get(key))),
  store: (key, tools) => Effect.sync(() => void entries.set(key, tools)),
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
  static Test = (entries?: Map<string, ReadonlyArray<Tool>>) =>
    Layer.succeed(CatalogCache, CatalogCache.make(memoryCache(entries)))
  /** The file cache in a given folder. */
  static layerDir = (dir: string) => Layer.succeed(CatalogCache, CatalogCache.make(fileCache(dir)))
}
