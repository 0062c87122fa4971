// Section 11 of bench/run.mjs (issue 30, ADR 035): code mode's token economy and RunCode's overhead.
//
// Five multi-step tasks over the reference servers (filesystem, memory) and the core tools, each done (a) by direct
// calls, counting the bytes of every argument the model writes and every result's text that would enter its context,
// and (b) by one RunCode whose code does the same calls and returns only the answer (its code counted as written). Both
// answers must agree. Tokens are estimated at 4 bytes each. Then 100 sequential echo calls made from one RunCode
// against 100 direct calls of the same tool, same arguments, through the same clawtool from the same host, same run:
// 7 interleaved rounds, the best of each compared (and clawtool's CPU per call, which load moves less than time).
import { mkdirSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { cpuMsOf, echoServer, log, median, open, round, root, tmp } from "./lib.mjs"

const filesystem = Path.join(root, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
const memoryServer = Path.join(root, "node_modules/@modelcontextprotocol/server-memory/dist/index.js")

/** A small project: 30 TypeScript files of 20–400 lines (some with TODOs), 24 notes (some about "billing"), tagged. */
const project = () => {
  const dir = Path.join(tmp(), "codemode-project")
  mkdirSync(Path.join(dir, "src", "lib"), { recursive: true })
  mkdirSync(Path.join(dir, "notes"), { recursive: true })
  for (let i = 0; i < 30; i++) {
    const lines = 20 + ((i * 37) % 380)
    const body = Array.from({ length: lines }, (_, n) =>
      n % 23 === 0 && i % 3 === 0
        ? `// TODO(${i}.${n}): handle the edge case`
        : `export const value${n} = ${n * i} // line ${n}`
    )
    writeFileSync(Path.join(dir, "src", i % 2 === 0 ? "lib" : "", `module${i}.ts`), body.join("\n") + "\n")
  }
  for (let i = 0; i < 24; i++) {
    const tags = ["ops", "billing", "design", "legal"].filter((_, t) => (i + t) % 3 === 0)
    const text = [
      `# Note ${i}`,
      `tags: ${tags.join(", ")}`,
      "",
      ...Array.from({ length: 30 }, (_, n) =>
        n === 7 && i % 4 === 0 ? "The billing export failed again." : `Paragraph ${n} of note ${i}.`
      )
    ]
    writeFileSync(Path.join(dir, "notes", `note-${i}.md`), text.join("\n") + "\n")
  }
  return dir
}

const bytes = (value) => Buffer.byteLength(typeof value === "string" ? value : JSON.stringify(value ?? null))
/** What of a result enters the model's context: its content's text (a host shows the model the content blocks). */
const resultText = (result) => result.content.map((item) => item.text ?? JSON.stringify(item)).join("\n")

/** A host's model calling tools one by one: every argument written and every result read is counted. */
const direct = (client) => {
  let counted = 0
  let calls = 0
  const call = async (name, args) => {
    const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })
    if (result.isError) throw new Error(`${name}: ${resultText(result)}`)
    counted += bytes({ name, arguments: args }) + bytes(resultText(result))
    calls += 1
    return result
  }
  return { call, counted: () => counted, calls: () => calls }
}

/** The five tasks: each a direct way (the model reads every result) and the code an agent would write instead. */
const tasks = (dir) => [
  {
    name: "total lines of all .ts files under the root",
    direct: async (call) => {
      const found = (await call("Glob", { pattern: "**/*.ts" })).structuredContent.files
      let total = 0
      for (const file of found) total += (await call("Read", { file_path: file })).structuredContent.totalLines
      return total
    },
    code: `const { files } = await tools.Glob({ pattern: "**/*.ts" })
const reads = await Promise.all(files.map((file) => tools.Read({ file_path: file })))
return reads.reduce((sum, read) => sum + read.totalLines, 0)`
  },
  {
    name: "the three largest files",
    direct: async (call) => {
      const found = (await call("Glob", { pattern: "**/*.ts" })).structuredContent.files
      const sizes = []
      for (const file of found) {
        const info = (await call("filesystem__get_file_info", { path: file })).structuredContent.content
        sizes.push({ file: Path.basename(file), size: Number(/size: (\d+)/.exec(info)[1]) })
      }
      return sizes
        .sort((a, b) => b.size - a.size)
        .slice(0, 3)
        .map((entry) => entry.file)
    },
    code: `const { files } = await tools.Glob({ pattern: "**/*.ts" })
const infos = await Promise.all(files.map((path) => tools.filesystem.getFileInfo({ path })))
const sized = files.map((file, i) => ({ file: file.split("/").pop(), size: Number(/size: (\\d+)/.exec(infos[i].content)[1]) }))
return sized.sort((a, b) => b.size - a.size).slice(0, 3).map((entry) => entry.file)`
  },
  {
    name: 'notes mentioning "billing export", with their tags',
    direct: async (call) => {
      const found = (await call("Grep", { pattern: "billing export", path: Path.join(dir, "notes") })).structuredContent
        .files
      const out = []
      for (const file of [...found].sort()) {
        const text = (await call("filesystem__read_text_file", { path: file })).structuredContent.content
        out.push({ note: Path.basename(file), tags: /tags: (.*)/.exec(text)[1] })
      }
      return out
    },
    code: `const { files } = await tools.Grep({ pattern: "billing export", path: ${JSON.stringify(Path.join(dir, "notes"))} })
const sorted = [...files].sort()
const texts = await Promise.all(sorted.map((path) => tools.filesystem.readTextFile({ path })))
return sorted.map((file, i) => ({ note: file.split("/").pop(), tags: /tags: (.*)/.exec(texts[i].content)[1] }))`
  },
  {
    name: "TODOs per file, the files with the most",
    direct: async (call) => {
      const text = resultText(await call("Grep", { pattern: "TODO", output_mode: "count", glob: "*.ts" }))
      const counts = {}
      for (const line of text.split("\n")) {
        const match = /([^/\s]+\.ts):(\d+)$/.exec(line)
        if (match) counts[match[1]] = Number(match[2])
      }
      return Object.entries(counts)
        .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
        .slice(0, 3)
    },
    code: `const { files } = await tools.Grep({ pattern: "TODO", glob: "*.ts" })
const texts = await Promise.all(files.map((path) => tools.filesystem.readTextFile({ path })))
const counts = files.map((file, i) => [file.split("/").pop(), texts[i].content.split("\\n").filter((line) => line.includes("TODO")).length])
return counts.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 3)`
  },
  {
    name: "people in the knowledge graph who work on billing",
    direct: async (call) => {
      const graph = JSON.parse(resultText(await call("memory__read_graph", {})))
      return graph.entities
        .filter((entity) => entity.observations.some((text) => text.includes("billing")))
        .map((entity) => entity.name)
        .sort()
    },
    code: `const graph = await tools.memory.readGraph({})
return graph.entities.filter((entity) => entity.observations.some((text) => text.includes("billing"))).map((entity) => entity.name).sort()`
  }
]

/** The memory server's graph: 80 people, some on billing, each with a few observations. */
const seedGraph = async (client) => {
  const entities = Array.from({ length: 80 }, (_, i) => ({
    name: `person-${String(i).padStart(2, "0")}`,
    entityType: "person",
    observations: [
      `works on ${i % 9 === 0 ? "billing" : "search"}`,
      `joined in ${2015 + (i % 10)}`,
      `based in office ${i % 7}`
    ]
  }))
  await client.callTool({ name: "memory__create_entities", arguments: { entities } }, undefined, { timeout: 60_000 })
}

export const codeMode = async (entry) => {
  const dir = project()
  const graphFile = Path.join(tmp(), "codemode-memory.jsonl")
  const config = Path.join(tmp(), "codemode-config.toml")
  writeFileSync(
    config,
    [
      `roots = [${JSON.stringify(dir)}]`,
      `[sources.filesystem]`,
      `command = ${JSON.stringify([process.execPath, filesystem, dir])}`,
      `[sources.memory]`,
      `command = ${JSON.stringify([process.execPath, memoryServer])}`,
      `env = { MEMORY_FILE_PATH = ${JSON.stringify(graphFile)} }`,
      `[sources.echo]`,
      `command = ${JSON.stringify([process.execPath, echoServer])}`,
      `[audit]`,
      `enabled = false`
    ].join("\n")
  )
  const server = await open([entry, "serve", "--config", config], "clawtool serve (code mode)", {
    CLAWTOOL_STATE_DIR: tmp()
  })
  try {
    const { client } = server
    await seedGraph(client)
    const rows = []
    for (const task of tasks(dir)) {
      const way = direct(client)
      const expected = await task.direct(way.call)
      const runCode = { code: task.code }
      const result = await client.callTool({ name: "RunCode", arguments: runCode }, undefined, { timeout: 120_000 })
      if (result.isError) throw new Error(`${task.name}: RunCode failed: ${resultText(result)}`)
      const answer = result.structuredContent.result
      const codeBytes = bytes({ name: "RunCode", arguments: runCode }) + bytes(resultText(result))
      rows.push({
        task: task.name,
        directCalls: way.calls(),
        directBytes: way.counted(),
        directTokens: Math.round(way.counted() / 4),
        runCodeBytes: codeBytes,
        runCodeTokens: Math.round(codeBytes / 4),
        saving: round(1 - codeBytes / way.counted(), 3),
        sameAnswer: JSON.stringify(answer) === JSON.stringify(expected)
      })
    }
    const directBytes = rows.reduce((sum, row) => sum + row.directBytes, 0)
    const runCodeBytes = rows.reduce((sum, row) => sum + row.runCodeBytes, 0)

    // Overhead: 100 sequential echo calls, direct through clawtool vs from one RunCode (interleaved rounds).
    const directRun = async () => {
      const started = performance.now()
      for (let i = 0; i < 100; i++) {
        await client.callTool({ name: "echo__echo", arguments: { text: "hello" } }, undefined, { timeout: 60_000 })
      }
      return performance.now() - started
    }
    const codeRun = async () => {
      const started = performance.now()
      const result = await client.callTool(
        {
          name: "RunCode",
          arguments: { code: 'for (let i = 0; i < 100; i++) await tools.echo.echo({ text: "hello" }); return 100' }
        },
        undefined,
        { timeout: 120_000 }
      )
      if (result.isError) throw new Error(`overhead: ${resultText(result)}`)
      return performance.now() - started
    }
    await directRun()
    await codeRun()
    const directMs = []
    const codeMs = []
    const cpu = { direct: 0, code: 0 }
    const rounds = 7
    const timed = async (run, into, way) => {
      const before = cpuMsOf(server.pid)
      into.push(await run())
      cpu[way] += cpuMsOf(server.pid) - before
    }
    for (let i = 0; i < rounds; i++) {
      await timed(directRun, directMs, "direct")
      await timed(codeRun, codeMs, "code")
    }
    const best = (xs) => Math.min(...xs)
    log(
      `  100 echo calls: direct ${round(best(directMs), 1)} ms, from one RunCode ${round(best(codeMs), 1)} ms (best of ${rounds}); ` +
        `clawtool CPU ${round((cpu.direct * 10) / rounds, 0)} vs ${round((cpu.code * 10) / rounds, 0)} us/call`
    )
    return {
      rows,
      directBytes,
      runCodeBytes,
      directTokens: Math.round(directBytes / 4),
      runCodeTokens: Math.round(runCodeBytes / 4),
      saving: round(1 - runCodeBytes / directBytes, 3),
      allSameAnswers: rows.every((row) => row.sameAnswer),
      overhead: {
        directMs: round(best(directMs), 1),
        runCodeMs: round(best(codeMs), 1),
        ratio: round(best(codeMs) / best(directMs), 2),
        medianRatio: round(median(codeMs) / median(directMs), 2),
        // clawtool's own CPU per call (its worker thread included), in microseconds.
        directCpuUs: round((cpu.direct * 1000) / (rounds * 100), 0),
        runCodeCpuUs: round((cpu.code * 1000) / (rounds * 100), 0)
      }
    }
  } finally {
    await server.close()
  }
}
