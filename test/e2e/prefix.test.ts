// Per-source `prefix` through `clawtool serve` (issue 12, ADR 022): a host sees one source's tools and prompts under
// their own names (`prefix = ""`), another's under a chosen prefix, and calls reach the right child.
import { assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { ensureBuilt, serveClient, writeConfig } from "../lib/cli.js"
import { stub } from "../lib/sources.js"

beforeAll(ensureBuilt, 120_000)

const command = (...flags: ReadonlyArray<string>) => JSON.stringify([process.execPath, stub, ...flags])

const config = () =>
  writeConfig(`
    [sources.plain]
    command = ${command("--name", "plain", "--resources")}
    prefix = ""

    [sources.named]
    command = ${command("--name", "named", "--resources")}
    prefix = "st"

    [sources.stub]
    command = ${command("--name", "stub")}
  `)

const textOf = (result: unknown) => (result as { content: Array<{ text: string }> }).content[0]!.text

describe("prefix (built CLI, serve)", () => {
  it.scopedLive(
    'prefix = "" serves a source\'s own names, prefix = "st" gives st__<tool>; calls route to the owner',
    () =>
      Effect.gen(function* () {
        const client = yield* serveClient(config())
        const names = (yield* Effect.promise(() => client.listTools())).tools.map((tool) => tool.name)
        for (const name of ["echo", "link", "st__echo", "st__link", "stub__echo"]) assert.include(names, name)
        assert.notInclude(names, "plain__echo")
        assert.notInclude(names, "named__echo")

        const call = (name: string) => Effect.promise(() => client.callTool({ name, arguments: { text: name } }))
        assert.strictEqual(textOf(yield* call("echo")), "echo:echo")
        assert.strictEqual(textOf(yield* call("st__echo")), "echo:st__echo")
        // Both children list stub://info, so a link's URI names the instance whose child answered the call.
        const linkOf = (result: unknown) => (result as { content: Array<{ uri: string }> }).content[0]!.uri
        assert.strictEqual(linkOf(yield* call("link")), "clawtool://plain/stub://info")
        assert.strictEqual(linkOf(yield* call("st__link")), "clawtool://named/stub://info")

        const prompts = (yield* Effect.promise(() => client.listPrompts())).prompts.map((prompt) => prompt.name).sort()
        assert.deepStrictEqual(prompts, ["greet", "st__greet"])
        const greeted = yield* Effect.promise(() => client.getPrompt({ name: "greet", arguments: { name: "Ada" } }))
        assert.deepStrictEqual(greeted.messages[0]!.content, { type: "text", text: "Hello, Ada!" })
        const named = yield* Effect.promise(() => client.getPrompt({ name: "st__greet", arguments: { name: "Bo" } }))
        assert.deepStrictEqual(named.messages[0]!.content, { type: "text", text: "Hello, Bo!" })
      })
  )
})
