import { assert, describe, it } from "@effect/vitest"
import { Duration, Either } from "effect"
import type { ConfigError } from "../../src/domain/Errors.js"
import { parseConfig } from "../../src/services/Config.js"

const source = (lines: string) => `[sources.srv]\ncommand = ["node", "server.js"]\n${lines}\n`

const parsed = (lines: string) => Either.getOrThrow(parseConfig(source(lines), "/x/config.toml")).sources["srv"]!

const failure = (lines: string): ConfigError => {
  const result = parseConfig(source(lines), "/x/config.toml")
  if (Either.isRight(result)) return assert.fail(`expected a ConfigError, got ${JSON.stringify(result.right)}`)
  return result.left
}

describe("supervision settings", () => {
  it("defaults: on-failure, 250ms doubling to 5s, 10 restarts per 60s window, crash-loop retry 60s, no call timeout", () => {
    const srv = parsed("")
    assert.strictEqual(srv.restart, "on-failure")
    assert.strictEqual(Duration.toMillis(srv.restart_backoff), 250)
    assert.strictEqual(Duration.toMillis(srv.restart_backoff_max), 5_000)
    assert.strictEqual(Duration.toMillis(srv.restart_window), 60_000)
    assert.strictEqual(srv.max_restarts, 10)
    assert.strictEqual(Duration.toMillis(srv.crash_loop_retry), 60_000)
    assert.isUndefined(srv.call_timeout)
  })

  it("reads every key", () => {
    const srv = parsed(
      [
        `restart = "never"`,
        `restart_backoff = "1s"`,
        `restart_backoff_max = "2m"`,
        `restart_window = "5m"`,
        `max_restarts = 0`,
        `crash_loop_retry = "1h"`,
        `call_timeout = "30s"`
      ].join("\n")
    )
    assert.strictEqual(srv.restart, "never")
    assert.strictEqual(Duration.toMillis(srv.restart_backoff), 1_000)
    assert.strictEqual(Duration.toMillis(srv.restart_backoff_max), 120_000)
    assert.strictEqual(Duration.toMillis(srv.restart_window), 300_000)
    // With restarts off, max_restarts = 0 says the same thing and is accepted.
    assert.strictEqual(srv.max_restarts, 0)
    assert.strictEqual(Duration.toMillis(srv.crash_loop_retry), 3_600_000)
    assert.strictEqual(Duration.toMillis(srv.call_timeout!), 30_000)
  })

  const rejected: ReadonlyArray<readonly [string, string, RegExp]> = [
    [`restart = "always"`, "restart", /restart is "on-failure" or "never", got "always"/],
    [`restart = true`, "restart", /restart is "on-failure" or "never", got true/],
    [`restart_backoff = "-1s"`, "restart_backoff", /expected a duration like "500ms".*got "-1s"/],
    [`restart_backoff_max = "soon"`, "restart_backoff_max", /expected a duration like "500ms".*got "soon"/],
    [`restart_window = "0s"`, "restart_window", /must be longer than 0/],
    [`crash_loop_retry = 60`, "crash_loop_retry", /expected a duration like "500ms".*got 60/],
    [`call_timeout = "10 seconds"`, "call_timeout", /expected a duration/],
    [`call_timeout = "0ms"`, "call_timeout", /must be longer than 0/],
    [`max_restarts = 0`, "max_restarts", /max_restarts = 0 would never restart; use restart = "never"/],
    [`restart = "on-failure"\nmax_restarts = 0`, "max_restarts", /would never restart/],
    [`max_restarts = -3`, "max_restarts", /must not be negative/],
    [`max_restarts = 2.5`, "max_restarts", /whole number/],
    [`restart_backoff = "10s"`, "restart_backoff_max", /must not be shorter than restart_backoff/]
  ]
  for (const [lines, key, message] of rejected) {
    it(`rejects ${lines.replace(/\n/g, "; ")}, naming ${key}`, () => {
      const error = failure(lines)
      assert.strictEqual(error.reason, "Invalid")
      assert.strictEqual(error.keyPath, `sources.srv.${key}`)
      assert.match(error.detail, message)
      assert.match(error.message, new RegExp(`^config /x/config\\.toml:\\d+ at sources\\.srv\\.${key}: `))
    })
  }

  it("points at the line of the bad key", () => {
    const error = failure(`enabled = true\nmax_restarts = -1`)
    assert.strictEqual(error.line, 4)
  })
})
