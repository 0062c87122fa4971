import { Effect, Either, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { HealthRow } from "../../src/domain/Health.js"
import { CatalogCache } from "../../src/services/CatalogCache.js"
import { Config, parseConfig } from "../../src/services/Config.js"
import { Secrets } from "../../src/services/Secrets.js"
import { SourceClient } from "../../src/services/SourceClient/SourceClient.js"
import { Sources } from "../../src/services/Sources.js"
import { tempDir } from "./temp.js"

export const root = path.resolve(import.meta.dirname, "../..")
export const stub = path.join(root, "test/fixtures/stub-server.mjs")
export const everything = path.join(root, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")

/** A TOML `command = [...]` value running the stub fixture with these flags. */
export const stubCommand = (...flags: ReadonlyArray<string>) => JSON.stringify([process.execPath, stub, ...flags])

export { tempDir }

/** One temporary folder and a new empty folder inside it per call of `fresh`. */
export const outputDirs = (prefix: string) => {
  const base = tempDir(prefix)
  let count = 0
  const fresh = () => {
    const dir = path.join(base, `out-${count++}`)
    fs.mkdirSync(dir, { recursive: true })
    return dir
  }
  return { base, fresh }
}

export const configFrom = (toml: string) => Either.getOrThrow(parseConfig(toml, "test.toml", "toml"))

/** Sources over real children, from a TOML text; the env is what `${VAR}` resolves against. */
export const sourcesLayer = (toml: string, env: Record<string, string> = {}) => {
  const config = configFrom(toml)
  return Sources.DefaultWithoutDependencies.pipe(
    Layer.provide(
      Layer.mergeAll(
        Config.layerTest(config),
        Secrets.layerTest({ env, sources: config.sources }),
        SourceClient.Default,
        CatalogCache.Test()
      )
    )
  )
}

export const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Running, not a zombie (a killed child, or an orphan a container's PID 1 never reaps, stays listed in state Z). */
export const isRunning = (pid: number): boolean => {
  if (!isAlive(pid)) return false
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z"
  } catch {
    return false
  }
}

/** SIGKILL is delivered asynchronously: waits (bounded, `limitMs`) until `pid` is no longer running; whether it is gone. */
export const gone = (pid: number, limitMs = 5_000) =>
  Effect.gen(function* () {
    for (let waited = 0; waited < limitMs && isRunning(pid); waited += 20) yield* Effect.sleep("20 millis")
    return !isRunning(pid)
  })

/** Polls until `check` holds (real time), failing after `limitMs`: outcomes, not timings. */
export const eventually = (check: () => boolean, limitMs = 10_000, what = "condition") =>
  Effect.gen(function* () {
    const until = Date.now() + limitMs
    while (!check()) {
      if (Date.now() > until) return yield* Effect.dieMessage(`timed out waiting for ${what}`)
      yield* Effect.sleep("50 millis")
    }
  })

/** Runs `probe` until its value satisfies `check` (real time), failing after `limitMs`; returns that value. */
export const pollUntil = <A, E, R>(
  probe: Effect.Effect<A, E, R>,
  check: (value: A) => boolean,
  what: string,
  limitMs = 10_000
) =>
  Effect.gen(function* () {
    const until = Date.now() + limitMs
    for (;;) {
      const value = yield* probe
      if (check(value)) return value
      if (Date.now() > until) {
        return yield* Effect.dieMessage(`timed out waiting for ${what}; last ${JSON.stringify(value)}`)
      }
      yield* Effect.sleep("50 millis")
    }
  })

export const readPid = (file: string) => Number(fs.readFileSync(file, "utf8").trim())

/** One instance's Health row. */
export const rowOf = (name: string) =>
  Effect.flatMap(Sources, (sources) => Effect.map(sources.health, (rows) => rows.find((row) => row.name === name)!))

/** Polls an instance's Health until `check` holds (real time; fails the test after `limitMs`). */
export const waitFor = (name: string, check: (row: HealthRow) => boolean, what: string, limitMs = 20_000) =>
  pollUntil(rowOf(name), check, `${name}: ${what}`, limitMs)

export const settled = Effect.flatMap(Sources, (sources) => sources.awaitSettled)
