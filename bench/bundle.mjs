#!/usr/bin/env node
// bundle.mjs: builds the cold-start experiments from dist/ into bench/.out/ (git-ignored). src/ is never touched.
//   bench/.out/dist/              a snapshot of dist/: what run.mjs measures as "dist", so a rebuild of dist/ during a
//                                 run (the tree is shared) cannot mix two builds in one results.json
//   bench/.out/dist-deep/         dist/ with barrel imports rewritten to deep ones ("effect" -> "effect/Effect", …) and
//                                 json-schema-to-typescript imported lazily: what the source fix would produce, unbundled
//   bench/.out/clawtool.mjs       esbuild bundle of dist/ (json-schema-to-typescript external and lazy, version inlined)
//   bench/.out/clawtool-deep.mjs  esbuild bundle of dist-deep/
// Run: node bench/bundle.mjs (run.mjs calls build() itself).
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
export const outDir = Path.join(root, "bench", ".out")
export const variants = {
  dist: Path.join(outDir, "dist", "main.js"),
  deep: Path.join(outDir, "dist-deep", "main.js"),
  bundle: Path.join(outDir, "clawtool.mjs"),
  deepBundle: Path.join(outDir, "clawtool-deep.mjs")
}

/** Barrels whose named imports are all modules with a deep path of the same name. */
const barrels = ["effect", "@effect/cli", "@effect/platform-node", "@effect/platform"]

/** `import { A, B as C } from "effect";` -> `import * as A from "effect/A"; import * as C from "effect/B";` */
export const deepImports = (source) => {
  let out = source
  for (const barrel of barrels) {
    const pattern = new RegExp(`import \\{([^}]*)\\} from "${barrel.replace("/", "\\/")}";`, "g")
    out = out.replace(pattern, (_all, names) =>
      names
        .split(",")
        .map((spec) => spec.trim())
        .filter((spec) => spec !== "")
        .map((spec) => {
          const [name, alias = name] = spec.split(/\s+as\s+/)
          return `import * as ${alias} from "${barrel}/${name}";`
        })
        .join(" ")
    )
  }
  return out
}

/** The static import of json-schema-to-typescript (which pulls prettier, lodash, yaml…) made lazy. */
export const lazyCompile = (source) =>
  source.replace(
    /import \{ compile \} from "json-schema-to-typescript";/,
    'const compile = (...args) => import("json-schema-to-typescript").then((m) => m.compile(...args));'
  )

const walk = (dir) =>
  readdirSync(dir).flatMap((name) => {
    const path = Path.join(dir, name)
    return statSync(path).isDirectory() ? walk(path) : [path]
  })

/** Copies dist/ (JavaScript only) to bench/.out/<name>/. */
const copyDist = (from, name) => {
  const target = Path.join(outDir, name)
  rmSync(target, { recursive: true, force: true })
  cpSync(from, target, { recursive: true, filter: (src) => !/\.(map|d\.ts)$/.test(src) })
  return target
}

/**
 * Snapshots dist/ into bench/.out/dist/ and returns when dist/main.js was built. version.js reads ../package.json,
 * hence the copy beside the snapshot; its "type": "module" makes the .js files ESM here as in the repo.
 */
export const snapshot = () => {
  const main = Path.join(root, "dist", "main.js")
  if (!existsSync(main)) throw new Error("dist/main.js is missing: run `npm run build` (npm run bench does)")
  mkdirSync(outDir, { recursive: true })
  copyDist(Path.join(root, "dist"), "dist")
  const pkg = JSON.parse(readFileSync(Path.join(root, "package.json"), "utf8"))
  writeFileSync(
    Path.join(outDir, "package.json"),
    JSON.stringify({ name: pkg.name, version: pkg.version, type: "module", private: true })
  )
  return statSync(main).mtime.toISOString()
}

const buildDeep = () => {
  const target = copyDist(Path.join(outDir, "dist"), "dist-deep")
  let lazy = false
  for (const file of walk(target).filter((path) => path.endsWith(".js"))) {
    const before = readFileSync(file, "utf8")
    let after = deepImports(before)
    if (after.includes('from "json-schema-to-typescript"')) {
      after = lazyCompile(after)
      lazy = !after.includes('from "json-schema-to-typescript"')
    }
    if (after !== before) writeFileSync(file, after)
  }
  return lazy
}

const bundle = async (esbuild, entry, outfile) => {
  const ours = (path) => !path.includes(`${Path.sep}node_modules${Path.sep}`)
  const pkg = JSON.parse(readFileSync(Path.join(root, "package.json"), "utf8"))
  const plugin = {
    name: "clawtool-bench",
    setup(build) {
      build.onLoad({ filter: /[\\/]version\.js$/ }, (args) =>
        ours(args.path)
          ? {
              contents: `export const name = ${JSON.stringify(pkg.name)}; export const version = ${JSON.stringify(pkg.version)};`,
              loader: "js"
            }
          : undefined
      )
      build.onLoad({ filter: /[\\/]TypeScriptExport\.js$/ }, (args) =>
        ours(args.path)
          ? {
              contents: lazyCompile(readFileSync(args.path, "utf8")),
              loader: "js",
              resolveDir: Path.dirname(args.path)
            }
          : undefined
      )
    }
  }
  const result = await esbuild.build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // Stays in node_modules and is loaded on first use (only `tools export-typescript` needs it).
    external: ["json-schema-to-typescript"],
    plugins: [plugin],
    metafile: true,
    logLevel: "error",
    // CommonJS dependencies inside an ESM bundle call require().
    banner: {
      js: "import { createRequire as __benchRequire } from 'node:module'; const require = __benchRequire(import.meta.url);"
    }
  })
  const inputs = Object.values(result.metafile.outputs)[0].inputs
  const bytes = statSync(outfile).size
  return { bytes, modules: Object.keys(inputs).length }
}

/** Builds every variant; returns sizes, or { error } when esbuild is missing (the cold-start rows are then skipped). */
/**
 * Builds every experiment from the snapshot (call snapshot() first); returns sizes, or { error } when esbuild is
 * missing (the experiment rows are then skipped).
 */
export const build = async () => {
  let esbuild
  try {
    esbuild = await import("esbuild")
  } catch (error) {
    return { error: `esbuild not available: ${error.message}` }
  }
  const started = performance.now()
  const lazyJsonSchemaToTs = buildDeep()
  const bundleInfo = await bundle(esbuild, variants.dist, variants.bundle)
  const deepInfo = await bundle(esbuild, variants.deep, variants.deepBundle)
  return {
    esbuild: esbuild.version,
    buildMs: Math.round(performance.now() - started),
    // false when dist/ no longer imports json-schema-to-typescript in the expected shape: then it stays eager.
    lazyJsonSchemaToTs,
    bundle: bundleInfo,
    deepBundle: deepInfo
  }
}

if (process.argv[1] !== undefined && Path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  snapshot()
  console.log(JSON.stringify(await build(), null, 2))
}
