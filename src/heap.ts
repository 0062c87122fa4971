import * as V8 from "node:v8"

// Evaluated before anything else: imported first by main.ts, and by the bin's launcher before the bundle (the bundle's
// own order cannot be relied on; scripts/bundle.mjs). V8 doubles the young generation under allocation up to 16 MB per
// semi-space and never gives it back; a gateway's live set is small and its per-call garbage tiny, so it stays at its
// initial size: several MB less resident memory for more, cheaper scavenges (bench: memory, lazy; ADR 008). V8 reads
// the flag at each resize, so setting it here works. `node --semi-space-growth-factor=N …` overrides it (NODE_OPTIONS
// cannot carry V8 flags like this one).
const flag = "--semi-space-growth-factor"
if (!process.execArgv.some((arg) => arg.startsWith(flag))) V8.setFlagsFromString(`${flag}=1`)
