import type * as http from "node:http"
import { EraCode, type EraError, type ModernWire } from "../domain/HostEra.js"
import type { JsonObject } from "../domain/Mcp.js"
import { RpcCode } from "../domain/Surface.js"

/**
 * The HTTP wire of the 2026-07-28 era (ADR 032): each modern POST is one request, answered on its own response — JSON,
 * or an SSE stream when the host asked for progress and accepts one. Requests are known by an id clawtool gives them
 * (hosts' JSON-RPC ids repeat across POSTs); a retry of an input_required call is answered on the retry's response.
 */
/** The HTTP status of a JSON-RPC error answered on its own response (200 for the rest). */
const statusOf: Readonly<Record<number, number>> = {
  [RpcCode.MethodNotFound]: 404,
  [EraCode.MissingRequiredClientCapability]: 400
}

export const makeModernHttpWire = () => {
  const open = new Map<
    string,
    {
      readonly res: http.ServerResponse
      readonly rpcId: string | number
      readonly stream: boolean
      readonly keepAlive: NodeJS.Timeout | undefined
    }
  >()
  const forget = (key: string) => {
    const entry = open.get(key)
    if (entry === undefined) return false
    open.delete(key)
    clearInterval(entry.keepAlive)
    return true
  }
  const line = (rpcId: string | number, body: string) => `{"jsonrpc":"2.0","id":${JSON.stringify(rpcId)},${body}}`
  const end = (key: string | number, text: string, status = 200) => {
    const entry = open.get(String(key))
    if (entry === undefined) return
    forget(String(key))
    const { res, rpcId, stream } = entry
    const json = line(rpcId, text)
    if (res.writableEnded) return
    if (stream) return void res.end(`event: message\ndata: ${json}\n\n`)
    if (!res.headersSent) res.writeHead(status, { "content-type": "application/json" })
    res.end(json)
  }
  const wire: ModernWire = {
    result: (id, result: JsonObject | string) =>
      end(id, `"result":${typeof result === "string" ? result : JSON.stringify(result)}`),
    // A method the era does not have is 404 (the transport spec: its JSON-RPC body tells it from a legacy server's 404);
    // a capability the request's envelope lacks (a child's -32021, passed on) is 400, as the spec wants it.
    error: (id, error: EraError) => end(id, `"error":${JSON.stringify(error)}`, statusOf[error.code] ?? 200),
    notify: (method, params, about) => {
      const entry = open.get(String(about))
      if (entry === undefined || !entry.stream || entry.res.writableEnded) return
      entry.res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", method, params })}\n\n`)
    }
  }
  return {
    wire,
    /**
     * Request `key` is answered on `res`; `stream`: as SSE (its progress goes there too), with a comment every
     * `keepAliveMs` when given (a listen's stream idles between notices: proxies keep it, a dead host is noticed).
     */
    add: (key: string, res: http.ServerResponse, rpcId: string | number, stream: boolean, keepAliveMs?: number) => {
      const keepAlive =
        stream && keepAliveMs !== undefined
          ? setInterval(() => void res.write(": keepalive\n\n"), keepAliveMs).unref()
          : undefined
      open.set(key, { res, rpcId, stream, keepAlive })
      if (stream) res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
    },
    /** The host went away before its answer. */
    forget
  }
}
