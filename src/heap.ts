import * as V8 from "node:v8"

// Evaluated before anything else: imported first by main.ts, and by the bin's launcher (src/launcher.ts) before the
// bundle. Two V8 settings, both for resident memory (bench: memory, lazy; ADR 008). `node --<flag> …` on the command
// line overrides either (NODE_OPTIONS cannot carry V8 flags like these).
const given = (...flags: ReadonlyArray<string>) =>
  process.execArgv.some((arg) => flags.some((flag) => arg === flag || arg.startsWith(`${flag}=`)))

// V8 doubles the young generation under allocation up to 16 MB per semi-space and never gives it back; a gateway's live
// set is small and its per-call garbage tiny, so it stays at its initial size: several MB less resident memory for more,
// cheaper scavenges. V8 reads the flag at each resize, so setting it here works.
if (!given("--semi-space-growth-factor")) V8.setFlagsFromString("--semi-space-growth-factor=1")

// Start-up (loading the bundle, building the layers, spawning sources, the first answers) is code that runs once:
// TurboFan optimising it spends memory and CPU for nothing. It is off for the first seconds and then on for good, so
// the calls that follow are optimised as before. V8 reads the flag each time a function gets hot. Peak RSS of an idle
// `serve`: ~5 MB less (ADR 027).
const startupMs = 2000
const pausesTurbofan = !given("--opt", "--no-opt", "--turbofan", "--no-turbofan", "--max-opt", "--jitless")
let turbofanBack = false
if (pausesTurbofan) {
  V8.setFlagsFromString("--no-opt")
  setTimeout(() => {
    turbofanBack = true
    V8.setFlagsFromString("--opt")
  }, startupMs).unref()
}

/**
 * Runs `f` under the flags of every start-up. V8 stamps a code cache with a hash of its flags as they are when the
 * cache is made or read, and rejects one made under other flags: src/launcher.ts makes and reads each under these, so
 * a chunk cached at the 3rd second (TurboFan back) is still taken at the next start's first (TurboFan paused).
 */
export const withStartupFlags = <A>(f: () => A): A => {
  if (!turbofanBack) return f()
  V8.setFlagsFromString("--no-opt")
  try {
    return f()
  } finally {
    V8.setFlagsFromString("--opt")
  }
}
