import { describe, expect, it } from "@effect/vitest"
import { BlobStore, BlobTooLarge } from "@herald/core/media/BlobStore"
import { PersistenceError } from "@herald/core/kernel/Errors"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import * as FileBlobStore from "../../src/media/FileBlobStore.js"

const MiB = 1024 * 1024

/** A fresh directory (removed afterwards) holding `root/store`, and the store on it. */
const scopedStore = (options: { readonly publicBaseUrl?: string } = {}) =>
  Effect.gen(function*() {
    const root = yield* Effect.acquireRelease(
      Effect.promise(() => Fs.mkdtemp(Path.join(Os.tmpdir(), "herald-blobs-"))),
      (dir) => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true }))
    )
    const directory = Path.join(root, "store")
    const store = yield* FileBlobStore.make({ directory, ...options })
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

const bytesOf = (length: number, seed = 7): Uint8Array => Uint8Array.from({ length }, (_, i) => (i * seed + 3) & 0xff)

const chunked = (bytes: Uint8Array, size: number): Stream.Stream<Uint8Array> =>
  Stream.fromIterable(
    Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size))
  )

const collect = (stream: Stream.Stream<Uint8Array, PersistenceError>) =>
  Effect.map(Stream.runCollect(stream), (chunks) => {
    const parts = Chunk.toReadonlyArray(chunks)
    return { bytes: Buffer.concat(parts), chunks: parts.length }
  })

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
  if (failure === undefined) throw new Error(`expected a plain failure, got ${exit.cause._tag}`)
  return failure
}

describe("FileBlobStore", () => {
  it.scoped("range streams bytes start..end (exclusive), shorter at the end of the blob, empty when end <= start", () =>
    Effect.gen(function*() {
      const { store } = yield* scopedStore()
      const bytes = bytesOf(3 * MiB + 17)
      yield* store.put("org/r.bin", chunked(bytes, 64 * 1024), 10 * MiB)
      const middle = yield* collect(store.range("org/r.bin", MiB - 5, 2 * MiB + 9))
      expect(Buffer.compare(middle.bytes, Buffer.from(bytes.subarray(MiB - 5, 2 * MiB + 9)))).toBe(0)
      const tail = yield* collect(store.range("org/r.bin", 3 * MiB, 4 * MiB))
      expect(Buffer.compare(tail.bytes, Buffer.from(bytes.subarray(3 * MiB)))).toBe(0)
      expect((yield* collect(store.range("org/r.bin", 10, 10))).bytes.length).toBe(0)
      const invalid = yield* Effect.exit(collect(store.range("../escape", 0, 10)))
      expect(failureOf(invalid)).toBeInstanceOf(PersistenceError)
    }))

  it.scoped("streams a blob in and out, with head, exists and delete", () =>
    Effect.gen(function*() {
      const { directory, store } = yield* scopedStore()
      const data = bytesOf(300_000)
      const { size } = yield* store.put("org_1/media/abc.png", chunked(data, 10_000), 1 * MiB)
      expect(size).toBe(300_000)
      expect(yield* Effect.promise(() => listFiles(directory))).toEqual([Path.join("org_1", "media", "abc.png")])
      const read = yield* collect(store.get("org_1/media/abc.png"))
      expect(Buffer.compare(read.bytes, Buffer.from(data))).toBe(0)
      // createReadStream hands out 64 KiB pieces: the read is streamed, not one buffer.
      expect(read.chunks).toBeGreaterThan(1)
      expect(yield* store.head("org_1/media/abc.png", 12)).toEqual(data.subarray(0, 12))
      expect((yield* store.head("org_1/media/abc.png", 10 * MiB)).length).toBe(300_000)
      expect((yield* store.head("org_1/media/abc.png", 0)).length).toBe(0)
      expect(yield* store.exists("org_1/media/abc.png")).toBe(true)
      expect(yield* store.exists("org_1/media/other.png")).toBe(false)
      expect(yield* store.exists("org_1/media")).toBe(false)
      yield* store.delete("org_1/media/abc.png")
      expect(yield* store.exists("org_1/media/abc.png")).toBe(false)
      // Deleting what is not there is not an error.
      yield* store.delete("org_1/media/abc.png")
      const missing = yield* Effect.exit(collect(store.get("org_1/media/abc.png")))
      expect(failureOf(missing)).toBeInstanceOf(PersistenceError)
      expect(failureOf(yield* Effect.exit(store.head("nothing", 4)))).toBeInstanceOf(PersistenceError)
    }))

  it.scoped("a second put replaces the blob whole", () =>
    Effect.gen(function*() {
      const { directory, store } = yield* scopedStore()
      yield* store.put("k", chunked(bytesOf(5000, 3), 1000), MiB)
      yield* store.put("k", chunked(bytesOf(200, 5), 64), MiB)
      const read = yield* collect(store.get("k"))
      expect(Buffer.compare(read.bytes, Buffer.from(bytesOf(200, 5)))).toBe(0)
      expect(yield* Effect.promise(() => listFiles(directory))).toEqual(["k"])
    }))

  it.scoped("takes exactly maxBytes and refuses one byte more", () =>
    Effect.gen(function*() {
      const { directory, store } = yield* scopedStore()
      const cap = 100_000
      expect(yield* store.put("exact", chunked(bytesOf(cap), 7_000), cap)).toEqual({ size: cap })
      const over = yield* Effect.exit(store.put("over", chunked(bytesOf(cap + 1), 7_000), cap))
      expect(failureOf(over)).toEqual(new BlobTooLarge({ maxBytes: cap }))
      expect(yield* Effect.promise(() => listFiles(directory))).toEqual(["exact"])
      expect(yield* store.exists("over")).toBe(false)
    }))

  it.scoped("stops pulling an oversize stream at the cap and removes the partial file", () =>
    Effect.gen(function*() {
      const { directory, store } = yield* scopedStore()
      const chunkSize = 64 * 1024
      const total = 50 * MiB
      const cap = 10 * MiB
      let pulled = 0
      const partialSizes: Array<number> = []
      // 50 MiB, made one chunk at a time as it is pulled: the test never holds it either.
      const source: Stream.Stream<Uint8Array> = Stream.repeatEffectOption(Effect.suspend(() => {
        if (pulled * chunkSize >= total) return Effect.fail(Option.none())
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
      // 160 chunks fit exactly; the 161st is the one that crosses the cap. Nothing after it is pulled.
      expect(pulled).toBe(cap / chunkSize + 1)
      expect(partialSizes).toEqual([119 * chunkSize])
      expect(yield* Effect.promise(() => listFiles(directory))).toEqual([])
      expect(yield* store.exists("big.mp4")).toBe(false)
    }))

  it.scoped("a failing source fails put with its own error and leaves nothing behind", () =>
    Effect.gen(function*() {
      const { directory, store } = yield* scopedStore()
      const source = Stream.concat(
        chunked(bytesOf(50_000), 10_000),
        Stream.fail("connection reset" as const)
      )
      const exit = yield* Effect.exit(store.put("a/b/c.bin", source, MiB))
      expect(failureOf(exit)).toBe("connection reset")
      expect(yield* Effect.promise(() => listFiles(directory))).toEqual([])
    }))

  it.scoped("an interrupted put leaves nothing behind", () =>
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

  it.scoped("refuses keys that could leave the directory or clash with temporary files", () =>
    Effect.gen(function*() {
      const { root, store } = yield* scopedStore({ publicBaseUrl: "https://cdn.example/m" })
      const bad = [
        "",
        "..",
        "../escape",
        "a/../../escape",
        "a/..",
        "/etc/passwd",
        "/tmp/x",
        "a\u0000b",
        "a\\..\\b",
        "C:\\x",
        "a//b",
        "a/./b",
        ".tmp-123",
        "a/.hidden",
        "trailing/",
        "sp ace",
        "x".repeat(513)
      ]
      for (const key of bad) {
        expect(FileBlobStore.validateKey(key)).toBeInstanceOf(FileBlobStore.InvalidBlobKey)
        const put = yield* Effect.exit(store.put(key, Stream.make(new Uint8Array(3)), MiB))
        const error = failureOf(put)
        expect(error).toBeInstanceOf(PersistenceError)
        expect((error as PersistenceError).cause).toBeInstanceOf(FileBlobStore.InvalidBlobKey)
        expect(failureOf(yield* Effect.exit(collect(store.get(key))))).toBeInstanceOf(PersistenceError)
        expect(failureOf(yield* Effect.exit(store.head(key, 4)))).toBeInstanceOf(PersistenceError)
        expect(failureOf(yield* Effect.exit(store.exists(key)))).toBeInstanceOf(PersistenceError)
        expect(failureOf(yield* Effect.exit(store.delete(key)))).toBeInstanceOf(PersistenceError)
        expect(store.publicUrl(key)).toEqual(Option.none())
      }
      // Nothing was written anywhere under the temporary root, inside the store or beside it.
      expect(yield* Effect.promise(() => listFiles(root))).toEqual([])
      for (const good of ["a", "org_1/media/3f2a-b.c.png", "A-Z_0.9"]) {
        expect(FileBlobStore.validateKey(good)).toBeUndefined()
      }
    }))

  it.scoped("builds public URLs only when a base is configured", () =>
    Effect.gen(function*() {
      const withBase = yield* scopedStore({ publicBaseUrl: "https://cdn.example/media/" })
      expect(withBase.store.publicUrl("org_1/abc.png")).toEqual(Option.some("https://cdn.example/media/org_1/abc.png"))
      const without = yield* scopedStore()
      expect(without.store.publicUrl("org_1/abc.png")).toEqual(Option.none())
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
