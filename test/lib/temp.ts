/**
 * Temporary files for tests, removed by the run that made them: at the end of the test that asked for them
 * (`onTestFinished`) or, asked for outside a test (a file's top level, a describe, beforeAll, a shared layer), after
 * the test file (`removeLeftovers`, an afterAll of test/lib/setup.ts). test/lib/tempDirCheck.ts fails the run on any
 * entry left in the temp dir.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { onTestFinished } from "vitest"

const leftovers = new Set<string>()

const remove = (target: string) => {
  fs.rmSync(target, { recursive: true, force: true })
  leftovers.delete(target)
}

/** Removes `target` (a file or folder, made or still to be made) when the current test or test file ends. */
export const removeWhenDone = (target: string): string => {
  leftovers.add(target)
  try {
    onTestFinished(() => remove(target))
  } catch {
    // Not inside a test: removeLeftovers removes it after the file.
  }
  return target
}

/**
 * A new empty folder in the OS temp dir, removed when the current test or test file ends. Its real path: clawtool
 * reports real paths, which differ where the temp dir is behind a symlink (macOS).
 */
export const tempDir = (prefix = "clawtool-test-"): string =>
  fs.realpathSync(removeWhenDone(fs.mkdtempSync(path.join(os.tmpdir(), prefix))))

/** Removes what removeWhenDone registered outside a test. */
export const removeLeftovers = () => {
  for (const target of [...leftovers]) remove(target)
}
