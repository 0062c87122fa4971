import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { ErrorCode, JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import type { ChildProcessByStdio } from "node:child_process"
import type { Readable, Writable } from "node:stream"
import { defaultLimits, exceedsDepth, idAtEdges, mayExceedDepth, usableId, type Limits } from "../domain/Limits.js"
import { kindOf } from "./Envelope.js"
import { LineFramer } from "./LineFramer.js"
import { LineWriter } from "./LineWriter.js"

export type SpawnedChild = ChildProcessByStdio<Writable, Readable, Readable>

/**
 * MCP stdio client transport over a process clawtool has ALREADY spawned (ADR-001). The SDK's
 * StdioClientTransport spawns in clawtool's own process group and signals only the direct child, so npx/uvx
 * grandchildren survive it; here the process (and its group) belongs to SourceClient's scope, and this class
 * only frames messages. Death is detected from the process `exit` event, not `close`, because a grandchild
 * holding the stdout pipe would otherwise keep in-flight calls hanging.
 */
export class ChildProcessTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  /** Sees each parsed message before the SDK does; true when it took it (SourceClient's call relay, ADR 009). */
  intercept?: (message: Record<string, unknown>) => boolean
  private closed = false
  private readonly framer: LineFramer
  private readonly writer: LineWriter

  constructor(
    private readonly child: SpawnedChild,
    private readonly onGarbage: (line: string) => void,
    private readonly limits: Limits = defaultLimits
  ) {
    this.framer = new LineFramer(
      (line) => this.receive(line),
      ({ bytes, head, tail }) =>
        this.refuse(
          idAtEdges(head, tail),
          `a stdout line of ${bytes} bytes, over max_line_bytes (${limits.maxLineBytes})`
        ),
      limits.maxLineBytes
    )
    this.writer = new LineWriter(child.stdin)
  }

  async start(): Promise<void> {
    this.child.stdout.on("data", (chunk: Buffer) => this.framer.push(chunk))
    this.child.stdin.on("error", (error) => this.onerror?.(error))
    if (this.child.exitCode !== null || this.child.signalCode !== null) this.finish()
    else this.child.once("exit", () => this.finish())
  }

  /** Never throws: a message that cannot be serialised rejects (the SDK fails the request it belongs to). */
  send(message: JSONRPCMessage): Promise<void> {
    let text: string
    try {
      text = JSON.stringify(message) + "\n"
    } catch (error) {
      return Promise.reject(error)
    }
    return this.sendLine(text)
  }

  /** One or more serialised messages, each ending in a newline. */
  sendLine(text: string): Promise<void> {
    if (this.closed || !this.child.stdin.writable) return Promise.reject(new Error("child stdin is closed"))
    return this.writer.write(text)
  }

  /** Ends stdin (the polite shutdown signal for stdio servers); killing is the owning scope's job. */
  async close(): Promise<void> {
    if (!this.child.stdin.destroyed) this.child.stdin.end()
    this.finish()
  }

  /**
   * Total (ADR 010): nothing the child writes can throw out of the stdout handler. A message nested deeper than
   * max_depth is never handed on (serialising it again would overflow the stack): an answer becomes an error answer
   * for the same id, so whichever path waits on it (relay or SDK) fails that one call; anything else is dropped.
   */
  private receive(line: string): void {
    let json: unknown
    try {
      json = JSON.parse(line)
    } catch {
      return this.onGarbage(line)
    }
    if (mayExceedDepth(line.length, this.limits.maxDepth) && exceedsDepth(json, this.limits.maxDepth)) {
      const what = `a message nested deeper than max_depth (${this.limits.maxDepth})`
      if (kindOf(json) !== "request") return this.refuse(usableId(json), what)
      // A request from the child (sampling, elicitation, roots…) is answered, so the child does not wait for ever.
      const id = usableId(json)
      this.onGarbage(`<${what} was dropped${id === undefined ? "" : `; request ${JSON.stringify(id)} refused`}>`)
      if (id === undefined) return
      const error = { code: ErrorCode.InvalidRequest, message: `${what}: refused by clawtool` }
      return void this.sendLine(`${JSON.stringify({ jsonrpc: "2.0", id, error })}\n`).catch(() => {})
    }
    try {
      if (this.intercept !== undefined && typeof json === "object" && json !== null && this.intercept(json as never))
        return
      // Validate the envelope only, and hand on the original object: the payload is relayed, not re-shaped.
      if (!JSONRPCMessageSchema.safeParse(json).success) return this.onGarbage(line)
      this.onmessage?.(json as JSONRPCMessage)
    } catch (error) {
      this.onGarbage(`<handling a stdout message failed: ${error instanceof Error ? error.message : String(error)}>`)
    }
  }

  /**
   * A message clawtool will not take: logged and counted once as garbage (Health's stdoutGarbage), and when it was
   * the answer to request `id`, that request is failed with an Internal error saying why.
   */
  private refuse(id: string | number | undefined, what: string): void {
    this.onGarbage(`<${what} was dropped${id === undefined ? "" : `; request ${JSON.stringify(id)} fails`}>`)
    if (id === undefined) return
    const message = `the source's answer was refused: ${what}`
    const error = { jsonrpc: "2.0", id, error: { code: ErrorCode.InternalError, message } } as const
    try {
      if (this.intercept?.(error) === true) return
      this.onmessage?.(error)
    } catch (cause) {
      this.onGarbage(`<handling a stdout message failed: ${cause instanceof Error ? cause.message : String(cause)}>`)
    }
  }

  private finish(): void {
    if (this.closed) return
    this.closed = true
    this.onclose?.()
  }
}
