import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import {
  StreamableHTTPClientTransport,
  type StreamableHTTPReconnectionOptions
} from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process"
import * as http from "node:http"
import { freshCacheDir, main, tempDirEnv } from "./cli.js"
import { root } from "./sources.js"

export interface Daemon {
  readonly child: ChildProcessWithoutNullStreams
  /** http://127.0.0.1:PORT/mcp */
  readonly url: URL
  readonly port: number
  readonly stderr: () => string
}

/** `clawtool serve --listen 127.0.0.1:0` (a free port, read back from its stderr line); killed with the scope. */
export const startDaemon = (config: string, options: { env?: Record<string, string>; listen?: string } = {}) =>
  Effect.acquireRelease(
    Effect.async<Daemon, Error>((resume) => {
      const child = spawn(
        process.execPath,
        [main, "serve", "--config", config, "--listen", options.listen ?? "127.0.0.1:0"],
        {
          cwd: root,
          env: {
            PATH: process.env.PATH ?? "",
            HOME: process.env.HOME ?? "",
            ...tempDirEnv,
            CLAWTOOL_CACHE_DIR: freshCacheDir(),
            ...options.env
          },
          stdio: ["pipe", "pipe", "pipe"]
        }
      )
      let stderr = ""
      let done = false
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString("utf8")
        const match = /serving MCP on (http:\/\/[^\s]+)/.exec(stderr)
        if (match !== null && !done) {
          done = true
          const url = new URL(match[1]!)
          resume(Effect.succeed({ child, url, port: Number(url.port), stderr: () => stderr }))
        }
      })
      child.once("exit", (code) => {
        if (!done) resume(Effect.fail(new Error(`daemon exited ${code}: ${stderr}`)))
      })
    }),
    ({ child }) =>
      Effect.async<void>((resume) => {
        if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
        child.once("exit", () => resume(Effect.void))
        child.kill("SIGTERM")
      })
  )

/** An SDK client over streamable HTTP (the host), closed with the scope. */
export const httpClient = (
  url: URL,
  options: {
    capabilities?: Record<string, unknown>
    token?: string
    setup?: (client: Client) => void
    /** The SDK client's reconnection policy for dropped SSE streams (its default: 1 s, 2 retries). */
    reconnection?: StreamableHTTPReconnectionOptions
  } = {}
) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const transport = new StreamableHTTPClientTransport(url, {
        ...(options.reconnection === undefined ? {} : { reconnectionOptions: options.reconnection }),
        ...(options.token === undefined
          ? {}
          : { requestInit: { headers: { authorization: `Bearer ${options.token}` } } })
      })
      const client = new Client({ name: "http-host", version: "1.0.0" }, { capabilities: options.capabilities ?? {} })
      options.setup?.(client)
      await client.connect(transport)
      return { client, transport }
    }),
    ({ client }) => Effect.promise(() => client.close().catch(() => {}))
  )

export const callTool = (
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
  options: { signal?: AbortSignal; onprogress?: (progress: unknown) => void; timeout?: number } = {}
) =>
  Effect.promise(
    () =>
      client.request({ method: "tools/call", params: { name, arguments: args } }, CallToolResultSchema, {
        timeout: 60_000,
        ...options
      }) as Promise<CallToolResult>
  )

export const textOf = (result: CallToolResult) =>
  result.content.map((item) => (item.type === "text" ? item.text : "")).join("")

export interface RawResponse {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

/** A raw HTTP request (node:http, so Host can be set freely). */
export const rawRequest = (
  port: number,
  options: { method?: string; path?: string; headers?: Record<string, string>; body?: string | Buffer }
) =>
  Effect.async<RawResponse>((resume) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        method: options.method ?? "POST",
        path: options.path ?? "/mcp",
        headers: {
          accept: "application/json, text/event-stream",
          "content-type": "application/json",
          ...options.headers
        }
      },
      (res) => {
        let body = ""
        res.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")))
        res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, headers: res.headers, body })))
        res.on("error", () => resume(Effect.succeed({ status: res.statusCode ?? 0, headers: res.headers, body })))
      }
    )
    req.on("error", (error) => resume(Effect.succeed({ status: 0, headers: {}, body: String(error) })))
    req.end(options.body)
  })

export const initializeBody = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
})

/** The JSON-RPC messages of an SSE or JSON response body. */
export const messagesOf = (body: string): ReadonlyArray<Record<string, unknown>> => {
  const trimmed = body.trim()
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) return [JSON.parse(trimmed)].flat()
  return body
    .split("\n")
    .filter((line) => line.startsWith("data:") && line.slice(5).trim() !== "")
    .map((line) => JSON.parse(line.slice(5)))
}
