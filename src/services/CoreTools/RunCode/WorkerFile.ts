import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"

/**
 * Where RunCode's worker script and QuickJS's wasm are. Built by tsc: Worker.js beside this file (run from src/ by
 * the tests: the one tsc built under dist/) and the wasm in node_modules. The bundled bin replaces this module
 * (scripts/bundle.mjs): both files sit in dist/bin/.
 */
export const workerFiles = (): { readonly worker: string; readonly wasm: string } => {
  const beside = fileURLToPath(new URL("./Worker.js", import.meta.url))
  const worker = existsSync(beside) ? beside : beside.replace(/([\\/])src([\\/])(?!.*[\\/]src[\\/])/, "$1dist$2")
  const wasm = createRequire(import.meta.url).resolve("@jitl/quickjs-wasmfile-release-sync/wasm")
  return { worker, wasm }
}
