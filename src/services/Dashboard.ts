import { Clock, Effect, Either, Option } from "effect"
import { writeFileAtomic } from "../atomicWrite.js"
import type { HealthRow } from "../domain/Health.js"
import type { JsonObject } from "../domain/Mcp.js"
import { callErrorResult } from "./Gateway/Replies.js"
import { Audit } from "./Audit.js"
import { metered, Metrics } from "./Metrics.js"
import { OAuth } from "./OAuth.js"
import { Pins } from "./Pins.js"
import { Redaction } from "./Redaction.js"
import { Registry } from "./Registry.js"
import { Sources } from "./Sources.js"
import { cachedTail } from "./Trust/AuditTail.js"
import * as PinsCore from "./Trust/Pins.js"
import { outcomeOfError, outcomeOfResult } from "./Trust/AuditLine.js"
import type { OAuthError } from "./OAuth/Errors.js"

/** A health row as the dashboard shows it: the last stderr line only, redacted, and the 15-minute latency line. */
export interface SourceRow {
  readonly name: string
  readonly kind: HealthRow["kind"]
  readonly status: HealthRow["status"]
  readonly reason: string
  readonly toolCount: number
  readonly transport: string
  readonly restarts: number
  readonly startedAt: string | null
  readonly lastStderr: string
  readonly quarantined: number
  readonly latency: ReadonlyArray<number | null>
  /** Unauthenticated, and a remote source with `oauth` set: a Log in button helps it. */
  readonly login: boolean
}

/** A tool waiting for approval: why, whether held, and the unified diff of its pinned and current definitions. */
export interface WaitingTool {
  readonly selector: string
  readonly instance: string
  readonly tool: string
  readonly why: string
  readonly held: boolean
  readonly reason: string
  readonly diff: string
}

/** A login waiting for its redirect, by its `state`: whose, until when, and its code's exchange. */
interface PendingLogin {
  readonly instance: string
  readonly until: number
  readonly finish: (code: string) => Effect.Effect<void, OAuthError>
}

/** How long a login's redirect may take, and how many may wait at once (the oldest goes first). */
const loginLifeMs = 10 * 60_000
const maxPendingLogins = 16

/** Recent calls the page shows. */
const recentShown = 50

const pretty = (definition: object | undefined) =>
  definition === undefined ? "" : `${JSON.stringify(definition, null, 2)}\n`

/**
 * What the daemon's dashboard (issue 29, ADR 034) reads and does, as data: health rows with their redacted stderr and
 * latency, one source's detail, the catalog and ToolSearch, a tool call with its latency and trace id, recent calls,
 * the tools waiting for approval and their approval (the lock file, as `clawtool trust approve` writes it). The HTTP
 * side is Daemon/DashboardRoutes; nothing here knows of requests.
 */
export class Dashboard extends Effect.Service<Dashboard>()("clawtool/Dashboard", {
  dependencies: [Registry.Default, Redaction.Default, Pins.Default, Sources.Default, OAuth.Default],
  effect: Effect.gen(function* () {
    const registry = yield* Registry
    const redaction = yield* Redaction
    const pins = yield* Pins
    const sources = yield* Sources
    const oauth = yield* OAuth
    const metrics = Option.getOrUndefined(yield* Effect.serviceOption(Metrics))
    const redact = (text: string) => redaction.current().text(text)
    const audit = Option.getOrUndefined(yield* Effect.serviceOption(Audit))
    // The dashboard's own calls are audited and counted as a host's are.
    const recorder = metered(
      audit?.recorder(undefined, () => "dashboard"),
      metrics,
      undefined,
      () => "dashboard"
    )
    /** Recent calls: the audit log's end when it is written (other clawtools', before a restart), else the meter's ring. */
    const auditTail = audit?.file === undefined ? undefined : cachedTail(audit.file, recentShown)
    const recentCalls = Effect.map(
      auditTail === undefined ? Effect.succeed(undefined) : Effect.promise(auditTail),
      (fromFile) => (fromFile ?? metrics?.recent.calls() ?? []).slice(-recentShown).reverse()
    )

    const rowOf = (row: HealthRow, now: number): SourceRow => ({
      name: row.name,
      kind: row.kind,
      status: row.status,
      reason: redact(row.reason),
      toolCount: row.toolCount,
      transport: row.package,
      restarts: row.restarts,
      startedAt: row.startedAt,
      lastStderr: redact(row.stderrTail.at(-1) ?? ""),
      quarantined: row.quarantined,
      latency: metrics?.recent.latency(row.name, now) ?? [],
      login: row.kind === "source" && row.status === "unauthenticated" && oauth.canLogin(row.name)
    })

    /** Every row (sources, then the config, pins and audit rows while something is wrong) and the recent calls. */
    const state = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const rows = yield* registry.health
      return {
        sources: rows.map((row) => rowOf(row, now)),
        calls: yield* recentCalls
      }
    })

    /** One source: its row with the whole stderr tail (redacted), last exit, next retry, and its tools. */
    const source = (name: string) =>
      Effect.gen(function* () {
        const row = (yield* registry.health).find((row) => row.name === name && row.kind === "source")
        if (row === undefined) return Option.none()
        const now = yield* Clock.currentTimeMillis
        const catalog = yield* registry.catalog
        return Option.some({
          ...rowOf(row, now),
          stderrTail: row.stderrTail.map(redact),
          lastExit: row.lastExit,
          nextRetryAt: row.nextRetryAt,
          pid: row.pid,
          tools: catalog.entries
            .filter((entry) => entry.instance === name)
            .map((entry) => ({ wire: entry.wire, tool: entry.original, status: entry.status, rule: entry.rule }))
        })
      })

    /** The listed tools (every one, or ToolSearch's hits for `query`) with their descriptions and input schemas. */
    const tools = (query: string) =>
      Effect.gen(function* () {
        const catalog = yield* registry.catalog
        const byName = new Map(catalog.entries.map((entry) => [entry.wire, entry]))
        const listed = catalog.entries.filter((entry) => entry.listed)
        const found =
          query.trim() === ""
            ? listed
            : (yield* registry.search(query, 50)).hits.flatMap((hit) => byName.get(hit.name) ?? [])
        return found.map((entry) => ({
          name: entry.wire,
          source: entry.kind === "core" ? "core" : entry.instance,
          description: entry.tool.description ?? "",
          inputSchema: entry.tool.inputSchema
        }))
      })

    /** Calls a tool as a host would; the result redacted, the latency and the span's trace id; counted as any call. */
    const call = (name: string, args: JsonObject) =>
      Effect.gen(function* () {
        recorder?.begin?.()
        const at = yield* Clock.currentTimeMillis
        const started = performance.now()
        const span = yield* Effect.currentSpan.pipe(Effect.option)
        const answered = yield* Effect.either(registry.call(name, { arguments: args }))
        const durationMs = performance.now() - started
        const route = registry.routeNow(name)
        const traceId = Option.isSome(span) ? span.value.traceId : undefined
        const result = Either.isRight(answered) ? answered.right : callErrorResult(answered.left)
        recorder?.record({
          at,
          durationMs,
          session: undefined,
          client: "dashboard",
          instance: route === "core" ? "core" : route?.instance,
          tool: route === undefined || route === "core" ? name : route.tool,
          outcome: Either.isRight(answered) ? outcomeOfResult(result) : outcomeOfError(answered.left),
          arguments: undefined,
          bytesOut: 0,
          traceId
        })
        return { result: redaction.current().value(result), durationMs, traceId }
      }).pipe(Effect.withSpan("Dashboard.call", { kind: "server", attributes: { "gen_ai.tool.name": name } }))

    /** Every tool the lock file holds or warns about, with the diff `clawtool trust diff` shows. */
    const waiting = Effect.gen(function* () {
      const lock = pins.lock()
      const { createTwoFilesPatch } = yield* Effect.promise(() => import("diff"))
      const out: Array<WaitingTool> = []
      for (const [instance, tools] of lock.pending) {
        for (const [tool, pending] of tools) {
          const pin = lock.pins.get(instance)?.get(tool)
          const selector = PinsCore.selectorOf(instance, tool)
          out.push({
            selector,
            instance,
            tool,
            why: pending.why,
            held: pending.held,
            reason: redact(PinsCore.reasonOf(instance, tool, pending, pin)),
            diff: redact(
              createTwoFilesPatch(
                `${selector} (pinned)`,
                `${selector} (${pending.why})`,
                pretty(pin?.definition),
                pretty(pending.definition),
                undefined,
                undefined,
                { context: 3 }
              ).replace(/^=+\n/, "")
            )
          })
        }
      }
      return out.sort((a, b) => (a.selector < b.selector ? -1 : a.selector > b.selector ? 1 : 0))
    })

    /** `clawtool trust approve <selector>`: pinned in the lock file, read again at once (the watcher would, later). */
    const approve = (selector: string) =>
      Effect.gen(function* () {
        const { lock, approved } = PinsCore.approve(pins.lock(), selector)
        if (approved.length === 0) return approved
        yield* Effect.promise(() => writeFileAtomic(pins.file, PinsCore.formatLock(lock), { mode: 0o600 }))
        yield* pins.reread
        return approved
      })

    /**
     * Logins started from the dashboard, by their `state` (random, 128 bits): each is taken once, by the redirect that
     * carries it, within `loginLifeMs`.
     */
    const pending = new Map<string, PendingLogin>()

    /** `clawtool auth login` from the dashboard: the authorization URL, the redirect to `redirectUrl` on the daemon. */
    const startLogin = (instance: string, redirectUrl: string) =>
      Effect.gen(function* () {
        const started = yield* oauth.startLogin(instance, redirectUrl)
        if (started.authorizationUrl === undefined) {
          yield* sources.restart(instance)
          return { authorizationUrl: undefined }
        }
        const now = yield* Clock.currentTimeMillis
        for (const [state, login] of pending) if (login.until <= now) pending.delete(state)
        while (pending.size >= maxPendingLogins) pending.delete(pending.keys().next().value!)
        pending.set(started.state, { instance, until: now + loginLifeMs, finish: started.finish })
        return { authorizationUrl: started.authorizationUrl }
      }).pipe(
        Effect.mapError((error) => redact(error.message)),
        Effect.either
      )

    /** The redirect: its `state` names a waiting login (used up now), whose code is exchanged; the source restarts. */
    const finishLogin = (state: string, code: string | undefined, refused: string | undefined) =>
      Effect.gen(function* () {
        const login = pending.get(state)
        pending.delete(state)
        const now = yield* Clock.currentTimeMillis
        if (login === undefined || login.until <= now) {
          return yield* Effect.fail("this login is unknown or has expired: start it again from the dashboard")
        }
        if (code === undefined) {
          return yield* Effect.fail(`the authorization server refused: ${refused ?? "no code in the redirect"}`)
        }
        yield* login.finish(code).pipe(Effect.mapError((error) => redact(error.message)))
        yield* sources.restart(login.instance)
        return login.instance
      }).pipe(Effect.either)

    return { state, source, tools, call, waiting, approve, startLogin, finishLogin } as const
  })
}) {}
