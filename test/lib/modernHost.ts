import { Client } from "@modelcontextprotocol/client"
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio"
import { Effect } from "effect"
import * as fs from "node:fs"
import { freshCacheDir, main, tempDirEnv } from "./cli.js"
import { root } from "./sources.js"

/** The modern envelope for raw lines (capabilities `{}` unless a test puts its own). */
export const modernMeta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" }
}

/**
 * An SDK v2 host pinned to 2026-07-28 (`versionNegotiation: { mode: { pin } }`; the shorter `{ pin }` falls back to
 * initialize in 2.4.0) in front of `clawtool serve` over stdio, closed with the scope.
 */
export const modernHost = (
  config: string,
  capabilities: Record<string, unknown> = {},
  /** More environment for clawtool (e.g. CLAWTOOL_STATE_DIR, where OAuth tokens are). */
  env: Record<string, string> = {}
) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const cacheDir = freshCacheDir()
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [main, "serve", "--config", config],
        cwd: root,
        env: {
          PATH: process.env.PATH ?? "",
          HOME: process.env.HOME ?? "",
          ...tempDirEnv,
          CLAWTOOL_CACHE_DIR: cacheDir,
          ...env
        },
        stderr: "ignore"
      })
      const client = new Client(
        { name: "modern-host", version: "1.0.0" },
        { capabilities, versionNegotiation: { mode: { pin: "2026-07-28" } } }
      )
      await client.connect(transport)
      return { client, cacheDir }
    }),
    ({ client, cacheDir }) =>
      Effect.promise(async () => {
        await client.close()
        fs.rmSync(cacheDir, { recursive: true, force: true })
      })
  ).pipe(Effect.map(({ client }) => client))
