// Trace context end to end: a host (the SDK Client) → `clawtool serve` (dist/, build first) → the stub fixture,
// whose `meta` tool answers with the `_meta` it received. Also OTLP/HTTP export to a receiver started here.
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Version from "../../src/version.js"
import { freshCacheDir, tempDirEnv } from "../lib/cli.js"

const root = Path.resolve(import.meta.dirname, "../..")
const main = Path.join(root, "dist/main.js")
const stub = Path.join(root, "test/fixtures/stub-server.mjs")

const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
const callerSpan = "00f067aa0ba902b7"
const callerParent = `00-${traceId}-${callerSpan}-01`

/** A config with one stub source, in a fresh temp directory. */
const writeConfig = (extra = "") => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "clawtool-tracing-"))
  const file = Path.join(dir, "config.toml")
  Fs.writeFileSync(file, `${extra}\n[sources.stub]\ncommand = ${JSON.stringify([process.execPath, stub])}\n`)
  return { dir, file }
}

/** `clawtool serve` under an SDK Client, settled (tools/list waits for every source); closed with the scope. */
const serve = (options: { readonly env?: Record<string, string>; readonly config?: string } = {}) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      if (!Fs.existsSync(main)) throw new Error(`${main} is missing: run npm run build first`)
      const { dir, file } = writeConfig(options.config)
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [main, "serve", "--config", file],
        env: { PATH: process.env.PATH ?? "", ...tempDirEnv, CLAWTOOL_CACHE_DIR: freshCacheDir(), ...options.env },
        stderr: "pipe"
      })
      const chunks: Array<string> = []
      transport.stderr?.on("data", (chunk: Buffer) => chunks.push(chunk.toString()))
      const client = new Client({ name: "tracing-e2e", version: "1.0.0" })
      await client.connect(transport)
      await client.listTools()
      return { client, transport, dir, stderr: () => chunks.join("") }
    }),
    ({ client, dir }) =>
      Effect.promise(async () => {
        await client.close()
        Fs.rmSync(dir, { recursive: true, force: true })
      })
  )

interface Reply {
  readonly meta: Record<string, unknown> | undefined
  /** What the child received as `params._meta`. */
  readonly childMeta: Record<string, unknown>
  readonly isError: boolean
}

const call = (client: Client, name: string, _meta?: Record<string, unknown>) =>
  Effect.promise(async (): Promise<Reply> => {
    const result = await client.callTool({ name, arguments: {}, ...(_meta === undefined ? {} : { _meta }) })
    const structured = result.structuredContent as { meta?: Record<string, unknown> } | undefined
    return { meta: result._meta, childMeta: structured?.meta ?? {}, isError: result.isError === true }
  })

const parts = (traceparent: unknown) => {
  assert.isString(traceparent)
  const [version, trace, span, flags] = (traceparent as string).split("-")
  return { version, trace, span, flags }
}

/** Polls until `check` holds, failing after `limitMs`: an outcome, not a timing. */
const eventually = (check: () => boolean, what: string, limitMs = 15_000) =>
  Effect.gen(function* () {
    const until = Date.now() + limitMs
    while (!check()) {
      if (Date.now() > until) return yield* Effect.dieMessage(`timed out waiting for ${what}`)
      yield* Effect.sleep("50 millis")
    }
  })

describe("trace context through clawtool serve (no exporter)", () => {
  it.scopedLive("same trace end to end, three distinct span ids, the response naming clawtool's span", () =>
    Effect.gen(function* () {
      const { client } = yield* serve()
      const reply = yield* call(client, "stub__meta", {
        traceparent: callerParent,
        tracestate: "vendor=clawtool,key=value",
        other: "kept"
      })
      const response = parts(reply.meta?.traceparent)
      const child = parts(reply.childMeta.traceparent)
      assert.deepStrictEqual([response.version, response.trace, response.flags], ["00", traceId, "01"])
      assert.deepStrictEqual([child.version, child.trace, child.flags], ["00", traceId, "01"])
      assert.strictEqual(new Set([callerSpan, response.span, child.span]).size, 3)
      assert.strictEqual(reply.meta?.tracestate, "vendor=clawtool,key=value")
      assert.strictEqual(reply.childMeta.tracestate, "vendor=clawtool,key=value")
      assert.strictEqual(reply.childMeta.other, "kept")

      // Each call gets its own spans.
      const again = yield* call(client, "stub__meta", { traceparent: callerParent })
      assert.notStrictEqual(parts(again.meta?.traceparent).span, response.span)
      assert.isUndefined(again.meta?.tracestate)
    })
  )

  it.scopedLive("no trace context: no _meta keys are added either way", () =>
    Effect.gen(function* () {
      const { client } = yield* serve()
      const bare = yield* call(client, "stub__meta")
      assert.isUndefined(bare.meta)
      assert.deepStrictEqual(bare.childMeta, {})
      const withMeta = yield* call(client, "stub__meta", { other: 1 })
      assert.isUndefined(withMeta.meta)
      assert.deepStrictEqual(withMeta.childMeta, { other: 1 })
      const failed = yield* call(client, "stub__echo")
      assert.isTrue(failed.isError)
      assert.isUndefined(failed.meta)
    })
  )

  it.scopedLive(
    "TRACEPARENT in clawtool's environment applies to requests without one; _meta wins; invalid never falls back",
    () =>
      Effect.gen(function* () {
        const envTrace = "a".repeat(32)
        const { client } = yield* serve({
          env: { TRACEPARENT: `00-${envTrace}-${"b".repeat(16)}-01`, TRACESTATE: "host=env" }
        })
        const fromEnv = yield* call(client, "stub__meta")
        assert.strictEqual(parts(fromEnv.meta?.traceparent).trace, envTrace)
        assert.strictEqual(fromEnv.meta?.tracestate, "host=env")
        assert.strictEqual(parts(fromEnv.childMeta.traceparent).trace, envTrace)

        const fromMeta = yield* call(client, "stub__meta", { traceparent: callerParent })
        assert.strictEqual(parts(fromMeta.meta?.traceparent).trace, traceId)
        assert.strictEqual(parts(fromMeta.childMeta.traceparent).trace, traceId)
        assert.isUndefined(fromMeta.meta?.tracestate)

        const invalid = callerParent.toUpperCase()
        const rejected = yield* call(client, "stub__meta", { traceparent: invalid })
        assert.isUndefined(rejected.meta)
        assert.deepStrictEqual(rejected.childMeta, { traceparent: invalid })
      })
  )
})

// === OTLP/HTTP export ===

interface OtlpSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly kind: number
  readonly status: { readonly code: number }
  readonly attributes: ReadonlyArray<{ readonly key: string; readonly value: Record<string, unknown> }>
}

/** A loopback OTLP/HTTP receiver on port 0, closed with the scope. */
const receiver = Effect.acquireRelease(
  Effect.async<{ readonly url: string; readonly requests: Array<{ path: string; body: any }>; server: Http.Server }>(
    (resume) => {
      const requests: Array<{ path: string; body: any }> = []
      const server = Http.createServer((request, response) => {
        let body = ""
        request.on("data", (chunk: Buffer) => (body += chunk.toString()))
        request.on("end", () => {
          requests.push({ path: request.url ?? "", body: JSON.parse(body) })
          response.writeHead(200, { "content-type": "application/json" }).end("{}")
        })
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, server }))
      )
    }
  ),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
)

const spansOf = (requests: ReadonlyArray<{ body: any }>): Array<OtlpSpan> =>
  requests.flatMap((request) =>
    (request.body.resourceSpans ?? []).flatMap((resource: any) =>
      (resource.scopeSpans ?? []).flatMap((scope: any) => scope.spans ?? [])
    )
  )

const attribute = (span: OtlpSpan, key: string) => {
  const found = span.attributes.find((a) => a.key === key)
  return found === undefined ? undefined : Object.values(found.value)[0]
}

describe("OTLP/HTTP export", () => {
  it.scopedLive("exports the server and client spans with the right parent links and resource", () =>
    Effect.gen(function* () {
      const otlp = yield* receiver
      const dir = yield* Effect.acquireRelease(
        Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "clawtool-trace-audit-"))),
        (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
      )
      const audit = Path.join(dir, "audit.jsonl")
      const traced = yield* Effect.scoped(
        Effect.gen(function* () {
          // The endpoint comes from config.toml here; the env variable is covered by the failure test.
          const { client } = yield* serve({
            config: `[observability]\notlp_endpoint = "${otlp.url}"\n\n[audit]\npath = ${JSON.stringify(audit)}`
          })
          const ok = yield* call(client, "stub__meta", { traceparent: callerParent })
          const failed = yield* call(client, "stub__echo", { traceparent: callerParent })
          const untraced = yield* call(client, "stub__meta")
          return { ok, failed, untraced }
        })
      )
      // The scope closed stdin: clawtool flushes what is left before it exits.
      const serverSpanId = parts(traced.ok.meta?.traceparent).span
      const clientSpanId = parts(traced.ok.childMeta.traceparent).span
      yield* eventually(
        () => spansOf(otlp.requests).filter((span) => span.name.startsWith("tools/call ")).length >= 6,
        "six tools/call spans"
      )
      assert.isTrue(otlp.requests.every((request) => request.path === "/v1/traces"))
      const resource = Object.fromEntries(
        otlp.requests[0]!.body.resourceSpans[0].resource.attributes.map((a: any) => [a.key, a.value.stringValue])
      )
      assert.deepInclude(resource, { "service.name": "clawtool", "service.version": Version.version })

      const spans = spansOf(otlp.requests)
      const byId = (id: string) => spans.find((span) => span.spanId === id)
      const server = byId(serverSpanId)!
      const client = byId(clientSpanId)!
      assert.deepInclude(server, { name: "tools/call stub__meta", kind: 2, traceId, parentSpanId: callerSpan })
      assert.deepInclude(client, { name: "tools/call meta", kind: 3, traceId, parentSpanId: serverSpanId })
      assert.strictEqual(attribute(server, "mcp.method.name"), "tools/call")
      assert.strictEqual(attribute(server, "gen_ai.tool.name"), "stub__meta")
      assert.strictEqual(attribute(server, "clawtool.instance"), "stub")
      assert.strictEqual(attribute(server, "clawtool.tool.original_name"), "meta")
      assert.strictEqual(server.status.code, 1)

      const failedServer = byId(parts(traced.failed.meta?.traceparent).span)!
      assert.deepInclude(failedServer, { name: "tools/call stub__echo", parentSpanId: callerSpan })
      assert.strictEqual(failedServer.status.code, 2)
      assert.strictEqual(attribute(failedServer, "error.type"), "tool_error")
      assert.isUndefined(attribute(failedServer, "status.interrupted"))

      // Without a caller context the server span starts a trace of its own.
      const roots = spans.filter((span) => span.name === "tools/call stub__meta" && span.parentSpanId === undefined)
      assert.strictEqual(roots.length, 1)
      assert.notStrictEqual(roots[0]!.traceId, traceId)
      assert.isUndefined(traced.untraced.meta)
      // The audit line of that call names the trace clawtool's own span started (read from the current span).
      const lines = Fs.readFileSync(audit, "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line))
      assert.deepStrictEqual(
        lines.map((line) => line.trace_id),
        [traceId, traceId, roots[0]!.traceId]
      )
    })
  )

  it.scopedLive("an unreachable endpoint: calls still work, one warning on stderr, clawtool still exits", () =>
    Effect.gen(function* () {
      // A port that was just free: connections are refused.
      const dead = yield* receiver.pipe(Effect.scoped)
      const { client, transport, stderr } = yield* serve({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: dead.url } })
      const warning = "span export to"
      const first = yield* call(client, "stub__meta", { traceparent: callerParent })
      assert.strictEqual(parts(first.meta?.traceparent).trace, traceId)
      yield* eventually(() => stderr().includes(warning), "the export warning")
      const second = yield* call(client, "stub__meta", { traceparent: callerParent })
      assert.strictEqual(parts(second.childMeta.traceparent).trace, traceId)
      const pid = transport.pid!
      yield* Effect.promise(() => client.close())
      yield* eventually(() => !isAlive(pid), "clawtool to exit")
      assert.strictEqual(stderr().split(warning).length - 1, 1)
    })
  )
})

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
