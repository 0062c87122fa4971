import { assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, writeConfig } from "../lib/cli.js"
import { callTool, httpClient, rawRequest, startDaemon } from "../lib/daemon.js"
import { pollUntil, stubCommand, tempDir } from "../lib/sources.js"

beforeAll(ensureBuilt, 120_000)

interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

/**
 * A strict reader of the Prometheus text format (0.0.4): every line is empty, a `# HELP`, a `# TYPE` (before its samples, once
 * per family) or a sample `name{label="value",…} number`; anything else throws, as does a sample of an undeclared
 * family or a counter that is not a finite, non-negative number.
 */
const parseExposition = (text: string): ReadonlyArray<Sample> => {
  assert.isTrue(text.endsWith("\n"), "the exposition ends with a newline")
  const types = new Map<string, string>()
  const samples: Array<Sample> = []
  const familyOf = (name: string) =>
    [name, name.replace(/_(bucket|sum|count|total|created)$/, "")].find((family) => types.has(family))
  for (const line of text.slice(0, -1).split("\n")) {
    if (line === "") continue // the format allows empty lines
    if (line.startsWith("# HELP ")) {
      assert.match(line, /^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .+$/, line)
      continue
    }
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line)
    if (type !== null) {
      assert.isFalse(types.has(type[1]!), `${type[1]} declared twice`)
      types.set(type[1]!, type[2]!)
      continue
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (sample === null) throw new Error(`not a Prometheus text line: ${JSON.stringify(line)}`)
    const [, name, labelText, valueText] = sample
    const family = familyOf(name!)
    if (family === undefined) throw new Error(`sample of an undeclared family: ${line}`)
    const labels: Record<string, string> = {}
    if (labelText !== undefined && labelText !== "") {
      const pair = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/y
      let at = 0
      while (at < labelText.length) {
        pair.lastIndex = at
        const match = pair.exec(labelText)
        if (match === null) throw new Error(`bad labels: ${line}`)
        labels[match[1]!] = match[2]!.replace(/\\n/g, "\n").replace(/\\"/g, '"').replace(/\\\\/g, "\\")
        at = pair.lastIndex
      }
    }
    // Go's ParseFloat, which Prometheus uses, takes Inf and NaN in any case (prom-client writes "Nan").
    const special = /^([+-]?)(inf|nan)$/i.exec(valueText!)
    const value =
      special === null ? Number(valueText) : special[2]!.toLowerCase() === "nan" ? NaN : Number(`${special[1]}Infinity`)
    if (special === null && (valueText === "" || Number.isNaN(value))) throw new Error(`bad value: ${line}`)
    if (types.get(family) === "counter") assert.isTrue(value >= 0 && Number.isFinite(value), line)
    samples.push({ name: name!, labels, value })
  }
  return samples
}

/** The value of the one sample named `name` whose labels include `labels`; undefined when there is none. */
const valueOf = (samples: ReadonlyArray<Sample>, name: string, labels: Record<string, string> = {}) => {
  const found = samples.filter(
    (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value)
  )
  assert.isAtMost(found.length, 1, `${name} ${JSON.stringify(labels)} names one sample`)
  return found[0]?.value
}

const token = "metrics-test-token"

const scrape = (port: number, headers: Record<string, string> = { authorization: `Bearer ${token}` }) =>
  Effect.map(rawRequest(port, { method: "GET", path: "/metrics", headers }), (response) => {
    assert.strictEqual(response.status, 200, response.body)
    assert.match(String(response.headers["content-type"]), /^text\/plain; version=0\.0\.4/)
    return parseExposition(response.body)
  })

describe("GET /metrics on the daemon (built CLI, prom-client)", () => {
  it.scopedLive("follows calls, sessions and restarts; labels are bounded and carry no argument", () =>
    Effect.gen(function* () {
      const starts = path.join(tempDir(), "starts")
      const config = writeConfig(`
        [http]
        token = "${token}"
        [sources.stub]
        command = ${stubCommand("--record-start", starts)}
      `)
      const daemon = yield* startDaemon(config)
      const before = yield* pollUntil(
        scrape(daemon.port),
        (samples) => valueOf(samples, "clawtool_source_up", { source: "stub" }) === 1,
        "stub up"
      )
      assert.strictEqual(valueOf(before, "clawtool_sessions", { profile: "default" }), 0)
      assert.strictEqual(valueOf(before, "clawtool_source_restarts_total", { source: "stub" }), 0)
      assert.strictEqual(valueOf(before, "clawtool_calls_in_flight"), 0)
      assert.strictEqual(valueOf(before, "clawtool_list_wait_timeouts_total"), 0)
      assert.isAbove(valueOf(before, "clawtool_catalog_tools", { profile: "default" })!, 0)
      // Node's own process metrics are there too.
      assert.isDefined(valueOf(before, "process_cpu_user_seconds_total"))
      assert.isDefined(valueOf(before, "nodejs_eventloop_lag_seconds"))

      const { client } = yield* httpClient(daemon.url, { token })
      yield* httpClient(daemon.url, { token })
      const secret = "do-not-label-me-4711"
      for (let i = 0; i < 3; i++) yield* callTool(client, "stub__echo", { text: secret })
      yield* callTool(client, "no_such_tool", {})
      const after = yield* scrape(daemon.port)
      assert.strictEqual(valueOf(after, "clawtool_sessions", { profile: "default" }), 2)
      assert.strictEqual(
        valueOf(after, "clawtool_tool_calls_total", { source: "stub", tool: "echo", outcome: "ok" }),
        3
      )
      // A name nothing routes to gets no label of its own.
      assert.strictEqual(
        valueOf(after, "clawtool_tool_calls_total", { source: "unknown", tool: "other", outcome: "error" }),
        1
      )
      assert.strictEqual(valueOf(after, "clawtool_tool_call_duration_seconds_count", { source: "stub" }), 3)
      assert.strictEqual(
        valueOf(after, "clawtool_tool_call_duration_seconds_bucket", { source: "stub", le: "+Inf" }),
        3
      )
      assert.strictEqual(valueOf(after, "clawtool_calls_in_flight"), 0)
      const labelValues = after.flatMap((sample) => Object.values(sample.labels))
      assert.notInclude(labelValues, "no_such_tool")
      assert.isFalse(
        after.some((sample) => JSON.stringify(sample).includes(secret)),
        "no argument in any label"
      )

      // A child killed: restarted, counted, up again.
      const first = Number(fs.readFileSync(starts, "utf8").split("\n")[0])
      process.kill(first, "SIGKILL")
      const restarted = yield* pollUntil(
        scrape(daemon.port),
        (samples) =>
          valueOf(samples, "clawtool_source_restarts_total", { source: "stub" }) === 1 &&
          valueOf(samples, "clawtool_source_up", { source: "stub" }) === 1,
        "stub restarted",
        20_000
      )
      assert.strictEqual(valueOf(restarted, "clawtool_source_restarts_total", { source: "stub" }), 1)
    })
  )

  it.scopedLive("needs the token unless [http] metrics_public = true; Host is checked when there is no token", () =>
    Effect.gen(function* () {
      const guarded = yield* startDaemon(writeConfig(`[http]\ntoken = "${token}"\n`))
      const none = yield* rawRequest(guarded.port, { method: "GET", path: "/metrics", headers: {} })
      assert.strictEqual(none.status, 401)
      assert.strictEqual(none.headers["www-authenticate"], `Bearer realm="clawtool"`)
      const wrong = yield* rawRequest(guarded.port, {
        method: "GET",
        path: "/metrics",
        headers: { authorization: "Bearer nope" }
      })
      assert.strictEqual(wrong.status, 401)
      assert.notInclude(wrong.body, "clawtool_")
      // With the token, a scraper naming the pod by its address is served.
      yield* scrape(guarded.port, { authorization: `Bearer ${token}`, host: "10.1.2.3:8765" })
      const post = yield* rawRequest(guarded.port, { method: "POST", path: "/metrics", body: "" })
      assert.strictEqual(post.status, 405)

      const open = yield* startDaemon(writeConfig(`[http]\ntoken = "${token}"\nmetrics_public = true\n`))
      yield* scrape(open.port, {})

      const loopback = yield* startDaemon(writeConfig(`[http]\n`))
      yield* scrape(loopback.port, {})
      const rebound = yield* rawRequest(loopback.port, {
        method: "GET",
        path: "/metrics",
        headers: { host: "evil.example:80" }
      })
      assert.strictEqual(rebound.status, 403)
    })
  )
})
