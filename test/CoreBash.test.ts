import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import {
  commandEnvironment,
  type GroupTracker,
  OutputBuffer,
  ShellRun
} from "../src/services/Registry/CoreTools/BashProcess.js"

/** Alive and not a zombie (a container's PID 1 may never reap an orphan, which is then dead but listed). */
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z"
  } catch {
    return false
  }
}

/** SIGKILL is delivered asynchronously: a killed process may be listed for a moment. Waits (bounded) until it is gone. */
const gone = (pid: number) =>
  Effect.gen(function* () {
    for (let i = 0; i < 100 && alive(pid); i++) yield* Effect.sleep("20 millis")
    return !alive(pid)
  })

const recorder = () => {
  const events: Array<string> = []
  const tracker: GroupTracker = { track: (pgid) => events.push(`+${pgid}`), untrack: (pgid) => events.push(`-${pgid}`) }
  return { events, tracker }
}

const run = (command: string, options: { timeoutMs?: number; env?: Record<string, string> } = {}) => {
  const { events, tracker } = recorder()
  const shellRun = new ShellRun({
    command,
    cwd: os.tmpdir(),
    env: options.env ?? commandEnvironment(process.env),
    timeoutMs: options.timeoutMs,
    headBytes: 64 * 1024,
    tailBytes: 64 * 1024,
    tracker,
    termGraceMs: 500
  })
  return { shellRun, events, done: Effect.promise(() => shellRun.done) }
}

/** The pids a command printed on lines of their own, e.g. `sleep 100 & echo $!`. */
const pidsIn = (text: string) =>
  text
    .split("\n")
    .filter((line) => /^\d+$/.test(line))
    .map(Number)

describe("Bash engine: the output buffer", () => {
  it("keeps everything under the limits, the head and the tail over them, with a marker naming the bytes cut", () => {
    const small = new OutputBuffer(8, 8)
    small.append(Buffer.from("hello"))
    assert.strictEqual(small.render(), "hello")
    const big = new OutputBuffer(4, 4)
    big.append(Buffer.from("abcdef"))
    big.append(Buffer.from("ghijklmnop"))
    assert.strictEqual(big.total, 16)
    assert.strictEqual(big.render(), "abcd\n[… 8 bytes of output omitted …]\nmnop")
    // Read on from an absolute offset: only what is newer, with a marker for what fell out in between.
    assert.strictEqual(big.since(16), "")
    assert.strictEqual(big.since(14), "op")
    assert.strictEqual(big.since(2), "cd\n[… 8 bytes of output omitted …]\nmnop")
  })

  it("removes ANSI colour escapes and replaces invalid UTF-8", () => {
    const buffer = new OutputBuffer(64, 64)
    buffer.append(Buffer.concat([Buffer.from("\x1b[31mred\x1b[0m "), Buffer.from([0xff, 0x41])]))
    assert.strictEqual(buffer.render(), "red \uFFFDA")
  })
})

describe("Bash engine: real process groups", () => {
  it.live(
    "splits nothing: stdout and stderr interleave in order; the exit code and the group's tracking are reported",
    () =>
      Effect.gen(function* () {
        const { shellRun, events, done } = run("echo out; echo err >&2; exit 3")
        const outcome = yield* done
        assert.strictEqual(outcome.status, "exited")
        assert.strictEqual(outcome.exitCode, 3)
        assert.strictEqual(shellRun.output.render(), "out\nerr\n")
        assert.deepStrictEqual(events, [`+${shellRun.pid}`, `-${shellRun.pid}`])
      })
  )

  it.live("a timeout kills the whole group, `sleep 100 &` included, and keeps the output written before it", () =>
    Effect.gen(function* () {
      const { shellRun, done } = run("sleep 100 & echo $!; echo first; sleep 100; echo never", { timeoutMs: 700 })
      const outcome = yield* done
      const text = shellRun.output.render()
      assert.strictEqual(outcome.status, "timedOut")
      assert.strictEqual(outcome.signal, "SIGTERM")
      assert.include(text, "first")
      assert.notInclude(text, "never")
      const [background] = pidsIn(text)
      assert.isDefined(background)
      assert.isTrue(yield* gone(background!), `sleep ${background} outlived the timeout`)
    })
  )

  it.live("a shell that ignores SIGTERM is SIGKILLed after the grace period", () =>
    Effect.gen(function* () {
      const { done } = run("trap '' TERM; echo ready; while :; do sleep 0.1; done", { timeoutMs: 500 })
      const outcome = yield* done
      assert.strictEqual(outcome.status, "timedOut")
      assert.strictEqual(outcome.signal, "SIGKILL")
    })
  )

  it.live("a stop request (cancellation) kills the group", () =>
    Effect.gen(function* () {
      const { shellRun, done } = run("sleep 100 & echo $!; sleep 100")
      // Wait until the background pid is printed.
      while (pidsIn(shellRun.output.render()).length === 0) yield* Effect.sleep("20 millis")
      shellRun.stop("killed")
      const outcome = yield* done
      assert.strictEqual(outcome.status, "killed")
      assert.isTrue(yield* gone(pidsIn(shellRun.output.render())[0]!))
    })
  )

  it.live("a command that leaves `sleep 100 &` behind returns at once and leaves nothing running", () =>
    Effect.gen(function* () {
      const { shellRun, done } = run("sleep 100 & echo $!")
      const outcome = yield* done
      assert.strictEqual(outcome.exitCode, 0)
      assert.isTrue(yield* gone(pidsIn(shellRun.output.render())[0]!))
    })
  )

  it.live("50 MB of output keeps only the head and the tail in memory, marked", () =>
    Effect.gen(function* () {
      const { shellRun, done } = run("head -c 50000000 /dev/zero | tr '\\0' a; echo; echo END")
      yield* done
      const text = shellRun.output.render()
      assert.strictEqual(shellRun.output.total, 50_000_005)
      assert.isBelow(text.length, 140 * 1024)
      assert.include(text, "bytes of output omitted")
      assert.isTrue(text.endsWith("END\n"))
    })
  )

  it.live(
    "the environment is default-deny: a secret of clawtool's is not there, the non-interactive settings are",
    () =>
      Effect.gen(function* () {
        const env = commandEnvironment({ ...process.env, CLAWTOOL_TEST_SECRET_TOKEN: "s3cr3t", PATH: process.env.PATH })
        const { shellRun, done } = run("env; cat /dev/tty 2>/dev/null || echo no-tty; read x; echo read=$?", { env })
        yield* done
        const text = shellRun.output.render()
        assert.notInclude(text, "s3cr3t")
        assert.include(text, "PAGER=cat\n")
        assert.include(text, "GIT_TERMINAL_PROMPT=0\n")
        assert.include(text, "no-tty")
        assert.include(text, "read=1")
      })
  )
})
