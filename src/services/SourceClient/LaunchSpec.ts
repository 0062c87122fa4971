import type { Duration } from "effect"
import type { RemoteTransport } from "../../domain/Config.js"
import type { ExitInfo } from "../../domain/Connection.js"
import type { EraVerdict, ProtocolSetting } from "../../domain/Era.js"
import type { HostPort } from "../HostBridge.js"
import type { Timers } from "./Relay.js"
import type { SourceAuthProvider } from "./RemoteAuth.js"

/** Everything needed to start one child. The environment is final: Sources already applied default-deny. */
export interface LaunchSpec {
  readonly instance: string
  readonly command: readonly [string, ...Array<string>]
  readonly env: Readonly<Record<string, string>>
  readonly cwd?: string | undefined
  /** Each stderr line of the child (bounded by the caller), and stdout lines that are not JSON-RPC. */
  readonly onStderrLine: (line: string) => void
  readonly onGarbage: (line: string) => void
  /** Every exit of the child process, including during initialize (Health's last exit). */
  readonly onExit?: ((exit: ExitInfo) => void) | undefined
  /** `call_timeout`: a tools/call with no answer (or progress) for this long is cancelled at the child. */
  readonly callTimeout?: Duration.Duration | undefined
  /** The host side (capabilities to declare, reverse requests, notifications); none declares nothing (tests). */
  readonly host?: HostPort | undefined
  /** The relay's call_timeout timers: Node's unless a test injects a clock it advances itself. */
  readonly relayTimers?: Timers | undefined
  /** `[sources.x] protocol` (ADR 033); absent is `auto`. */
  readonly protocol?: ProtocolSetting | undefined
  /** The era verdict kept with the persisted catalog: with `auto`, used instead of a probe. */
  readonly knownEra?: EraVerdict | undefined
  /** How long the era probe waits for a silent server before it counts as legacy. */
  readonly probeTimeout?: Duration.Duration | undefined
}

/** Everything needed to reach one remote source (ADR 018). Headers are final (secrets resolved): never log them. */
export interface RemoteLaunchSpec {
  readonly instance: string
  readonly url: string
  readonly transport: RemoteTransport
  readonly headers: Readonly<Record<string, string>>
  /** The source's OAuth client, when `oauth` is set (RemoteAuth). */
  readonly authProvider?: SourceAuthProvider | undefined
  readonly callTimeout?: Duration.Duration | undefined
  readonly host?: HostPort | undefined
  /** `[sources.x] protocol` (ADR 033); absent is `auto`. */
  readonly protocol?: ProtocolSetting | undefined
  /** The era verdict kept with the persisted catalog: with `auto`, used instead of a probe. */
  readonly knownEra?: EraVerdict | undefined
  /** How long the era probe waits for an answer before the server counts as legacy. */
  readonly probeTimeout?: Duration.Duration | undefined
}

/** A remote spec: one with a url. */
export const isRemoteSpec = (spec: LaunchSpec | RemoteLaunchSpec): spec is RemoteLaunchSpec => "url" in spec
