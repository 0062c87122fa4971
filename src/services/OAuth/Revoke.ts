/**
 * RFC 7009 token revocation for `clawtool auth logout` (issue 11): the stored refresh and access tokens are revoked at
 * the authorization server's `revocation_endpoint` when its metadata names one, so a copied token file stops working
 * too. Best effort and bounded: the local grant is removed whatever the server answers, and the answer is reported.
 */
import type { OAuthSettings } from "./Provider.js"
import * as Store from "./Store.js"

export type Revocation =
  | { readonly kind: "revoked"; readonly endpoint: string }
  /** No token stored: nothing to revoke. */
  | { readonly kind: "nothing" }
  /** The server's metadata names no revocation endpoint: the tokens stay valid until they expire. */
  | { readonly kind: "unsupported" }
  | { readonly kind: "failed"; readonly detail: string }

const originOf = (url: string) => {
  try {
    return new URL(url).origin
  } catch {
    return url
  }
}

export const revoke = async (record: Store.Record, settings: OAuthSettings, timeoutMs = 5_000): Promise<Revocation> => {
  const grant = Store.currentGrant(record)
  // The refresh token first: revoking it also ends the access tokens issued from it (RFC 7009 §2.1).
  const tokens = [
    { token: grant.tokens?.refresh_token, hint: "refresh_token" },
    { token: grant.tokens?.access_token, hint: "access_token" }
  ].flatMap(({ token, hint }) => (token === undefined || token === "" ? [] : [{ token, hint }]))
  if (tokens.length === 0) return { kind: "nothing" }
  // OAuth metadata (RFC 8414) names it; the SDK's OpenID metadata type leaves it out, though providers publish it there too.
  const metadata = record.discovery?.authorizationServerMetadata as
    { readonly revocation_endpoint?: unknown } | undefined
  const endpoint = typeof metadata?.revocation_endpoint === "string" ? metadata.revocation_endpoint : undefined
  if (endpoint === undefined) return { kind: "unsupported" }
  const clientId = settings.clientId ?? grant.client?.client_id
  const registeredSecret =
    grant.client !== undefined && "client_secret" in grant.client ? grant.client.client_secret : undefined
  const clientSecret = settings.clientSecret ?? registeredSecret
  try {
    for (const { token, hint } of tokens) {
      const body = new URLSearchParams({ token, token_type_hint: hint })
      if (clientId !== undefined) body.set("client_id", clientId)
      if (clientSecret !== undefined) body.set("client_secret", clientSecret)
      const response = await fetch(endpoint, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body,
        signal: AbortSignal.timeout(timeoutMs)
      })
      // 200 also for a token the server no longer knows (RFC 7009 §2.2).
      if (!response.ok) return { kind: "failed", detail: `HTTP ${response.status} from ${originOf(endpoint)}` }
    }
    return { kind: "revoked", endpoint: originOf(endpoint) }
  } catch (cause) {
    return {
      kind: "failed",
      detail: `${originOf(endpoint)}: ${cause instanceof Error ? cause.message : String(cause)}`
    }
  }
}
