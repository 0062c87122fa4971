// One audit line (issue 25, [audit]): each outcome from what ended the call (trust's Denied and Quarantined, call_timeout,
// other CallErrors, isError results), the arguments as their hash, redacted or full, and the line read back with
// `clawtool audit`'s selectors.
import { assert, describe, it } from "@effect/vitest"
import { assertLeft, assertRight } from "@effect/vitest/utils"
import { Either } from "effect"
import fc from "fast-check"
import { createHash } from "node:crypto"
import { CallError } from "../../src/domain/Errors.js"
import { AuditBuffer, chunkBytes } from "../../src/services/Trust/AuditBuffer.js"
import * as AuditLine from "../../src/services/Trust/AuditLine.js"
import { argsMode, auditCall, redactZ } from "../lib/auditCalls.js"

const failed = (reason: CallError["reason"]) => new CallError({ tool: "gh.delete_repo", reason, detail: "why" })

const call: AuditLine.AuditCall = {
  at: Date.UTC(2026, 0, 2, 3, 4, 5, 6),
  durationMs: 12.3456,
  session: "s-1",
  client: "claude-code",
  instance: "gh",
  tool: "delete_repo",
  outcome: "denied",
  arguments: { repo: "me/x", token: "ghp_secretsecret", force: true },
  bytesOut: 42,
  traceId: undefined
}

describe("AuditLine", () => {
  it("outcomes: Denied, Quarantined and Timeout by their reason; any other CallError and an isError result are errors", () => {
    assert.strictEqual(AuditLine.outcomeOfError(failed("Denied")), "denied")
    assert.strictEqual(AuditLine.outcomeOfError(failed("Quarantined")), "quarantined")
    assert.strictEqual(AuditLine.outcomeOfError(failed("Timeout")), "timeout")
    for (const reason of ["Child", "Transport", "NotRunning", "NoSuchTool", "InvalidArguments"] as const) {
      assert.strictEqual(AuditLine.outcomeOfError(failed(reason)), "error", reason)
    }
    assert.strictEqual(AuditLine.outcomeOfResult({ content: [], isError: true }), "error")
    assert.strictEqual(AuditLine.outcomeOfResult({ content: [] }), "ok")
    assert.strictEqual(AuditLine.outcomeOfResult({ content: [], isError: false }), "ok")
  })

  it("a daemon session's profile and its token's name (issue 26) are on the line, after the client; read back", () => {
    const text = AuditLine.format({ ...call, profile: "code", token: "ci" }, "none", undefined)
    const keys = Object.keys(JSON.parse(text) as object)
    assert.deepStrictEqual(keys.slice(0, 6), ["time", "session", "client", "profile", "token", "instance"])
    const read = AuditLine.parse(text)
    assertRight(
      Either.map(read, (line) => (AuditLine.isDropped(line) ? undefined : [line.profile, line.token])),
      ["code", "ci"]
    )
    // Absent on stdio without a profile: no key at all.
    assert.notProperty(JSON.parse(AuditLine.format(call, "none", undefined)), "token")
  })

  it('args = "none": the SHA-256 of the arguments\' JSON as the host sent them (its key order), never the arguments', () => {
    const line = JSON.parse(AuditLine.format(call, "none", (text) => text.replaceAll("ghp_secretsecret", "[R]")))
    const sent = '{"repo":"me/x","token":"ghp_secretsecret","force":true}'
    assert.deepStrictEqual(line, {
      time: "2026-01-02T03:04:05.006Z",
      session: "s-1",
      client: "claude-code",
      instance: "gh",
      tool: "delete_repo",
      outcome: "denied",
      duration_ms: 12.35,
      bytes_in: sent.length,
      bytes_out: 42,
      args_sha256: createHash("sha256").update(sent).digest("hex")
    })
    // Not a canonical form: the same arguments in another key order are other bytes, and another hash.
    const reordered = { ...call, arguments: { token: "ghp_secretsecret", force: true, repo: "me/x" } }
    assert.notStrictEqual(JSON.parse(AuditLine.format(reordered, "none", undefined)).args_sha256, line.args_sha256)
    const none = JSON.parse(AuditLine.format({ ...call, arguments: undefined }, "none", undefined))
    assert.strictEqual(none.args_sha256, createHash("sha256").update("{}").digest("hex"))
    assert.strictEqual(none.bytes_in, 2)
  })

  it("time: the call's start in ISO form with milliseconds, across seconds, days and a fractional start", () => {
    const timeOf = (at: number) => JSON.parse(AuditLine.format({ ...call, at }, "none", undefined)).time
    for (const at of [
      Date.UTC(2026, 0, 2, 3, 4, 5, 6),
      Date.UTC(2026, 0, 2, 3, 4, 5, 999),
      Date.UTC(2026, 0, 2, 3, 4, 6, 0),
      Date.UTC(2026, 0, 2, 3, 4, 6, 40),
      Date.UTC(2026, 0, 2, 3, 4, 5, 120),
      Date.UTC(2026, 11, 31, 23, 59, 59, 999),
      Date.UTC(2027, 0, 1, 0, 0, 0, 1),
      Date.UTC(2026, 0, 2, 3, 4, 5, 6) + 0.75
    ]) {
      assert.strictEqual(timeOf(at), new Date(at).toISOString(), String(at))
    }
  })

  it('args = "redacted" writes the arguments through the redactor; without one, the hash only; "full" as sent', () => {
    const redact = (text: string) => text.replaceAll("ghp_secretsecret", "[REDACTED:GH_TOKEN]")
    const redacted = JSON.parse(AuditLine.format(call, "redacted", redact))
    assert.deepStrictEqual(redacted.args, { force: true, repo: "me/x", token: "[REDACTED:GH_TOKEN]" })
    assert.isUndefined(redacted.args_sha256)
    const noRedactor = JSON.parse(AuditLine.format(call, "redacted", undefined))
    assert.isUndefined(noRedactor.args)
    assert.isString(noRedactor.args_sha256)
    assert.deepStrictEqual(JSON.parse(AuditLine.format(call, "full", undefined)).args, call.arguments)
  })

  it("absent fields are left out; control characters in a name cannot break or forge a line", () => {
    const text = AuditLine.format(
      { ...call, session: undefined, client: undefined, instance: undefined, tool: 'x\n{"tool":"forged"}\u001b[2J' },
      "none",
      undefined
    )
    assert.notInclude(text, "\n")
    const line = JSON.parse(text)
    assert.strictEqual(line.tool, 'x\n{"tool":"forged"}\u001b[2J')
    assert.notProperty(line, "session")
    assert.notProperty(line, "client")
    assert.notProperty(line, "instance")
    assert.strictEqual(line.bytes_in, Buffer.byteLength(JSON.stringify(call.arguments)))
  })

  it("the line is JSON.stringify's of its fields in order, for any names, times, numbers and arguments", () => {
    fc.assert(
      fc.property(auditCall, argsMode, (call, mode) => {
        const args = JSON.stringify(call.arguments ?? {})
        const expected = JSON.stringify({
          time: new Date(call.at).toISOString(),
          session: call.session,
          client: call.client,
          profile: call.profile,
          token: call.token,
          instance: call.instance,
          tool: call.tool,
          outcome: call.outcome,
          duration_ms: Number.isFinite(Math.round(call.durationMs * 100)) ? Math.round(call.durationMs * 100) / 100 : 0,
          bytes_in: Buffer.byteLength(args),
          bytes_out: Number.isFinite(call.bytesOut) ? call.bytesOut : 0,
          trace_id: call.traceId,
          via: call.via,
          ...(mode === "none"
            ? { args_sha256: createHash("sha256").update(args).digest("hex") }
            : { args: JSON.parse(mode === "full" ? args : redactZ(args)) })
        })
        assert.strictEqual(AuditLine.format(call, mode, redactZ), expected)
      }),
      { numRuns: 2000 }
    )
  })

  it("lines share a buffer until it is full; a line longer than a buffer gets its own; every byte comes back in order", () => {
    const out = new AuditBuffer()
    const long = { ...call, arguments: { text: "x".repeat(chunkBytes * 2) } }
    const calls = [...Array.from({ length: 300 }, (_, i) => ({ ...call, tool: `t${i}é` })), long, call, long, long]
    const line = (each: AuditLine.AuditCall, mode: AuditLine.ArgsMode) => `${AuditLine.format(each, mode, undefined)}\n`
    for (const each of calls) out.add(line(each, "full"))
    assert.strictEqual(out.lines, calls.length)
    const batch = out.take()
    assert.strictEqual(out.lines, 0)
    const text = Buffer.concat(batch.chunks).toString()
    assert.strictEqual(batch.bytes, Buffer.byteLength(text))
    assert.deepStrictEqual(
      text.trimEnd().split("\n"),
      calls.map((each) => AuditLine.format(each, "full", undefined))
    )
    // Released buffers are reused: nothing of the batch is overwritten before release, and the next batch is intact.
    out.add(line(call, "none"))
    assert.strictEqual(Buffer.concat(batch.chunks).toString(), text)
    batch.release()
    for (let i = 0; i < 300; i++) out.add(line(call, "none"))
    const next = Buffer.concat(out.take().chunks).toString().trimEnd().split("\n")
    assert.strictEqual(next.length, 301)
    for (const line of next) assert.strictEqual(line, AuditLine.format(call, "none", undefined))
  })

  it("parse: a line written reads back; a dropped line too; anything else is not an audit line", () => {
    const entry = AuditLine.parse(AuditLine.format(call, "none", undefined))
    assertRight(
      Either.map(entry, (line) => !AuditLine.isDropped(line) && line.outcome),
      "denied"
    )
    const dropped = AuditLine.parse(AuditLine.droppedLine(0, 7))
    assertRight(
      Either.map(dropped, (line) => AuditLine.isDropped(line) && line.dropped),
      7
    )
    assertLeft(AuditLine.parse("{not json"), "not an audit line")
    assertLeft(AuditLine.parse('{"time":"x","tool":"t","outcome":"maybe"}'), "not an audit line")
  })

  it("selectors: <instance>.<tool>, <instance>.*, a core tool's name", () => {
    const entry = Either.getOrThrow(AuditLine.parse(AuditLine.format(call, "none", undefined))) as AuditLine.Entry
    assert.isTrue(AuditLine.matches("gh.delete_repo", entry))
    assert.isTrue(AuditLine.matches("gh.*", entry))
    assert.isFalse(AuditLine.matches("gh.create_issue", entry))
    assert.isFalse(AuditLine.matches("ghx.*", entry))
    assert.isFalse(AuditLine.matches("delete_repo", entry))
    const core = { ...entry, instance: "core", tool: "Bash" }
    assert.isTrue(AuditLine.matches("Bash", core))
    assert.isFalse(AuditLine.matches("core.Bash", core))
  })
})
