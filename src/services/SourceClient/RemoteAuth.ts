import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js"
import { Context, type Effect } from "effect"
import type { OAuthConfig } from "../../domain/Config.js"
import type { SourceError } from "../../domain/Errors.js"

/**
 * The OAuth client of remote sources with `oauth` set: one SDK provider per source, backed by the token store that
 * `clawtool auth login` fills. Looked up with `Effect.serviceOption`: without it (commands that never authenticate,
 * tests) a source with `oauth` set is `unauthenticated` and its reason names the login command.
 *
 * `provider` never opens a browser nor waits for one: with no usable tokens it may still return a provider (the SDK
 * then refreshes or answers `UnauthorizedError`), or fail with a SourceError whose reason is `Unauthenticated`.
 */
export class RemoteAuth extends Context.Tag("clawtool/RemoteAuth")<
  RemoteAuth,
  {
    readonly provider: (
      instance: string,
      url: string,
      oauth: OAuthConfig
    ) => Effect.Effect<OAuthClientProvider, SourceError>
  }
>() {}

/** What a source without a login is told to run. */
export const loginCommand = (instance: string): string => `clawtool auth login ${instance}`
