/**
 * vitest globalSetup: a test run leaves the OS temp dir as it found it. Each entry of `os.tmpdir()` that appeared
 * during the run and is still there at its end fails the run (exit code 1) and is named, whoever made it: a test, a
 * helper or clawtool itself (a leak of the product is fixed in the product, not removed here).
 *
 * Which new entries count (docs/decisions/012-tests-that-can-fail.md): every one when the run has the temp dir to
 * itself — under CI, or when the dir was empty at the start (a TMPDIR of its own) — and otherwise, on a temp dir shared
 * with the rest of the machine, only those named `clawtool-*` (the suite's and clawtool's); the others are listed as a
 * warning, since any program may create them meanwhile.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { TestProject } from "vitest/node"

const ours = (name: string) => name.startsWith("clawtool-")
const entries = (count: number) => `${count} new ${count === 1 ? "entry" : "entries"}`

export default function setup(project: TestProject) {
  const dir = os.tmpdir()
  // vitest's folders of transformed modules: removed by vitest when the projects close, after this teardown.
  const vitests = new Set(project.vitest.projects.map((each) => path.relative(dir, each.tmpDir)))
  const before = new Set(fs.readdirSync(dir).filter((name) => !vitests.has(name)))
  const alone = (process.env.CI ?? "") !== "" || before.size === 0
  return () => {
    const added = fs.readdirSync(dir).filter((name) => !before.has(name) && !vitests.has(name))
    const left = alone ? added : added.filter(ours)
    const others = alone ? [] : added.filter((name) => !ours(name))
    if (others.length > 0)
      console.warn(
        `\n${entries(others.length)} in the shared temp dir ${dir}, not counted (another program may have made ` +
          `them): ${others.join(", ")}`
      )
    if (left.length > 0) {
      console.error(
        `\nThe test run left ${entries(left.length)} in the temp dir ${dir}; every test removes what it creates ` +
          `(test/lib/temp.ts):\n${left.map((name) => `  ${path.join(dir, name)}`).join("\n")}\n`
      )
      process.exitCode = 1
    }
  }
}
