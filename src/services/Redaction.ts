import type { Transport } from "../transport/Sdk.js"
import { Effect, MutableRef, Option } from "effect"
import { type ClawtoolConfig, oauthOf } from "../domain/Config.js"
import { StdioServerTransport } from "../transport/StdioServerTransport.js"
import { Config } from "./Config.js"
import { Secrets, type SecretStore } from "./Secrets.js"
import * as Redactor from "./Trust/Redactor.js"

/*
 * Which secrets clawtool knows, and the redactor over them that the host edge applies to everything it writes
 * (issue 25, docs/decisions/029 "Redaction"). Held in a MutableRef so the relay reads it synchronously, without an
 * Effect per call (ADR 009); rebuilt when a secret is learned later (OAuth tokens, which change on refresh).
 */

const reference = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g

/**
 * Variables a config commonly passes through to a child that are not secrets: redacting them would mask every path
 * in every result (`${HOME}`), so they are never taken as secrets.
 */
const notSecret = new Set(["HOME", "PATH", "USER", "LOGNAME", "SHELL", "PWD", "TMPDIR", "TEMP", "TMP", "LANG", "TERM"])

/** The `${VAR}` names `template` refers to. */
const referencesOf = (template: string): ReadonlyArray<string> =>
  Array.from(template.matchAll(reference), (match) => match[1]!)

/**
 * Every secret a config makes known (pure; `lookup` resolves a `${VAR}` for an instance as Secrets does): each value of
 * every secrets.toml scope, the values `${VAR}` references resolve to in a source's `env`, `headers` and OAuth
 * `client_secret`, and the daemon's `[http] token`. Named after the variable (a literal token: HTTP_TOKEN).
 */
export const knownSecrets = (
  config: ClawtoolConfig,
  store: SecretStore,
  lookup: (instance: string, name: string) => Option.Option<string>
): ReadonlyArray<Redactor.Secret> => {
  const known: Array<Redactor.Secret> = []
  for (const scope of Object.keys(store.scopes).sort()) {
    for (const [name, value] of Object.entries(store.scopes[scope]!)) known.push({ name, value })
  }
  const resolved = (instance: string, template: string) => {
    for (const name of referencesOf(template)) {
      if (notSecret.has(name)) continue
      Option.map(lookup(instance, name), (value) => known.push({ name, value }))
    }
  }
  for (const [instance, source] of Object.entries(config.sources)) {
    for (const value of Object.values(source.env)) resolved(instance, value)
    for (const value of Object.values(source.headers)) resolved(instance, value)
    Option.map(oauthOf(source), (oauth) => oauth.client_secret !== undefined && resolved(instance, oauth.client_secret))
  }
  const token = config.http.token
  if (token !== undefined) {
    if (referencesOf(token).length === 0) known.push({ name: "HTTP_TOKEN", value: token })
    else resolved("global", token)
  }
  return known
}

/** `OAUTH_<INSTANCE>_ACCESS` / `_REFRESH`: the names an OAuth grant's tokens are redacted under. */
export const oauthNames = (instance: string) => {
  const stem = `OAUTH_${instance.toUpperCase().replace(/-/g, "_")}`
  return { access: `${stem}_ACCESS`, refresh: `${stem}_REFRESH` } as const
}

/** The redactor for what goes to the host; the identity when `[trust] redact_secrets = false`. */
export class Redaction extends Effect.Service<Redaction>()("clawtool/Redaction", {
  effect: Effect.gen(function* () {
    const { config } = yield* Config
    const secrets = yield* Secrets
    const enabled = config.trust.redact_secrets
    let fromConfig = knownSecrets(config, secrets.store, secrets.lookup)
    /** Secrets learned while serving, by name: a refreshed token replaces the one before it. */
    const learned = new Map<string, string>()
    const build = () =>
      enabled
        ? Redactor.make([...fromConfig, ...Array.from(learned, ([name, value]) => ({ name, value }))])
        : Redactor.none
    const current = MutableRef.make(build())

    /** Makes `value` known as `name` (sync, cheap when it already is): the redactor is rebuilt only on a change. */
    const learn = (name: string, value: string | undefined) => {
      if (!enabled || value === undefined || learned.get(name) === value) return
      learned.set(name, value)
      MutableRef.set(current, build())
    }

    /**
     * Redacts everything `transport` sends to the host from now on: clawtool's stdio transport per written line (the
     * relay's answers and the SDK's messages alike, one scan over the line); any other (the daemon's HTTP sessions)
     * per message, walking its strings.
     */
    const guard = (transport: Transport) => {
      if (!enabled) return
      if (transport instanceof StdioServerTransport) {
        transport.redact = (line) => MutableRef.get(current).line(line)
        return
      }
      const send = transport.send.bind(transport)
      transport.send = (message, options) => send(MutableRef.get(current).value(message), options)
    }

    return {
      guard,
      /** A reloaded config or secrets file (ADR 016): the secrets it makes known replace those of the one before. */
      reconfigure: (next: ClawtoolConfig, store: SecretStore, lookup: Parameters<typeof knownSecrets>[2]) =>
        Effect.sync(() => {
          fromConfig = knownSecrets(next, store, lookup)
          MutableRef.set(current, build())
        }),
      /** The redactor now: read it per message, never keep it (it is replaced when a secret is learned). */
      current: () => MutableRef.get(current),
      learn,
      /** An OAuth grant's tokens, as the provider hands them to a remote source's transport. */
      learnTokens: (instance: string, tokens: { readonly access_token: string; readonly refresh_token?: string }) => {
        const names = oauthNames(instance)
        learn(names.access, tokens.access_token)
        learn(names.refresh, tokens.refresh_token)
      }
    } as const
  }),
  dependencies: [Config.Default, Secrets.Default]
}) {}
