import { afterAll, assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import { Registry } from "../src/services/Registry.js"
import { Secrets } from "../src/services/Secrets.js"
import { makeTempDir, referenceSources, registryLayer } from "./lib/registry.js"
import { type SearchCase, searchCases } from "./search/queries.js"
import { heldOutTasks } from "./search/heldout.js"
import { userTasks } from "./search/tasks.js"
import { unseenTasks } from "./search/unseen.js"

const dir = makeTempDir()
afterAll(() => Fs.rmSync(dir, { recursive: true, force: true }))

/** Ranks are read to this depth: MRR counts a right answer below it as 0. */
const depth = 10

/** Top-1, top-3 and mean reciprocal rank of one query set, and the queries whose right answer is not first. */
const measure = (cases: ReadonlyArray<SearchCase>) =>
  Effect.gen(function* () {
    const registry = yield* Registry
    yield* registry.awaitSettled
    const listed = new Set((yield* registry.catalog).tools.map((tool) => tool.name))
    let top1 = 0
    let top3 = 0
    let reciprocal = 0
    const misses: Array<string> = []
    for (const { expected, query } of cases) {
      for (const name of expected) assert.isTrue(listed.has(name), `the query set names ${name}, not in the catalog`)
      const result = yield* registry.call("ToolSearch", { arguments: { query, limit: depth } })
      const names = (result.structuredContent as { results: ReadonlyArray<{ name: string }> }).results.map(
        (hit) => hit.name
      )
      const rank = names.findIndex((name) => expected.includes(name)) + 1
      if (rank === 1) top1++
      if (rank >= 1 && rank <= 3) top3++
      if (rank >= 1) reciprocal += 1 / rank
      if (rank !== 1) {
        const where = rank === 0 ? `not in the first ${depth}` : `rank ${rank}`
        misses.push(
          `  ${rank > 3 || rank === 0 ? "MISS" : "top3"} "${query}" → ${names.slice(0, 3).join(", ")} (want ${expected.join(" | ")}: ${where})`
        )
      }
    }
    const n = cases.length
    const figures = { top1: top1 / n, top3: top3 / n, mrr: reciprocal / n }
    const report = `top-1 ${(figures.top1 * 100).toFixed(1)} %, top-3 ${(figures.top3 * 100).toFixed(1)} %, MRR ${figures.mrr.toFixed(3)} over ${n} queries`
    return { ...figures, n, report: `${report}\n${misses.join("\n")}` }
  })

/**
 * WebSearch is listed once a search backend has a key; the key is never used (nothing is searched for), it only puts
 * the tool in the catalog, as a user with a key has it.
 */
const withWebSearch = Secrets.layerTest({ scopes: { global: { BRAVE_API_KEY: "quality-test-unused" } } })

layer(registryLayer(referenceSources(dir, ["everything", "filesystem", "memory"])).pipe(Layer.provide(withWebSearch)), {
  timeout: "60 seconds",
  excludeTestServices: true
})("ToolSearch quality over the three reference servers and clawtool's core tools", (it) => {
  const check = (name: string, cases: ReadonlyArray<SearchCase>, bar: { top1: number; top3: number }, target = bar) =>
    it.effect(`${name}: top-1 >= ${bar.top1 * 100} % and top-3 >= ${bar.top3 * 100} %`, () =>
      Effect.gen(function* () {
        const measured = yield* measure(cases)
        const aim = target === bar ? "" : ` (target top-1 ${target.top1 * 100} %, top-3 ${target.top3 * 100} %)`
        console.error(`ToolSearch quality, ${name}${aim}: ${measured.report}`)
        assert.isAtLeast(measured.n, 30)
        assert.isAtLeast(measured.top1, bar.top1, measured.report)
        assert.isAtLeast(measured.top3, bar.top3, measured.report)
      })
    )

  // Issue 14's bar for the search-first catalog on its paraphrase set.
  check("paraphrased tasks (issue 14)", searchCases, { top1: 0.9, top3: 0.97 })
  // The field-defects issue asks top-1 93 % and top-3 98 % of users' tasks; lexical search with the general means of
  // ToolSearchWords.ts reaches what the bars say (README, "Finding tools"), and they hold it: a change that loses
  // ground fails here with the list of the queries it misses.
  const target = { top1: 0.93, top3: 0.98 }
  check("users' tasks", userTasks, { top1: 0.8, top3: 0.94 }, target)
  check("users' tasks held out", heldOutTasks, { top1: 0.77, top3: 0.91 }, target)
  // Written after the third tuning pass and measured once (test/search/unseen.ts): the figure for tasks never seen.
  check("users' tasks unseen", unseenTasks, { top1: 0.65, top3: 0.84 }, target)
})
