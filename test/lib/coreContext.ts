import { Effect, Option } from "effect"
import { CoreToolsConfig } from "../../src/domain/Config.js"
import { Ledger } from "../../src/services/CoreTools/Ledger.js"
import type { CodeNames } from "../../src/domain/ToolProvider.js"
import type { CoreContext } from "../../src/services/CoreTools/Manifest.js"

/**
 * A CoreContext for calling core tool handlers directly: the given roots (real paths), a fresh ledger, default
 * `[core_tools]` settings unless given; catalog and search are not available.
 */
export const coreContext = (
  options: {
    readonly roots?: ReadonlyArray<string>
    readonly maxOutput?: number
    readonly settings?: CoreToolsConfig
    readonly ledger?: Ledger
    readonly secrets?: Readonly<Record<string, string>>
    readonly codeNames?: CodeNames
  } = {}
): CoreContext => {
  const settings = options.settings ?? new CoreToolsConfig({})
  return {
    catalog: Effect.die("catalog is not available in this test context"),
    health: Effect.succeed([]),
    search: () => Effect.die("search is not available in this test context"),
    codeNames: Effect.succeed(options.codeNames ?? {}),
    roots: Effect.succeed(options.roots ?? [process.cwd()]),
    maxOutput: options.maxOutput ?? settings.max_output,
    settings,
    ledger: options.ledger ?? new Ledger(),
    secret: (name) => Option.fromNullable(options.secrets?.[name])
  }
}
