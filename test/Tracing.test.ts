import { assert, describe, it } from "@effect/vitest"
import { assertNone, assertSome } from "@effect/vitest/utils"
import { Effect, Either, Exit, Layer, Option, Tracer } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { ClawtoolConfig } from "../src/domain/Config.js"
import { CallError } from "../src/domain/Errors.js"
import { errorResult, type CallToolResult, type JsonObject } from "../src/domain/Mcp.js"
import { otlpHeaders, TelemetryLive, tracesUrl } from "../src/layers/Telemetry.js"
import { fixTraceData } from "../src/layers/Telemetry/Otlp.js"
import { Config, parseConfig, ProcessEnv } from "../src/services/Config.js"
import {
  extractTraceContext,
  formatTraceparent,
  injectTraceContext,
  parseTraceparent,
  parseTracestate,
  SpanExport,
  type TraceContext,
  Tracing
} from "../src/services/Tracing.js"
import { eventually } from "./lib/sources.js"

const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
const spanId = "00f067aa0ba902b7"
const valid = `00-${traceId}-${spanId}-01`

describe("parseTraceparent", () => {
  const cases: ReadonlyArray<[string, string, boolean]> = [
    ["valid, sampled", valid, true],
    ["valid, not sampled", `00-${traceId}-${spanId}-00`, true],
    ["unknown flag bits are ignored, not rejected", `00-${traceId}-${spanId}-03`, true],
    ["uppercase trace id", `00-${traceId.toUpperCase()}-${spanId}-01`, false],
    ["uppercase span id", `00-${traceId}-00F067AA0BA902B7-01`, false],
    ["uppercase flags", `00-${traceId}-${spanId}-0A`, false],
    ["uppercase version", `0A-${traceId}-${spanId}-01`, false],
    ["all-zero trace id", `00-${"0".repeat(32)}-${spanId}-01`, false],
    ["all-zero span id", `00-${traceId}-${"0".repeat(16)}-01`, false],
    ["version ff", `ff-${traceId}-${spanId}-01`, false],
    ["version 00 with an extra part", `${valid}-what`, false],
    ["version 00 with a trailing dash", `${valid}-`, false],
    ["future version, no extra part", `01-${traceId}-${spanId}-01`, true],
    ["future version with extra parts", `cc-${traceId}-${spanId}-01-what-the-future-holds`, true],
    ["future version, extra text without a dash", `cc-${traceId}-${spanId}-01what`, false],
    ["short trace id", `00-${traceId.slice(1)}-${spanId}-01`, false],
    ["long span id", `00-${traceId}-${spanId}0-01`, false],
    ["one-digit flags", `00-${traceId}-${spanId}-1`, false],
    ["not hex", `00-${traceId.replace("4", "g")}-${spanId}-01`, false],
    ["wrong separators", `00_${traceId}_${spanId}_01`, false],
    ["leading space", ` ${valid}`, false],
    ["empty", "", false]
  ]
  for (const [name, input, ok] of cases) {
    it(`${ok ? "accepts" : "rejects"}: ${name}`, () => {
      assert.strictEqual(Option.isSome(parseTraceparent(input)), ok, input)
    })
  }

  it("reads the ids and the flags byte", () => {
    assertSome(parseTraceparent(`00-${traceId}-${spanId}-03`), { version: "00", traceId, spanId, flags: 3 })
  })
})

describe("parseTracestate", () => {
  const cases: ReadonlyArray<[string, string, string | undefined]> = [
    ["one member", "vendor=clawtool", "vendor=clawtool"],
    ["two members", "vendor=clawtool,key=value", "vendor=clawtool,key=value"],
    ["spaces, tabs and empty members are dropped", " vendor=clawtool ,\t,key=value\t", "vendor=clawtool,key=value"],
    ["multi-tenant key", "tenant1@vendor=x", "tenant1@vendor=x"],
    ["key with allowed symbols", "a_b-c*d/e=1", "a_b-c*d/e=1"],
    ["value with spaces inside", "k=a b", "k=a b"],
    ["uppercase key", "Vendor=x", undefined],
    ["key starting with a digit (not multi-tenant)", "1vendor=x", undefined],
    ["missing =", "vendor", undefined],
    ["empty key", "=x", undefined],
    ["empty value", "k=", undefined],
    // W3C: trailing spaces are optional whitespace, not part of the value; leading ones are part of it
    ["a trailing space is whitespace around the member", "k=a ", "k=a"],
    ["value with leading spaces", "k=  a", "k=  a"],
    ["value with a tab", "k=a\tb", undefined],
    ["value with =", "k=a=b", undefined],
    ["duplicate keys", "k=1,k=2", undefined],
    ["33 members", Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(","), undefined],
    [
      "32 members",
      Array.from({ length: 32 }, (_, i) => `k${i}=v`).join(","),
      Array.from({ length: 32 }, (_, i) => `k${i}=v`).join(",")
    ],
    ["only commas", ",,", undefined],
    ["empty", "", undefined]
  ]
  for (const [name, input, expected] of cases) {
    it(`${expected === undefined ? "drops" : "keeps"}: ${name}`, () => {
      if (expected === undefined) assertNone(parseTracestate(input))
      else assertSome(parseTracestate(input), expected)
    })
  }
})

describe("extractTraceContext", () => {
  const envParent = `00-${"a".repeat(32)}-${"b".repeat(16)}-00`
  const env = { TRACEPARENT: envParent, TRACESTATE: "from=env" }

  it("reads _meta.traceparent and _meta.tracestate", () => {
    assertSome(extractTraceContext({ traceparent: valid, tracestate: "vendor=clawtool,key=value" }, {}), {
      traceId,
      spanId,
      sampled: true,
      traceState: "vendor=clawtool,key=value",
      source: "meta" as const
    })
  })

  it("drops an invalid tracestate and keeps the traceparent", () => {
    const context = extractTraceContext({ traceparent: valid, tracestate: "Bad=1" }, {})
    assertSome(
      Option.map(context, (c) => [c.traceId, c.traceState]),
      [traceId, undefined]
    )
  })

  it("ignores a non-string tracestate", () => {
    const context = extractTraceContext({ traceparent: valid, tracestate: 42 }, {})
    assertSome(
      Option.map(context, (c) => c.traceState),
      undefined
    )
  })

  it("nothing anywhere: None", () => {
    assert.isTrue(Option.isNone(extractTraceContext(undefined, {})))
    assert.isTrue(Option.isNone(extractTraceContext({ progressToken: 1 }, {})))
  })

  it("an invalid _meta.traceparent is None and does not fall back to the environment", () => {
    assert.isTrue(Option.isNone(extractTraceContext({ traceparent: valid.toUpperCase() }, env)))
    assert.isTrue(Option.isNone(extractTraceContext({ traceparent: `ff-${traceId}-${spanId}-01` }, env)))
  })

  it("falls back to TRACEPARENT/TRACESTATE when _meta has no traceparent", () => {
    assertSome(extractTraceContext({ progressToken: 7 }, env), {
      traceId: "a".repeat(32),
      spanId: "b".repeat(16),
      sampled: false,
      traceState: "from=env",
      source: "env" as const
    })
    assertSome(
      Option.map(extractTraceContext(undefined, env), (c) => c.source),
      "env"
    )
  })

  it("a non-string or empty _meta.traceparent counts as absent (as in the Go original)", () => {
    assertSome(
      Option.map(extractTraceContext({ traceparent: 42 }, env), (c) => c.source),
      "env"
    )
    assertSome(
      Option.map(extractTraceContext({ traceparent: "" }, env), (c) => c.source),
      "env"
    )
  })

  it("_meta.traceparent wins over the environment, with its own tracestate (never the env's)", () => {
    assertSome(
      Option.map(extractTraceContext({ traceparent: valid }, env), (c) => [c.traceId, c.traceState, c.source]),
      [traceId, undefined, "meta"]
    )
  })

  it("the env tracestate goes with the env traceparent, not a stray _meta.tracestate", () => {
    assertSome(
      Option.map(extractTraceContext({ tracestate: "from=meta" }, env), (c) => c.traceState),
      "from=env"
    )
  })

  it("an invalid TRACEPARENT is None; an invalid TRACESTATE is dropped", () => {
    assert.isTrue(Option.isNone(extractTraceContext(undefined, { TRACEPARENT: "garbage", TRACESTATE: "a=b" })))
    assertSome(
      Option.map(extractTraceContext(undefined, { TRACEPARENT: valid, TRACESTATE: "A=b" }), (c) => c.traceState),
      undefined
    )
  })
})

describe("injectTraceContext", () => {
  const context: TraceContext = { traceId, spanId, sampled: true, traceState: "vendor=clawtool", source: "meta" }
  const span = { traceId, spanId: "1111111111111111" }

  it("sets traceparent to the span, echoes tracestate and keeps other keys", () => {
    assert.deepStrictEqual(injectTraceContext({ "clawtool/usage_hint": "x", traceparent: valid }, span, context), {
      "clawtool/usage_hint": "x",
      traceparent: `00-${traceId}-1111111111111111-01`,
      tracestate: "vendor=clawtool"
    })
  })

  it("drops a stale tracestate when the caller sent none; creates the envelope when missing", () => {
    assert.deepStrictEqual(
      injectTraceContext({ tracestate: "child=1" }, span, { ...context, traceState: undefined, sampled: false }),
      {
        traceparent: `00-${traceId}-1111111111111111-00`
      }
    )
    assert.deepStrictEqual(injectTraceContext(undefined, span, context), {
      traceparent: `00-${traceId}-1111111111111111-01`,
      tracestate: "vendor=clawtool"
    })
  })

  it("formatTraceparent always writes version 00 and only the sampled bit", () => {
    assert.strictEqual(formatTraceparent({ traceId, spanId }, true), valid)
    assert.strictEqual(formatTraceparent({ traceId, spanId }, false), `00-${traceId}-${spanId}-00`)
  })
})

// === The service: spans, response and forwarded _meta, against a fake proxied call ===

interface Recorded {
  readonly name: string
  readonly kind: Tracer.SpanKind
  readonly span: Tracer.Span
}

/** Effect's native tracer, recording every span it makes. */
const recordingTracer = Effect.map(Effect.tracer, (inner) => {
  const spans: Array<Recorded> = []
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind, options) => {
      const span = inner.span(name, parent, context, links, startTime, kind, options)
      spans.push({ name, kind, span })
      return span
    },
    context: (f, fiber) => inner.context(f, fiber)
  })
  return { spans, tracer }
})

const TracingWithEnv = (env: Record<string, string>, exporting = false) =>
  Tracing.Default.pipe(
    Layer.provide(Layer.succeed(ProcessEnv, env)),
    Layer.provide(Layer.succeed(SpanExport, exporting))
  )

const idOf = (traceparent: unknown) => (typeof traceparent === "string" ? traceparent.split("-") : [])

const ok: CallToolResult = { content: [{ type: "text", text: "done" }], _meta: { "clawtool/usage_hint": "kept" } }

/** One traced call; `sent` is the `_meta` the fake child received. */
const traced = (options: {
  readonly meta: JsonObject | undefined
  readonly result?: Effect.Effect<CallToolResult, CallError>
  readonly env?: Record<string, string>
  /** As with an OTLP endpoint configured (TelemetryLive). */
  readonly exporting?: boolean
  readonly wire?: string
  readonly route?: Option.Option<{ readonly instance: string; readonly tool: string }>
}) =>
  Effect.gen(function* () {
    const { spans, tracer } = yield* recordingTracer
    const tracing = yield* Tracing
    let sent: JsonObject | undefined = { unset: true }
    const result = yield* tracing
      .toolCall({
        wire: options.wire ?? "stub__meta",
        route: options.route ?? Option.some({ instance: "stub", tool: "meta" }),
        requestId: 7,
        context: tracing.extract(options.meta),
        meta: options.meta,
        call: (meta) => {
          sent = meta
          return options.result ?? Effect.succeed(ok)
        },
        recover: (error) => errorResult(error.detail)
      })
      .pipe(Effect.withTracer(tracer))
    return { result, sent, spans }
  }).pipe(Effect.provide(TracingWithEnv(options.env ?? {}, options.exporting)))

describe("Tracing.toolCall", () => {
  it.effect("parents a server span on the caller, a client span on it, and says so in both _meta", () =>
    Effect.gen(function* () {
      const { result, sent, spans } = yield* traced({
        meta: { traceparent: valid, tracestate: "vendor=clawtool", other: 1 }
      })
      const server = spans.find((s) => s.kind === "server")!
      const client = spans.find((s) => s.kind === "client")!
      assert.strictEqual(server.name, "tools/call stub__meta")
      assert.strictEqual(client.name, "tools/call meta")
      assertSome(
        Option.map(server.span.parent, (p) => [p.traceId, p.spanId]),
        [traceId, spanId]
      )
      assertSome(
        Option.map(client.span.parent, (p) => p.spanId),
        server.span.spanId
      )
      assert.strictEqual(server.span.traceId, traceId)
      assert.strictEqual(client.span.traceId, traceId)

      assert.deepStrictEqual(result._meta, {
        "clawtool/usage_hint": "kept",
        traceparent: `00-${traceId}-${server.span.spanId}-01`,
        tracestate: "vendor=clawtool"
      })
      assert.deepStrictEqual(sent, {
        other: 1,
        traceparent: `00-${traceId}-${client.span.spanId}-01`,
        tracestate: "vendor=clawtool"
      })
      assert.strictEqual(new Set([spanId, server.span.spanId, client.span.spanId]).size, 3)

      const attributes = Object.fromEntries(server.span.attributes)
      assert.deepInclude(attributes, {
        "mcp.method.name": "tools/call",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "stub__meta",
        "jsonrpc.request.id": "7",
        "clawtool.instance": "stub",
        "clawtool.tool.original_name": "meta"
      })
      assert.deepInclude(Object.fromEntries(client.span.attributes), {
        "gen_ai.tool.name": "meta",
        "clawtool.instance": "stub"
      })
    })
  )

  it.effect("the instance and tool attributes come from the route, not from splitting the wire name", () =>
    Effect.gen(function* () {
      // prefix = "gh" for the instance github: the wire name does not carry the instance's name.
      const prefixed = yield* traced({
        meta: { traceparent: valid },
        wire: "gh__create_issue",
        route: Option.some({ instance: "github", tool: "create_issue" })
      })
      const server = Object.fromEntries(prefixed.spans.find((s) => s.kind === "server")!.span.attributes)
      const client = prefixed.spans.find((s) => s.kind === "client")!
      assert.deepInclude(server, {
        "gen_ai.tool.name": "gh__create_issue",
        "clawtool.instance": "github",
        "clawtool.tool.original_name": "create_issue"
      })
      assert.strictEqual(client.name, "tools/call create_issue")
      // No route (a core tool, an unknown name): no instance attribute, the client span is named by the wire name.
      const own = yield* traced({ meta: { traceparent: valid }, wire: "a__b", route: Option.none() })
      const ownServer = Object.fromEntries(own.spans.find((s) => s.kind === "server")!.span.attributes)
      assert.notProperty(ownServer, "clawtool.instance")
      assert.strictEqual(own.spans.find((s) => s.kind === "client")!.name, "tools/call a__b")
    })
  )

  it.effect("no trace context: the result and the forwarded _meta are exactly as they were", () =>
    Effect.gen(function* () {
      const withMeta = yield* traced({ meta: { other: 1 } })
      assert.deepStrictEqual(withMeta.result, ok)
      assert.deepStrictEqual(withMeta.sent, { other: 1 })
      const without = yield* traced({ meta: undefined, result: Effect.succeed({ content: [] }) })
      assert.deepStrictEqual(without.result, { content: [] })
      assert.strictEqual(without.sent, undefined)
      // Nothing to propagate and no exporter: no span at all (the per-call hot path).
      assert.deepStrictEqual(withMeta.spans, [])
      assert.deepStrictEqual(without.spans, [])
    })
  )

  it.effect("no trace context but an exporter: the spans exist, as the root of a new trace; _meta is untouched", () =>
    Effect.gen(function* () {
      const { result, sent, spans } = yield* traced({ meta: { other: 1 }, exporting: true })
      assert.deepStrictEqual(result, ok)
      assert.deepStrictEqual(sent, { other: 1 })
      const server = spans.find((s) => s.kind === "server")!
      const client = spans.find((s) => s.kind === "client")!
      assert.isTrue(Option.isNone(server.span.parent))
      assertSome(
        Option.map(client.span.parent, (p) => p.spanId),
        server.span.spanId
      )
    })
  )

  it.effect("a failed or isError call without context or exporter is still recovered to a result", () =>
    Effect.gen(function* () {
      const failure = new CallError({ tool: "stub.meta", reason: "Transport", detail: "child exited", retryable: true })
      const failed = yield* traced({ meta: undefined, result: Effect.fail(failure) })
      assert.deepStrictEqual(failed.result, errorResult("child exited"))
      const isError = yield* traced({ meta: undefined, result: Effect.succeed(errorResult("missing text")) })
      assert.deepStrictEqual(isError.result, errorResult("missing text"))
    })
  )

  it.effect("an invalid traceparent is passed on untouched and adds nothing, even with TRACEPARENT set", () =>
    Effect.gen(function* () {
      const bad = valid.toUpperCase()
      const { result, sent } = yield* traced({ meta: { traceparent: bad }, env: { TRACEPARENT: valid } })
      assert.deepStrictEqual(result, ok)
      assert.deepStrictEqual(sent, { traceparent: bad })
    })
  )

  it.effect("TRACEPARENT applies when the request has none; the child gets an envelope it did not have", () =>
    Effect.gen(function* () {
      const { result, sent, spans } = yield* traced({ meta: undefined, env: { TRACEPARENT: valid, TRACESTATE: "e=1" } })
      const server = spans.find((s) => s.kind === "server")!
      const client = spans.find((s) => s.kind === "client")!
      assertSome(
        Option.map(server.span.parent, (p) => p.spanId),
        spanId
      )
      assert.strictEqual(result._meta?.traceparent, `00-${traceId}-${server.span.spanId}-01`)
      assert.strictEqual(result._meta?.tracestate, "e=1")
      assert.deepStrictEqual(sent, { traceparent: `00-${traceId}-${client.span.spanId}-01`, tracestate: "e=1" })
    })
  )

  it.effect("a failed call is recovered inside the span: the error result carries the trace context", () =>
    Effect.gen(function* () {
      const failure = new CallError({ tool: "stub.meta", reason: "Transport", detail: "child exited", retryable: true })
      const { result, spans } = yield* traced({ meta: { traceparent: valid }, result: Effect.fail(failure) })
      const server = spans.find((s) => s.kind === "server")!
      const client = spans.find((s) => s.kind === "client")!
      assert.strictEqual(result.isError, true)
      assert.strictEqual(idOf(result._meta?.traceparent)[2], server.span.spanId)
      assert.isTrue(server.span.status._tag === "Ended" && Exit.isFailure(server.span.status.exit))
      assert.isTrue(client.span.status._tag === "Ended" && Exit.isFailure(client.span.status.exit))
      assert.strictEqual(server.span.attributes.get("error.type"), "tool_error")
    })
  )

  it.effect("an isError result ends both spans in error (error.type tool_error) and is returned as is", () =>
    Effect.gen(function* () {
      const { result, spans } = yield* traced({
        meta: { traceparent: valid },
        result: Effect.succeed(errorResult("missing text"))
      })
      assert.deepStrictEqual(result.content, [{ type: "text", text: "missing text" }])
      assert.strictEqual(result.isError, true)
      for (const { span } of spans) {
        assert.isTrue(span.status._tag === "Ended" && Exit.isFailure(span.status.exit))
        assert.strictEqual(span.attributes.get("error.type"), "tool_error")
      }
    })
  )

  it.effect("an unsampled caller stays unsampled downstream", () =>
    Effect.gen(function* () {
      const { result, sent } = yield* traced({ meta: { traceparent: `00-${traceId}-${spanId}-00` } })
      assert.strictEqual(idOf(result._meta?.traceparent)[3], "00")
      assert.strictEqual(idOf(sent?.traceparent)[3], "00")
    })
  )
})

// === Export configuration ===

describe("Telemetry configuration", () => {
  it("tracesUrl: the full traces URL, then the OTLP base URL, then the config (base URLs get /v1/traces)", () => {
    const config = "http://config:4318"
    assertNone(tracesUrl({}, undefined))
    assertNone(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: " " }, undefined))
    assertSome(tracesUrl({}, config), "http://config:4318/v1/traces")
    assertSome(tracesUrl({}, "http://config:4318/"), "http://config:4318/v1/traces")
    assertSome(tracesUrl({}, "http://config:4318/v1/traces"), "http://config:4318/v1/traces")
    assertSome(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://env:4318" }, config), "http://env:4318/v1/traces")
    assertSome(
      tracesUrl(
        { OTEL_EXPORTER_OTLP_ENDPOINT: "http://env:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://t/x" },
        config
      ),
      "http://t/x"
    )
  })

  it("otlpHeaders parses key=value pairs with URL-encoded values", () => {
    assert.deepStrictEqual(otlpHeaders({ OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=a%20b, team = c ,bad,=d" }), {
      "x-api-key": "a b",
      team: "c"
    })
    assert.deepStrictEqual(otlpHeaders({}), {})
  })

  it("fixTraceData drops the false 'interrupted' labels from error spans only", () => {
    const labels = [
      { key: "error.type", value: { stringValue: "tool_error" } },
      { key: "span.label", value: { stringValue: "⚠︎ Interrupted" } },
      { key: "status.interrupted", value: { boolValue: true } }
    ]
    const data = {
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                { status: { code: 2 }, attributes: labels },
                { status: { code: 1 }, attributes: labels }
              ]
            }
          ]
        }
      ]
    }
    const fixed = fixTraceData(data) as typeof data
    const [failed, interrupted] = fixed.resourceSpans[0]!.scopeSpans[0]!.spans
    assert.deepStrictEqual(
      failed!.attributes.map((a) => a.key),
      ["error.type"]
    )
    assert.strictEqual(interrupted!.attributes.length, 3)
  })

  it.scoped("TelemetryLive says whether spans are exported (SpanExport), so Tracing can skip the rest", () =>
    Effect.gen(function* () {
      const exporting = (config: string, env: Record<string, string>) =>
        SpanExport.pipe(
          Effect.provide(
            TelemetryLive().pipe(
              Layer.provide(Config.layerTest(Either.getOrThrow(parseConfig(config, "c.toml")))),
              Layer.provide(Layer.succeed(ProcessEnv, env))
            )
          )
        )
      assert.isFalse(yield* exporting("", {}))
      assert.isTrue(yield* exporting(`[observability]\notlp_endpoint = "http://127.0.0.1:9"\n`, {}))
      assert.isTrue(yield* exporting("", { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9" }))
    })
  )

  it.live("shutdown never drops a batch whose export is in flight; it waits for the collector's answer", () =>
    Effect.gen(function* () {
      // A slow collector (answers 300 ms after a request) that counts a batch only once its answer was delivered.
      const received: Array<string> = []
      const delivered: Array<string> = []
      const server = Http.createServer((request, response) => {
        let body = ""
        request.on("data", (chunk: Buffer) => (body += chunk.toString()))
        request.on("end", () => {
          received.push(body)
          setTimeout(() => {
            if (response.destroyed) return
            response.writeHead(200, { "content-type": "application/json" }).end("{}", () => delivered.push(body))
          }, 300)
        })
      })
      yield* Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve)))
      yield* Effect.addFinalizer(() => Effect.promise(() => new Promise((resolve) => server.close(resolve))))
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      // The scope closes once the periodic export (every 50 ms) has reached the collector: it is in flight then.
      yield* Effect.void.pipe(
        Effect.withSpan("in-flight"),
        Effect.zipRight(eventually(() => received.length > 0, 10_000, "the export to reach the collector")),
        Effect.provide(
          TelemetryLive({ exportInterval: "50 millis", shutdownTimeout: "2 seconds" }).pipe(
            Layer.provide(Config.layerTest(ClawtoolConfig.empty)),
            Layer.provide(Layer.succeed(ProcessEnv, { OTEL_EXPORTER_OTLP_ENDPOINT: url }))
          )
        )
      )
      assert.strictEqual(delivered.length, 1)
      assert.include(delivered[0], '"name":"in-flight"')
    }).pipe(Effect.scoped)
  )

  it("[observability] otlp_endpoint is read from config.toml and checked", () => {
    const config = Either.getOrThrow(
      parseConfig(`[observability]\notlp_endpoint = "http://localhost:4318"\n`, "c.toml")
    )
    assert.strictEqual(config.observability.otlp_endpoint, "http://localhost:4318")
    assert.strictEqual(ClawtoolConfig.empty.observability.otlp_endpoint, undefined)
    const bad = parseConfig(`[observability]\notlp_endpoint = "localhost:4318"\n`, "c.toml")
    assert.isTrue(Either.isLeft(bad))
    if (Either.isLeft(bad)) assert.include(bad.left.message, "otlp_endpoint must be an http(s) URL")
    assert.isTrue(Either.isLeft(parseConfig(`[observability]\nendpoint = "http://x"\n`, "c.toml")))
  })
})
