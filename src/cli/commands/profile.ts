import { Command } from "@effect/cli"
import { Console, Effect } from "effect"
import { defaultView } from "../../domain/Config.js"
import { Config } from "../../services/Config.js"
import { Registry } from "../../services/Registry.js"
import * as Profiles from "../../services/Registry/Profiles.js"
import { Sources } from "../../services/Sources.js"
import { renderTable } from "../../text.js"
import { config, json, secrets, settle, withStartedSources } from "../Shared.js"

const profileList = Command.make("list", { config, secrets, json }, (options) =>
  Effect.gen(function* () {
    const sources = yield* Sources
    yield* settle(sources)
    const registry = yield* Registry
    const { config: loaded } = yield* Config
    const whole = yield* registry.catalog
    for (const problem of [...Profiles.problems(loaded), ...Profiles.unmatched(loaded, whole.entries)]) {
      yield* Console.error(`warning: ${problem}`)
    }
    // The default view (/mcp) first, then each profile: what its host's tools/list holds and costs.
    const rows = yield* Effect.forEach([undefined, ...Object.keys(loaded.profiles).sort()], (name) =>
      Effect.map(registry.viewOf(name).catalog, (catalog) => {
        const profile = name === undefined ? undefined : loaded.profiles[name]!
        return {
          name: name ?? defaultView,
          endpoint: name === undefined ? "/mcp" : `/mcp/${name}`,
          sources: [
            ...(profile === undefined ? Object.keys(loaded.sources) : Profiles.instancesOf(profile, loaded))
          ].sort(),
          tools: catalog.tools.length,
          catalog: profile?.catalog ?? loaded.catalog,
          readOnly: profile?.read_only ?? false,
          listedTools: catalog.host.tools.length,
          tokens: catalog.host.tokens
        }
      })
    )
    if (options.json) return yield* Console.log(JSON.stringify(rows, null, 2))
    yield* Console.log(
      renderTable(
        ["PROFILE", "ENDPOINT", "SOURCES", "TOOLS", "CATALOG", "READ-ONLY", "~TOKENS"],
        rows.map((row) => [
          row.name,
          row.endpoint,
          row.sources.join(", ") || "-",
          String(row.tools),
          row.catalog,
          row.readOnly ? "yes" : "no",
          String(row.tokens)
        ])
      )
    )
  }).pipe(withStartedSources(options))
).pipe(
  Command.withDescription(
    "Start every source, then list the default view (/mcp) and each [profiles.NAME]: its endpoint, sources, tools it serves, catalog mode, read-only, and the estimated tokens of its tools/list. Warns about what a profile names that does not exist."
  )
)

export const profile = Command.make("profile").pipe(
  Command.withDescription("Inspect the profiles ([profiles.NAME]): views over the one set of sources, per endpoint."),
  Command.withSubcommands([profileList])
)
