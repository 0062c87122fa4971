import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { writeFileAtomic } from "../../atomicWrite.js"
import { StaticLive } from "../../layers/Main.js"
import { Config } from "../../services/Config.js"
import { lockPathOf, readLock } from "../../services/Pins.js"
import * as Pins from "../../services/Trust/Pins.js"
import { renderTable } from "../../text.js"
import { config, ExitStatus, json, requireSecretsFile, secrets } from "../Shared.js"

/*
 * `clawtool trust` (issue 25, ADR 029): the lock file's pins and what waits for approval. These commands read and write
 * the lock file only; the definitions a source lists now are recorded there (under "pending") by whichever clawtool saw
 * them (serve, tools list, health), so nothing is started here and `approve` pins exactly what `diff` showed.
 */

/** The lock file of the config in effect, and the config's sources. */
const lockOfConfig = Effect.gen(function* () {
  const { path, config: loaded } = yield* Config
  const file = lockPathOf(path, loaded.trust)
  return { file, lock: yield* readLock(file), configured: Object.keys(loaded.sources) }
})

const usage = (message: string) =>
  Effect.zipRight(Console.error(`clawtool: ${message}`), Effect.fail(new ExitStatus({ code: 1 })))

const run =
  <A, E, R>(options: { readonly config: Option.Option<string>; readonly secrets: Option.Option<string> }) =>
  (effect: Effect.Effect<A, E, R>) =>
    Effect.zipRight(requireSecretsFile(options), effect).pipe(Effect.provide(StaticLive(options)))

/** Every pending entry a selector names (all of them for none), in instance then tool order. */
const pendingOf = (lock: Pins.Lock, selector: string | undefined) => {
  const wanted = selector === undefined ? undefined : Pins.parseSelector(selector)
  return [...lock.pending]
    .filter(([instance]) => wanted === undefined || wanted.instance === instance)
    .flatMap(([instance, tools]) =>
      [...tools]
        .filter(([tool]) => wanted?.tool === undefined || wanted.tool === tool)
        .map(([tool, pending]) => ({ instance, tool, pending, pin: lock.pins.get(instance)?.get(tool) }))
    )
    .sort((a, b) => (a.instance === b.instance ? compare(a.tool, b.tool) : compare(a.instance, b.instance)))
}
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

const trustStatus = Command.make("status", { config, secrets, json }, (options) =>
  Effect.gen(function* () {
    const { file, lock, configured } = yield* lockOfConfig
    const instances = [...new Set([...configured, ...lock.pins.keys(), ...lock.pending.keys()])].sort(compare)
    const waiting = pendingOf(lock, undefined)
    const rows = instances.map((instance) => {
      const own = waiting.filter((entry) => entry.instance === instance)
      return {
        instance,
        pinned: lock.pins.get(instance)?.size ?? 0,
        quarantined: own.filter((entry) => entry.pending.held).length,
        warned: own.filter((entry) => !entry.pending.held).length,
        seen: lock.pins.has(instance)
      }
    })
    const tools = waiting.map(({ instance, tool, pending, pin }) => ({
      tool: Pins.selectorOf(instance, tool),
      why: pending.why,
      held: pending.held,
      reason: Pins.reasonOf(instance, tool, pending, pin)
    }))
    if (options.json) return yield* Console.log(JSON.stringify({ file, sources: rows, pending: tools }, null, 2))
    const table = renderTable(
      ["SOURCE", "PINNED", "QUARANTINED", "WARNED"],
      rows.map((row) => [
        row.instance,
        row.seen ? String(row.pinned) : "- (never pinned)",
        String(row.quarantined),
        String(row.warned)
      ])
    )
    yield* Console.log(
      [
        `lock file ${file}`,
        "",
        table,
        ...(tools.length === 0 ? [] : ["", ...tools.map((t) => `${t.held ? "quarantined" : "warned"} ${t.reason}`)])
      ].join("\n")
    )
  }).pipe(run(options))
).pipe(
  Command.withDescription(
    "The lock file's pins: per source how many tools are pinned, quarantined (held from the host until approved) and let through with a warning; then each of those tools and why. Reads the lock file only ([trust] pins, default clawtool.lock beside the config)."
  )
)

const selectorArg = Args.text({ name: "instance[.tool]" }).pipe(
  Args.withDescription("One source's waiting tools (`github`) or one tool (`github.search_issues`)"),
  Args.optional
)

const trustDiff = Command.make("diff", { config, secrets, selector: selectorArg }, (options) =>
  Effect.gen(function* () {
    const { lock } = yield* lockOfConfig
    const selector = Option.getOrUndefined(options.selector)
    const entries = pendingOf(lock, selector)
    if (entries.length === 0) {
      return yield* usage(`nothing changed, new or held${selector === undefined ? "" : ` for ${selector}`}`)
    }
    const { createTwoFilesPatch } = yield* Effect.promise(() => import("diff"))
    const text = (definition: object | undefined) =>
      definition === undefined ? "" : `${JSON.stringify(definition, null, 2)}\n`
    for (const { instance, tool, pending, pin } of entries) {
      const name = Pins.selectorOf(instance, tool)
      yield* Console.log(
        createTwoFilesPatch(
          `${name} (pinned)`,
          `${name} (${pending.why}${pending.held ? ", quarantined" : ""})`,
          text(pin?.definition),
          text(pending.definition),
          undefined,
          undefined,
          { context: 3 }
        ).replace(/^=+\n/, "")
      )
    }
  }).pipe(run(options))
).pipe(
  Command.withDescription(
    "The pinned and the current definition of each changed, new or held tool (all, one source's, or one tool's) as a unified diff of canonical JSON. Exit 1 when nothing waits."
  )
)

const all = Options.boolean("all").pipe(Options.withDescription("Approve every tool that waits"))

const trustApprove = Command.make("approve", { config, secrets, selector: selectorArg, all }, (options) =>
  Effect.gen(function* () {
    const selector = Option.getOrUndefined(options.selector)
    if ((selector === undefined) === !options.all) {
      return yield* Effect.zipRight(
        Console.error("clawtool: give <instance>[.<tool>] or --all (one of them)"),
        Effect.fail(new ExitStatus({ code: 2 }))
      )
    }
    const { file, lock } = yield* lockOfConfig
    const { lock: next, approved } = Pins.approve(lock, selector)
    if (approved.length === 0)
      return yield* usage(`nothing waits for approval${selector === undefined ? "" : ` for ${selector}`}`)
    yield* Effect.tryPromise(() => writeFileAtomic(file, Pins.formatLock(next), { mode: 0o600 })).pipe(
      Effect.catchAll((error) => usage(`cannot write ${file}: ${String(error.error)}`))
    )
    yield* Console.log(`approved ${approved.join(", ")}: pinned in ${file} (a running serve lists them again)`)
  }).pipe(run(options))
).pipe(
  Command.withDescription(
    "Pin the definitions `trust diff` shows (the ones the source listed last) for one tool, every waiting tool of a source, or --all. A running serve reads the lock file again and lists them (each host gets one list_changed). Exit 1 when nothing waits."
  )
)

export const trust = Command.make("trust").pipe(
  Command.withDescription(
    "Pinned tool definitions and quarantine: a tool whose definition changed since it was pinned is held from the host until approved. The lock file is [trust] pins (default clawtool.lock beside the config)."
  ),
  Command.withSubcommands([trustStatus, trustDiff, trustApprove])
)
