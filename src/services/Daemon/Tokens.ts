import { Effect, type Option } from "effect"
import type { HttpConfig } from "../../domain/Config.js"
import type { ConfigError } from "../../domain/Errors.js"
import { expand } from "../Secrets.js"
import { defaultView } from "../../domain/Config.js"
import { mainTokenName, type NamedToken } from "./Access.js"

/*
 * The daemon's bearer tokens (issue 26, ADR 031), as the config in effect says: resolved at start and again after each
 * reload that changes `[http] token` or `[http.tokens]`, and which open sessions a change ends.
 */

/**
 * `[http] token` (reaching every view) and each `[http.tokens.<name>]`, their `${VAR}`s resolved; an empty one, or
 * two with one value (they could not be told apart), is a ConfigError naming its key.
 */
export const resolve = (
  http: HttpConfig,
  lookup: (name: string) => Option.Option<string>,
  invalid: (keyPath: string, detail: string) => ConfigError
): Effect.Effect<ReadonlyArray<NamedToken>, ConfigError> =>
  Effect.gen(function* () {
    const value = (keyPath: string, text: string) => {
      const expanded = expand(text, lookup)
      return expanded.missing.length > 0 || expanded.value === ""
        ? Effect.fail(
            invalid(
              keyPath,
              `the token is empty: set ${expanded.missing.join(", ") || "it"} (secrets.toml [scopes.global] or the environment)`
            )
          )
        : Effect.succeed(expanded.value)
    }
    const tokens: Array<NamedToken> = []
    if (http.token !== undefined) {
      tokens.push({ name: mainTokenName, value: yield* value("http.token", http.token), reaches: "every" })
    }
    for (const [name, named] of Object.entries(http.tokens)) {
      const resolved = yield* value(`http.tokens.${name}.token`, named.token)
      const same = tokens.find((other) => other.value === resolved)
      if (same !== undefined) {
        return yield* invalid(`http.tokens.${name}.token`, `has the same value as the token "${same.name}"`)
      }
      tokens.push({ name, value: resolved, reaches: new Set(named.profiles) })
    }
    return tokens
  })

/** What a reload did to the tokens, by name (never by value). */
export const changes = (before: ReadonlyArray<NamedToken>, after: ReadonlyArray<NamedToken>) => {
  const named = (tokens: ReadonlyArray<NamedToken>) => new Map(tokens.map((token) => [token.name, token]))
  const old = named(before)
  const next = named(after)
  const same = (a: NamedToken, b: NamedToken) =>
    a.value === b.value &&
    (a.reaches === "every" || b.reaches === "every"
      ? a.reaches === b.reaches
      : a.reaches.size === b.reaches.size &&
        [...a.reaches].every((view) => (b.reaches as ReadonlySet<string>).has(view)))
  return {
    added: after.filter((token) => !old.has(token.name)).map((token) => token.name),
    removed: before.filter((token) => !next.has(token.name)).map((token) => token.name),
    changed: after.filter((token) => old.has(token.name) && !same(old.get(token.name)!, token)).map((t) => t.name)
  }
}

/**
 * Whether an open session may go on under the config in effect: its profile still defined, and the token it came with
 * (by name; none when the daemon asked for none) still there with the same value and still reaching its view. A token
 * whose value changed ends its sessions, as a removed one does: whoever holds the old value is no longer let in.
 */
export const stillAllowed = (
  session: { readonly profile: string | undefined; readonly token: NamedToken | undefined },
  tokens: ReadonlyArray<NamedToken>,
  profiles: ReadonlyArray<string>
): boolean => {
  if (session.profile !== undefined && !profiles.includes(session.profile)) return false
  if (tokens.length === 0) return true
  const now = tokens.find((token) => token.name === session.token?.name)
  return (
    now !== undefined &&
    now.value === session.token?.value &&
    (now.reaches === "every" || now.reaches.has(session.profile ?? defaultView))
  )
}
