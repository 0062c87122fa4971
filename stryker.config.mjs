// Mutation testing of the pure modules (issue 15): `npm run mutation`. Not part of `npm test`. See docs/mutation.md.
/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  vitest: { configFile: "vitest.mutation.config.ts", related: false },
  plugins: ["@stryker-mutator/vitest-runner"],
  mutate: [
    "src/domain/**/*.ts",
    "src/services/Registry/{Pipeline,NameBudget,Catalog,ToolSearch,Surface}.ts",
    "src/services/CoreTools/Manifest.ts",
    "src/cli/TypeScriptExport.ts",
    "src/text.ts",
    "src/services/Secrets.ts",
    "src/services/Config.ts",
    "src/services/Config/*.ts",
    // The restart policy and the Instance state machine (Sources' pure parts); the relay's CallPlan is in domain/.
    "src/services/Sources/Policy.ts",
    "src/services/Sources/Instance.ts"
  ],
  coverageAnalysis: "perTest",
  ignoreStatic: true,
  incremental: true,
  // Git-ignored like the reports: a re-run on the same clone tests only the mutants whose code or tests changed;
  // a fresh clone runs everything once (about an hour on 2 busy cores, see docs/mutation.md).
  incrementalFile: "reports/stryker-incremental.json",
  concurrency: 2,
  reporters: ["clear-text", "progress", "json", "html"],
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  htmlReporter: { fileName: "reports/mutation/mutation.html" },
  tempDirName: ".stryker-tmp",
  cleanTempDir: true,
  thresholds: { high: 90, low: 80, break: null },
  timeoutMS: 10_000
}
