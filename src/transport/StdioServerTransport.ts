import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { ErrorCode, JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import type { Readable, Writable } from "node:stream"
import { LineFramer } from "./LineFramer.js"
import { LineWriter } from "./LineWriter.js"

/**
 * A result that is already JSON text (the catalog serialises tools/list once per catalog): `send` splices it into the
 * response instead of stringifying megabytes again on every list.
 */
const preserialized = Symbol.for("clawtool/preserialized")
export const rawResult = (json: string): Record<string, never> => ({ [preserialized]: json }) as Record<string, never>

const isId = (id: unknown): id is string | number => typeof id === "string" || typeof id === "number"

/**
 * The SDK answers a request whose params fail its schema (e.g. `initialize` without params) with an Internal error
 * (-32603) whose message is zod's JSON issue list; JSON-RPC calls that Invalid params (-32602). Rewritten on the way
 * out, with the issues in one line.
 */
const invalidParamsAsSuch = (message: JSONRPCMessage): JSONRPCMessage => {
  if (!("error" in message) || message.error.code !== ErrorCode.InternalError) return message
  let issues: unknown
  try {
    issues = JSON.parse(message.error.message)
  } catch {
    return message
  }
  const isIssue = (issue: unknown): issue is { path: Array<string | number>; message: string } =>
    typeof issue === "object" &&
    issue !== null &&
    Array.isArray((issue as { path?: unknown }).path) &&
    typeof (issue as { message?: unknown }).message === "string"
  if (!Array.isArray(issues) || issues.length === 0 || !issues.every(isIssue)) return message
  const text = issues.map((issue) => `${issue.path.join(".") || "request"}: ${issue.message}`).join("; ")
  return { ...message, error: { code: ErrorCode.InvalidParams, message: `Invalid params: ${text}` } }
}

/**
 * The host-facing stdio transport (ADR-001). Unlike the SDK's StdioServerTransport it answers a line that is
 * not JSON with a JSON-RPC Parse error (-32700, id null) and a non-JSON-RPC object with Invalid Request
 * (-32600, echoing its id when it has one) instead of dropping it silently, and it reports stdin EOF as
 * `onclose` so `serve` ends when the host goes away (SDK issue #2002).
 */
export class StdioServerTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  /**
   * Sees each parsed JSON-RPC 2.0 object before the SDK does; true when it took it (the Gateway's tools/call relay,
   * ADR 009), which then answers with `reply`.
   */
  intercept?: (message: Record<string, unknown>) => boolean
  private closed = false
  private readonly framer = new LineFramer(
    (line) => this.receive(line),
    (bytes) => this.reject(null, ErrorCode.InvalidRequest, `Request too large (${bytes} bytes)`)
  )
  private readonly onData = (chunk: Buffer) => this.framer.push(chunk)
  private readonly onEnd = () => void this.close()
  private readonly writer: LineWriter

  constructor(
    private readonly stdin: Readable = process.stdin,
    private readonly stdout: Writable = process.stdout
  ) {
    this.writer = new LineWriter(stdout)
  }

  async start(): Promise<void> {
    this.stdin.on("data", this.onData)
    this.stdin.on("end", this.onEnd)
    this.stdin.on("close", this.onEnd)
    this.stdin.on("error", (error) => this.onerror?.(error))
  }

  send(message: JSONRPCMessage): Promise<void> {
    const raw = "result" in message ? (message.result as { [preserialized]?: unknown })[preserialized] : undefined
    if (typeof raw === "string" && "id" in message) {
      return this.write(`{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":${raw}}\n`)
    }
    return this.write(JSON.stringify(invalidParamsAsSuch(message)) + "\n")
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.stdin.off("data", this.onData)
    this.stdin.off("end", this.onEnd)
    this.stdin.off("close", this.onEnd)
    this.stdin.pause()
    this.onclose?.()
  }

  /** The answer to an intercepted request. */
  reply(id: string | number, result: unknown): void {
    void this.write(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${JSON.stringify(result)}}\n`)
  }

  private write(text: string): Promise<void> {
    if (this.closed || !this.stdout.writable) return Promise.resolve()
    return this.writer.write(text)
  }

  private receive(line: string): void {
    let json: unknown
    try {
      json = JSON.parse(line)
    } catch (error) {
      this.onerror?.(new Error(`parse error on stdin: ${(error as Error).message}`))
      return this.reject(null, ErrorCode.ParseError, "Parse error: the line is not valid JSON")
    }
    if (
      this.intercept !== undefined &&
      typeof json === "object" &&
      json !== null &&
      (json as { jsonrpc?: unknown }).jsonrpc === "2.0" &&
      this.intercept(json as Record<string, unknown>)
    ) {
      return
    }
    if (!JSONRPCMessageSchema.safeParse(json).success) {
      const id = typeof json === "object" && json !== null && "id" in json && isId(json.id) ? json.id : null
      return this.reject(id, ErrorCode.InvalidRequest, "Invalid Request: not a JSON-RPC 2.0 message")
    }
    this.onmessage?.(json as JSONRPCMessage)
  }

  private reject(id: string | number | null, code: number, message: string): void {
    void this.write(JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } }) + "\n")
  }
}
