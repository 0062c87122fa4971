/**
 * `clawtool init`'s side effects around the pure cores (Hosts, Read, Plan, Rewrite): reading the hosts' files, printing
 * the plan, writing the config and secrets, and rewriting the host files after a timestamped backup (or printing every
 * diff with `--dry-run`), and `--undo`. Nothing here goes to the network.
 */
import { createTwoFilesPatch } from "diff"
import { Console, Effect, Either, Option } from "effect"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Readline from "node:readline/promises"
import { writeFileAtomic } from "../../atomicWrite.js"
import { ProcessEnv, readText, resolveConfigPaths } from "../../services/Config.js"
import { EditError, validateConfigText, validateSecretsText, writeAtomically } from "../ConfigEdit.js"
import { type HostFile, hostFiles, hostNames } from "./Hosts.js"
import { configText, planSources, renderPlan, secretsText, shortPath } from "./Plan.js"
import { type FileProblem, type FileReading, type ReadContext, readHostFile } from "./Read.js"
import { type ClawtoolEntry, rewriteHostFile } from "./Rewrite.js"

export interface InitOptions {
  readonly config: Option.Option<string>
  readonly project: Option.Option<string>
  readonly merge: boolean
  readonly applyHosts: boolean
  readonly dryRun: boolean
  readonly undo: boolean
  readonly daemon: Option.Option<string>
}

const backupMarker = ".clawtool-backup-"

/** `20261203T172326.123Z`: sorts by time as text, and two runs in one second still get two names. */
export const backupStamp = (now: Date): string => now.toISOString().replace(/[-:]/g, "")

const readError = (file: string, cause: unknown) =>
  new EditError({ detail: `cannot read ${file} (${(cause as { code?: string }).code ?? String(cause)})` })

/** Every host file present, read: its servers, or the problem (unreadable, invalid) that leaves it out. */
const readHosts = (files: ReadonlyArray<HostFile>, context: ReadContext) =>
  Effect.gen(function* () {
    const readings: Array<FileReading> = []
    const problems: Array<FileProblem> = []
    for (const hostFile of files) {
      const text = yield* Effect.either(readText(hostFile.file))
      if (Either.isLeft(text)) {
        problems.push({ host: hostFile.host, file: hostFile.file, line: undefined, detail: text.left.detail })
        continue
      }
      if (Option.isNone(text.right)) continue
      Either.match(readHostFile(hostFile, text.right.value, context), {
        onLeft: (problem) => problems.push(problem),
        onRight: (reading) => readings.push(reading)
      })
    }
    return { readings, problems }
  })

/** Secret values never reach the terminal: a diff of secrets.toml shows `KEY = "********"`. */
const maskSecrets = (text: string) => text.replace(/^(\s*[A-Za-z0-9_"-]+\s*=\s*).+$/gm, '$1"********"')

const diffOf = (file: string, before: string, after: string) =>
  createTwoFilesPatch(file, file, before, after, "current", "clawtool init")

/**
 * Replaces `file` with `after` only if it still holds `before` (the host may have rewritten it since it was read),
 * after copying it to `<file>.clawtool-backup-<stamp>` (never over an older backup). Returns the backup, or None when
 * the file changed and was left alone.
 */
export const replaceHostFile = (file: string, before: string, after: string, stamp: string) =>
  Effect.gen(function* () {
    const now = yield* Effect.tryPromise({
      try: () => Fs.readFile(file, "utf8"),
      catch: (cause) => readError(file, cause)
    })
    if (now !== before) return Option.none<string>()
    const backup = `${file}${backupMarker}${stamp}`
    yield* Effect.tryPromise({
      try: () => Fs.copyFile(file, backup, Fs.constants.COPYFILE_EXCL),
      catch: (cause) =>
        new EditError({ detail: `cannot back up ${file} to ${backup} (${String(cause)}); ${file} is unchanged` })
    })
    yield* writeAtomically(file, after)
    return Option.some(backup)
  })

/** The newest `<file>.clawtool-backup-*` beside each host file, copied back over it (byte for byte) and removed. */
const undo = (files: ReadonlyArray<HostFile>, home: string) =>
  Effect.gen(function* () {
    let restored = 0
    for (const { file, host } of files) {
      const names = yield* Effect.promise(() => Fs.readdir(Path.dirname(file)).catch(() => [] as Array<string>))
      const latest = names
        .filter((name) => name.startsWith(`${Path.basename(file)}${backupMarker}`))
        .sort()
        .at(-1)
      if (latest === undefined) continue
      const backup = Path.join(Path.dirname(file), latest)
      const [bytes, stat] = yield* Effect.tryPromise({
        try: () => Promise.all([Fs.readFile(backup), Fs.stat(backup)]),
        catch: (cause) => readError(backup, cause)
      })
      yield* Effect.tryPromise({
        try: async () => {
          await writeFileAtomic(file, bytes, { mode: stat.mode & 0o7777 })
          await Fs.rm(backup)
        },
        catch: (cause) => new EditError({ detail: `cannot restore ${file} from ${backup} (${String(cause)})` })
      })
      restored++
      yield* Console.log(`restored ${hostNames[host]} ${shortPath(file, home)} from ${latest}`)
    }
    if (restored === 0) yield* Console.log("nothing to undo: no clawtool init backups beside the hosts' files")
  })

const askYes = (question: string) =>
  Effect.promise(async () => {
    const prompt = Readline.createInterface({ input: process.stdin, output: process.stderr })
    try {
      return /^y(es)?$/i.test((await prompt.question(question)).trim())
    } finally {
      prompt.close()
    }
  })

export const runInit = (options: InitOptions) =>
  Effect.gen(function* () {
    const env = yield* ProcessEnv
    const home = env.HOME !== undefined && env.HOME !== "" ? env.HOME : Os.homedir()
    const project = Path.resolve(Option.getOrElse(options.project, () => process.cwd()))
    const files = hostFiles(env, home, project)
    if (options.undo) return yield* undo(files, home)

    const bin = Path.resolve(process.argv[1] ?? "clawtool")
    const context: ReadContext = { home, project, bin }
    const paths = resolveConfigPaths({ config: options.config, secrets: Option.none() }, env)
    const entry: ClawtoolEntry = {
      command: process.execPath,
      args: Option.match(options.daemon, {
        onSome: (url) => [bin, "connect", url],
        onNone: () => [bin, "serve", ...(Option.isSome(options.config) ? ["--config", paths.file] : [])]
      })
    }

    const { readings, problems } = yield* readHosts(files, context)
    const readFile = (file: string) =>
      readText(file).pipe(Effect.mapError((error) => new EditError({ detail: error.message })))
    const configBefore = yield* readFile(paths.file)
    const existing = Option.isNone(configBefore) ? undefined : validateConfigText(configBefore.value, paths.file)
    if (existing !== undefined && Either.isLeft(existing)) {
      return yield* new EditError({
        detail: `${existing.left.message}; fix the config before clawtool init adds to it`
      })
    }
    const sources = planSources(readings, existing?.right)
    yield* Console.log(renderPlan(sources, readings, problems, home))

    const added = sources.filter((source) => source.status === "new")
    if (Option.isSome(configBefore) && added.length > 0 && !options.merge) {
      return yield* new EditError({
        detail: `${paths.file} exists; nothing was written. Run clawtool init --merge to add the ${added.length} new source(s) to it (what is there is kept)`
      })
    }
    const before = Option.getOrElse(configBefore, () => "")
    const after = added.length === 0 ? before : configText(before, sources, home)
    const checked = validateConfigText(after, paths.file)
    if (Either.isLeft(checked)) {
      return yield* new EditError({
        detail: `the config to write would be invalid, nothing was written: ${checked.left.message}`
      })
    }
    const secretsBefore = Option.getOrElse(yield* readFile(paths.secretsFile), () => "")
    const secretsAfter = secretsText(secretsBefore, sources)
    if (Either.isLeft(secretsAfter)) return yield* new EditError({ detail: secretsAfter.left })
    if (Either.isLeft(validateSecretsText(secretsAfter.right, paths.secretsFile))) {
      return yield* new EditError({
        detail: `${paths.secretsFile} would be invalid after the import; nothing was written`
      })
    }

    // Host files: the entries of every source now in clawtool's config give way to one clawtool entry.
    const imported = new Set(
      sources
        .filter((source) => source.status !== "conflict")
        .flatMap((source) =>
          source.members.map((member) => `${member.file}\0${member.section.join("\0")}\0${member.name}`)
        )
    )
    const rewrites: Array<{ readonly reading: FileReading; readonly after: string }> = []
    for (const reading of readings) {
      const remove = reading.servers.filter((server) =>
        imported.has(`${server.file}\0${server.section.join("\0")}\0${server.name}`)
      )
      if (remove.length === 0) continue
      const rewritten = rewriteHostFile(reading, remove, entry, context)
      if (Either.isLeft(rewritten)) {
        yield* Console.log(
          `not rewritten: ${hostNames[reading.hostFile.host]} ${reading.hostFile.file}: ${rewritten.left}`
        )
        continue
      }
      rewrites.push({ reading, after: rewritten.right })
    }

    if (options.dryRun) {
      yield* Console.log("\n--dry-run: nothing was written. The changes would be:")
      if (after !== before) yield* Console.log(diffOf(paths.file, before, after))
      if (secretsAfter.right !== secretsBefore) {
        yield* Console.log(diffOf(paths.secretsFile, maskSecrets(secretsBefore), maskSecrets(secretsAfter.right)))
      }
      // The hosts' literal secrets are in the lines removed: masked too.
      const literals = sources.flatMap((source) => source.secrets.map(([, value]) => value))
      const mask = (text: string) => literals.reduce((masked, value) => masked.split(value).join("********"), text)
      for (const { reading, after } of rewrites) {
        yield* Console.log(diffOf(reading.hostFile.file, mask(reading.text), mask(after)))
      }
      return
    }

    if (after !== before) {
      yield* writeAtomically(paths.file, after)
      yield* Console.log(`wrote ${added.length} source(s) to ${paths.file}`)
    } else if (sources.length > 0) {
      yield* Console.log(`${paths.file} already has every server found; nothing to add`)
    }
    if (secretsAfter.right !== secretsBefore) {
      yield* writeAtomically(paths.secretsFile, secretsAfter.right, { forceMode: 0o600 })
      yield* Console.log(`wrote the secrets found to ${paths.secretsFile} (mode 0600)`)
    }
    if (rewrites.length === 0) return
    const apply =
      options.applyHosts ||
      (process.stdin.isTTY === true &&
        process.stderr.isTTY === true &&
        (yield* askYes(`Point ${rewrites.length} host file(s) at clawtool instead (a backup of each is kept)? [y/N] `)))
    if (!apply) {
      return yield* Console.log(
        `the hosts' files are unchanged; clawtool init --apply-hosts points them at clawtool (--dry-run shows how)`
      )
    }
    const stamp = backupStamp(new Date())
    for (const { reading, after } of rewrites) {
      const { file, host } = reading.hostFile
      const backup = yield* replaceHostFile(file, reading.text, after, stamp)
      yield* Console.log(
        Option.match(backup, {
          onNone: () => `not rewritten: ${hostNames[host]} ${file} changed since it was read; run clawtool init again`,
          onSome: (backup) => `rewrote ${hostNames[host]} ${shortPath(file, home)} (backup: ${Path.basename(backup)})`
        })
      )
    }
  })
