import { assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, runCliAsync, writeConfig } from "../lib/cli.js"
import { startDaemon } from "../lib/daemon.js"
import { root, tempDir } from "../lib/sources.js"

beforeAll(ensureBuilt, 120_000)

const browser = path.join(root, "test/fixtures/browser.mjs")
const ui = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.promise(() => runCliAsync(["ui", ...args], env))

describe("clawtool ui (built CLI)", () => {
  it.scopedLive(
    "opens the running daemon's /ui in $BROWSER, prints it without a display, and says when none runs",
    () =>
      Effect.gen(function* () {
        const config = writeConfig(`[http]\ntoken = "ui-token"\n`)
        const daemon = yield* startDaemon(config)
        const origin = `http://127.0.0.1:${daemon.port}`
        const log = path.join(tempDir(), "browser.log")

        const opened = yield* ui([origin, "--config", config], { BROWSER: browser, BROWSER_LOG: log })
        assert.strictEqual(opened.code, 0, opened.stderr)
        assert.strictEqual(opened.stdout, `${origin}/ui\n`)
        yield* Effect.gen(function* () {
          while (!fs.existsSync(log)) yield* Effect.sleep("50 millis")
        }).pipe(Effect.timeout("10 seconds"))
        // The browser got the page's URL, never the token.
        assert.strictEqual(fs.readFileSync(log, "utf8"), `${origin}/ui\n`)

        // No display: the URL only (BROWSER set but empty means none).
        const printed = yield* ui([origin, "--config", config], { BROWSER: "", DISPLAY: "", WAYLAND_DISPLAY: "" })
        assert.strictEqual(printed.code, 0, printed.stderr)
        assert.strictEqual(printed.stdout, `${origin}/ui\n`)

        // From the config's [http] listen when no URL is given.
        const listening = writeConfig(`[http]\nlisten = "0.0.0.0:${daemon.port}"\n`, "listen.toml")
        const fromConfig = yield* ui(["--config", listening], { BROWSER: "" })
        assert.strictEqual(fromConfig.stdout, `${origin}/ui\n`)

        const closed = yield* ui(["http://127.0.0.1:9", "--config", config], { BROWSER: "" })
        assert.strictEqual(closed.code, 1)
        assert.include(closed.stderr, "no clawtool daemon answers at http://127.0.0.1:9")
        const bad = yield* ui(["ftp://example", "--config", config], { BROWSER: "" })
        assert.strictEqual(bad.code, 2)
        assert.include(bad.stderr, `ui expects an http:// or https:// URL, got "ftp://example"`)
      })
  )
})
