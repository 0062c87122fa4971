import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Makes assert.deepStrictEqual & co. throw on Option/Either operands (chai sees Some and None as equal).
    setupFiles: ["test/lib/setup.ts"],
    // Fails the run when it leaves anything in the OS temp dir.
    globalSetup: ["test/lib/tempDirCheck.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Real child processes: keep files in parallel but bound the load on small CI machines.
    maxWorkers: 2,
    minWorkers: 1
  }
})
