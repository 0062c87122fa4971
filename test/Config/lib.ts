// Helpers shared by the Config tests.
import { assert } from "@effect/vitest"
import { Either } from "effect"
import type { ConfigError } from "../../src/domain/Errors.js"
import { parseConfig } from "../../src/services/Config.js"

export const failure = (text: string, file = "/x/config.toml"): ConfigError => {
  const result = parseConfig(text, file)
  if (Either.isRight(result)) return assert.fail(`expected a ConfigError, got ${JSON.stringify(result.right)}`)
  return result.left
}

export const fs = `[sources.fs]\ncommand = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"]\n`

/** The whole message of the ConfigError `parseConfig` gives for `text` (file:line, key path and detail). */
export const rejected = (text: string, file = "/x/config.toml"): string => {
  const result = parseConfig(text, file)
  if (Either.isRight(result)) return assert.fail(`expected a ConfigError, got ${JSON.stringify(result.right)}`)
  return result.left.message
}

export const json = (value: unknown) => JSON.stringify(value, null, 2)
