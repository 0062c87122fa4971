import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Either, Fiber } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { CallError } from "../src/domain/Errors.js"
import type { CallToolResult, JsonObject } from "../src/domain/Mcp.js"
import { coreSpecs } from "../src/services/CoreTools.js"
import { BashRuns } from "../src/services/CoreTools/BashRuns.js"
import * as Manifest from "../src/services/CoreTools/Manifest.js"
import { coreContext } from "./lib/coreContext.js"
import { commandEnvironment, type GroupTracker, OutputBuffer, ShellRun } from "../src/services/CoreTools/BashProcess.js"
import { gone, isRunning } from "./lib/sources.js"
import { tempDir } from "./lib/temp.js"

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
    clock: Clock.make(),
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

const manifest = Either.getOrThrow(Manifest.make(coreSpecs))

/** A temp root (real path) and a caller of the Bash tools with the given output budget, over a scoped BashRuns. */
const bashTools = (maxOutput = 30_000) =>
  Effect.gen(function* () {
    const root = tempDir("clawtool-bash-")
    const shell = yield* BashRuns
    const context = { ...coreContext({ roots: [root], maxOutput }), shell }
    const call = (tool: string, args: JsonObject): Effect.Effect<CallToolResult, CallError> =>
      manifest.byName.get(tool)!.call(args, context)
    return { root, call }
  })

const textOf = (result: CallToolResult) => (result.content[0] as { text: string }).text
const structuredOf = (result: CallToolResult) => result.structuredContent as Record<string, unknown>

/** Waits (bounded) for a file a command writes, e.g. the pid of its `sleep 100 &`. */
const waitForFile = (file: string) =>
  Effect.gen(function* () {
    for (let i = 0; i < 250 && !(fs.existsSync(file) && fs.readFileSync(file, "utf8").endsWith("\n")); i++) {
      yield* Effect.sleep("20 millis")
    }
    return Number(fs.readFileSync(file, "utf8").trim())
  })

describe("the Bash tool", () => {
  it.scopedLive(
    "runs in the first root by default; exit code and output in the result; a non-zero exit is no error",
    () =>
      Effect.gen(function* () {
        const { root, call } = yield* bashTools()
        const result = yield* call("Bash", { command: "pwd; echo oops >&2; exit 3" })
        assert.isUndefined(result.isError)
        assert.strictEqual(
          textOf(result),
          `${root}\noops\n[exit 3 · ${((structuredOf(result).durationMs as number) / 1000).toFixed(1)} s]`
        )
        assert.include(structuredOf(result), { status: "exited", exitCode: 3, signal: null, timedOut: false, cwd: "." })
      }).pipe(Effect.provide(BashRuns.DefaultWithoutDependencies))
  )

  it.scopedLive("a cwd outside the roots, an empty command and a NUL byte are refused before anything runs", () =>
    Effect.gen(function* () {
      const { call } = yield* bashTools()
      const outside = yield* Effect.flip(call("Bash", { command: "true", cwd: "/" }))
      assert.strictEqual(outside.reason, "OutsideRoots")
      const up = yield* Effect.flip(call("Bash", { command: "true", cwd: "../.." }))
      assert.strictEqual(up.reason, "OutsideRoots")
      const empty = yield* Effect.flip(call("Bash", { command: "  " }))
      assert.strictEqual(empty.reason, "InvalidArguments")
      const nul = yield* Effect.flip(call("Bash", { command: "echo a\u0000b" }))
      assert.strictEqual(nul.reason, "InvalidArguments")
      const long = yield* Effect.flip(call("Bash", { command: "true", timeout_ms: 600_001 }))
      assert.strictEqual(long.reason, "InvalidArguments")
    }).pipe(Effect.provide(BashRuns.DefaultWithoutDependencies))
  )

  it.scopedLive("a timeout returns the output so far and the group is gone, `sleep 100 &` included", () =>
    Effect.gen(function* () {
      const { root, call } = yield* bashTools()
      const result = yield* call("Bash", {
        command: "sleep 100 & echo $! > bg.pid; echo started; sleep 100",
        timeout_ms: 1000
      })
      assert.include(structuredOf(result), { status: "timedOut", timedOut: true, exitCode: null })
      assert.include(textOf(result), "started\n[timed out after 1000 ms")
      assert.isTrue(yield* gone(yield* waitForFile(path.join(root, "bg.pid"))))
    }).pipe(Effect.provide(BashRuns.DefaultWithoutDependencies))
  )

  it.scopedLive("cancellation (the handler interrupted) kills the whole group", () =>
    Effect.gen(function* () {
      const { root, call } = yield* bashTools()
      const fiber = yield* Effect.fork(call("Bash", { command: "sleep 100 & echo $! > bg.pid; sleep 100" }))
      const pid = yield* waitForFile(path.join(root, "bg.pid"))
      assert.isTrue(isRunning(pid))
      yield* Fiber.interrupt(fiber)
      assert.isTrue(yield* gone(pid))
    }).pipe(Effect.provide(BashRuns.DefaultWithoutDependencies))
  )

  it.scopedLive(
    "50 MB of output: the result stays within max_output (text and structured), head and tail kept, marked",
    () =>
      Effect.gen(function* () {
        const { call } = yield* bashTools(20_000)
        const result = yield* call("Bash", {
          command: "echo BEGIN; head -c 50000000 /dev/zero | tr '\\0' a; echo; echo END"
        })
        const text = textOf(result)
        assert.isAtMost(text.length + JSON.stringify(result.structuredContent).length, 20_000)
        assert.isTrue(text.startsWith("BEGIN\n"))
        assert.include(text, "END\n[exit 0")
        assert.include(text, "omitted")
        assert.include(structuredOf(result), { truncated: true, outputBytes: 50_000_011 })
      }).pipe(Effect.provide(BashRuns.DefaultWithoutDependencies))
  )

  it.scopedLive("the command does not see clawtool's secrets", () =>
    Effect.gen(function* () {
      const { call } = yield* bashTools()
      process.env.CLAWTOOL_BASH_TEST_TOKEN = "tok-4242"
      try {
        const result = yield* call("Bash", { command: "env" })
        assert.notInclude(textOf(result), "tok-4242")
        assert.include(textOf(result), "GIT_TERMINAL_PROMPT=0")
      } finally {
        delete process.env.CLAWTOOL_BASH_TEST_TOKEN
      }
    }).pipe(Effect.provide(BashRuns.DefaultWithoutDependencies))
  )
})

describe("background runs: Bash run_in_background, BashPoll, BashKill", () => {
  it.scopedLive("start, read only what is new, kill; an unknown task id is NotFound", () =>
    Effect.gen(function* () {
      const { root, call } = yield* bashTools()
      const started = yield* call("Bash", {
        command: "echo one; while [ ! -e next ]; do sleep 0.05; done; echo two; sleep 100 & echo $! > bg.pid; wait",
        run_in_background: true
      })
      const taskId = structuredOf(started).taskId as string
      const poll = (id: string) =>
        Effect.zipRight(Effect.sleep("20 millis"), Effect.map(call("BashPoll", { task_id: id }), textOf))
      assert.match(taskId, /^bash_/)
      assert.include(structuredOf(started), { status: "running" })
      let first = ""
      while (!first.includes("one")) first = yield* poll(taskId)
      assert.isTrue(first.startsWith("one\n"), first)
      assert.include(first, "[still running]")
      fs.writeFileSync(path.join(root, "next"), "")
      const pid = yield* waitForFile(path.join(root, "bg.pid"))
      let second = ""
      while (!second.includes("two")) second = yield* poll(taskId)
      assert.notInclude(second, "one", "a poll returns only new output")
      const killed = yield* call("BashKill", { task_id: taskId })
      assert.include(structuredOf(killed), { status: "killed", taskId })
      assert.isTrue(yield* gone(pid))
      const unknown = yield* Effect.flip(call("BashPoll", { task_id: "bash_nope" }))
      assert.strictEqual(unknown.reason, "NotFound")
      assert.include(unknown.detail, taskId)
    }).pipe(Effect.provide(BashRuns.DefaultWithoutDependencies))
  )

  it.live("closing clawtool (the BashRuns scope) kills every background run", () =>
    Effect.gen(function* () {
      const root = yield* Effect.scoped(
        Effect.gen(function* () {
          const { root, call } = yield* bashTools()
          yield* call("Bash", { command: "sleep 100 & echo $! > bg.pid; sleep 100", run_in_background: true })
          yield* waitForFile(path.join(root, "bg.pid"))
          return root
        }).pipe(Effect.provide(BashRuns.DefaultWithoutDependencies))
      )
      assert.isTrue(yield* gone(Number(fs.readFileSync(path.join(root, "bg.pid"), "utf8"))))
    })
  )
})
