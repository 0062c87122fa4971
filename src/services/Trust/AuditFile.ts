import * as Fs from "node:fs/promises"
import * as Path from "node:path"

/**
 * The audit log on disk (issue 25, `[audit]`): lines appended to one file, rotated once it would grow past `maxBytes`
 * (audit.jsonl → audit.jsonl.1 → … → audit.jsonl.<keep>, the oldest dropped). The file 0600, a folder it makes 0700.
 * Asynchronous only: the writer shares the event loop with the calls it records.
 */
export interface AuditFile {
  /** Appends whole lines (UTF-8); a failure leaves the file closed, and the next append opens it again. */
  readonly append: (chunks: ReadonlyArray<Uint8Array>) => Promise<void>
  readonly close: () => Promise<void>
}

/** The n-th rotated file (1 is the newest). */
export const rotated = (file: string, n: number) => `${file}.${n}`

const ignoreMissing = (error: unknown) => {
  if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error
}

export const open = (file: string, options: { readonly maxBytes: number; readonly keep: number }): AuditFile => {
  let handle: Fs.FileHandle | undefined
  let size = 0

  const openNow = async () => {
    await Fs.mkdir(Path.dirname(file), { recursive: true, mode: 0o700 })
    const opened = await Fs.open(file, "a", 0o600)
    try {
      // A file made earlier with a wider mode (or by hand) is narrowed: the log names what every host called.
      await opened.chmod(0o600)
      size = (await opened.stat()).size
    } catch (error) {
      await opened.close().catch(() => {})
      throw error
    }
    return opened
  }

  const rotate = async () => {
    if (options.keep === 0) return Fs.rm(file, { force: true })
    await Fs.rm(rotated(file, options.keep), { force: true })
    for (let n = options.keep - 1; n >= 1; n--) {
      await Fs.rename(rotated(file, n), rotated(file, n + 1)).catch(ignoreMissing)
    }
    await Fs.rename(file, rotated(file, 1))
  }

  const closeNow = async () => {
    const current = handle
    handle = undefined
    await current?.close().catch(() => {})
  }

  return {
    append: async (chunks) => {
      let bytes = 0
      for (const chunk of chunks) bytes += chunk.length
      try {
        handle ??= await openNow()
        if (size > 0 && size + bytes > options.maxBytes) {
          await closeNow()
          await rotate()
          handle = await openNow()
        }
        await handle.writev(chunks)
        size += bytes
      } catch (error) {
        await closeNow()
        throw error
      }
    },
    close: closeNow
  }
}
