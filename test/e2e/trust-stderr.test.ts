// A child's stderr never shows a known secret (issue 25, docs/decisions/029 "Redaction"): a source that prints the
// secret clawtool resolved into its env to stderr and exits. Its stderr tail and the line Health shows beside its
// reason reach `clawtool health` (table and --json: a host's own shell can run it), the SourceHealth core tool and the
// daemon's /readyz with [REDACTED:<NAME>] in place of the secret, in every form.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, runCliAsync, serveClient, writeConfig } from "../lib/cli.js"
import { callTool, httpClient, startDaemon } from "../lib/daemon.js"
import { pollUntil } from "../lib/sources.js"

ensureBuilt()

const secret = "stderr-s3cr3t-0123456789abcdef"
const forms = [secret, encodeURIComponent(`x${secret}`).slice(1)]

/** A child that says why it cannot start, with its token in the sentence (as many do), and exits 1. */
const crashing = `process.stderr.write("login failed for token " + process.env.TOKEN + "\\n"); process.exit(1)`

const config = () => {
  const file = writeConfig(`
    [sources.crashy]
    command = ${JSON.stringify([process.execPath, "-e", crashing])}
    env = { TOKEN = "\${CRASHY_TOKEN}" }
  `)
  fs.writeFileSync(path.join(path.dirname(file), "secrets.toml"), `[scopes.crashy]\nCRASHY_TOKEN = "${secret}"\n`, {
    mode: 0o600
  })
  return file
}

const assertNoSecret = (text: string, where: string) => {
  for (const form of forms) assert.notInclude(text, form, where)
}

describe("a child's stderr never shows a known secret", () => {
  it.live(
    "clawtool health (table and --json) and SourceHealth over stdio show [REDACTED:<NAME>] in the stderr tail",
    () =>
      Effect.gen(function* () {
        const file = config()
        const table = yield* Effect.promise(() => runCliAsync(["health", "--config", file]))
        assert.strictEqual(table.code, 1, table.stderr)
        assert.include(table.stdout, "login failed for token [REDACTED:CRASHY_TOKEN]")
        assertNoSecret(table.stdout + table.stderr, "health")

        const json = yield* Effect.promise(() => runCliAsync(["health", "--config", file, "--json"]))
        const rows = JSON.parse(json.stdout) as ReadonlyArray<{ name: string; stderrTail: ReadonlyArray<string> }>
        const tail = rows.find((row) => row.name === "crashy")?.stderrTail ?? []
        assert.strictEqual(tail.at(-1), "login failed for token [REDACTED:CRASHY_TOKEN]")
        assertNoSecret(json.stdout + json.stderr, "health --json")

        yield* Effect.scoped(
          Effect.gen(function* () {
            const client = yield* serveClient(file)
            const shown = yield* pollUntil(
              Effect.map(
                Effect.promise(() => client.callTool({ name: "SourceHealth", arguments: { instance: "crashy" } })),
                (result) => JSON.stringify(result)
              ),
              (text) => text.includes("login failed"),
              "SourceHealth to show the child's stderr line"
            )
            assert.include(shown, "[REDACTED:CRASHY_TOKEN]")
            assertNoSecret(shown, "SourceHealth")
          })
        )
      }),
    120_000
  )

  it.live(
    "the daemon: SourceHealth and /readyz",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const daemon = yield* startDaemon(config())
          const { client } = yield* httpClient(daemon.url)
          const shown = yield* pollUntil(
            Effect.map(callTool(client, "SourceHealth", { instance: "crashy" }), (result) => JSON.stringify(result)),
            (text) => text.includes("login failed"),
            "SourceHealth to show the child's stderr line"
          )
          assert.include(shown, "[REDACTED:CRASHY_TOKEN]")
          assertNoSecret(shown, "SourceHealth")
          const readyz = yield* Effect.promise(() =>
            fetch(new URL("/readyz", daemon.url)).then((response) => response.text())
          )
          assert.include(readyz, "crashy")
          assertNoSecret(readyz, "/readyz")
          assertNoSecret(daemon.stderr(), "the daemon's stderr")
        })
      ),
    120_000
  )
})
