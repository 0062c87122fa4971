import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Scope } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { Sources } from "../src/services/Sources.js"
import {
  eventually,
  everything,
  isAlive,
  readPid,
  rowOf,
  sourcesLayer,
  stubCommand,
  tempDir,
  waitFor
} from "./lib/sources.js"

const settledHealth = Effect.gen(function* () {
  const sources = yield* Sources
  yield* sources.awaitSettled
  return yield* sources.health
})

describe("Sources (real children)", () => {
  it.scopedLive("starts slow children in parallel: every spawn happens before the first one is ready", () =>
    Effect.gen(function* () {
      const rows = yield* settledHealth
      assert.deepStrictEqual(
        rows.map((row) => [row.name, row.status]),
        [
          ["slow-a", "running"],
          ["slow-b", "running"],
          ["slow-c", "running"]
        ]
      )
      const spawned = rows.map((row) => Date.parse(row.startedAt!))
      const ready = rows.map((row) => Date.parse(row.startedAt!) + row.startupMs!)
      // Overlap, not speed: the last spawn precedes the first readiness, so no start waited for another.
      assert.isTrue(Math.max(...spawned) < Math.min(...ready), JSON.stringify({ spawned, ready }))
    }).pipe(
      Effect.provide(
        sourcesLayer(`
          [sources.slow-a]
          command = ${stubCommand("--slow-start", "1500")}
          [sources.slow-b]
          command = ${stubCommand("--slow-start", "1500")}
          [sources.slow-c]
          command = ${stubCommand("--slow-start", "1500")}
        `)
      )
    )
  )

  it.scopedLive("isolates failures: a hung child times out alone, a bad command and an exiting child are down", () =>
    Effect.gen(function* () {
      const rows = yield* settledHealth
      const byName = Object.fromEntries(rows.map((row) => [row.name, row]))
      assert.strictEqual(byName["ok"]!.status, "running")
      assert.isTrue(byName["ok"]!.toolCount >= 6)
      assert.strictEqual(byName["hung"]!.status, "down")
      assert.match(byName["hung"]!.reason, /^Timeout: /)
      assert.strictEqual(byName["bad-command"]!.status, "down")
      assert.match(byName["bad-command"]!.reason, /^Spawn: cannot start "\/no\/such\/binary"/)
      assert.strictEqual(byName["exits"]!.status, "down")
      assert.match(byName["exits"]!.reason, /^Exited: exited with code 7/)
      assert.include(byName["exits"]!.stderrTail.join("\n"), "stub: exiting 7")
      assert.strictEqual(byName["auth"]!.status, "unauthenticated")
      assert.match(byName["auth"]!.reason, /error 401/)
      // The healthy instance still serves while the others failed.
      const sources = yield* Sources
      const result = yield* sources.callTool("ok", { name: "echo", arguments: { text: "still here" } })
      assert.deepStrictEqual(result.content, [{ type: "text", text: "echo:still here" }])
    }).pipe(
      Effect.provide(
        sourcesLayer(`
          [sources.ok]
          command = ${stubCommand()}
          [sources.hung]
          command = ${stubCommand("--hang-initialize")}
          startup_timeout = "1s"
          restart = "never"
          [sources.bad-command]
          command = ["/no/such/binary"]
          restart = "never"
          [sources.exits]
          command = ${stubCommand("--exit-at-once", "7")}
          restart = "never"
          [sources.auth]
          command = ${stubCommand("--auth-error")}
        `)
      )
    )
  )

  it.scopedLive("missing secrets: unauthenticated, every missing variable named once and sorted, nothing spawned", () =>
    Effect.gen(function* () {
      yield* Effect.flatMap(Sources, (sources) => sources.awaitSettled)
      const row = yield* rowOf("needs-secrets")
      assert.strictEqual(row.status, "unauthenticated")
      assert.strictEqual(row.reason, "MissingSecrets: missing secrets: A_TOKEN, Z_TOKEN")
      assert.isNull(row.pid)
      assert.isNull(row.startedAt)
    }).pipe(
      Effect.provide(
        sourcesLayer(
          `
          [sources.needs-secrets]
          command = ${stubCommand("--name", "${Z_TOKEN}")}
          env = { ONE = "\${A_TOKEN}", TWO = "\${Z_TOKEN}-\${A_TOKEN}", THREE = "\${PRESENT}" }
        `,
          { PRESENT: "yes" }
        )
      )
    )
  )

  it.scopedLive("child environment is default-deny: safe set + env_passthrough + resolved env only", () =>
    Effect.gen(function* () {
      const sources = yield* Sources
      yield* sources.awaitSettled
      const result = yield* sources.callTool("env", { name: "env_names" })
      const names = (result.structuredContent as { names: Array<string> }).names
      assert.include(names, "PATH")
      assert.include(names, "CLAWTOOL_TEST_PASSED")
      assert.include(names, "FROM_CONFIG")
      assert.notInclude(names, "CLAWTOOL_TEST_LEAK")
      // Nothing outside the documented set reaches the child.
      const allowed =
        /^(PATH|HOME|USER|LOGNAME|SHELL|TERM|LANG|LANGUAGE|TZ|TMPDIR|TEMP|TMP|LC_.*|.*_PROXY|.*_proxy|SSL_CERT_FILE|SSL_CERT_DIR|NODE_EXTRA_CA_CERTS|REQUESTS_CA_BUNDLE|CURL_CA_BUNDLE|CLAWTOOL_TEST_PASSED|FROM_CONFIG)$/
      assert.deepStrictEqual(
        names.filter((name) => !allowed.test(name)),
        []
      )
    }).pipe(
      Effect.provide(
        sourcesLayer(`
          [sources.env]
          command = ${stubCommand()}
          env_passthrough = ["CLAWTOOL_TEST_PASSED"]
          env = { FROM_CONFIG = "1" }
        `)
      ),
      // The parent's environment must hold both variables before the child is spawned (when the layer builds).
      (test) =>
        Effect.acquireRelease(
          Effect.sync(() => {
            process.env.CLAWTOOL_TEST_LEAK = "secret"
            process.env.CLAWTOOL_TEST_PASSED = "visible"
          }),
          () =>
            Effect.sync(() => {
              delete process.env.CLAWTOOL_TEST_LEAK
              delete process.env.CLAWTOOL_TEST_PASSED
            })
        ).pipe(Effect.zipRight(test))
    )
  )

  it.scopedLive("captures the last 100 stderr lines of each child", () =>
    Effect.gen(function* () {
      yield* Effect.flatMap(Sources, (sources) => sources.awaitSettled)
      const row = yield* rowOf("chatty")
      assert.strictEqual(row.stderrTail.length, 100)
      assert.strictEqual(row.stderrTail.at(-1), "stub stderr line 149")
      assert.strictEqual(row.stderrTail[0], "stub stderr line 50")
    }).pipe(
      Effect.provide(
        sourcesLayer(`
          [sources.chatty]
          command = ${stubCommand("--stderr-lines", "150")}
        `)
      )
    )
  )

  it.live("closing the scope reaps every process group: grandchildren and children that ignore EOF and SIGTERM", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const pidfile = (name: string) => path.join(dir, name)
      const layer = sourcesLayer(`
        [sources.wrapper]
        command = ${stubCommand("--grandchild", pidfile("wrapper"))}
        [sources.stubborn]
        command = ${stubCommand("--grandchild", pidfile("stubborn"), "--ignore-sigterm", "--ignore-stdin-eof")}
      `)
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(layer, scope)
      const rows = yield* settledHealth.pipe(Effect.provide(context))
      assert.deepStrictEqual(
        rows.map((row) => row.status),
        ["running", "running"]
      )
      const pids = ["wrapper", "stubborn"].flatMap((name) => [readPid(pidfile(name)), readPid(pidfile(`${name}.self`))])
      assert.isTrue(pids.every(isAlive))
      yield* Scope.close(scope, Exit.void)
      // Scope close waits for the bounded EOF → SIGTERM → SIGKILL sequence; nothing may be left.
      yield* eventually(() => !pids.some(isAlive), 5_000, "every child and grandchild to be gone")
      fs.rmSync(dir, { recursive: true, force: true })
    })
  )

  it.scopedLive("restart = never: a child that crashes mid-call fails the call fast (retryable) and stays down", () =>
    Effect.gen(function* () {
      const sources = yield* Sources
      yield* sources.awaitSettled
      const error = yield* Effect.flip(sources.callTool("crashy", { name: "crash" }))
      assert.strictEqual(error.reason, "Transport")
      assert.isTrue(error.retryable)
      assert.match(error.detail, /exited with code 3/)
      const row = yield* waitFor("crashy", (row) => row.status === "down", "down")
      assert.match(row.reason, /^Exited: exited with code 3/)
      const again = yield* Effect.flip(sources.callTool("crashy", { name: "echo", arguments: { text: "x" } }))
      assert.strictEqual(again.reason, "NotRunning")
    }).pipe(
      Effect.provide(
        sourcesLayer(`
          [sources.crashy]
          command = ${stubCommand("--crash-on-call")}
          restart = "never"
        `)
      )
    )
  )

  it.scopedLive("routes calls: unknown instance and unknown tool are typed errors; child results pass through", () =>
    Effect.gen(function* () {
      const sources = yield* Sources
      yield* sources.awaitSettled
      const noInstance = yield* Effect.flip(sources.callTool("nope", { name: "echo" }))
      assert.strictEqual(noInstance.reason, "NoSuchInstance")
      const noTool = yield* Effect.flip(sources.callTool("stub", { name: "nope" }))
      assert.strictEqual(noTool.reason, "NoSuchTool")
      const isError = yield* sources.callTool("stub", { name: "echo", arguments: {} })
      assert.deepStrictEqual(isError, { content: [{ type: "text", text: "missing text" }], isError: true })
      const meta = yield* sources.callTool("stub", { name: "meta", _meta: { custom: "kept" } })
      assert.deepStrictEqual((meta.structuredContent as { meta: unknown }).meta, { custom: "kept" })
    }).pipe(
      Effect.provide(
        sourcesLayer(`
          [sources.stub]
          command = ${stubCommand()}
        `)
      )
    )
  )

  it.scopedLive("serves server-everything's tools with every field the child sent", () =>
    Effect.gen(function* () {
      const sources = yield* Sources
      yield* sources.awaitSettled
      const [catalog] = yield* sources.catalog
      assert.strictEqual(catalog!.instance, "everything")
      const names = catalog!.tools.map((tool) => tool.name)
      assert.include(names, "echo")
      assert.include(names, "get-sum")
      const annotated = catalog!.tools.filter((tool) => tool.annotations !== undefined)
      assert.isAbove(annotated.length, 0)
      const row = yield* rowOf("everything")
      assert.strictEqual(row.package, "@modelcontextprotocol/server-everything")
    }).pipe(
      Effect.provide(
        sourcesLayer(`
          [sources.everything]
          command = ${JSON.stringify([process.execPath, everything, "stdio"])}
        `)
      )
    )
  )
})
