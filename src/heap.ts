import * as V8 from "node:v8"

// Two V8 settings, both for resident memory (bench: memory, lazy; ADR 008, ADR 027), set by the bin's launcher
// (src/launcher.ts) before it loads the bundle. Importing this module changes nothing: the library (src/index.ts) and
// the tests import the Gateway, which ends the start-up through it. `node --<flag> …` on the command line overrides
// either (NODE_OPTIONS cannot carry V8 flags like these).
const given = (...flags: ReadonlyArray<string>) =>
  process.execArgv.some((arg) => flags.some((flag) => arg === flag || arg.startsWith(`${flag}=`)))

interface HeapState {
  /** TurboFan is paused for the start-up. */
  paused: boolean
  /** … and is back. */
  resumed: boolean
}

// One state per process: the launcher's copy of this module pauses, the bundle's copy (the Gateway's) resumes.
const key = Symbol.for("clawtool/heap")
const shared = globalThis as { [key]?: HeapState }
const state: HeapState = (shared[key] ??= { paused: false, resumed: false })

/**
 * Start-up (loading the bundle, building the layers, reading the config and the caches, the host's handshake and first
 * lists) is code that runs once: TurboFan optimising it spends memory and CPU for nothing. It is paused until the
 * host's first tools/call (resumeOptimiser) and at most 2 s; V8 reads the flag each time a function gets hot. Peak
 * RSS of an idle `serve`: ~5 MB less (ADR 027; resuming as soon as serve is ready to read the host's first message
 * kept none of it).
 */
const startupMs = 2000

/** The bin's first code (src/launcher.ts); once per process. */
export const setStartupFlags = (): void => {
  if (state.paused || state.resumed) return
  // V8 doubles the young generation under allocation up to 16 MB per semi-space and never gives it back; a gateway's
  // live set is small and its per-call garbage tiny, so it stays at its initial size: several MB less resident memory
  // for more, cheaper scavenges. V8 reads the flag at each resize, so setting it here works.
  if (!given("--semi-space-growth-factor")) V8.setFlagsFromString("--semi-space-growth-factor=1")
  if (given("--opt", "--no-opt", "--turbofan", "--no-turbofan", "--max-opt", "--jitless")) return
  V8.setFlagsFromString("--no-opt")
  state.paused = true
  setTimeout(resumeOptimiser, startupMs).unref()
}

/**
 * Ends the start-up: the Gateway calls it on each tools/call (the relay's and the SDK path's), since the host's first
 * call is where relaying starts to be hot, and calls in the first 2 s ran ~20 % slower unoptimised. One check after
 * the first.
 */
export const resumeOptimiser = (): void => {
  if (!state.paused) return
  state.paused = false
  state.resumed = true
  V8.setFlagsFromString("--opt")
}

/**
 * Runs `f` under the flags of every start-up. V8 stamps a code cache with a hash of its flags as they are when the
 * cache is made or read, and rejects one made under other flags: src/launcher.ts makes and reads each under these, so
 * a chunk cached after start-up (TurboFan back) is still taken at the next start (TurboFan paused).
 */
export const withStartupFlags = <A>(f: () => A): A => {
  if (!state.resumed) return f()
  V8.setFlagsFromString("--no-opt")
  try {
    return f()
  } finally {
    V8.setFlagsFromString("--opt")
  }
}
