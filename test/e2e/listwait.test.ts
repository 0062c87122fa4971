// Issue 10, at the host edge: lists wait at most list_wait for sources still starting (one source that never answers
// initialize no longer hides the others), a late source is announced by exactly one list_changed per kind the host
// listed, and every routed method sent right after initialize waits for its starting owner instead of failing.
import { assert, beforeAll, describe, it } from "@effect/vitest"
import {
  CompleteResultSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema
} from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import * as path from "node:path"
import * as z from "zod"
import { ensureBuilt, serveClient, writeConfig } from "../lib/cli.js"
import { eventually, root, stubCommand } from "../lib/sources.js"

beforeAll(ensureBuilt, 120_000)

const late = (...flags: ReadonlyArray<string>) =>
  JSON.stringify([process.execPath, path.join(root, "test/fixtures/late-server.mjs"), ...flags])
const tiny = JSON.stringify([process.execPath, path.join(root, "test/fixtures/tiny-server.mjs")])

/** Claude Code gives up on a list after 30 s: a list must be answered well before that. */
const hostPatience = { timeout: 30_000 }

describe("list_wait and routed methods at start-up (built CLI, SDK client as the host)", () => {
  it.scopedLive(
    "a source that never answers initialize: every list is answered with what the healthy source serves",
    () =>
      Effect.gen(function* () {
        const client = yield* serveClient(
          writeConfig(`
            [sources.hung]
            command = ${late("--hang")}
            startup_timeout = "60s"
            [sources.ok]
            command = ${tiny}
          `)
        )
        // The default list_wait (5s), not the hung source's 60 s startup_timeout, bounds each list.
        const { tools } = yield* Effect.promise(() => client.listTools({}, hostPatience))
        const names = tools.map((tool) => tool.name)
        assert.includeMembers(names, ["ok__echo", "ok__pid", "ok__fail", "ok__ok"])
        assert.isFalse(names.some((name) => name.startsWith("hung__")))
        const { resources } = yield* Effect.promise(() => client.listResources({}, hostPatience))
        assert.deepStrictEqual(resources, [])
        const { resourceTemplates } = yield* Effect.promise(() => client.listResourceTemplates({}, hostPatience))
        assert.deepStrictEqual(resourceTemplates, [])
        const { prompts } = yield* Effect.promise(() => client.listPrompts({}, hostPatience))
        assert.deepStrictEqual(prompts, [])
      }),
    60_000
  )

  it.scopedLive(
    "a slow source joins later: exactly one list_changed per kind the host listed, none for the kind it did not",
    () =>
      Effect.gen(function* () {
        const client = yield* serveClient(
          writeConfig(`
            list_wait = "1500ms"
            [sources.slow]
            command = ${late("--init-delay", "3000")}
            [sources.ok]
            command = ${tiny}
          `)
        )
        const notices = { tools: 0, resources: 0, prompts: 0 }
        client.setNotificationHandler(ToolListChangedNotificationSchema, () => void notices.tools++)
        client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void notices.resources++)
        client.setNotificationHandler(PromptListChangedNotificationSchema, () => void notices.prompts++)
        const toolNames = Effect.map(
          Effect.promise(() => client.listTools({}, hostPatience)),
          ({ tools }) => tools.map((tool) => tool.name)
        )
        // Answered once list_wait is over, the slow source not yet among what is known.
        const before = yield* toolNames
        assert.include(before, "ok__echo")
        assert.notInclude(before, "slow__hello")
        const { prompts } = yield* Effect.promise(() => client.listPrompts({}, hostPatience))
        assert.deepStrictEqual(prompts, [])

        yield* eventually(
          () => notices.tools >= 1 && notices.prompts >= 1,
          30_000,
          "list_changed for tools and prompts"
        )
        // The notices of one change are sent together, tools, resources then prompts: none for resources came before the
        // one for prompts. That nothing more arrives for the same start is shown under TestClock in test/Gateway.test.ts.
        assert.deepStrictEqual(notices, { tools: 1, resources: 0, prompts: 1 })
        const after = yield* toolNames
        assert.includeMembers(after, ["ok__echo", "slow__hello"])
        const listed = yield* Effect.promise(() => client.listPrompts({}, hostPatience))
        assert.deepStrictEqual(
          listed.prompts.map((prompt) => prompt.name),
          ["slow__greet"]
        )
      }),
    60_000
  )

  it.scopedLive(
    "every routed method (tasks too) sent right after initialize waits for a source that answers initialize after 2 s",
    () =>
      Effect.gen(function* () {
        const client = yield* serveClient(
          writeConfig(`
            [sources.late]
            command = ${late("--init-delay", "2000")}
            [sources.stub]
            command = ${stubCommand("--resources")}
          `)
        )
        // All at once, before any list: on a cold start nothing is known of the late source yet.
        const [read, template, qualified, prompt, completePrompt, completeResource, subscribed, called, task] =
          yield* Effect.all(
            [
              Effect.promise(() => client.readResource({ uri: "late://info" }, hostPatience)),
              Effect.promise(() => client.readResource({ uri: "late://items/7" }, hostPatience)),
              Effect.promise(() => client.readResource({ uri: "clawtool://late/late://x" }, hostPatience)),
              Effect.promise(() => client.getPrompt({ name: "late__greet", arguments: { who: "you" } }, hostPatience)),
              Effect.promise(() =>
                client.request(
                  {
                    method: "completion/complete",
                    params: { ref: { type: "ref/prompt", name: "late__greet" }, argument: { name: "who", value: "" } }
                  },
                  CompleteResultSchema,
                  hostPatience
                )
              ),
              Effect.promise(() =>
                client.request(
                  {
                    method: "completion/complete",
                    params: {
                      ref: { type: "ref/resource", uri: "late://items/{id}" },
                      argument: { name: "id", value: "" }
                    }
                  },
                  CompleteResultSchema,
                  hostPatience
                )
              ),
              Effect.promise(() => client.subscribeResource({ uri: "late://info" }, hostPatience)),
              Effect.promise(() => client.callTool({ name: "late__hello", arguments: {} }, undefined, hostPatience)),
              Effect.promise(() =>
                client.request({ method: "tasks/get", params: { taskId: "late__t1" } }, z.looseObject({}), hostPatience)
              )
            ],
            { concurrency: "unbounded" }
          )
        assert.deepStrictEqual(read.contents, [{ uri: "late://info", text: "read late://info" }])
        assert.deepStrictEqual(template.contents, [{ uri: "late://items/7", text: "read late://items/7" }])
        assert.deepStrictEqual(qualified.contents, [{ uri: "late://x", text: "read late://x" }])
        assert.deepStrictEqual(prompt.messages, [{ role: "user", content: { type: "text", text: "greet you" } }])
        assert.deepStrictEqual(completePrompt.completion.values, ["late-one", "late-two"])
        assert.deepStrictEqual(completeResource.completion.values, ["late-one", "late-two"])
        assert.deepStrictEqual(subscribed, {})
        assert.deepStrictEqual(called.content, [{ type: "text", text: "hello from late" }])
        assert.strictEqual(task.taskId, "late__t1")
        assert.strictEqual(task.status, "completed")
        // Once every source has settled, a URI nobody claims is refused (-32002), not guessed.
        const refused = yield* Effect.flip(
          Effect.tryPromise(() => client.readResource({ uri: "nobody://here" }, hostPatience))
        )
        assert.strictEqual((refused.error as { code: number }).code, -32002)
      }),
    60_000
  )
})
