import { Effect, Layer, type Option } from "effect"
import { ConfigChain } from "../domain/Environment.js"
import { CurrentLimits } from "../domain/Limits.js"
import { Config, ConfigLocation } from "../services/Config.js"
import { Gateway } from "../services/Gateway.js"
import { OAuth } from "../services/OAuth.js"
import { Registry } from "../services/Registry.js"
import { Secrets } from "../services/Secrets.js"
import { Sources } from "../services/Sources.js"
import { TelemetryLive } from "./Telemetry.js"

export interface Location {
  readonly config: Option.Option<string>
  readonly secrets: Option.Option<string>
}

/** The config's `[limits]` for both transports (ADR 010); without this layer the defaults apply. */
const LimitsLive = Layer.effect(
  CurrentLimits,
  Effect.map(Config, ({ config: { limits } }) => ({
    maxDepth: limits.max_depth,
    maxLineBytes: limits.max_line_bytes,
    maxInFlight: limits.max_in_flight
  }))
)

/** The config chain children get (ADR 013); without this layer children get no marker. */
const ChainLive = Layer.effect(
  ConfigChain,
  Effect.map(Config, ({ chain }) => chain)
)

/** What the config sets for the running services beside its own values; RemoteAuth: OAuth from the token store. */
const FromConfigLive = Layer.mergeAll(LimitsLive, ChainLive, OAuth.RemoteAuthLive)

/** Config and Secrets only: the static commands (`source list`) spawn nothing. */
export const StaticLive = (location: Location) =>
  Layer.merge(Config.Default, Secrets.Default).pipe(Layer.provide(ConfigLocation.layer(location)))

/**
 * Everything `clawtool health`, `tools list` and `tools export-typescript` need: the same start path as serve
 * (so the catalogs agree), without the MCP edge. One graph, so Registry shares Sources' children.
 */
export const HealthLive = (location: Location) =>
  Layer.merge(Sources.Default, Registry.Default).pipe(
    Layer.provide(FromConfigLive),
    Layer.provide(Config.Default),
    Layer.provide(ConfigLocation.layer(location))
  )

/**
 * `clawtool serve`: Gateway over Registry over Sources, built once (layers are memoised per graph, so the
 * Config that Telemetry reads is the one Sources uses). Telemetry is built first so every service captures
 * its tracer, and closed last so the spans of the shutdown are flushed too.
 */
export const ServeLive = (location: Location) =>
  Gateway.Default.pipe(
    Layer.provide(TelemetryLive()),
    Layer.provide(FromConfigLive),
    Layer.provide(Config.Default),
    Layer.provide(ConfigLocation.layer(location))
  )
