import { Layer, type Option } from "effect"
import { Config, ConfigLocation } from "../services/Config.js"
import { Gateway } from "../services/Gateway.js"
import { Secrets } from "../services/Secrets.js"
import { Sources } from "../services/Sources.js"

export interface Location {
  readonly config: Option.Option<string>
  readonly secrets: Option.Option<string>
}

/** Config and Secrets only: the static commands (`source list`) spawn nothing. */
export const StaticLive = (location: Location) =>
  Layer.merge(Config.Default, Secrets.Default).pipe(Layer.provide(ConfigLocation.layer(location)))

/** Everything `clawtool health` needs: the same start path as serve, without the MCP edge. */
export const HealthLive = (location: Location) => Sources.Default.pipe(Layer.provide(ConfigLocation.layer(location)))

/** `clawtool serve`: Gateway over Registry over Sources, built once (layers are memoised per graph). */
export const ServeLive = (location: Location) => Gateway.Default.pipe(Layer.provide(ConfigLocation.layer(location)))
