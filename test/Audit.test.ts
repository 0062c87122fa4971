// The audit log's writer (issue 25, [audit]): a full queue drops and counts lines and never blocks the call that
// records; a file that cannot be written is warned about once and shown in Health; rotation keeps `keep` files of at
// most `max_bytes`, 0600 in a 0700 folder. The lines themselves: test/Trust/AuditLine.test.ts.
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Logger, TestClock } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { AuditConfig } from "../src/domain/Config/Trust.js"
import * as Audit from "../src/services/Audit.js"
import * as AuditFile from "../src/services/Trust/AuditFile.js"
import type { AuditCall } from "../src/services/Trust/AuditLine.js"
import { tempDir } from "./lib/temp.js"

const call = (tool: string): AuditCall => ({
  at: 0,
  durationMs: 1,
  session: undefined,
  client: "test-host",
  instance: "fs",
  tool,
  outcome: "ok",
  arguments: { path: "/tmp" },
  bytesOut: 10,
  traceId: undefined
})

const settings = new AuditConfig({})

/** What one append wrote, as text. */
const textOf = (chunks: ReadonlyArray<Uint8Array>) => Buffer.concat(chunks).toString()
/** Lines as the file's append takes them. */
const bytes = (text: string) => [Buffer.from(text)]

describe("Audit", () => {
  it.scoped("with flushEvery, calls only enqueue: the lines queued during the pause go out in one append", () =>
    Effect.gen(function* () {
      const written: Array<string> = []
      const log = yield* Audit.make({
        settings,
        file: "/nowhere/audit.jsonl",
        redact: undefined,
        flushEvery: Duration.millis(100),
        sink: { append: async (chunks) => void written.push(textOf(chunks)) }
      })
      const recorder = log.recorder(undefined, () => "test-host")!
      const settle = Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
      recorder.record(call("first"))
      while (written.length < 1) yield* settle
      // The writer pauses after its write: what is recorded meanwhile waits, however many calls come.
      for (let i = 0; i < 5; i++) recorder.record(call(`t${i}`))
      yield* TestClock.adjust("99 millis")
      yield* settle
      assert.strictEqual(written.length, 1)
      yield* TestClock.adjust("1 millis")
      while (written.length < 2) yield* settle
      assert.strictEqual(written.length, 2)
      assert.strictEqual(written[1]!.trimEnd().split("\n").length, 5)
      assert.strictEqual(log.dropped(), 0)
    })
  )

  it.scoped(
    "a full queue drops lines and counts them, never blocking the call; the count is written once there is room",
    () =>
      Effect.gen(function* () {
        const written: Array<string> = []
        const taken = yield* Deferred.make<void>()
        let release!: () => void
        const stalled = new Promise<void>((resolve) => (release = resolve))
        const log = yield* Audit.make({
          settings,
          file: "/nowhere/audit.jsonl",
          capacity: 4,
          redact: undefined,
          // The writer is stalled on its first write until the test releases it.
          sink: {
            append: async (chunks) => {
              written.push(textOf(chunks))
              Deferred.unsafeDone(taken, Effect.void)
              await stalled
            }
          }
        })
        // Released before the audit's own finalizer (which waits for the write in progress) if the test fails early.
        yield* Effect.addFinalizer(() => Effect.sync(() => release()))
        const recorder = log.recorder(undefined, () => "test-host")!
        // Ten records in one synchronous burst: each returns at once; four fit, six are dropped.
        for (let i = 0; i < 10; i++) recorder.record(call(`t${i}`))
        assert.strictEqual(log.dropped(), 6)
        // The writer takes the four and stalls on the file: the queue has room again, and fills again.
        yield* Deferred.await(taken)
        for (let i = 10; i < 16; i++) recorder.record(call(`t${i}`))
        assert.strictEqual(log.dropped(), 8)
        const [row] = yield* log.health
        assert.strictEqual(row?.kind, "audit")
        assert.strictEqual(row?.reason, "8 lines dropped: the queue was full")
        release()
        while (written.length < 2) yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
        const lines = written
          .join("")
          .trimEnd()
          .split("\n")
          .map((line) => JSON.parse(line))
        assert.deepStrictEqual(
          lines.map((line) => line.tool ?? `dropped ${line.dropped}`),
          ["t0", "t1", "t2", "t3", "dropped 6", "t10", "t11", "t12", "t13", "dropped 2"]
        )
      })
  )

  it.scoped(
    "record only queues (a call's arguments are read by the writer); a line that cannot be made is dropped and counted",
    () =>
      Effect.gen(function* () {
        const written: Array<string> = []
        const log = yield* Audit.make({
          settings: new AuditConfig({ args: "full" }),
          file: "/nowhere/audit.jsonl",
          redact: undefined,
          sink: { append: async (chunks) => void written.push(textOf(chunks)) }
        })
        const recorder = log.recorder(undefined, () => "test-host")!
        let deep: Record<string, unknown> = {}
        for (let i = 0; i < 100_000; i++) deep = { deep }
        // JSON.stringify of these arguments throws (RangeError): had record made the line, it would have thrown or
        // counted the drop here.
        const args = { path: "/tmp" }
        recorder.record(call("before"))
        recorder.record({ ...call("deep"), arguments: deep })
        recorder.record({ ...call("after"), arguments: args })
        assert.strictEqual(log.dropped(), 0)
        args.path = "/etc" // the writer reads the arguments as they are when it makes the line
        // One append: the three lines' batch, and the count of the one that could not be made.
        while (written.length < 1) yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
        assert.strictEqual(log.dropped(), 1)
        const lines = written
          .join("")
          .trimEnd()
          .split("\n")
          .map((line) => JSON.parse(line))
        assert.strictEqual(lines.map((line) => line.tool ?? `dropped ${line.dropped}`).join(), "before,after,dropped 1")
        assert.strictEqual(lines[1].args.path, "/etc")
      })
  )

  it.scoped("a file that cannot be written: warned once, Health says it is not written, records still return", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const blocker = path.join(dir, "file")
      fs.writeFileSync(blocker, "")
      // A folder where a file is: every open fails (ENOTDIR).
      const file = path.join(blocker, "audit.jsonl")
      const warnings: Array<string> = []
      const capture = Logger.make(({ message }) => void warnings.push(String(message)))
      const log = yield* Audit.make({
        settings,
        file,
        redact: undefined,
        sink: AuditFile.open(file, { maxBytes: 1024, keep: 1 })
      }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, capture)))
      const recorder = log.recorder(undefined, () => undefined)!
      for (let round = 0; round < 3; round++) {
        recorder.record(call("write"))
        while ((yield* log.health).length === 0 || warnings.length === 0) {
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
        }
      }
      // Three failed writes, one warning.
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
      assert.strictEqual(warnings.length, 1)
      assert.include(warnings[0], `audit: cannot write ${file}`)
      const [row] = yield* log.health
      assert.strictEqual(row?.status, "down")
      assert.match(row!.reason, /^not written: (EEXIST|ENOTDIR)/)
    })
  )

  it.effect(
    "rotation: a file past max_bytes becomes .1, .1 becomes .2, and no more than keep are kept; 0600 in 0700",
    () =>
      Effect.gen(function* () {
        const dir = path.join(tempDir(), "state")
        const file = path.join(dir, "audit.jsonl")
        const log = AuditFile.open(file, { maxBytes: 100, keep: 2 })
        // 40-byte lines: two fit in 100 bytes, the third rotates.
        for (let i = 0; i < 9; i++) yield* Effect.promise(() => log.append(bytes(`${String(i).padStart(39, "x")}\n`)))
        yield* Effect.promise(log.close)
        assert.deepStrictEqual(fs.readdirSync(dir).sort(), ["audit.jsonl", "audit.jsonl.1", "audit.jsonl.2"])
        const lastOf = (name: string) =>
          fs
            .readFileSync(path.join(dir, name), "utf8")
            .trimEnd()
            .split("\n")
            .map((l) => l.at(-1))
        // Newest in the file, older in .1, older still in .2; lines 0 to 2 are gone.
        assert.deepStrictEqual(lastOf("audit.jsonl"), ["8"])
        assert.deepStrictEqual(lastOf("audit.jsonl.1"), ["6", "7"])
        assert.deepStrictEqual(lastOf("audit.jsonl.2"), ["4", "5"])
        for (const name of fs.readdirSync(dir)) {
          assert.strictEqual(fs.statSync(path.join(dir, name)).mode & 0o777, 0o600)
          assert.isAtMost(fs.statSync(path.join(dir, name)).size, 100)
        }
        assert.strictEqual(fs.statSync(dir).mode & 0o777, 0o700)
      })
  )

  it.effect("keep = 0: the file is emptied instead of rotated", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const file = path.join(dir, "audit.jsonl")
      const log = AuditFile.open(file, { maxBytes: 100, keep: 0 })
      for (let i = 0; i < 5; i++) yield* Effect.promise(() => log.append(bytes(`${String(i).padStart(39, "x")}\n`)))
      yield* Effect.promise(log.close)
      assert.deepStrictEqual(fs.readdirSync(dir), ["audit.jsonl"])
      assert.strictEqual(fs.readFileSync(file, "utf8"), `${"4".padStart(39, "x")}\n`)
    })
  )
})
