import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"

/**
 * Replacing a file whole: the data goes to a new temp file beside it (same folder, so the rename is atomic), then the
 * temp file is renamed over it. A crash leaves the old file or the new one, never half of one; a failure removes the
 * temp file and throws the cause. Rename replaces a symlink at the target rather than writing through it. Free of
 * Effect: the bin's launcher (src/launcher.ts) uses it too; callers turn the thrown cause into their own error.
 */
export interface AtomicWriteOptions {
  /** The file's mode, whatever the umask (0600 for secrets, tokens, caches); else a new file's default (0666 less the umask). */
  readonly mode?: number | undefined
  /** Flush the data to disk before the rename (default), so a power cut cannot leave an empty file in its place. */
  readonly fsync?: boolean | undefined
}

const tempPrefix = ".clawtool-write-"

/** Hidden, unique to this process and this write, and short: beside a file whose name is as long as allowed, too. */
const tempBeside = (file: string) =>
  path.join(path.dirname(file), `${tempPrefix}${process.pid}-${randomBytes(6).toString("hex")}`)

/** Whether a file name is one of these temp files (left behind only by a process killed in the middle). */
export const isAtomicTemp = (name: string): boolean => name.startsWith(tempPrefix)

export const writeFileAtomicSync = (
  file: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {}
): void => {
  const temp = tempBeside(file)
  let created = false
  try {
    // Exclusive: never opens a file that is someone else's.
    const fd = fs.openSync(temp, "wx", options.mode ?? 0o666)
    created = true
    try {
      fs.writeFileSync(fd, data)
      if (options.mode !== undefined) fs.fchmodSync(fd, options.mode) // the umask narrowed the mode open() applied
      if (options.fsync !== false) fs.fsyncSync(fd)
    } finally {
      fs.closeSync(fd)
    }
    fs.renameSync(temp, file)
  } catch (cause) {
    if (created) {
      try {
        fs.rmSync(temp, { force: true })
      } catch {
        // the cause is what matters
      }
    }
    throw cause
  }
}

export const writeFileAtomic = async (
  file: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {}
): Promise<void> => {
  const temp = tempBeside(file)
  let created = false
  try {
    const handle = await fs.promises.open(temp, "wx", options.mode ?? 0o666)
    created = true
    try {
      await handle.writeFile(data)
      if (options.mode !== undefined) await handle.chmod(options.mode)
      if (options.fsync !== false) await handle.sync()
    } finally {
      await handle.close()
    }
    await fs.promises.rename(temp, file)
  } catch (cause) {
    if (created) await fs.promises.rm(temp, { force: true }).catch(() => undefined)
    throw cause
  }
}
