import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import type { ChildProcessByStdio } from "node:child_process"
import type { Readable, Writable } from "node:stream"
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
    private readonly onGarbage: (line: string) => void
  ) {
    this.framer = new LineFramer(
      (line) => this.receive(line),
      (bytes) => this.onGarbage(`<a stdout line over ${bytes} bytes was dropped>`)
    )
    this.writer = new LineWriter(child.stdin)
  }

  async start(): Promise<void> {
    this.child.stdout.on("data", (chunk: Buffer) => this.framer.push(chunk))
    this.child.stdin.on("error", (error) => this.onerror?.(error))
    if (this.child.exitCode !== null || this.child.signalCode !== null) this.finish()
    else this.child.once("exit", () => this.finish())
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.sendLine(JSON.stringify(message) + "\n")
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

  private receive(line: string): void {
    let json: unknown
    try {
      json = JSON.parse(line)
    } catch {
      return this.onGarbage(line)
    }
    if (this.intercept !== undefined && typeof json === "object" && json !== null && this.intercept(json as never))
      return
    // Validate the envelope only, and hand on the original object: the payload is relayed, not re-shaped.
    if (!JSONRPCMessageSchema.safeParse(json).success) return this.onGarbage(line)
    this.onmessage?.(json as JSONRPCMessage)
  }

  private finish(): void {
    if (this.closed) return
    this.closed = true
    this.onclose?.()
  }
}
