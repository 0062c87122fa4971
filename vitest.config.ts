import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Real child processes: keep files in parallel but bound the load on small CI machines.
    maxWorkers: 2,
    minWorkers: 1
  }
})
