import { describe, expect, it } from "@effect/vitest"
import { BlobStore, BlobTooLarge } from "@herald/core/media/BlobStore"
import { PersistenceError } from "@herald/core/kernel/Errors"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import * as FileBlobStore from "../../src/media/FileBlobStore.js"
import { failureOf } from "../contract/BlobStore.contract.js"

const MiB = 1024 * 1024

/** A fresh directory (removed afterwards) holding `root/store`, and the store on it. */
const scopedStore = () =>
  Effect.gen(function*() {
    const root = yield* Effect.acquireRelease(
      Effect.promise(() => Fs.mkdtemp(Path.join(Os.tmpdir(), "herald-blobs-"))),
      (dir) => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true }))
    )
    const directory = Path.join(root, "store")
    const store = yield* FileBlobStore.make({ directory })
    return { root, directory, store }
  })

/** Every file under `dir`, as paths relative to it. */
const listFiles = async (dir: string): Promise<ReadonlyArray<string>> => {
  const entries = await Fs.readdir(dir, { recursive: true, withFileTypes: true })
  return entries
    .filter((e) => e.isFile())
    .map((e) => Path.relative(dir, Path.join(e.parentPath, e.name)))
    .sort()
}

// What every store does is in the contract (BlobStores.test.ts); here, what is the file store's own.
describe("FileBlobStore", () => {
  it.scoped("writes an upload to a temporary file as it arrives, and removes it at the cap", () =>
    Effect.gen(function*() {
      const { directory, store } = yield* scopedStore()
      const chunkSize = 64 * 1024
      const cap = 10 * MiB
      let pulled = 0
      const partialSizes: Array<number> = []
      const source: Stream.Stream<Uint8Array> = Stream.repeatEffect(Effect.suspend(() => {
        pulled += 1
        return Effect.promise(async () => {
          if (pulled === 120) {
            // Halfway to the cap, the bytes so far are already on disk in a temporary file.
            for (const name of await Fs.readdir(directory)) {
              if (name.startsWith(".tmp-")) partialSizes.push((await Fs.stat(Path.join(directory, name))).size)
            }
          }
          return new Uint8Array(chunkSize).fill(pulled & 0xff)
        })
      }))
      const exit = yield* Effect.exit(store.put("big.mp4", source, cap))
      expect(failureOf(exit)).toEqual(new BlobTooLarge({ maxBytes: cap }))
      expect(partialSizes).toEqual([119 * chunkSize])
      expect(yield* Effect.promise(() => listFiles(directory))).toEqual([])
    }))

  it.scoped("an interrupted put removes its temporary file", () =>
    Effect.gen(function*() {
      const { directory, store } = yield* scopedStore()
      let pulled = 0
      const endless = Stream.repeatEffect(Effect.sync(() => {
        pulled += 1
        return new Uint8Array(4096)
      })).pipe(Stream.tap(() => (pulled === 20 ? Effect.never : Effect.void)))
      const fiber = yield* Effect.fork(store.put("stuck.bin", endless, 100 * MiB))
      while (pulled < 20) yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
      expect((yield* Effect.promise(() => Fs.readdir(directory))).some((name) => name.startsWith(".tmp-"))).toBe(true)
      yield* Fiber.interrupt(fiber)
      expect(yield* Effect.promise(() => listFiles(directory))).toEqual([])
    }))

  it.scoped("a refused key writes nothing beside the store's directory either", () =>
    Effect.gen(function*() {
      const { root, store } = yield* scopedStore()
      for (const key of ["../escape", "a/../../escape", "/tmp/x", "a\\..\\b"]) {
        const error = failureOf(yield* Effect.exit(store.put(key, Stream.make(new Uint8Array(3)), MiB)))
        expect((error as PersistenceError).cause).toBeInstanceOf(FileBlobStore.InvalidBlobKey)
      }
      expect(yield* Effect.promise(() => listFiles(root))).toEqual([])
    }))

  it.scoped("provides the BlobStore tag through its layer, creating the directory", () =>
    Effect.gen(function*() {
      const { root } = yield* scopedStore()
      const directory = Path.join(root, "via-layer", "nested")
      const size = yield* Effect.gen(function*() {
        const store = yield* BlobStore
        return (yield* store.put("k", Stream.make(new Uint8Array(5)), 10)).size
      }).pipe(Effect.provide(FileBlobStore.layer({ directory })))
      expect(size).toBe(5)
      expect(yield* Effect.promise(() => listFiles(directory))).toEqual(["k"])
    }))
})

describe("FileBlobStore at open", () => {
  // Live clock: the files' modification times are real.
  it.live("removes temporary files a crashed write left over a day ago, and nothing else", () =>
    Effect.gen(function*() {
      const root = yield* Effect.promise(() => Fs.mkdtemp(Path.join(Os.tmpdir(), "herald-blobs-")))
      yield* Effect.addFinalizer(() => Effect.promise(() => Fs.rm(root, { recursive: true, force: true })))
      const directory = Path.join(root, "store")
      const nested = Path.join(directory, "media", "org-1")
      yield* Effect.promise(() => Fs.mkdir(nested, { recursive: true }))
      const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000)
      const write = (path: string, old: boolean) =>
        Effect.promise(async () => {
          await Fs.writeFile(path, "x")
          if (old) await Fs.utimes(path, twoDaysAgo, twoDaysAgo)
        })
      yield* write(Path.join(nested, ".tmp-stale"), true)
      yield* write(Path.join(directory, ".tmp-stale-top"), true)
      yield* write(Path.join(nested, ".tmp-fresh"), false)
      yield* write(Path.join(nested, "old-blob"), true)
      yield* FileBlobStore.make({ directory })
      expect(yield* Effect.promise(() => listFiles(directory))).toEqual([
        Path.join("media", "org-1", ".tmp-fresh"),
        Path.join("media", "org-1", "old-blob")
      ])
    }).pipe(Effect.scoped))
})
