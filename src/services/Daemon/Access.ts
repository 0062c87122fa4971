import { defaultView } from "../../domain/Config.js"
import { choices } from "../../domain/Suggest.js"
import { bearerMatches } from "../../transport/HttpGuard.js"

/*
 * Who reaches which view on the daemon (issue 26, docs/decisions/031): `/mcp` serves the whole catalog, `/mcp/<name>`
 * profile <name>; `[http] token` reaches every view, each `[http.tokens.<name>]` token only the views it lists
 * ("default" for /mcp). Pure: the Daemon asks, and answers what this says. A token is known by its name only; its
 * value is compared, never shown.
 */

/** A bearer token the daemon accepts: its name (for logs and the audit log), its value, and the views it reaches. */
export interface NamedToken {
  readonly name: string
  readonly value: string
  /** Profile names and "default" (/mcp); "every" for `[http] token`. */
  readonly reaches: ReadonlySet<string> | "every"
}

/** The name `[http] token` goes by in logs and the audit log. */
export const mainTokenName = "http"

/** The view a request path names: undefined for `/mcp` (the default view), the profile for `/mcp/<name>`. */
export type McpPath = { readonly profile: string | undefined } | undefined

export const mcpPath = (path: string): McpPath => {
  const match = /^\/mcp(?:\/([^/]+))?\/?$/.exec(path)
  if (match === null) return undefined
  return { profile: match[1] === undefined ? undefined : decodeURIComponent(match[1]) }
}

export type Decision =
  | { readonly ok: true; readonly profile: string | undefined; readonly token: string | undefined }
  | {
      readonly ok: false
      readonly status: 401 | 403 | 404
      readonly message: string
      /** The token's name, when one was recognised (for the log line). */
      readonly token?: string | undefined
    }

/**
 * Every token is compared (in constant time, and all of them, so the time taken says nothing of which one matched or
 * how many there are); then the view must exist, then the token must reach it.
 */
export const decide = (request: {
  readonly tokens: ReadonlyArray<NamedToken>
  readonly authorization: string | undefined
  readonly profile: string | undefined
  /** The profiles the config defines now. */
  readonly profiles: ReadonlyArray<string>
}): Decision => {
  let matched: NamedToken | undefined
  for (const token of request.tokens) {
    if (bearerMatches(request.authorization, token.value) && matched === undefined) matched = token
  }
  if (request.tokens.length > 0 && matched === undefined) {
    return { ok: false, status: 401, message: "Unauthorized: a valid Authorization: Bearer token is required" }
  }
  const { profile } = request
  if (profile !== undefined && !request.profiles.includes(profile)) {
    return {
      ok: false,
      status: 404,
      message: `Not found: no profile ${JSON.stringify(profile)}${choices(request.profiles, { label: "profiles", none: "the daemon serves no profiles" })} (and /mcp)`,
      token: matched?.name
    }
  }
  const view = profile ?? defaultView
  if (matched !== undefined && matched.reaches !== "every" && !matched.reaches.has(view)) {
    return {
      ok: false,
      status: 403,
      message: `Forbidden: token "${matched.name}" does not reach ${profile === undefined ? "/mcp" : `/mcp/${profile}`}`,
      token: matched.name
    }
  }
  return { ok: true, profile, token: matched?.name }
}
