import { createRequire } from "node:module"

// package.json sits one level above both src/ (tests) and dist/ (the built CLI).
const pkg = createRequire(import.meta.url)("../package.json") as { readonly name: string; readonly version: string }

export const name = pkg.name
export const version = pkg.version
