// The audit log's queue (issue 25, [audit]): calls kept in storage made once until the writer makes their lines; the
// lines equal those made from the calls themselves, in order; a full queue refuses a call; a drain empties it even when
// a line fails. (A line that cannot be made is counted as dropped: test/Audit.test.ts.)
import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import * as AuditLine from "../../src/services/Trust/AuditLine.js"
import { AuditQueue } from "../../src/services/Trust/AuditQueue.js"
import { argsMode, auditCall, redactZ } from "../lib/auditCalls.js"

const call: AuditLine.AuditCall = {
  at: Date.UTC(2026, 0, 2, 3, 4, 5, 6),
  durationMs: 1.5,
  session: "s-1",
  client: "claude-code",
  instance: "gh",
  tool: "delete_repo",
  outcome: "ok",
  arguments: { repo: "me/x" },
  bytesOut: 42,
  traceId: undefined
}

/** Every queued call's line, as the writer makes it. */
const drained = (queue: AuditQueue, mode: AuditLine.ArgsMode, redact?: AuditLine.Redactor) => {
  const lines: Array<string> = []
  queue.drain((queued) => lines.push(AuditLine.format(queued, mode, redact)))
  return lines
}

describe("AuditQueue", () => {
  it("the lines of queued calls equal the lines of the calls, in order, in every args mode", () => {
    const queue = new AuditQueue(64)
    fc.assert(
      fc.property(fc.array(auditCall, { maxLength: 64 }), argsMode, (calls, mode) => {
        for (const each of calls) assert.isTrue(queue.push(each))
        assert.strictEqual(queue.size, calls.length)
        assert.strictEqual(
          drained(queue, mode, redactZ).join("\n"),
          calls.map((each) => AuditLine.format(each, mode, redactZ)).join("\n")
        )
        assert.strictEqual(queue.size, 0)
      }),
      { numRuns: 300 }
    )
  })

  it("a full queue refuses the call; once drained it takes calls again", () => {
    const queue = new AuditQueue(3)
    for (let i = 0; i < 3; i++) assert.isTrue(queue.push({ ...call, tool: `t${i}` }))
    assert.isFalse(queue.push({ ...call, tool: "t3" }))
    assert.strictEqual(
      drained(queue, "full")
        .map((line) => JSON.parse(line).tool)
        .join(),
      "t0,t1,t2"
    )
    assert.isTrue(queue.push({ ...call, tool: "t4" }))
    assert.strictEqual(
      drained(queue, "full")
        .map((line) => JSON.parse(line).tool)
        .join(),
      "t4"
    )
  })

  it("a burst past the first slots grows the storage up to the capacity; every call drains intact, in order", () => {
    const queue = new AuditQueue(1000)
    const calls = Array.from({ length: 1000 }, (_, i) => ({ ...call, tool: `t${i}`, at: call.at + i, bytesOut: i }))
    for (const each of calls) assert.isTrue(queue.push(each))
    assert.isFalse(queue.push(call))
    assert.strictEqual(
      drained(queue, "full").join("\n"),
      calls.map((each) => AuditLine.format(each, "full", undefined)).join("\n")
    )
  })

  it("a line that throws ends the drain but not the queue: the calls after it are gone, and new ones drain alone", () => {
    const queue = new AuditQueue(8)
    for (const tool of ["a", "b", "c"]) assert.isTrue(queue.push({ ...call, tool }))
    const seen: Array<string> = []
    assert.throws(() =>
      queue.drain((queued) => {
        seen.push(queued.tool)
        if (queued.tool === "b") throw new Error("no line")
      })
    )
    assert.strictEqual(seen.join(), "a,b")
    assert.strictEqual(queue.size, 0)
    assert.isTrue(queue.push({ ...call, tool: "d" }))
    assert.strictEqual(drained(queue, "full").join("\n"), AuditLine.format({ ...call, tool: "d" }, "full", undefined))
  })
})
