import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js"
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js"
import { Context, type Effect } from "effect"
import type { OAuthConfig } from "../../domain/Config.js"
import type { SourceError } from "../../domain/Errors.js"

/**
 * A source's SDK OAuth provider, and what its transport's `fetch` goes through: a request refused with 401 is sent
 * again with the token another call's refresh (or the one refresh the refusals share) put in its place (ADR 019).
 */
export interface SourceAuthProvider extends OAuthClientProvider {
  readonly retryingFetch: (fetch: FetchLike) => FetchLike
}

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
    ) => Effect.Effect<SourceAuthProvider, SourceError>
  }
>() {}

/** What a source without a login is told to run. */
export const loginCommand = (instance: string): string => `clawtool auth login ${instance}`
