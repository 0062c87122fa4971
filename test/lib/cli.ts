import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect } from "effect"
import { execFileSync, spawn, spawnSync, type ChildProcessWithoutNullStreams } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { root, tempDir } from "./sources.js"

export const main = path.join(root, "dist/main.js")

const newestSource = (dir: string): number =>
  fs
    .readdirSync(dir, { withFileTypes: true })
    .reduce(
      (newest, item) =>
        Math.max(
          newest,
          item.isDirectory()
            ? newestSource(path.join(dir, item.name))
            : item.name.endsWith(".ts")
              ? fs.statSync(path.join(dir, item.name)).mtimeMs
              : 0
        ),
      0
    )

/** e2e tests run the built CLI (the bundled bin, ADR 008); `npm test` builds first, this covers running one file alone. */
export const ensureBuilt = () => {
  if (!fs.existsSync(main) || fs.statSync(main).mtimeMs < newestSource(path.join(root, "src"))) {
    execFileSync("npm", ["run", "build"], { cwd: root, stdio: "pipe" })
  }
}

export const writeConfig = (text: string, name = "config.toml") => {
  const file = path.join(tempDir(), name)
  fs.writeFileSync(file, text)
  return file
}

/** A fresh, empty catalog cache folder: the CLI under test never reads or writes the user's own cache. */
export const freshCacheDir = () => tempDir("clawtool-cache-")

/**
 * The CLI under test uses this run's temp dir, where test/lib/tempDirCheck.ts sees anything it leaves, and the test
 * file's state folder (test/lib/setup.ts): its audit log and tokens never land in the user's ~/.local/state.
 */
export const tempDirEnv = { TMPDIR: os.tmpdir(), CLAWTOOL_STATE_DIR: process.env.CLAWTOOL_STATE_DIR ?? "" }

/** The CLI under test's environment: a fresh cache folder, this run's temp dir, then the test's own variables. */
const cliEnv = (env: Record<string, string>) => ({
  PATH: process.env.PATH ?? "",
  HOME: process.env.HOME ?? "",
  ...tempDirEnv,
  CLAWTOOL_CACHE_DIR: freshCacheDir(),
  ...env
})

/** Runs the built CLI to completion. */
export const runCli = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const result = spawnSync(process.execPath, [main, ...args], {
    cwd: root,
    encoding: "utf8",
    env: cliEnv(env),
    timeout: 60_000
  })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

/**
 * `runCli` without blocking the test worker: a file of many CLI runs in a row must not hold vitest's worker past its
 * RPC timeout on a loaded machine ("Timeout calling onTaskUpdate").
 */
export const runCliAsync = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [main, ...args], {
      cwd: root,
      env: cliEnv(env),
      timeout: 60_000
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.stdin.end()
    child.once("error", reject)
    child.once("close", (code) => resolve({ code, stdout, stderr }))
  })

/** `clawtool serve` as a raw process: the test writes JSON-RPC lines and reads stdout itself. */
export const spawnServe = (config: string, cacheDir = freshCacheDir()): ChildProcessWithoutNullStreams =>
  spawn(process.execPath, [main, "serve", "--config", config], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...tempDirEnv, CLAWTOOL_CACHE_DIR: cacheDir },
    stdio: ["pipe", "pipe", "pipe"]
  })

/** An SDK client (the host) connected to `clawtool serve`, closed with the scope. */
export const serveClient = (
  config: string,
  capabilities: Record<string, unknown> = {},
  cacheDir = freshCacheDir(),
  /** Each chunk clawtool writes to stderr (its logs). */
  onStderr?: (chunk: string) => void
) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [main, "serve", "--config", config],
        cwd: root,
        env: { ...getDefaultEnvironment(), ...tempDirEnv, CLAWTOOL_CACHE_DIR: cacheDir },
        stderr: "pipe"
      })
      if (onStderr !== undefined) transport.stderr?.on("data", (chunk: Buffer) => onStderr(chunk.toString("utf8")))
      const client = new Client({ name: "e2e-host", version: "1.0.0" }, { capabilities })
      await client.connect(transport)
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

export const exitOf = (child: ChildProcessWithoutNullStreams) =>
  Effect.async<{ code: number | null; signal: string | null }>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      return resume(Effect.succeed({ code: child.exitCode, signal: child.signalCode }))
    }
    child.once("exit", (code, signal) => resume(Effect.succeed({ code, signal })))
  })
