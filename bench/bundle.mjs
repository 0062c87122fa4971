#!/usr/bin/env node
// bundle.mjs: snapshots dist/ into bench/.out/dist/ (git-ignored), which run.mjs measures, so a rebuild of dist/ during a
// run (the tree is shared) cannot mix two builds in one results.json. The bundling experiments that once lived here
// became the product's build (scripts/bundle.mjs, ADR 008).
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
export const outDir = Path.join(root, "bench", ".out")
export const variants = { dist: Path.join(outDir, "dist", "main.js") }

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
