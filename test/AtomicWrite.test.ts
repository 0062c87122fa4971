import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { isAtomicTemp, writeFileAtomic, writeFileAtomicSync } from "../src/atomicWrite.js"
import { CatalogCache } from "../src/services/CatalogCache.js"
import { tempDir } from "./lib/temp.js"

const temps = (dir: string) => fs.readdirSync(dir).filter(isAtomicTemp)
const modeOf = (file: string) => fs.statSync(file).mode & 0o777

/** Runs `body` under `mask`, then puts the umask back. */
const withUmask = async <A>(mask: number, body: () => Promise<A>): Promise<A> => {
  const before = process.umask(mask)
  try {
    return await body()
  } finally {
    process.umask(before)
  }
}

const variants = [
  { name: "writeFileAtomic", write: writeFileAtomic },
  {
    name: "writeFileAtomicSync",
    write: async (...args: Parameters<typeof writeFileAtomicSync>) => writeFileAtomicSync(...args)
  }
] as const

describe("atomic write", () => {
  for (const { name, write } of variants) {
    describe(name, () => {
      it("replaces the target whole, with the mode given whatever the umask, and leaves no temp file", async () => {
        const dir = tempDir()
        const file = path.join(dir, "f.txt")
        fs.writeFileSync(file, "a much longer old content", { mode: 0o644 })
        await withUmask(0o077, () => write(file, "new", { mode: 0o640 }))
        assert.strictEqual(fs.readFileSync(file, "utf8"), "new")
        assert.strictEqual(modeOf(file), 0o640)
        await write(file, new Uint8Array([1, 2]), { mode: 0o600 })
        assert.deepStrictEqual([...fs.readFileSync(file)], [1, 2])
        assert.strictEqual(modeOf(file), 0o600)
        assert.deepStrictEqual(fs.readdirSync(dir), ["f.txt"])
      })

      it("without a mode, a new file gets the default one less the umask", async () => {
        const dir = tempDir()
        const file = path.join(dir, "new.txt")
        await withUmask(0o027, () => write(file, "x", { fsync: false }))
        assert.strictEqual(modeOf(file), 0o640)
      })

      it("replaces a symlink at the target instead of writing through it", async () => {
        const dir = tempDir()
        fs.writeFileSync(path.join(dir, "real.txt"), "kept")
        fs.symlinkSync(path.join(dir, "real.txt"), path.join(dir, "link.txt"))
        await write(path.join(dir, "link.txt"), "mine")
        assert.isFalse(fs.lstatSync(path.join(dir, "link.txt")).isSymbolicLink())
        assert.strictEqual(fs.readFileSync(path.join(dir, "link.txt"), "utf8"), "mine")
        assert.strictEqual(fs.readFileSync(path.join(dir, "real.txt"), "utf8"), "kept")
      })

      it("a failed rename throws its cause, removes the temp file and leaves the target as it was", async () => {
        const dir = tempDir()
        const target = path.join(dir, "busy")
        fs.mkdirSync(target)
        fs.writeFileSync(path.join(target, "inside"), "kept")
        const error = await write(target, "x", { mode: 0o600 }).then(
          () => undefined,
          (cause: NodeJS.ErrnoException) => cause
        )
        assert.isDefined(error)
        assert.include(["EISDIR", "ENOTEMPTY", "EEXIST", "EPERM"], error!.code)
        assert.deepStrictEqual(temps(dir), [])
        assert.strictEqual(fs.readFileSync(path.join(target, "inside"), "utf8"), "kept")
      })

      it("a missing folder throws ENOENT and makes nothing", async () => {
        const dir = tempDir()
        const error = await write(path.join(dir, "no", "f.txt"), "x").then(
          () => undefined,
          (cause: NodeJS.ErrnoException) => cause
        )
        assert.strictEqual(error?.code, "ENOENT")
        assert.deepStrictEqual(fs.readdirSync(dir), [])
      })
    })
  }

  it.effect("cache clear removes a temp file a killed write left in the cache folder", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      fs.writeFileSync(path.join(dir, ".clawtool-write-1-0123456789ab"), "half")
      const cache = yield* Effect.provide(CatalogCache, CatalogCache.layerDir(dir))
      assert.strictEqual(yield* cache.clear, 0)
      assert.deepStrictEqual(fs.readdirSync(dir), [])
    })
  )
})
