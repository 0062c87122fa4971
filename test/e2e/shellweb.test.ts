import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import { ensureBuilt, freshCacheDir, main, tempDirEnv } from "../lib/cli.js"
import { gone, isRunning, root as projectRoot, tempDir } from "../lib/sources.js"

beforeAll(ensureBuilt, 120_000)

let server: Http.Server
let base = ""
beforeAll(async () => {
  server = Http.createServer((req, res) => {
    if (req.url === "/brave/?q=clawtool&count=8" || req.url?.startsWith("/brave")) {
      res.writeHead(req.headers["x-subscription-token"] === "e2e-brave-key" ? 200 : 401, {
        "content-type": "application/json"
      })
      return res.end(
        JSON.stringify({ web: { results: [{ title: "Found", url: "https://found.example/", description: "d" }] } })
      )
    }
    res.writeHead(200, { "content-type": "text/html" })
    res.end("<html><head><title>Local page</title></head><body><h1>Hello</h1><p>from the dev server</p></body></html>")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => {
  server.closeAllConnections()
  server.close()
})

const waitForPid = (file: string) =>
  Effect.gen(function* () {
    for (let i = 0; i < 250 && !(fs.existsSync(file) && fs.readFileSync(file, "utf8").endsWith("\n")); i++) {
      yield* Effect.sleep("20 millis")
    }
    return Number(fs.readFileSync(file, "utf8").trim())
  })

/** A folder with config.toml (roots = a work folder) and, when given, secrets.toml beside it. */
const setup = (options: { allowPrivate?: boolean; braveKey?: string } = {}) => {
  const dir = tempDir("clawtool-shellweb-")
  const work = path.join(dir, "work")
  fs.mkdirSync(work)
  const config = path.join(dir, "config.toml")
  fs.writeFileSync(
    config,
    `roots = [${JSON.stringify(work)}]\n${options.allowPrivate ? "[core_tools.WebFetch]\nallow_private = true\n" : ""}`
  )
  if (options.braveKey !== undefined) {
    fs.writeFileSync(path.join(dir, "secrets.toml"), `[scopes.global]\nBRAVE_API_KEY = "${options.braveKey}"\n`, {
      mode: 0o600
    })
  }
  return { config, work: fs.realpathSync(work) }
}

const connect = (config: string) =>
  Effect.promise(async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [main, "serve", "--config", config],
      cwd: projectRoot,
      env: {
        ...getDefaultEnvironment(),
        ...tempDirEnv,
        CLAWTOOL_CACHE_DIR: freshCacheDir(),
        CLAWTOOL_BRAVE_ENDPOINT: `${base}/brave/`,
        CLAWTOOL_E2E_SECRET_TOKEN: "do-not-leak-77"
      },
      stderr: "pipe"
    })
    const client = new Client({ name: "e2e-host", version: "1.0.0" })
    await client.connect(transport)
    return { client, transport }
  })

const textOf = (result: Awaited<ReturnType<Client["callTool"]>>) => (result.content as Array<{ text: string }>)[0]!.text

describe("Bash, WebFetch and WebSearch through serve (built CLI)", () => {
  it.live(
    "lists the shell and web tools; WebSearch only with a key; Bash runs in the root without clawtool's secrets",
    () =>
      Effect.gen(function* () {
        const { config, work } = setup()
        const { client } = yield* connect(config)
        try {
          const names = (yield* Effect.promise(() => client.listTools())).tools.map((tool) => tool.name)
          assert.includeMembers(names, ["Bash", "BashPoll", "BashKill", "WebFetch"])
          assert.notInclude(names, "WebSearch")
          const result = yield* Effect.promise(() =>
            client.callTool({ name: "Bash", arguments: { command: "pwd; env" } })
          )
          assert.isUndefined(result.isError)
          assert.isTrue(textOf(result).startsWith(`${work}\n`))
          assert.notInclude(textOf(result), "do-not-leak-77")
          assert.include(result.structuredContent, { exitCode: 0, status: "exited" })
        } finally {
          yield* Effect.promise(() => client.close())
        }
      })
  )

  it.live("nothing a Bash run started outlives serve: a background run dies when the host closes", () =>
    Effect.gen(function* () {
      const { config, work } = setup()
      const { client } = yield* connect(config)
      const started = yield* Effect.promise(() =>
        client.callTool({
          name: "Bash",
          arguments: { command: "sleep 100 & echo $! > bg.pid; sleep 100", run_in_background: true }
        })
      )
      assert.match((started.structuredContent as { taskId: string }).taskId, /^bash_/)
      const pid = yield* waitForPid(path.join(work, "bg.pid"))
      assert.isTrue(isRunning(pid))
      yield* Effect.promise(() => client.close())
      assert.isTrue(yield* gone(pid), `sleep ${pid} outlived serve`)
    })
  )

  it.live("a SIGKILL of clawtool still kills a background run's group (the reaper)", () =>
    Effect.gen(function* () {
      const { config, work } = setup()
      const { client, transport } = yield* connect(config)
      yield* Effect.promise(() =>
        client.callTool({
          name: "Bash",
          arguments: { command: "sleep 100 & echo $! > bg.pid; sleep 100", run_in_background: true }
        })
      )
      const pid = yield* waitForPid(path.join(work, "bg.pid"))
      process.kill(transport.pid!, "SIGKILL")
      assert.isTrue(yield* gone(pid), `sleep ${pid} outlived a SIGKILL of clawtool`)
      yield* Effect.promise(() => client.close().catch(() => {}))
    })
  )

  it.live("WebFetch: a local page is Blocked by default and fetched as Markdown with allow_private = true", () =>
    Effect.gen(function* () {
      const closed = yield* connect(setup().config)
      try {
        const refused = yield* Effect.promise(() =>
          closed.client.callTool({ name: "WebFetch", arguments: { url: `${base}/` } })
        )
        assert.isTrue(refused.isError)
        assert.include(textOf(refused), "allow_private")
      } finally {
        yield* Effect.promise(() => closed.client.close())
      }
      const open = yield* connect(setup({ allowPrivate: true }).config)
      try {
        const page = yield* Effect.promise(() =>
          open.client.callTool({ name: "WebFetch", arguments: { url: `${base}/` } })
        )
        assert.isUndefined(page.isError)
        assert.include(textOf(page), "# Hello")
        assert.include(page.structuredContent, { status: 200, format: "markdown", title: "Local page" })
      } finally {
        yield* Effect.promise(() => open.client.close())
      }
    })
  )

  it.live("WebSearch is listed with BRAVE_API_KEY in secrets.toml and searches the (stub) backend", () =>
    Effect.gen(function* () {
      const { client } = yield* connect(setup({ braveKey: "e2e-brave-key" }).config)
      try {
        const names = (yield* Effect.promise(() => client.listTools())).tools.map((tool) => tool.name)
        assert.include(names, "WebSearch")
        const result = yield* Effect.promise(() =>
          client.callTool({ name: "WebSearch", arguments: { query: "clawtool" } })
        )
        assert.isUndefined(result.isError, textOf(result))
        assert.include(textOf(result), "[1] Found\n    https://found.example/")
      } finally {
        yield* Effect.promise(() => client.close())
      }
    })
  )
})
