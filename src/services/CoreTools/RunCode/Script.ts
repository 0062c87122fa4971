import { Effect } from "effect"
import { CallError } from "../../../domain/Errors.js"

/**
 * The code as the script the guest runs: the body of an async function, called at once, with TypeScript's types
 * stripped by sucrase (loaded on first use: most sessions never run code). Wrapped before stripping, since a top-level
 * `return` or `await` is not valid outside a function. Lines keep their numbers (one more, for the wrapper's).
 */
export const toScript = (code: string): Effect.Effect<string, CallError> =>
  Effect.flatMap(loadSucrase, (transform) =>
    Effect.try({
      try: () =>
        transform(`(async () => {\n${code}\n})()`, { transforms: ["typescript"], disableESTransforms: true }).code,
      catch: (error) =>
        new CallError({
          tool: "RunCode",
          reason: "InvalidArguments",
          detail: `the code does not parse: ${error instanceof Error ? error.message : String(error)}`
        })
    })
  )

// sucrase is CommonJS: Node's import() names its exports, the bundle's gives them as `default` only.
const loadSucrase = Effect.promise(() => import("sucrase")).pipe(
  Effect.map((module) => module.transform ?? (module as unknown as { default: typeof module }).default.transform)
)
