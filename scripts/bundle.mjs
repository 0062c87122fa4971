#!/usr/bin/env node
// Second step of `npm run build`, after `tsc -p tsconfig.json` (the library: dist/index.js + .d.ts): bundles the CLI
// from src/main.ts into dist/clawtool.cjs (and chunks under dist/bin/), CommonJS, and builds the `bin`, dist/main.js,
// over tsc's: src/launcher.ts (the heap flag, then the bundle with V8's code cache). Loading ~1,100 separate ES modules
// was most of clawtool's start-up; see docs/decisions/008-bundled-bin.md and 027-code-cache.md.
import * as esbuild from "esbuild"
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
const outfile = Path.join(root, "dist", "main.js")
const bundleFile = Path.join(root, "dist", "clawtool.cjs")

/**
 * Barrels whose named exports are modules with a deep path of the same name (`Effect` is `effect/Effect`). Through a
 * barrel's `export * as Effect`, esbuild keeps every export of a module that is used at all; through
 * `import * as Effect from "effect/Effect"` it keeps only the members used (about half of the bundle goes).
 */
const barrels = ["effect", "@effect/cli", "@effect/platform", "@effect/platform-node"]
const subpaths = new Map(
  barrels.map((barrel) => {
    const pkg = JSON.parse(readFileSync(Path.join(root, "node_modules", barrel, "package.json"), "utf8"))
    return [barrel, new Set(Object.keys(pkg.exports).map((key) => key.replace(/^\.\/?/, "")))]
  })
)
/** The `effect` barrel's plain function exports (everything else is a namespace). */
const effectFunctions = new Set(["absurd", "flow", "hole", "identity", "pipe", "unsafeCoerce"])

/**
 * `import { Effect, type Scope, Array as Arr } from "effect"` -> `import * as Effect from "effect/Effect"` and
 * `import * as Arr from "effect/Array"`. Type-only specifiers are dropped (esbuild does not type-check); a name with
 * no deep path of its own stays a barrel import, so an unexpected name costs size, never correctness.
 */
const deepImports = (source) =>
  source.replace(
    /import\s+(type\s+)?\{([^}]*)\}\s+from\s+"(effect|@effect\/cli|@effect\/platform|@effect\/platform-node)"/g,
    (_all, typeOnly, names, barrel) => {
      if (typeOnly !== undefined) return ""
      const kept = []
      const lines = []
      for (const spec of names.split(",").map((s) => s.trim())) {
        if (spec === "" || spec.startsWith("type ")) continue
        const [name, alias = name] = spec.split(/\s+as\s+/)
        if (barrel === "effect" && effectFunctions.has(name)) lines.push(`import { ${spec} } from "effect/Function"`)
        else if (subpaths.get(barrel).has(name)) lines.push(`import * as ${alias} from "${barrel}/${name}"`)
        else kept.push(spec)
      }
      if (kept.length > 0) lines.push(`import { ${kept.join(", ")} } from "${barrel}"`)
      return lines.join("; ")
    }
  )

const deepImportsPlugin = {
  name: "clawtool-deep-imports",
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, (args) =>
      args.path.startsWith(Path.join(root, "src") + Path.sep)
        ? { contents: deepImports(readFileSync(args.path, "utf8")), loader: "ts" }
        : undefined
    )
  }
}

/**
 * The SDK's Client and Server import Ajv (~190 KiB with its formats) for a default JSON Schema validator; clawtool gives
 * both its own (src/transport/Unvalidated.ts), so the default is never built and Ajv stays out of the bin. Built by
 * mistake, the stub says so at once.
 */
const noAjvPlugin = {
  name: "clawtool-no-ajv",
  setup(build) {
    build.onResolve({ filter: /validation\/ajv-provider\.js$/ }, (args) => ({ path: args.path, namespace: "no-ajv" }))
    build.onLoad({ filter: /.*/, namespace: "no-ajv" }, () => ({
      contents:
        "export class AjvJsonSchemaValidator { constructor() { throw new Error(" +
        JSON.stringify("clawtool: Ajv is not bundled; give the SDK jsonSchemaValidator: unvalidated") +
        ") } }",
      loader: "js"
    }))
  }
}

// Chunk names carry a content hash: clear the old ones so a rebuild does not pile them up.
rmSync(Path.join(root, "dist", "bin"), { recursive: true, force: true })
for (const old of ["clawtool.js", "clawtool.js.map"]) rmSync(Path.join(root, "dist", old), { force: true }) // before ADR 027

/**
 * json-schema-to-typescript is CommonJS: a bundled `import()` of it yields only `default`, where Node's own import
 * also gave the named `compile` that src/ reads. src/'s import goes through a small ES module re-exporting it.
 */
const jsonSchemaToTypeScriptPlugin = {
  name: "clawtool-json-schema-to-typescript",
  setup(build) {
    build.onResolve({ filter: /^json-schema-to-typescript$/ }, (args) =>
      args.namespace === "file" && args.importer.startsWith(Path.join(root, "src") + Path.sep)
        ? { path: "json-schema-to-typescript", namespace: "clawtool-esm-wrapper" }
        : undefined
    )
    build.onLoad({ filter: /.*/, namespace: "clawtool-esm-wrapper" }, () => ({
      contents: 'export { compile } from "json-schema-to-typescript"',
      resolveDir: root,
      loader: "js"
    }))
  }
}

/**
 * src/version.ts reads ../package.json beside itself, which is right for tsc's dist/version.js; in the bundle the
 * module may land in a shared chunk under dist/bin/, so its two values are written in at build time.
 */
const versionPlugin = {
  name: "clawtool-version",
  setup(build) {
    build.onLoad({ filter: /[\\/]src[\\/]version\.ts$/ }, () => {
      const pkg = JSON.parse(readFileSync(Path.join(root, "package.json"), "utf8"))
      return {
        contents: `export const name = ${JSON.stringify(pkg.name)}\nexport const version = ${JSON.stringify(pkg.version)}\n`,
        loader: "ts"
      }
    })
  }
}

/**
 * prettier (json-schema-to-typescript's formatter) lazy-loads a plugin per language; `tools export-typescript` formats
 * TypeScript only (parser "typescript", embedded formatting off), which needs the typescript and estree plugins. The
 * others (flow, babel, html, markdown, css, yaml, …: ~4.5 MiB) are left out of the package; one loaded by mistake says so.
 */
const prettierPlugins = new Set(["typescript", "estree"])
const prettierOnlyTypeScript = {
  name: "clawtool-prettier-typescript-only",
  setup(build) {
    build.onResolve({ filter: /^\.\/plugins\/[\w-]+\.mjs$/ }, (args) => {
      const name = /plugins\/([\w-]+)\.mjs$/.exec(args.path)[1]
      return args.importer.includes(`${Path.sep}node_modules${Path.sep}prettier${Path.sep}`) &&
        !prettierPlugins.has(name)
        ? { path: name, namespace: "prettier-left-out" }
        : undefined
    })
    build.onLoad({ filter: /.*/, namespace: "prettier-left-out" }, (args) => ({
      contents: `throw new Error(${JSON.stringify(`clawtool: prettier's ${args.path} plugin is not bundled (only TypeScript is formatted)`)})`,
      loader: "js"
    }))
  }
}

/**
 * RunCode (ADR 035): its worker runs from a file of its own, dist/bin/runcode-worker.cjs (QuickJS's glue bundled in),
 * beside QuickJS's wasm, dist/bin/quickjs.wasm; the bundled WorkerFile module names both. Neither loads before the
 * first RunCode.
 */
const runCodeWorkerPlugin = {
  name: "clawtool-runcode-worker",
  setup(build) {
    build.onLoad({ filter: /[\\/]RunCode[\\/]WorkerFile\.ts$/ }, () => ({
      contents: [
        'import * as Path from "node:path"',
        'import { existsSync } from "node:fs"',
        "const here = Path.dirname(require('node:url').fileURLToPath(import.meta.url))",
        'const dir = existsSync(Path.join(here, "runcode-worker.cjs")) ? here : Path.join(here, "bin")',
        'export const workerFiles = () => ({ worker: Path.join(dir, "runcode-worker.cjs"), wasm: Path.join(dir, "quickjs.wasm") })'
      ].join("\n"),
      loader: "ts"
    }))
  }
}

const built = await esbuild.build({
  // src/main.ts becomes dist/clawtool.cjs; dist/main.js, the bin, is the launcher built below from src/launcher.ts.
  entryPoints: { clawtool: Path.join(root, "src", "main.ts") },
  outdir: Path.join(root, "dist"),
  // json-schema-to-typescript (lodash, a $ref parser, prettier) is import()ed by `tools export-typescript` only:
  // splitting puts it and prettier's language plugins in chunks under dist/bin/, loaded on that command's first use.
  // Bundled, not a dependency: an install carries no node_modules at all (README, `npm run install-size`).
  splitting: true,
  chunkNames: "bin/[name]-[hash]",
  // esbuild splits ES modules only; each output is turned into CommonJS below, which Node 20 can load with V8's code
  // cache (src/launcher.ts, ADR 027). The imports between outputs name the .cjs files already.
  outExtension: { ".js": ".cjs" },
  write: false,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  plugins: [
    versionPlugin,
    runCodeWorkerPlugin,
    deepImportsPlugin,
    noAjvPlugin,
    jsonSchemaToTypeScriptPlugin,
    prettierOnlyTypeScript
  ],
  // jsonc-parser's "main" is a UMD build whose require("./impl/…") calls esbuild cannot follow; its ES build can be.
  alias: { "jsonc-parser": "jsonc-parser/lib/esm/main.js" },
  // Inline here, so that the CommonJS step below maps back to src/ through it.
  sourcemap: "inline",
  sourcesContent: false,
  metafile: true,
  logLevel: "warning"
})

/** Outputs with no lazily initialised module (esbuild's `__esm`): every export is set once the file has run. */
const settled = new Set(
  built.outputFiles.filter((out) => !out.text.includes("__esm(")).map((out) => Path.basename(out.path))
)

// What `bindOnce` below relies on, checked on every build rather than assumed: the static imports between outputs form
// no cycle, and no bundled module exports a `let` (a binding it could reassign after it ran).
const importsOf = (output) =>
  built.metafile.outputs[output].imports.filter((i) => i.kind === "import-statement" && !i.external).map((i) => i.path)
const visiting = new Set()
const done = new Set()
const acyclic = (output) => {
  if (done.has(output)) return
  if (visiting.has(output)) throw new Error(`bundle: the static imports between outputs have a cycle at ${output}`)
  visiting.add(output)
  for (const imported of importsOf(output)) acyclic(imported)
  visiting.delete(output)
  done.add(output)
}
for (const output of Object.keys(built.metafile.outputs)) acyclic(output)
for (const input of Object.keys(built.metafile.inputs)) {
  const file = Path.join(root, input)
  if (existsSync(file) && /^\s*export\s+let\s/m.test(readFileSync(file, "utf8"))) {
    throw new Error(`bundle: ${input} exports a let, which bindOnce would read once: keep it out of bindOnce first`)
  }
}

/**
 * `import { a as b } from "./chunk.cjs"` -> `const { a: b } = require("./chunk.cjs")` for a settled chunk: the importer
 * reads each export once, at load, instead of through esbuild's export getter at every use (calls between bundle files
 * are most calls). Safe because the chunk graph has no cycles (a chunk imports only chunks of a superset of its entry
 * points) and no bundled module reassigns an export after it ran; a chunk with `__esm` keeps live bindings. Line
 * breaks are kept, so the inline source map still lines up.
 */
const bindOnce = (text) =>
  text.replace(/^import\s*\{([^}]*)\}\s*from\s*"(\.{1,2}\/[^"]+\.cjs)";/gm, (all, names, specifier) => {
    if (!settled.has(Path.basename(specifier))) return all
    const bindings = names
      .split(",")
      .map((name) => name.trim())
      .filter((name) => name !== "")
      .map((name) => name.replace(/\s+as\s+/, ": "))
    return `const { ${bindings.join(", ")} } = require(${JSON.stringify(specifier)});${"\n".repeat(all.split("\n").length - 1)}`
  })

/**
 * ES module -> CommonJS, output by output. `import.meta.url` becomes the file's own URL, from `__filename`. Whitespace
 * and comments go (names stay, so stack traces still read): V8 keeps the whole source in memory, as two bytes per
 * character once a single comment has a non-ASCII character, and parses all of it at start-up. `node
 * --enable-source-maps dist/main.js` maps stack traces back to src/ (the launcher then lets Node load the files).
 */
const commonJs = async (file, text) => {
  // src/main.ts's shebang: the bin is dist/main.js, and a shebang inside the loader's function wrapper would not parse.
  const out = await esbuild.transform(bindOnce(text.replace(/^#!.*\n/, "")), {
    format: "cjs",
    platform: "node",
    target: "node20",
    sourcefile: file,
    define: { "import.meta.url": "__importMetaUrl" },
    // `import("./bin/…")` becomes `require`, so that chunks loaded on demand go through the bin's loader too: Node's
    // import() would load a second copy of every shared chunk they require.
    supported: { "dynamic-import": false },
    banner: 'const __importMetaUrl = require("node:url").pathToFileURL(__filename).href;',
    sourcemap: "external",
    minifyWhitespace: true,
    charset: "ascii",
    logLevel: "warning"
  })
  const name = Path.basename(file)
  mkdirSync(Path.dirname(file), { recursive: true })
  writeFileSync(file, `${out.code}//# sourceMappingURL=${name}.map\n`)
  const map = JSON.parse(out.map)
  // The map's sources are relative to the original outputs, which sat where these files are.
  writeFileSync(`${file}.map`, JSON.stringify({ ...map, file: name, sourcesContent: undefined }))
}
await Promise.all(
  built.outputFiles.filter((out) => out.path.endsWith(".cjs")).map((out) => commonJs(out.path, out.text))
)

/**
 * The bin: src/launcher.ts, bundled alone (V8's flags first, src/heap.ts, then the loader). With splitting, esbuild
 * orders a module's imports of shared chunks as it likes and every chunk is evaluated before the module's own code: the
 * flags must be set before Effect, the SDK and zod are evaluated, the young generation still at its initial size (ADR 008).
 */
await esbuild.build({
  entryPoints: [Path.join(root, "src", "launcher.ts")],
  outfile,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  banner: { js: "#!/usr/bin/env node\n// The bin: src/launcher.ts (scripts/bundle.mjs)." },
  sourcemap: "linked",
  sourcesContent: false,
  minifyWhitespace: true,
  charset: "ascii",
  logLevel: "warning"
})
chmodSync(outfile, 0o755)

// RunCode's worker and QuickJS's wasm (see runCodeWorkerPlugin).
await esbuild.build({
  entryPoints: [Path.join(root, "src", "services", "CoreTools", "RunCode", "Worker.ts")],
  outfile: Path.join(root, "dist", "bin", "runcode-worker.cjs"),
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  define: { "import.meta.url": "__importMetaUrl" },
  banner: { js: 'const __importMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
  minifyWhitespace: true,
  charset: "ascii",
  logLevel: "warning"
})
copyFileSync(
  Path.join(root, "node_modules", "@jitl", "quickjs-wasmfile-release-sync", "dist", "emscripten-module.wasm"),
  Path.join(root, "dist", "bin", "quickjs.wasm")
)

/**
 * The daemon's dashboard (issue 29, ADR 034): src/ui (preact) bundled for the browser into dist/ui, with its page and
 * stylesheet, served at /ui from these files only (no CDN). The page loads one script and one stylesheet from 'self':
 * the daemon's Content-Security-Policy allows nothing inline. At most 150 KB gzipped, checked here.
 */
const uiDir = Path.join(root, "dist", "ui")
mkdirSync(uiDir, { recursive: true })
await esbuild.build({
  entryPoints: [Path.join(root, "src", "ui", "app.mjs")],
  outfile: Path.join(uiDir, "app.js"),
  bundle: true,
  platform: "browser",
  format: "esm",
  target: ["chrome120", "firefox120"],
  minify: true,
  legalComments: "none",
  logLevel: "warning"
})
for (const file of ["index.html", "app.css"]) copyFileSync(Path.join(root, "src", "ui", file), Path.join(uiDir, file))
const uiBytes = ["index.html", "app.js", "app.css"].reduce(
  (sum, file) => sum + gzipSync(readFileSync(Path.join(uiDir, file))).length,
  0
)
if (uiBytes > 150 * 1024) throw new Error(`the dashboard is ${Math.round(uiBytes / 1024)} KB gzipped (at most 150 KB)`)
const outputs = Object.entries(built.metafile.outputs).filter(([path]) => path.endsWith(".cjs"))
const [, output] = outputs.find(([path]) => path.endsWith("clawtool.cjs"))
console.error(
  `bundled ${Path.relative(root, bundleFile)} (loaded by the bin, ${Path.relative(root, outfile)}): ${Object.keys(output.inputs).length} modules, ${Math.round(output.bytes / 1024)} KiB (+ ${outputs.length - 1} chunks in dist/bin loaded on demand); dashboard dist/ui ${Math.round(uiBytes / 1024)} KB gzipped`
)
