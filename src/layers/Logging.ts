import { Layer, Logger, LogLevel } from "effect"

const levels: Record<string, LogLevel.LogLevel> = {
  all: LogLevel.All,
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  warn: LogLevel.Warning,
  error: LogLevel.Error,
  none: LogLevel.None
}

/** `CLAWTOOL_LOG_LEVEL` (trace, debug, info, warning, error, none); info by default. */
export const logLevelFromEnv = (value: string | undefined): LogLevel.LogLevel =>
  levels[(value ?? "").toLowerCase()] ?? LogLevel.Info

/**
 * Every log line goes to stderr: on `serve`, stdout is the JSON-RPC channel, and Effect's default logger
 * (and runMain's pretty logger) would write to stdout (effect-style P3).
 */
export const StderrLoggerLive = Layer.mergeAll(
  Logger.replace(Logger.defaultLogger, Logger.prettyLogger({ stderr: true, colors: process.stderr.isTTY === true })),
  Logger.minimumLogLevel(logLevelFromEnv(process.env.CLAWTOOL_LOG_LEVEL))
)
