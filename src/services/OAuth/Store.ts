/**
 * The OAuth token store (issue 11): one JSON file per source instance under `<state dir>/oauth/`, mode 0600 in a 0700
 * folder, replaced atomically (temp file + rename) so a crash or a concurrent `clawtool auth login` never leaves half a
 * file. Inside, grants are keyed by the authorization server (issuer) that issued them: a source whose server moves to
 * another issuer never presents one issuer's refresh token or client to the other.
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import type { OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js"
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js"
import { writeFileAtomic } from "../../atomicWrite.js"

/** What one issuer granted this source. */
export interface Grant {
  /** The client registered with this issuer (dynamic registration); absent for a configured client_id. */
  readonly client?: OAuthClientInformationMixed | undefined
  readonly tokens?: OAuthTokens | undefined
  /** When the tokens were received (ms since the epoch): `expires_in` counts from here. */
  readonly obtainedAt?: number | undefined
}

/** One source's file. */
export interface Record {
  readonly format: typeof format
  /** The MCP server URL the grants are for: a source pointed at another URL starts from nothing. */
  readonly url: string
  /** The issuer of the latest discovery; its grant is the one in use. */
  readonly issuer?: string | undefined
  readonly grants: { readonly [issuer: string]: Grant }
  readonly discovery?: OAuthDiscoveryState | undefined
  /** PKCE verifier of a login in progress. */
  readonly codeVerifier?: string | undefined
}

const format = "clawtool-oauth/1"

export const emptyRecord = (url: string): Record => ({ format, url, grants: {} })

/** The grant in use: the current issuer's. */
export const currentGrant = (record: Record): Grant =>
  record.issuer === undefined ? {} : (record.grants[record.issuer] ?? {})

const isRecord = (value: unknown): value is Record => {
  if (typeof value !== "object" || value === null) return false
  const record = value as { [key: string]: unknown }
  return (
    record.format === format &&
    typeof record.url === "string" &&
    typeof record.grants === "object" &&
    record.grants !== null
  )
}

/** Where one instance's grants live. Instance names are kebab-case (ADR-006), so they are safe file names. */
export const fileOf = (dir: string, instance: string) => path.join(dir, "oauth", `${instance}.json`)

/**
 * The stored record for `instance` at `url`: empty when there is none, when it was written for another URL, or when it
 * cannot be read as ours (the next save replaces it).
 */
export const load = async (dir: string, instance: string, url: string): Promise<Record> => {
  const raw = await loadRaw(dir, instance)
  return raw === undefined || raw.url !== url ? emptyRecord(url) : raw
}

/** The record as stored, whatever its URL; none when missing or foreign. */
export const loadRaw = async (dir: string, instance: string): Promise<Record | undefined> => {
  let text: string
  try {
    text = await fs.readFile(fileOf(dir, instance), "utf8")
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === "ENOENT") return undefined
    throw cause
  }
  try {
    const parsed: unknown = JSON.parse(text)
    return isRecord(parsed) ? parsed : undefined
  } catch {
    return undefined
  }
}

const ensureDir = async (dir: string) => {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 })
  await fs.chmod(dir, 0o700)
}

/** Writes the record atomically, 0600, in 0700 folders. */
export const save = async (dir: string, instance: string, record: Record): Promise<void> => {
  const file = fileOf(dir, instance)
  await ensureDir(dir)
  await ensureDir(path.dirname(file))
  await writeFileAtomic(file, JSON.stringify(record, null, 2), { mode: 0o600 })
}

/** Removes the instance's file; whether there was one. */
export const remove = async (dir: string, instance: string): Promise<boolean> => {
  try {
    await fs.rm(fileOf(dir, instance))
    return true
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === "ENOENT") return false
    throw cause
  }
}

/**
 * Read-modify-write of one instance's record. Writes within this process are serialized per file, so two callbacks of
 * the SDK (saveDiscoveryState, saveTokens…) never lose each other's change.
 */
const queues = new Map<string, Promise<unknown>>()
export const update = (
  dir: string,
  instance: string,
  url: string,
  change: (record: Record) => Record
): Promise<Record> => {
  const file = fileOf(dir, instance)
  const previous = queues.get(file) ?? Promise.resolve()
  const next = previous
    .catch(() => undefined)
    .then(async () => {
      const record = change(await load(dir, instance, url))
      await save(dir, instance, record)
      return record
    })
  queues.set(file, next)
  void next.finally(() => {
    if (queues.get(file) === next) queues.delete(file)
  })
  return next
}

/** Replaces the current issuer's grant with `change(grant)`. */
export const updateGrant = (
  dir: string,
  instance: string,
  url: string,
  issuer: string | undefined,
  change: (grant: Grant) => Grant
): Promise<Record> =>
  update(dir, instance, url, (record) => {
    const key = issuer ?? record.issuer
    if (key === undefined) return record
    return { ...record, issuer: key, grants: { ...record.grants, [key]: change(record.grants[key] ?? {}) } }
  })
