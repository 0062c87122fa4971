// The bin, dist/main.js (scripts/bundle.mjs builds it from this file alone): sets V8's flags (src/heap.ts) before
// anything else, then loads the CommonJS bundle of src/main.ts (dist/clawtool.cjs and its chunks in dist/bin/) with
// V8's code cache, so that V8 neither parses nor compiles the start path again once a first run has cached it.
// Node 20 caches no ES module and no CommonJS module of its own accord (module.enableCompileCache is Node 22): this
// file is a small CommonJS loader over vm.Script's cachedData. See docs/decisions/027-code-cache.md.
import { setStartupFlags, withStartupFlags } from "./heap.js"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as vm from "node:vm"
import { writeFileAtomicSync } from "./atomicWrite.js"
import { codeCacheDir } from "./paths.js"

setStartupFlags()

const here = path.dirname(fileURLToPath(import.meta.url))
const entry = path.join(here, "clawtool.cjs")

/** One cache file: magic, SHA-256 of the module's source, SHA-256 of V8's data, V8's data. */
const magic = Buffer.from("clawcc01", "latin1")
const headerBytes = magic.length + 64

const sha256 = (data: string | Buffer): Buffer =>
  typeof data === "string"
    ? createHash("sha256").update(data, "latin1").digest()
    : createHash("sha256").update(data).digest()

/**
 * V8 checks that a code cache comes from its own version and flags and from a source of the same length, nothing more
 * (no checksum outside debug builds): a stale or damaged file would run wrong code or crash. Both hashes are checked
 * here; anything else is treated as no cache, and the module is compiled from its source and cached again.
 */
const readCache = (file: string, sourceHash: Buffer): Buffer | undefined => {
  let data: Buffer
  try {
    data = fs.readFileSync(file)
  } catch {
    return undefined
  }
  if (data.length <= headerBytes || !data.subarray(0, magic.length).equals(magic)) return undefined
  if (!data.subarray(magic.length, magic.length + 32).equals(sourceHash)) return undefined
  const payload = data.subarray(headerBytes)
  return data.subarray(magic.length + 32, headerBytes).equals(sha256(payload)) ? payload : undefined
}

/**
 * Atomic and private (0600 in a 0700 folder), like the persisted catalog. Not flushed to disk: a file torn by a power
 * cut fails readCache's hashes and is written again, and a flush of every file would hold up the exit of a first run.
 */
const writeCache = (file: string, sourceHash: Buffer, payload: Buffer): void => {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  writeFileAtomicSync(file, Buffer.concat([magic, sourceHash, sha256(payload), payload]), { mode: 0o600, fsync: false })
}

/**
 * The bundle has no import() left (scripts/bundle.mjs turns them into requires); should one appear, Node's default
 * loader serves it where Node has the option (20.12 and later) rather than failing at the call.
 */
const mainContextLoader: number | undefined = vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER
const dynamicImport: Pick<vm.ScriptOptions, "importModuleDynamically"> =
  mainContextLoader === undefined ? {} : { importModuleDynamically: mainContextLoader }

interface Loaded {
  exports: unknown
  readonly id: string
  readonly filename: string
  loaded: boolean
}

interface Uncached {
  readonly file: string
  readonly script: vm.Script
  readonly sourceHash: Buffer
}

const loadWithCodeCache = (codeDir: string): unknown => {
  const modules = new Map<string, Loaded>()
  const uncached: Array<Uncached> = []
  const cacheFileOf = (file: string) => path.join(codeDir, `${path.basename(file)}.v8`)

  /** Caches what ran so far: V8's data then holds the bytecode of every function compiled, not only the top level. */
  const flush = () => {
    for (const { file, script, sourceHash } of uncached.splice(0)) {
      try {
        writeCache(
          cacheFileOf(file),
          sourceHash,
          withStartupFlags(() => script.createCachedData())
        )
      } catch {
        // A read-only or full disk costs the next start its speed, nothing else.
      }
    }
    // Files of chunks no longer in this build (a rebuild renames them by their content hash).
    try {
      const current = new Set(
        [path.basename(entry), ...fs.readdirSync(path.join(here, "bin"))].map((name) => `${name}.v8`)
      )
      for (const name of fs.readdirSync(codeDir))
        if (!current.has(name)) fs.rmSync(path.join(codeDir, name), { force: true })
    } catch {
      // Nothing to prune.
    }
  }
  let timer: NodeJS.Timeout | undefined
  const scheduleFlush = () => {
    if (timer === undefined) process.once("exit", flush)
    clearTimeout(timer)
    // Late enough for a serve start-up to have answered initialize and the first lists; never keeps the process up.
    timer = setTimeout(flush, 2000).unref()
  }

  const load = (file: string): unknown => {
    const known = modules.get(file)
    if (known !== undefined) return known.exports
    const source = fs.readFileSync(file, "latin1") // the bundle is ASCII (scripts/bundle.mjs)
    const sourceHash = sha256(source)
    const cachedData = readCache(cacheFileOf(file), sourceHash)
    const script = withStartupFlags(
      () =>
        // CommonJS's function wrapper, as Node's own loader writes it.
        new vm.Script(`(function (exports, require, module, __filename, __dirname) { ${source}\n});`, {
          filename: file,
          ...(cachedData === undefined ? {} : { cachedData }),
          ...dynamicImport
        })
    )
    if (cachedData === undefined || script.cachedDataRejected === true) {
      uncached.push({ file, script, sourceHash })
      scheduleFlush()
    }
    const module: Loaded = { exports: {}, id: file, filename: file, loaded: false }
    modules.set(file, module)
    const nodeRequire = createRequire(file)
    // The bundle's own files are loaded here (relative paths); built-ins go to Node.
    const require = Object.assign(
      (id: string) =>
        id.startsWith("./") || id.startsWith("../") ? load(path.resolve(path.dirname(file), id)) : nodeRequire(id),
      { resolve: nodeRequire.resolve, cache: nodeRequire.cache, main: undefined }
    )
    script.runInThisContext().call(module.exports, module.exports, require, module, file, path.dirname(file))
    module.loaded = true
    return module.exports
  }
  return load(entry)
}

// Node's own loader where the code cache cannot help or would be in the way: Node's switch for its own compile cache,
// and --enable-source-maps (Node maps the stack traces of modules it loads itself).
if (process.env.NODE_DISABLE_COMPILE_CACHE !== undefined || process.sourceMapsEnabled)
  createRequire(import.meta.url)(entry)
else
  loadWithCodeCache(
    path.join(codeCacheDir(), `${process.version}-${process.arch}-${sha256(here).toString("hex").slice(0, 12)}`)
  )
