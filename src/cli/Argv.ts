import { Either, LogLevel, Option } from "effect"

const logLevels: Record<string, LogLevel.LogLevel> = {
  all: LogLevel.All,
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None
}

/**
 * `--log-level X` (or `--log-level=X`) anywhere before `--`: @effect/cli only finds it in some positions, and a global
 * flag should work after the subcommand and its options too.
 */
export const extractLogLevel = (
  args: ReadonlyArray<string>
): Either.Either<
  { readonly args: ReadonlyArray<string>; readonly level: Option.Option<LogLevel.LogLevel> },
  string
> => {
  const kept: Array<string> = []
  let level = Option.none<LogLevel.LogLevel>()
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg !== "--log-level" && !arg.startsWith("--log-level=")) {
      kept.push(arg)
      continue
    }
    const value = arg === "--log-level" ? args[++i] : arg.slice("--log-level=".length)
    const found = value === undefined ? undefined : logLevels[value]
    if (found === undefined) {
      return Either.left(
        `--log-level expects one of ${Object.keys(logLevels).join(", ")}, got ${value === undefined ? "nothing" : JSON.stringify(value)}`
      )
    }
    level = Option.some(found)
  }
  return Either.right({ args: kept, level })
}
