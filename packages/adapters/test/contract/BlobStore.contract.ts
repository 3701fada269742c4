/**
 * The `BlobStore` contract: what every store (the local disk, an S3-compatible bucket) must do the
 * same. A store under test comes with `listBlobs`, everything it holds (its own temporary files or
 * unfinished objects included), as keys, so "nothing left behind" is checked where it lives.
 */
import { describe, expect, it } from "@effect/vitest"
import { PersistenceError } from "@herald/core/kernel/Errors"
import { type BlobStore, BlobTooLarge } from "@herald/core/media/BlobStore"
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { InvalidBlobKey, validateKey } from "../../src/media/BlobKey.js"

export const MiB = 1024 * 1024

export interface StoreUnderTest {
  readonly store: BlobStore["Type"]
  /** Every key the store holds, sorted (a store's temporary files or unfinished uploads included). */
  readonly listBlobs: Effect.Effect<ReadonlyArray<string>>
}

/** A fresh, empty store, released with the scope; `publicBaseUrl` as an operator would configure it. */
export type MakeStore = (
  options?: { readonly publicBaseUrl?: string }
) => Effect.Effect<StoreUnderTest, never, Scope.Scope>

export const bytesOf = (length: number, seed = 7): Uint8Array =>
  Uint8Array.from({ length }, (_, i) => (i * seed + 3) & 0xff)

export const chunked = (bytes: Uint8Array, size: number): Stream.Stream<Uint8Array> =>
  Stream.fromIterable(
    Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size))
  )

export const collect = (stream: Stream.Stream<Uint8Array, PersistenceError>) =>
  Effect.map(Stream.runCollect(stream), (chunks) => {
    const parts = Chunk.toReadonlyArray(chunks)
    return { bytes: Buffer.concat(parts), chunks: parts.length }
  })

export const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
  if (failure === undefined) throw new Error(`expected a plain failure, got ${exit.cause._tag}`)
  return failure
}

const waitUntil = (condition: () => boolean) =>
  Effect.promise(async () => {
    const deadline = Date.now() + 20_000
    while (!condition()) {
      if (Date.now() > deadline) throw new Error("condition not met within 20 s")
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  })

export const blobStoreContract = (label: string, make: MakeStore) =>
  describe(`BlobStore contract: ${label}`, () => {
    it.live("range streams bytes start..end (exclusive), shorter at the end of the blob, empty when end <= start", () =>
      Effect.gen(function*() {
        const { store } = yield* make()
        const bytes = bytesOf(3 * MiB + 17)
        yield* store.put("org/r.bin", chunked(bytes, 64 * 1024), 10 * MiB)
        const middle = yield* collect(store.range("org/r.bin", MiB - 5, 2 * MiB + 9))
        expect(Buffer.compare(middle.bytes, Buffer.from(bytes.subarray(MiB - 5, 2 * MiB + 9)))).toBe(0)
        const tail = yield* collect(store.range("org/r.bin", 3 * MiB, 4 * MiB))
        expect(Buffer.compare(tail.bytes, Buffer.from(bytes.subarray(3 * MiB)))).toBe(0)
        expect((yield* collect(store.range("org/r.bin", 10, 10))).bytes.length).toBe(0)
        expect((yield* collect(store.range("org/r.bin", 4 * MiB, 5 * MiB))).bytes.length).toBe(0)
        const invalid = yield* Effect.exit(collect(store.range("../escape", 0, 10)))
        expect(failureOf(invalid)).toBeInstanceOf(PersistenceError)
        const missing = yield* Effect.exit(collect(store.range("org/none.bin", 0, 10)))
        expect(failureOf(missing)).toBeInstanceOf(PersistenceError)
      }).pipe(Effect.scoped))

    it.live("streams a blob in and out, with head, exists and delete", () =>
      Effect.gen(function*() {
        const { listBlobs, store } = yield* make()
        const data = bytesOf(300_000)
        const { size } = yield* store.put("org_1/media/abc.png", chunked(data, 10_000), 1 * MiB)
        expect(size).toBe(300_000)
        expect(yield* listBlobs).toEqual(["org_1/media/abc.png"])
        const read = yield* collect(store.get("org_1/media/abc.png"))
        expect(Buffer.compare(read.bytes, Buffer.from(data))).toBe(0)
        // The read arrives in pieces: streamed, not one buffer.
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
      }).pipe(Effect.scoped))

    it.live("a second put replaces the blob whole", () =>
      Effect.gen(function*() {
        const { listBlobs, store } = yield* make()
        yield* store.put("k", chunked(bytesOf(5000, 3), 1000), MiB)
        yield* store.put("k", chunked(bytesOf(200, 5), 64), MiB)
        const read = yield* collect(store.get("k"))
        expect(Buffer.compare(read.bytes, Buffer.from(bytesOf(200, 5)))).toBe(0)
        expect(yield* listBlobs).toEqual(["k"])
      }).pipe(Effect.scoped))

    it.live("a blob of many parts arrives whole, and reads back by range across its parts", () =>
      Effect.gen(function*() {
        const { store } = yield* make()
        const bytes = bytesOf(6 * MiB + 3, 13)
        expect(yield* store.put("org/video.mp4", chunked(bytes, 256 * 1024), 20 * MiB)).toEqual({ size: bytes.length })
        const whole = yield* collect(store.get("org/video.mp4"))
        expect(Buffer.compare(whole.bytes, Buffer.from(bytes))).toBe(0)
        // A range across the 5 MiB boundary (S3's least part size).
        const across = yield* collect(store.range("org/video.mp4", 5 * MiB - 7, 5 * MiB + 7))
        expect(Buffer.compare(across.bytes, Buffer.from(bytes.subarray(5 * MiB - 7, 5 * MiB + 7)))).toBe(0)
      }).pipe(Effect.scoped))

    it.live("takes exactly maxBytes and refuses one byte more, leaving nothing of the refused blob", () =>
      Effect.gen(function*() {
        const { listBlobs, store } = yield* make()
        const cap = 100_000
        expect(yield* store.put("exact", chunked(bytesOf(cap), 7_000), cap)).toEqual({ size: cap })
        const over = yield* Effect.exit(store.put("over", chunked(bytesOf(cap + 1), 7_000), cap))
        expect(failureOf(over)).toEqual(new BlobTooLarge({ maxBytes: cap }))
        expect(yield* listBlobs).toEqual(["exact"])
        expect(yield* store.exists("over")).toBe(false)
      }).pipe(Effect.scoped))

    it.live("stops pulling an oversize stream at the cap and leaves an earlier blob at the key as it was", () =>
      Effect.gen(function*() {
        const { listBlobs, store } = yield* make()
        const earlier = bytesOf(1000, 11)
        yield* store.put("big.mp4", chunked(earlier, 100), MiB)
        const chunkSize = 64 * 1024
        const total = 50 * MiB
        const cap = 6 * MiB
        let pulled = 0
        // 50 MiB, made one chunk at a time as it is pulled: the test never holds it either.
        const source: Stream.Stream<Uint8Array> = Stream.repeatEffectOption(Effect.suspend(() => {
          if (pulled * chunkSize >= total) return Effect.fail(Option.none())
          pulled += 1
          return Effect.succeed(new Uint8Array(chunkSize).fill(pulled & 0xff))
        }))
        const exit = yield* Effect.exit(store.put("big.mp4", source, cap))
        expect(failureOf(exit)).toEqual(new BlobTooLarge({ maxBytes: cap }))
        // 96 chunks fit exactly; the 97th is the one that crosses the cap. Nothing after it is pulled.
        expect(pulled).toBe(cap / chunkSize + 1)
        expect(yield* listBlobs).toEqual(["big.mp4"])
        expect(Buffer.compare((yield* collect(store.get("big.mp4"))).bytes, Buffer.from(earlier))).toBe(0)
      }).pipe(Effect.scoped))

    it.live("a failing source fails put with its own error and leaves nothing behind", () =>
      Effect.gen(function*() {
        const { listBlobs, store } = yield* make()
        const small = Stream.concat(chunked(bytesOf(50_000), 10_000), Stream.fail("connection reset" as const))
        expect(failureOf(yield* Effect.exit(store.put("a/b/c.bin", small, MiB)))).toBe("connection reset")
        // Past the first part too (a multipart upload already under way is abandoned).
        const large = Stream.concat(chunked(bytesOf(6 * MiB), 256 * 1024), Stream.fail("connection reset" as const))
        expect(failureOf(yield* Effect.exit(store.put("a/b/d.bin", large, 20 * MiB)))).toBe("connection reset")
        expect(yield* listBlobs).toEqual([])
      }).pipe(Effect.scoped))

    it.live("an interrupted put leaves nothing behind", () =>
      Effect.gen(function*() {
        const { listBlobs, store } = yield* make()
        let pulled = 0
        const endless = Stream.repeatEffect(Effect.sync(() => {
          pulled += 1
          return new Uint8Array(4096)
        })).pipe(Stream.tap(() => (pulled === 20 ? Effect.never : Effect.void)))
        const fiber = yield* Effect.fork(store.put("stuck.bin", endless, 100 * MiB))
        yield* waitUntil(() => pulled >= 20)
        yield* Fiber.interrupt(fiber)
        expect(yield* listBlobs).toEqual([])
      }).pipe(Effect.scoped))

    it.live("refuses keys that could leave the store or clash with its own files, and writes nothing", () =>
      Effect.gen(function*() {
        const { listBlobs, store } = yield* make({ publicBaseUrl: "https://cdn.example/m" })
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
          expect(validateKey(key)).toBeInstanceOf(InvalidBlobKey)
          const error = failureOf(yield* Effect.exit(store.put(key, Stream.make(new Uint8Array(3)), MiB)))
          expect(error).toBeInstanceOf(PersistenceError)
          expect((error as PersistenceError).cause).toBeInstanceOf(InvalidBlobKey)
          expect(failureOf(yield* Effect.exit(collect(store.get(key))))).toBeInstanceOf(PersistenceError)
          expect(failureOf(yield* Effect.exit(store.head(key, 4)))).toBeInstanceOf(PersistenceError)
          expect(failureOf(yield* Effect.exit(store.exists(key)))).toBeInstanceOf(PersistenceError)
          expect(failureOf(yield* Effect.exit(store.delete(key)))).toBeInstanceOf(PersistenceError)
          expect(failureOf(yield* Effect.exit(store.presignedUrl(key, { lifetime: Duration.hours(1) }))))
            .toBeInstanceOf(PersistenceError)
          expect(store.publicUrl(key)).toEqual(Option.none())
        }
        expect(yield* listBlobs).toEqual([])
        for (const good of ["a", "org_1/media/3f2a-b.c.png", "A-Z_0.9"]) expect(validateKey(good)).toBeUndefined()
      }).pipe(Effect.scoped))

    it.live("builds Herald's public URLs only when a base is configured; Herald signs the links", () =>
      Effect.gen(function*() {
        const withBase = yield* make({ publicBaseUrl: "https://herald.example/media-public/" })
        expect(withBase.store.publicUrl("org_1/abc.png")).toEqual(
          Option.some("https://herald.example/media-public/org_1/abc.png")
        )
        expect(yield* withBase.store.presignedUrl("org_1/abc.png", { lifetime: Duration.hours(1) })).toEqual(
          Option.none()
        )
        const without = yield* make()
        expect(without.store.publicUrl("org_1/abc.png")).toEqual(Option.none())
      }).pipe(Effect.scoped))
  })
