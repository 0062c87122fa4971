#!/usr/bin/env node
// `npm run install-size`: what `npm install -g` of the packed tarball puts on a user's disk. Packs the package
// (`npm pack`, which builds it), installs the tarball globally into a temporary prefix, and counts the installed
// packages (clawtool included) and the bytes of their files. Exits 1 above the budget the README states.
import { execFileSync } from "node:child_process"
import { lstatSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
const budget = { bytes: 15 * 1024 * 1024, packages: 25 }

const temp = mkdtempSync(Path.join(Os.tmpdir(), "clawtool-install-size-"))
try {
  const packed = JSON.parse(
    execFileSync("npm", ["pack", "--json", "--pack-destination", temp], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"]
    })
  )[0]
  const tarball = Path.join(temp, packed.filename)
  const prefix = Path.join(temp, "prefix")
  execFileSync("npm", ["install", "-g", "--prefix", prefix, "--no-audit", "--no-fund", tarball], {
    cwd: temp,
    stdio: ["ignore", "ignore", "inherit"]
  })

  // The installed bin must run on what was installed, nothing else.
  const version = execFileSync(Path.join(prefix, "bin", "clawtool"), ["--version"], { encoding: "utf8" }).trim()
  console.log(`installed bin: clawtool --version -> ${version}`)

  const modules = Path.join(prefix, "lib", "node_modules")
  /** Every package directory under a node_modules folder (scoped ones too), nested ones included. */
  const packages = []
  const walkModules = (dir) => {
    for (const name of safeReaddir(dir)) {
      if (name.startsWith(".")) continue
      const path = Path.join(dir, name)
      if (name.startsWith("@")) walkModules(path)
      else {
        packages.push(path)
        walkModules(Path.join(path, "node_modules"))
      }
    }
  }
  walkModules(modules)
  const bytes = sizeOf(modules)

  const mib = (n) => `${(n / 1024 / 1024).toFixed(2)} MiB`
  console.log(`tarball:   ${packed.filename}, ${mib(packed.size)} packed, ${packed.entryCount} files`)
  console.log(
    `installed: ${mib(bytes)} in ${packages.length} package(s) (budget ${mib(budget.bytes)}, ${budget.packages})`
  )
  for (const path of packages) console.log(`  ${Path.relative(modules, path)}  ${mib(sizeOf(path))}`)
  if (bytes > budget.bytes || packages.length > budget.packages) {
    console.error("over budget")
    process.exitCode = 1
  }
} finally {
  rmSync(temp, { recursive: true, force: true })
}

function safeReaddir(dir) {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}

/** Bytes of the regular files under `path` (symbolic links not followed). */
function sizeOf(path) {
  const stat = lstatSync(path, { throwIfNoEntry: false })
  if (stat === undefined) return 0
  if (!stat.isDirectory()) return stat.isFile() ? stat.size : 0
  return safeReaddir(path).reduce((sum, name) => sum + sizeOf(Path.join(path, name)), 0)
}
