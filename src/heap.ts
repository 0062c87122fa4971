import * as V8 from "node:v8"

// Evaluated before anything else: by the bin's launcher (src/launcher.ts) before the bundle, and imported first by
// main.ts. Two V8 settings, both for resident memory (bench: memory, lazy; ADR 008, ADR 027). `node --<flag> …` on the
// command line overrides either (NODE_OPTIONS cannot carry V8 flags like these).
const given = (...flags: ReadonlyArray<string>) =>
  process.execArgv.some((arg) => flags.some((flag) => arg === flag || arg.startsWith(`${flag}=`)))

interface HeapState {
  /** TurboFan was paused for the start-up (no optimiser flag on the command line). */
  readonly paused: boolean
  /** … and is back. */
  resumed: boolean
}

/**
 * Start-up (loading the bundle, building the layers, reading the config and the caches, the host's first requests) is
 * code that runs once: TurboFan optimising it spends memory and CPU for nothing. It is paused for the first 2 s, then
 * on for good; V8 reads the flag each time a function gets hot. Peak RSS of an idle `serve`: ~5 MB less (ADR 027;
 * resuming as soon as serve is ready to read the host's first message kept none of it).
 */
const startupMs = 2000

const start = (): HeapState => {
  // V8 doubles the young generation under allocation up to 16 MB per semi-space and never gives it back; a gateway's
  // live set is small and its per-call garbage tiny, so it stays at its initial size: several MB less resident memory
  // for more, cheaper scavenges. V8 reads the flag at each resize, so setting it here works.
  if (!given("--semi-space-growth-factor")) V8.setFlagsFromString("--semi-space-growth-factor=1")
  const paused = !given("--opt", "--no-opt", "--turbofan", "--no-turbofan", "--max-opt", "--jitless")
  if (paused) {
    V8.setFlagsFromString("--no-opt")
    setTimeout(resume, startupMs).unref()
  }
  return { paused, resumed: false }
}

// One state per process: the launcher runs this module before the bundle, which carries its own copy (main.ts imports
// it for tsc's unbundled build).
const key = Symbol.for("clawtool/heap")
const shared = globalThis as { [key]?: HeapState }
const state: HeapState = shared[key] ?? (shared[key] = start())

function resume(): void {
  if (!state.paused || state.resumed) return
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
