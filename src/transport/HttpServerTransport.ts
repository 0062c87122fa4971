import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type * as http from "node:http"

/** One MCP streamable-HTTP connection as the daemon drives it: the requests of one session (or one stateless POST). */
export interface HttpServerTransport extends Transport {
  readonly handleRequest: (req: http.IncomingMessage, res: http.ServerResponse, body?: unknown) => Promise<void>
}

/**
 * The SDK's StreamableHTTPServerTransport, loaded on first use: stdio serve never pays for it and its Hono adapter
 * (cold start, ADR 008).
 */
export const loadHttpServerTransports = async () => {
  const [{ StreamableHTTPServerTransport }, { ReplayLog }] = await Promise.all([
    import("@modelcontextprotocol/sdk/server/streamableHttp.js"),
    import("./ReplayLog.js")
  ])
  return {
    /** A session's transport: its SSE events are kept (bounded) so a dropped stream resumes with Last-Event-ID (ADR 026). */
    session: (id: string): HttpServerTransport =>
      new StreamableHTTPServerTransport({ sessionIdGenerator: () => id, eventStore: new ReplayLog() }),
    /** One stateless request's: no session id. */
    stateless: (): HttpServerTransport => new StreamableHTTPServerTransport({ sessionIdGenerator: undefined })
  }
}
