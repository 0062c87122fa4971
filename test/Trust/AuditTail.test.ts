import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { type AuditCall, droppedLine, format } from "../../src/services/Trust/AuditLine.js"
import { cachedTail, tail } from "../../src/services/Trust/AuditTail.js"
import { tempDir } from "../lib/temp.js"

const t0 = Date.parse("2026-12-04T06:00:00.000Z")
const call = (i: number, tool = `tool${i}`): AuditCall => ({
  at: t0 + i * 1000,
  durationMs: i + 0.5,
  session: "s1",
  client: "host",
  instance: "gh",
  tool,
  outcome: "ok",
  arguments: { secret: "kept out" },
  bytesOut: 1,
  traceId: i % 2 === 0 ? `trace${i}` : undefined
})
const line = (i: number, tool?: string) => `${format(call(i, tool), "none", undefined)}\n`
const tools = (calls: ReadonlyArray<{ readonly tool: string }> | undefined) => calls?.map((c) => c.tool)

describe("Trust/AuditTail (the dashboard's recent calls from the audit log)", () => {
  it("the newest calls, oldest first; a half-written last line, dropped-lines notes and damaged lines left out", async () => {
    const file = path.join(tempDir("clawtool-audittail-"), "audit.jsonl")
    fs.writeFileSync(
      file,
      line(1) + droppedLine(t0, 3) + "\n" + "{not json\n" + line(2) + line(3) + line(4).slice(0, 40)
    )
    const calls = await tail(file, 10)
    assert.deepStrictEqual(tools(calls), ["tool1", "tool2", "tool3"])
    assert.deepStrictEqual(calls?.[1], {
      at: t0 + 2000,
      source: "gh",
      tool: "tool2",
      outcome: "ok",
      durationMs: 2.5,
      traceId: "trace2"
    })
    assert.deepStrictEqual(tools(await tail(file, 2)), ["tool2", "tool3"])
    // The line finished: it counts now.
    fs.appendFileSync(file, line(4).slice(40))
    assert.deepStrictEqual(tools(await tail(file, 2)), ["tool3", "tool4"])
  })

  it("continues in the newest rotated file when the current one holds fewer; unreadable: undefined", async () => {
    const dir = tempDir("clawtool-audittail-")
    const file = path.join(dir, "audit.jsonl")
    assert.isUndefined(await tail(file, 5))
    fs.writeFileSync(`${file}.2`, line(0))
    fs.writeFileSync(`${file}.1`, line(1) + line(2) + line(3))
    fs.writeFileSync(file, line(4))
    assert.deepStrictEqual(tools(await tail(file, 3)), ["tool2", "tool3", "tool4"])
    assert.deepStrictEqual(tools(await tail(file, 10)), ["tool1", "tool2", "tool3", "tool4"])
    // Just rotated: the current file is empty, the calls are all in .1.
    fs.writeFileSync(file, "")
    assert.deepStrictEqual(tools(await tail(file, 2)), ["tool2", "tool3"])
  })

  it("reads only the end of a large file: the line cut by the window is not taken for a call", async () => {
    const file = path.join(tempDir("clawtool-audittail-"), "audit.jsonl")
    const long = "x".repeat(200)
    let text = ""
    for (let i = 0; i < 1000; i++) text += line(i, `${long}${i}`)
    fs.writeFileSync(file, text)
    fs.writeFileSync(`${file}.1`, line(5000, "older"))
    const calls = await tail(file, 2000)
    assert.isAbove(calls!.length, 100)
    assert.isBelow(calls!.length, 1000)
    assert.strictEqual(calls!.at(-1)!.tool, `${long}999`)
    // Consecutive, none cut: each is a whole line, and the rotated file was not needed.
    const numbers = calls!.map((c) => Number(c.tool.slice(long.length)))
    assert.deepStrictEqual(
      numbers,
      numbers.map((_, i) => 1000 - numbers.length + i)
    )
  })

  it("cachedTail reads again only when the file changed", async () => {
    const file = path.join(tempDir("clawtool-audittail-"), "audit.jsonl")
    const read = cachedTail(file, 5)
    assert.isUndefined(await read())
    fs.writeFileSync(file, line(1))
    assert.deepStrictEqual(tools(await read()), ["tool1"])
    const first = await read()
    assert.strictEqual(await read(), first, "the same answer, not read again")
    fs.appendFileSync(file, line(2))
    assert.deepStrictEqual(tools(await read()), ["tool1", "tool2"])
  })
})
