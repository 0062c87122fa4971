// Exit codes of `clawtool serve` are an interface (README "CLI", ADR 010): stdin EOF → 0, SIGTERM → 0 after a clean
// shutdown, SIGINT → 130; in each case every child and grandchild is gone when clawtool has exited.
import { assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ensureBuilt, exitOf, spawnServe, writeConfig } from "../lib/cli.js"
import { eventually, isAlive, readPid, stubCommand, tempDir } from "../lib/sources.js"
import { rawHost } from "../lib/rawHost.js"

beforeAll(ensureBuilt, 120_000)

const cases = [
  { how: "stdin EOF", stop: (child: ReturnType<typeof spawnServe>) => child.stdin.end(), code: 0 },
  { how: "SIGTERM", stop: (child: ReturnType<typeof spawnServe>) => child.kill("SIGTERM"), code: 0 },
  { how: "SIGINT", stop: (child: ReturnType<typeof spawnServe>) => child.kill("SIGINT"), code: 130 }
] as const

describe("clawtool serve exit codes (built CLI)", () => {
  for (const { how, stop, code } of cases) {
    it.live(`${how}: exit ${code}, no child or grandchild left`, () =>
      Effect.gen(function* () {
        const pidfile = path.join(tempDir(), "stub")
        const child = spawnServe(
          writeConfig(`
            [sources.stub]
            command = ${stubCommand("--grandchild", pidfile)}
          `)
        )
        child.stderr.resume()
        const exited = exitOf(child)
        const host = rawHost(child)
        yield* host.handshake
        yield* eventually(() => fs.existsSync(`${pidfile}.self`) && fs.existsSync(pidfile), 20_000, "the stub to start")
        const pids = [readPid(pidfile), readPid(`${pidfile}.self`)]
        stop(child)
        const exit = yield* exited
        assert.deepStrictEqual(exit, { code, signal: null })
        // The group was SIGKILLed before clawtool exited; the kernel may take a moment to finish them off.
        yield* eventually(() => !pids.some(isAlive), 5_000, "no process left behind")
      })
    )
  }
})
