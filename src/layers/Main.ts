import { Effect, Layer, Option } from "effect"
import { ConfigChain } from "../domain/Environment.js"
import { CurrentLimits } from "../domain/Limits.js"
import { Audit } from "../services/Audit.js"
import { Config, ConfigLocation } from "../services/Config.js"
import { CoreTools } from "../services/CoreTools.js"
import { Daemon } from "../services/Daemon.js"
import { Gateway } from "../services/Gateway.js"
import { Metrics } from "../services/Metrics.js"
import { declaredCapabilities, HostSessions, SharedHosts } from "../services/HostSessions.js"
import { OAuth } from "../services/OAuth.js"
import { Registry } from "../services/Registry.js"
import { Reload } from "../services/Reload.js"
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

/** Config, Secrets and the OAuth store: `auth` starts no source. */
export const AuthLive = (location: Location) => OAuth.Default.pipe(Layer.provide(ConfigLocation.layer(location)))

/** `clawtool connect`: the relay to a daemon; the config is read only to find the secrets file (for the token). */
export const ConnectLive = (location: Location) => ConfigLocation.layer(location)

/**
 * Everything `clawtool health`, `tools list` and `tools export-typescript` need: the same start path as serve
 * (so the catalogs agree), without the MCP edge. One graph, so Registry shares Sources' children; the Config they
 * read is provided too, for the selector warnings and `tools enable`/`disable`.
 */
export const HealthLive = (location: Location) =>
  Layer.merge(Sources.Default, Registry.Default).pipe(
    Layer.provide(CoreTools.Provider),
    Layer.provide(FromConfigLive),
    Layer.provideMerge(Config.Default),
    Layer.provide(ConfigLocation.layer(location))
  )

/**
 * The Gateway's stack under `top`: CoreTools (the Registry's tool provider), the audit log (issue 25; shared by the
 * Gateway's call paths and the Registry's health), HostSessions, Telemetry, then `extra` (what the command adds that
 * reads the config), the config itself and its location. Built once per graph (layers are memoised), so the Config
 * that Telemetry reads is the one Sources uses, and Reload (ADR 016) shares the same Sources and HostSessions.
 * Telemetry is built first so every service captures its tracer, and closed last so the shutdown's spans are flushed.
 */
const gatewayStack = <ROut, E, RIn, XOut, XE, XIn>(
  top: Layer.Layer<ROut, E, RIn>,
  location: Location,
  extra: Layer.Layer<XOut, XE, XIn>
) =>
  top.pipe(
    Layer.provide(CoreTools.Provider),
    Layer.provide(Audit.Default),
    Layer.provide(HostSessions.Default),
    Layer.provide(TelemetryLive()),
    Layer.provide(extra),
    Layer.provide(FromConfigLive),
    Layer.provideMerge(Config.Default),
    Layer.provide(ConfigLocation.layer(location))
  )

/** `clawtool serve` over stdio only (the library's entry; the CLI's serve is DaemonLive). */
export const ServeLive = (location: Location) =>
  gatewayStack(Layer.merge(Gateway.Default, Reload.Default), location, Layer.empty)

/**
 * `clawtool call`: serve's stack for one in-process host; the Registry (the same one, by memoisation) and Config for
 * the command's own checks.
 */
export const CallLive = (location: Location) =>
  gatewayStack(Layer.merge(Gateway.Default, Registry.Default), location, Layer.empty)

/** `serve --listen` or `[http] listen`: the address to serve HTTP on; none means stdio. */
export const listenAddress = (flag: Option.Option<string>) =>
  Effect.map(Config, ({ config }) => Option.orElse(flag, () => Option.fromNullable(config.http.listen)))

/**
 * In daemon mode children are shared by every session: they declare `[http] child_capabilities`, and a session unused
 * for `[http] session_idle` expires (ADR 020).
 */
const SharedHostsLive = (flag: Option.Option<string>) =>
  Layer.unwrapEffect(
    Effect.map(Effect.zip(listenAddress(flag), Config), ([listen, { config }]) =>
      Option.isNone(listen)
        ? Layer.empty
        : Layer.succeed(SharedHosts, {
            childCapabilities: declaredCapabilities(config.http.child_capabilities),
            sessionIdle: config.http.session_idle
          })
    )
  )

/**
 * The daemon's metrics and the dashboard's call data (issue 29): only with a listen address and `[http] metrics` or
 * `ui` on, so stdio serve never loads prom-client.
 */
const MetricsLive = (flag: Option.Option<string>) =>
  Layer.unwrapEffect(
    Effect.map(Effect.zip(listenAddress(flag), Config), ([listen, { config }]) =>
      Option.isNone(listen) || !(config.http.metrics || config.http.ui) ? Layer.empty : Metrics.Live
    )
  )

/**
 * `clawtool serve` with a possible `--listen`: the Gateway (stdio) and the Daemon (HTTP) over one graph; which one
 * runs is decided by the command once the config is read, and the host side of the children follows it. Reload
 * (ADR 016) shares the same Sources and HostSessions, as in ServeLive.
 */
export const DaemonLive = (location: Location, listen: Option.Option<string>) =>
  gatewayStack(
    Layer.mergeAll(Gateway.Default, Daemon.Default, Reload.Default).pipe(Layer.provide(MetricsLive(listen))),
    location,
    SharedHostsLive(listen)
  )
