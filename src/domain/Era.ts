import { metaKey } from "./HostEra.js"
import type { JsonObject } from "./Mcp.js"
import { isJsonObject } from "./Surface.js"

/**
 * The two MCP eras a source may speak (issue 27, ADR 033): legacy opens with `initialize` (2024-10-07 … 2025-11-25),
 * modern sends every request with the 2026-07-28 `_meta` envelope and has no session. Plain data: the SDK stays in
 * SourceClient.
 */

/** `[sources.x] protocol`: `auto` probes once and keeps the verdict with the catalog. */
export type ProtocolSetting = "auto" | "legacy" | "modern"

/** The revision clawtool speaks to a modern child. */
export const modernVersion = "2026-07-28"

/** What clawtool knows of a child's era: a modern one with the `server/discover` answer it adopts on the next start. */
export type EraVerdict = { readonly era: "legacy" } | { readonly era: "modern"; readonly discover: JsonObject }

export const legacyVerdict: EraVerdict = { era: "legacy" }

/** The spec's error a modern server answers an unknown version (or a legacy `initialize`) with. */
export const unsupportedVersionCode = -32022

/**
 * The verdict of a `server/discover` probe's answer (spec, basic/transports/stdio "Backward Compatibility"): a
 * DiscoverResult naming the modern version is modern; any error, another answer, or none at all is legacy. Never keyed
 * to one error code of the legacy side (legacy servers answer -32601, -32602 or nothing).
 */
export const verdictOf = (response: unknown): EraVerdict => {
  if (!isJsonObject(response) || !isJsonObject(response.result)) return legacyVerdict
  const versions = response.result.supportedVersions
  return Array.isArray(versions) && versions.includes(modernVersion)
    ? { era: "modern", discover: response.result }
    : legacyVerdict
}

/**
 * What a start stands on: `legacy` config → legacy; a kept verdict (with `auto`, or a modern one with `modern`) → that;
 * `modern` config otherwise → none (the pinned client asks the server itself); `auto` with nothing kept → a probe.
 */
export const startingVerdict = (
  protocol: ProtocolSetting | undefined,
  kept: EraVerdict | undefined
): EraVerdict | "probe" | undefined =>
  protocol === "legacy"
    ? legacyVerdict
    : kept !== undefined && (protocol !== "modern" || kept.era === "modern")
      ? kept
      : protocol === "modern"
        ? undefined
        : "probe"

/** A verdict as the catalog cache stores it; none for anything else (a foreign or older entry). */
export const verdictFromJson = (value: unknown): EraVerdict | undefined =>
  isJsonObject(value) && value.era === "legacy"
    ? legacyVerdict
    : isJsonObject(value) && value.era === "modern" && isJsonObject(value.discover)
      ? { era: "modern", discover: value.discover }
      : undefined

/** The `_meta` keys every modern request carries (the spec's envelope). */
export const envelopeOf = (capabilities: JsonObject, clientInfo: JsonObject): JsonObject => ({
  [metaKey.protocolVersion]: modernVersion,
  [metaKey.clientCapabilities]: capabilities,
  [metaKey.clientInfo]: clientInfo
})

/** An envelope made for another host's capabilities (none: as it is). */
export const envelopeFor = (envelope: JsonObject, hostCapabilities: JsonObject | undefined): JsonObject =>
  hostCapabilities === undefined ? envelope : { ...envelope, [metaKey.clientCapabilities]: hostCapabilities }

/** One request a modern child embeds in an `input_required` result (elicitation, sampling or roots). */
export interface InputRequest {
  readonly method: string
  readonly params: JsonObject | undefined
}

/**
 * A modern child's `input_required` answer to tools/call, prompts/get or resources/read (MRTR): what it needs before
 * the call can go on, and the opaque state it wants back on the retry. The seam for both host eras: a legacy host is
 * asked each request for real (SourceClient), a modern host can be handed the value as it is.
 */
export interface InputRequired {
  readonly inputRequests: Readonly<Record<string, InputRequest>>
  readonly requestState: string | undefined
}

/**
 * A modern host's tools/call, prompts/get or resources/read on its way to a child (MRTR passthrough, ADR 033): a modern
 * child's `input_required` goes back to the host as it is, its own `requestState` wrapped by `seal` into clawtool's
 * (which names the instance it came from); on the host's retry the answers and the child's own state go to the child
 * again. A legacy child ignores it.
 */
export interface InputPass {
  /** On a retry: the host's answers, keyed as the child asked. */
  readonly inputResponses?: JsonObject | undefined
  /** On a retry: the child's own state, out of clawtool's. */
  readonly requestState?: string | undefined
  /** On a retry: the instance whose state it carries (the retry must reach that child). */
  readonly issuer?: string | undefined
  /** The state the host gets for the child's (none: too long to carry). */
  readonly seal: (instance: string, requestState: string | undefined) => string | undefined
}

/** The requests a modern child may answer `input_required` (2026-07-28, basic/patterns/mrtr). */
export const inputMethods: ReadonlySet<string> = new Set(["tools/call", "prompts/get", "resources/read"])

/** Rounds of input a modern child may ask for in one call before it fails (the v2 SDK's legacy shim allows 8). */
export const maxInputRounds = 8

/** The input a result asks for; none for a complete result. */
export const inputRequiredOf = (result: JsonObject): InputRequired | undefined => {
  if (result.resultType !== "input_required") return undefined
  const requests = isJsonObject(result.inputRequests) ? result.inputRequests : {}
  const inputRequests: Record<string, InputRequest> = {}
  for (const [key, request] of Object.entries(requests)) {
    if (isJsonObject(request) && typeof request.method === "string") {
      inputRequests[key] = { method: request.method, params: isJsonObject(request.params) ? request.params : undefined }
    }
  }
  return { inputRequests, requestState: typeof result.requestState === "string" ? result.requestState : undefined }
}

/** The retry's params: the original ones with the answers and the child's state echoed verbatim. */
export const retryParams = (
  params: JsonObject,
  needed: InputRequired,
  inputResponses: Readonly<Record<string, JsonObject>>
): JsonObject => ({
  ...params,
  inputResponses,
  ...(needed.requestState === undefined ? {} : { requestState: needed.requestState })
})

/** The child's own name in a modern result's `_meta` (HostEra's metaKey.serverInfo). */
const serverInfoKey = "io.modelcontextprotocol/serverInfo"

/**
 * A complete modern result as a legacy peer expects it: without the era's discriminator, and without the child's
 * serverInfo in `_meta` (clawtool is the host's server: a modern host gets clawtool's stamp instead, and a second
 * `_meta` would shadow it in the spliced JSON).
 */
export const completeResult = <A extends JsonObject>(result: A): A => {
  const meta = result._meta
  const named = isJsonObject(meta) && serverInfoKey in meta
  if (!("resultType" in result) && !named) return result
  const { resultType: _, _meta: __, ...rest } = result
  if (!named) return (meta === undefined ? rest : { ...rest, _meta: meta }) as unknown as A
  const { [serverInfoKey]: ___, ...others } = meta
  return (Object.keys(others).length === 0 ? rest : { ...rest, _meta: others }) as unknown as A
}
