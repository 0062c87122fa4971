import { Context, Layer, Option } from "effect"
import * as Path from "node:path"
import { defaultConfigFile } from "../../paths.js"

/** Where the config came from on the command line; the Config service resolves the rest. */
export class ConfigLocation extends Context.Tag("clawtool/ConfigLocation")<
  ConfigLocation,
  { readonly config: Option.Option<string>; readonly secrets: Option.Option<string> }
>() {
  static readonly layer = (options: {
    readonly config?: Option.Option<string>
    readonly secrets?: Option.Option<string>
  }) =>
    Layer.succeed(ConfigLocation, {
      config: options.config ?? Option.none(),
      secrets: options.secrets ?? Option.none()
    })
}

export type Env = Readonly<Record<string, string | undefined>>

/**
 * The process environment as Config and Secrets see it. A Reference, so production needs no layer (it defaults to
 * `process.env`) and tests swap it with `Effect.provideService(ProcessEnv, { … })` or `Layer.succeed(ProcessEnv, { … })`.
 */
export class ProcessEnv extends Context.Reference<ProcessEnv>()("clawtool/ProcessEnv", {
  defaultValue: (): Env => process.env
}) {}

/** "json" for the mcpServers/servers files of Claude Desktop, Cursor and VS Code; TOML otherwise. */
export type ConfigFormat = "toml" | "json"

export const formatOf = (file: string): ConfigFormat => (file.toLowerCase().endsWith(".json") ? "json" : "toml")

/** Which rule picked the config path, so a missing file can be told apart from a missing default. */
export type ConfigOrigin = "flag" | "env" | "xdg" | "home"

export interface ConfigPaths {
  /** Absolute path of the config file to read (it may not exist). */
  readonly file: string
  readonly origin: ConfigOrigin
  /** Absolute path of secrets.toml: `--secrets`, else beside `file`. */
  readonly secretsFile: string
}

/** `--config` > the default config file (paths.ts: `$CLAWTOOL_CONFIG` > `$XDG_CONFIG_HOME/…` > `~/.config/…`). Pure. */
export const resolveConfigPaths = (
  location: { readonly config: Option.Option<string>; readonly secrets: Option.Option<string> },
  env: Env
): ConfigPaths => {
  const { file, origin }: { readonly file: string; readonly origin: ConfigOrigin } = Option.isSome(location.config)
    ? { file: location.config.value, origin: "flag" }
    : defaultConfigFile(env)
  const absolute = Path.resolve(file)
  return {
    file: absolute,
    origin,
    secretsFile: Path.resolve(
      Option.getOrElse(location.secrets, () => Path.join(Path.dirname(absolute), "secrets.toml"))
    )
  }
}
