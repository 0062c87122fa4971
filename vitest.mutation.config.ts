import { defineConfig } from "vitest/config"

// Used only by Stryker (stryker.config.mjs): the fast, in-process unit tests of the mutated modules. Suites that
// spawn real children (Sources, Supervision, chaos, relay, e2e, the reference-server parts of Registry export and
// search) are left out so that each mutant run takes a fraction of a second. Where a module has both kinds, its folder
// keeps them in separate files (test/Limits/, test/TypeScriptExport/): the in-process file is listed here, and the
// mutation-driven cases live in the module's own test file (docs/mutation.md).
export default defineConfig({
  test: {
    include: [
      "test/domain.test.ts",
      "test/Config/**/*.test.ts",
      "test/Secrets.test.ts",
      "test/Registry.test.ts",
      "test/RegistryCatalog.test.ts",
      "test/RegistryConfig.test.ts",
      "test/RegistryManifest.test.ts",
      "test/RegistryNameBudget.test.ts",
      "test/RegistryPipeline.test.ts",
      "test/RegistrySurface.test.ts",
      "test/CallPlan.test.ts",
      "test/SourcesPolicy.test.ts",
      "test/SourcesInstance.test.ts",
      "test/transport.test.ts",
      "test/text.test.ts",
      "test/Limits/Limits.test.ts",
      "test/TypeScriptExport/TypeScriptExport.test.ts",
      "test/Registry/ToolSearch.test.ts"
    ],
    // One worker reuses the loaded modules between mutant runs (mutants switch at run time, no reload needed).
    isolate: false,
    testTimeout: 20_000,
    hookTimeout: 20_000
  }
})
