import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import type { Env } from "../src/services/Config.js"
import { ProcessEnv } from "../src/services/Config.js"
import { coreSpecs } from "../src/services/CoreTools.js"
import { BashRuns } from "../src/services/CoreTools/BashRuns.js"
import * as Manifest from "../src/services/CoreTools/Manifest.js"
import { Sources } from "../src/services/Sources.js"
import { coreContext } from "./lib/coreContext.js"
import { sourcesLayer, stubCommand } from "./lib/sources.js"

// What clawtool hands on from its own environment (children's environments, the search endpoint) is read from
// ProcessEnv, never from process.env behind its back: these variables exist only in the ProcessEnv given here.

const marker = "CLAWTOOL_TEST_FROM_PROCESS_ENV"
const hidden = "CLAWTOOL_TEST_NOT_PASSED"
const env: Env = { PATH: process.env.PATH, [marker]: "marked", [hidden]: "secret" }

describe("ProcessEnv is where children's environments come from", () => {
  it.scopedLive("a source's child gets ProcessEnv's safe set and env_passthrough names, nothing else of it", () =>
    Effect.gen(function* () {
      const sources = yield* Sources
      yield* sources.awaitSettled
      const result = yield* sources.callTool("env", { name: "env_names" })
      const names = (result.structuredContent as { names: Array<string> }).names
      assert.include(names, marker)
      assert.include(names, "PATH")
      assert.notInclude(names, hidden)
      // process.env has a HOME; the ProcessEnv given here has none.
      assert.notInclude(names, "HOME")
    }).pipe(
      Effect.provide(
        sourcesLayer(`
          [sources.env]
          command = ${stubCommand()}
          env_passthrough = ["${marker}"]
        `).pipe(Layer.provide(Layer.succeed(ProcessEnv, env)))
      )
    )
  )

  it.scopedLive("a Bash command gets ProcessEnv's safe set only", () =>
    Effect.gen(function* () {
      const shell = yield* BashRuns
      const manifest = Either.getOrThrow(Manifest.make(coreSpecs))
      const result = yield* manifest.byName
        .get("Bash")!
        .call(
          { command: `echo "TZ=\${TZ-unset} HOME=\${HOME-unset} hidden=\${${hidden}-unset}"` },
          { ...coreContext(), shell }
        )
        .pipe(Effect.provideService(ProcessEnv, { ...env, TZ: "marked" }))
      assert.include((result.content[0] as { text: string }).text, "TZ=marked HOME=unset hidden=unset\n")
    }).pipe(Effect.provide(BashRuns.DefaultWithoutDependencies))
  )

  it.live("WebSearch's endpoint override is read from ProcessEnv", () =>
    Effect.gen(function* () {
      const paths: Array<string> = []
      const server = Http.createServer((req, res) => {
        paths.push(req.url ?? "")
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({ web: { results: [] } }))
      })
      yield* Effect.acquireRelease(
        Effect.async<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
        () => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
      )
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      const manifest = Either.getOrThrow(Manifest.make(coreSpecs))
      const result = yield* manifest.byName
        .get("WebSearch")!
        .call({ query: "marked" }, coreContext({ secrets: { BRAVE_API_KEY: "key" } }))
        .pipe(Effect.provideService(ProcessEnv, { CLAWTOOL_BRAVE_ENDPOINT: `${base}/marked-endpoint` }))
      assert.strictEqual((result.structuredContent as { backend: string }).backend, "brave")
      assert.strictEqual(paths.length, 1)
      assert.match(paths[0]!, /^\/marked-endpoint\?/)
    }).pipe(Effect.scoped)
  )
})
