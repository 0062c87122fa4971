import { Effect } from "effect"
import type { RpcError } from "../domain/Surface.js"

/**
 * What both edges share about the SDK's shapes, so the relay and the SDK path (and Gateway, SourceClient, Surface)
 * cannot drift apart: McpError's text, the timeout that means "none", and the pagination loop.
 */

/** setTimeout's ceiling: the SDK's 60 s default must not cut long calls; call_timeout (or the peer's cancel) bounds them. */
export const noTimeout = 2_147_483_647

/** A paginated list stops after this many pages (a peer that keeps answering new cursors cannot loop forever). */
export const maxPages = 1000

/** The text of the SDK's McpError for a peer's JSON-RPC error: the relay writes the same, so both paths read alike. */
export const mcpErrorText = (code: number, message: string) => `MCP error ${code}: ${message}`

/** The peer's own message inside an McpError's text (relayed errors carry the peer's words, not the SDK's prefix). */
export const peerMessage = (text: string) => text.replace(/^MCP error -?\d+: /, "")

/**
 * Every page of a list: `page(cursor)` from no cursor until a page has no new string `nextCursor`, at most maxPages.
 * `items` picks the page's entries.
 */
export const paginate = <P extends { readonly nextCursor?: unknown }, A, E, R>(
  page: (cursor: string | undefined) => Effect.Effect<P, E, R>,
  items: (page: P) => ReadonlyArray<A>
): Effect.Effect<Array<A>, E, R> =>
  Effect.gen(function* () {
    const all: Array<A> = []
    let cursor: string | undefined
    for (let count = 0; count < maxPages; count++) {
      const result = yield* page(cursor)
      for (const item of items(result)) all.push(item)
      const next = result.nextCursor
      if (typeof next !== "string" || next === cursor) break
      cursor = next
    }
    return all
  })

/** Thrown from a handler, the SDK answers exactly this JSON-RPC error (it reads `code`, `message` and `data`). */
export const jsonRpcError = (error: RpcError): Error =>
  Object.assign(new Error(error.detail), {
    code: error.code,
    ...(error.data === undefined ? {} : { data: error.data })
  })
