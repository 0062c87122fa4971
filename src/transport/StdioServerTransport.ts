import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { ErrorCode, JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import type { Readable, Writable } from "node:stream"
import { defaultLimits, exceedsDepth, idAtEdges, mayExceedDepth, usableId, type Limits } from "../domain/Limits.js"
import { cancelledRequest } from "./Cancels.js"
import { kindOf } from "./Envelope.js"
import { LineFramer } from "./LineFramer.js"
import { LineWriter } from "./LineWriter.js"

/**
 * A result that is already JSON text (the catalog serialises tools/list once per catalog): `send` splices it into the
 * response instead of stringifying megabytes again on every list.
 */
const preserialized = Symbol.for("clawtool/preserialized")
export const rawResult = (json: string): Record<string, never> => ({ [preserialized]: json }) as Record<string, never>
/** The JSON text of a `rawResult`; undefined for any other value. */
export const rawJsonOf = (result: unknown): string | undefined => {
  const raw =
    typeof result === "object" && result !== null ? (result as { [preserialized]?: unknown })[preserialized] : undefined
  return typeof raw === "string" ? raw : undefined
}

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

const errorLine = (id: string | number | null, code: number, message: string) =>
  JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } }) + "\n"

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error))

/**
 * The host-facing stdio transport (ADR-001). Unlike the SDK's StdioServerTransport it answers a line that is
 * not JSON with a JSON-RPC Parse error (-32700, id null) and a non-JSON-RPC object with Invalid Request
 * (-32600, echoing its id when it has one) instead of dropping it silently, and it reports stdin EOF as
 * `onclose` so `serve` ends when the host goes away (SDK issue #2002).
 *
 * Hostile input never escapes it (ADR 010): a line over `maxLineBytes` or nested over `maxDepth` is answered with an
 * error naming the limit, a throw while dispatching answers that request with -32603, `send` and `reply` turn an
 * answer that cannot be serialised into an error answer for the same id, and with `maxInFlight` host requests
 * unanswered it stops reading stdin until one is answered.
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
  /** Applied to every line written to the host, whatever wrote it (the Gateway's redaction of known secrets). */
  redact?: (line: string) => string
  private closed = false
  private readonly framer: LineFramer
  private readonly onData = (chunk: Buffer) => this.framer.push(chunk)
  private readonly onEnd = () => void this.close()
  private readonly writer: LineWriter
  /** Host requests read and not answered yet, per id (a host may reuse an id). */
  private readonly unanswered = new Map<string | number, number>()
  private inFlight = 0
  /** Requests clawtool sent to the host and awaits answers to: reading never pauses while there are any. */
  private readonly awaitingHost = new Set<string | number>()
  private paused = false

  constructor(
    private readonly stdin: Readable = process.stdin,
    private readonly stdout: Writable = process.stdout,
    private readonly limits: Limits = defaultLimits
  ) {
    this.writer = new LineWriter(stdout)
    this.framer = new LineFramer(
      (line) => this.receive(line),
      ({ bytes, head, tail }) => {
        const id = idAtEdges(head, tail) ?? null
        this.onerror?.(new Error(`a line of ${bytes} bytes on stdin is over max_line_bytes and was dropped`))
        if (id !== null && !head.includes('"method"') && this.awaitingHost.has(id)) {
          // The host's answer to one of clawtool's requests: that request fails, with the reason.
          this.awaitingHost.delete(id)
          const message = `the host's answer is ${bytes} bytes, over max_line_bytes (${limits.maxLineBytes})`
          return this.safely(() =>
            this.onmessage?.({ jsonrpc: "2.0", id, error: { code: ErrorCode.InvalidRequest, message } })
          )
        }
        this.reject(
          id,
          ErrorCode.InvalidRequest,
          `Request too large: ${bytes} bytes, over max_line_bytes (${limits.maxLineBytes})`
        )
      },
      limits.maxLineBytes
    )
  }

  async start(): Promise<void> {
    this.stdin.on("data", this.onData)
    this.stdin.on("end", this.onEnd)
    this.stdin.on("close", this.onEnd)
    this.stdin.on("error", (error) => this.onerror?.(error))
  }

  /** Total: an answer that cannot be serialised becomes an Internal error answer for its id; it never throws. */
  send(message: JSONRPCMessage): Promise<void> {
    let text: string
    try {
      const raw = "result" in message ? (message.result as { [preserialized]?: unknown })[preserialized] : undefined
      text =
        typeof raw === "string" && "id" in message
          ? `{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":${raw}}\n`
          : JSON.stringify(invalidParamsAsSuch(message)) + "\n"
    } catch (error) {
      const id = usableId(message)
      if (id === undefined || "method" in message) return Promise.reject(error)
      this.onerror?.(new Error(`the answer to request ${JSON.stringify(id)} cannot be serialised: ${describe(error)}`))
      return this.write(
        errorLine(id, ErrorCode.InternalError, `Internal error: the answer cannot be serialised (${describe(error)})`),
        id
      )
    }
    if ("method" in message) {
      const id = usableId(message)
      if (id !== undefined) this.awaitingHost.add(id)
      else this.awaitingHost.delete(cancelledRequest(message)?.id ?? "")
      // Its answer can only arrive on stdin: read again, even at the limit.
      if (this.paused) this.pauseOrResume()
      return this.write(text)
    }
    return this.write(text, usableId(message))
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

  /**
   * The answer to an intercepted request; total, like `send`. A result that cannot be serialised is replaced by
   * `fallback(error)` when given (the relay answers an isError result, as the SDK path does), else by -32603.
   * Returns the result's JSON as written ("" when an error was answered instead): the audit counts its bytes.
   */
  reply(id: string | number, result: unknown, fallback?: (error: unknown) => unknown): string {
    let json: string
    try {
      json = JSON.stringify(result)
    } catch (error) {
      this.onerror?.(new Error(`the answer to request ${JSON.stringify(id)} cannot be serialised: ${describe(error)}`))
      if (fallback !== undefined) return this.reply(id, fallback(error))
      this.reject(id, ErrorCode.InternalError, `Internal error: the answer cannot be serialised (${describe(error)})`)
      return ""
    }
    void this.write(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${json}}\n`, id)
    return json
  }

  /** Writes `text`; with `answering`, it is the answer to that host request (counted off the requests in flight). */
  private write(text: string, answering?: string | number): Promise<void> {
    if (answering !== undefined) this.answered(answering)
    if (this.closed || !this.stdout.writable) return Promise.resolve()
    return this.writer.write(this.redact === undefined ? text : this.redact(text))
  }

  private receive(line: string): void {
    let json: unknown
    try {
      json = JSON.parse(line)
    } catch (error) {
      this.onerror?.(new Error(`parse error on stdin: ${(error as Error).message}`))
      return this.reject(null, ErrorCode.ParseError, "Parse error: the line is not valid JSON")
    }
    const id = usableId(json)
    const kind = kindOf(json)
    if (mayExceedDepth(line.length, this.limits.maxDepth) && exceedsDepth(json, this.limits.maxDepth)) {
      const why = `nested deeper than max_depth (${this.limits.maxDepth})`
      if (id === undefined) {
        this.onerror?.(new Error(`a message on stdin ${why} was dropped`))
        return kind === "notification"
          ? undefined
          : this.reject(null, ErrorCode.InvalidRequest, `Invalid Request: ${why}`)
      }
      if (kind === "request") {
        this.onerror?.(new Error(`request ${JSON.stringify(id)} ${why}: answered with an error`))
        this.counted(id)
        return this.reject(id, ErrorCode.InvalidRequest, `Invalid Request: the message is ${why}`)
      }
      // The host's answer to one of clawtool's requests: that request fails, with the reason.
      json = { jsonrpc: "2.0", id, error: { code: ErrorCode.InvalidRequest, message: `the host's answer is ${why}` } }
    }
    if (kind === "request" && id !== undefined) this.counted(id)
    else if (id !== undefined) this.awaitingHost.delete(id)
    else if (kind === "notification") this.cancelled(json as Record<string, unknown>)
    this.safely(() => this.dispatch(json), kind === "request" ? id : undefined)
    this.pauseOrResume()
  }

  /** Last line of defence: whatever throws, the request concerned gets its one answer and clawtool keeps reading. */
  private safely(run: () => void, request?: string | number): void {
    try {
      run()
    } catch (error) {
      this.onerror?.(new Error(`handling a message from the host failed: ${describe(error)}`))
      if (request !== undefined) this.reject(request, ErrorCode.InternalError, `Internal error: ${describe(error)}`)
    }
  }

  private dispatch(json: unknown): void {
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
      // A malformed answer is never answered (JSON-RPC answers requests only): it is logged.
      if (kindOf(json) === "answer") return this.onerror?.(new Error("a malformed answer from the host was dropped"))
      const id = typeof json === "object" && json !== null && "id" in json && isId(json.id) ? json.id : null
      return this.reject(id, ErrorCode.InvalidRequest, "Invalid Request: not a JSON-RPC 2.0 message")
    }
    this.onmessage?.(json as JSONRPCMessage)
  }

  private reject(id: string | number | null, code: number, message: string): void {
    void this.write(errorLine(id, code, message), id ?? undefined)
  }

  /** A request the host cancelled is never answered (the SDK drops the answer): it is no longer in flight. */
  private cancelled(notification: Record<string, unknown>): void {
    const cancelled = cancelledRequest(notification)
    if (cancelled !== undefined) this.answered(cancelled.id)
  }

  /** One more host request in flight. */
  private counted(id: string | number): void {
    this.unanswered.set(id, (this.unanswered.get(id) ?? 0) + 1)
    this.inFlight++
  }

  /** An answer to host request `id` is written: one request fewer in flight (answers to unknown ids count nothing). */
  private answered(id: string | number): void {
    const count = this.unanswered.get(id)
    if (count === undefined) return
    if (count <= 1) this.unanswered.delete(id)
    else this.unanswered.set(id, count - 1)
    this.inFlight--
    if (this.paused) this.pauseOrResume()
  }

  /**
   * Backpressure: at `maxInFlight` unanswered requests stdin is paused (the host's writes block on a full pipe), and
   * resumed below it. Never while clawtool awaits an answer from the host, which can only arrive on stdin.
   */
  private pauseOrResume(): void {
    const full = this.inFlight >= this.limits.maxInFlight && this.awaitingHost.size === 0
    if (full && !this.paused && !this.closed) {
      this.paused = true
      this.stdin.pause()
    } else if (!full && this.paused) {
      this.paused = false
      if (!this.closed) this.stdin.resume()
    }
  }
}
