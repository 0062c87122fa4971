import { Schema } from "effect"
import { loginCommand } from "../SourceClient/RemoteAuth.js"

/**
 * A remote source has no usable OAuth grant and serve/health cannot get one without a person: there are no tokens, the
 * refresh token was refused, or the authorization server wants the browser step. Thrown from the provider's callbacks
 * (redirectToAuthorization and friends) so it reaches whoever called the SDK transport unchanged; the source is then
 * `unauthenticated` with this message as its reason. Never carries a token or a secret.
 */
export class AuthRequired extends Schema.TaggedError<AuthRequired>("clawtool/AuthRequired")("AuthRequired", {
  instance: Schema.String,
  reason: Schema.Literal("NoGrant", "LoginNeeded"),
  detail: Schema.String
}) {
  override get message() {
    return `source "${this.instance}" needs an OAuth login (${this.detail}); run: ${loginCommand(this.instance)}`
  }
}

/** `clawtool auth login|logout|status` failed: which step, and why (no secrets in `detail`). */
export class OAuthError extends Schema.TaggedError<OAuthError>("clawtool/OAuthError")("OAuthError", {
  instance: Schema.String,
  reason: Schema.Literal("NotRemote", "NoOAuth", "Callback", "Flow", "Store", "Timeout"),
  detail: Schema.String
}) {
  override get message() {
    return `auth ${this.instance}: ${this.detail}`
  }
}
