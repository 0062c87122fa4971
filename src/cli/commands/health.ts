import { Command } from "@effect/cli"
import { Console, Effect } from "effect"
import { isDown } from "../../domain/Health.js"
import { Config } from "../../services/Config.js"
import { Registry } from "../../services/Registry.js"
import { catalogLine, collisionLines, healthTable } from "../../text.js"
import { Sources } from "../../services/Sources.js"
import { warnSelectorsMatchingNothing } from "../Selectors.js"
import { checkProfile, config, ExitStatus, json, profile, secrets, settle, withStartedSources } from "../Shared.js"

export const health = Command.make("health", { config, secrets, json, profile }, (options) =>
  Effect.gen(function* () {
    const chosen = yield* checkProfile(options.profile, (yield* Config).config)
    const sources = yield* Sources
    yield* settle(sources)
    // A profile (issue 26): its sources' rows and its catalog; the exit code counts only those.
    const registry = (yield* Registry).viewOf(chosen)
    const rows = yield* registry.health
    const catalog = yield* registry.catalog
    yield* warnSelectorsMatchingNothing((yield* Config).config, sources, catalog)
    if (options.json) {
      const keys = [
        "name",
        "status",
        "reason",
        "toolCount",
        "package",
        "pid",
        "startupMs",
        "stderrTail",
        "restarts",
        "lastExit",
        "nextRetryAt",
        "uptimeMs",
        "stdoutGarbage",
        "quarantined",
        "era"
      ] as const
      const out = rows.map((row) => Object.fromEntries(keys.map((key) => [key, row[key]])))
      yield* Console.log(JSON.stringify(out, null, 2))
      // stdout stays the array it always was; the catalog summary goes beside it, on stderr.
      yield* Console.error(
        [...collisionLines(catalog.collisions), catalogLine(catalog.hash, catalog.tools.length)].join("\n")
      )
    } else {
      yield* Console.log(
        [
          healthTable(rows),
          "",
          ...collisionLines(catalog.collisions),
          catalogLine(catalog.hash, catalog.tools.length)
        ].join("\n")
      )
    }
    // An idle lazy source is healthy: its catalog is known and the next request starts it. A skipped entry was warned.
    if (rows.some(isDown)) return yield* new ExitStatus({ code: 1 })
  }).pipe(withStartedSources(options))
).pipe(
  Command.withDescription(
    "Start every configured source (as serve does), wait until each has settled, print their health; entries of a JSON config clawtool cannot use are listed as skipped, with why. With --profile NAME, only that profile's sources and catalog. Exit 0 when all run (or are idle lazy sources, or skipped), 1 when any does not, 2 on usage or config errors."
  )
)
