/**
 * The `BlobStore` port on the local filesystem: one file per key under a directory.
 *
 * `put` streams into a temporary file beside the target (same directory, so the final rename is
 * atomic), counting bytes as they arrive; the chunk that would take the count past `maxBytes` is never
 * written, the stream is not pulled further and the temporary file is removed. A completed file is
 * fsynced, then renamed into place, so a reader sees either the whole blob or none.
 *
 * A temporary file outlives its put only when the process died mid-write; opening the store removes
 * those older than `staleTemporaryAfter` (a day: long past any upload still being written by another
 * process sharing the directory).
 */
import * as NodeStream from "@effect/platform-node/NodeStream"
import { BlobStore, BlobTooLarge } from "@herald/core/media/BlobStore"
import { PersistenceError } from "@herald/core/kernel/Errors"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { randomBytes } from "node:crypto"
import { createReadStream } from "node:fs"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { InvalidBlobKey, urlPath, validateKey } from "./BlobKey.js"

export interface Options {
  /** Where blobs live; created if missing. */
  readonly directory: string
  /** Temporary files left by a crashed write are removed at open once older than this; a day by default. */
  readonly staleTemporaryAfter?: Duration.DurationInput
  /** Base of the URLs platforms fetch blobs from, e.g. `https://media.example.com/blobs`. */
  readonly publicBaseUrl?: string
}

export { InvalidBlobKey, maxKeyLength, validateKey } from "./BlobKey.js"

const persistence = (message: string) => (cause: unknown) => new PersistenceError({ message, cause })

const isNotFound = (cause: unknown): boolean =>
  typeof cause === "object" && cause !== null && "code" in cause && cause.code === "ENOENT"

/** Writes all of `bytes` (a file write may in principle be partial). */
const writeAll = async (handle: Fs.FileHandle, bytes: Uint8Array): Promise<void> => {
  let offset = 0
  while (offset < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset)
    offset += bytesWritten
  }
}

const temporaryPrefix = ".tmp-"

/** Removes the `.tmp-*` files under `root` last modified before `before` (epoch ms); how many went. */
const removeStaleTemporaries = async (root: string, before: number): Promise<number> => {
  let removed = 0
  for (const entry of await Fs.readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.startsWith(temporaryPrefix)) continue
    const path = Path.join(entry.parentPath, entry.name)
    try {
      if ((await Fs.stat(path)).mtimeMs < before) {
        await Fs.rm(path, { force: true })
        removed++
      }
    } catch (cause) {
      if (!isNotFound(cause)) throw cause
    }
  }
  return removed
}

/** Makes a rename durable; some filesystems cannot fsync a directory, which is not an error here. */
const syncDirectory = async (directory: string): Promise<void> => {
  let handle: Fs.FileHandle | undefined
  try {
    handle = await Fs.open(directory, "r")
    await handle.sync()
  } catch {
    // best effort
  } finally {
    await handle?.close().catch(() => undefined)
  }
}

export const make = (options: Options): Effect.Effect<BlobStore["Type"], PersistenceError> =>
  Effect.gen(function*() {
    const root = Path.resolve(options.directory)
    yield* Effect.tryPromise({
      // Owner-only directories and files: media may be unpublished drafts.
      try: () => Fs.mkdir(root, { recursive: true, mode: 0o700 }),
      catch: persistence("blob store: cannot create its directory")
    })
    const staleAfter = Duration.toMillis(Duration.decode(options.staleTemporaryAfter ?? Duration.days(1)))
    const now = yield* Clock.currentTimeMillis
    const stale = yield* Effect.tryPromise({
      try: () => removeStaleTemporaries(root, now - staleAfter),
      catch: persistence("blob store: cannot remove stale temporary files")
    })
    if (stale > 0) yield* Effect.logInfo(`Blob store: removed ${stale} temporary files left by interrupted writes`)
    const base = options.publicBaseUrl?.replace(/\/+$/, "")

    const resolve = (key: string): Effect.Effect<string, PersistenceError> => {
      const invalid = validateKey(key)
      if (invalid !== undefined) return Effect.fail(new PersistenceError({ message: invalid.message, cause: invalid }))
      const path = Path.resolve(root, key)
      // Defence in depth: the validated key cannot leave the root, and this would notice if it did.
      if (!path.startsWith(root + Path.sep)) {
        const cause = new InvalidBlobKey({ reason: "outside the store" })
        return Effect.fail(new PersistenceError({ message: cause.message, cause }))
      }
      return Effect.succeed(path)
    }

    const put = <E>(
      key: string,
      bytes: Stream.Stream<Uint8Array, E>,
      maxBytes: number
    ): Effect.Effect<{ readonly size: number }, E | BlobTooLarge | PersistenceError> =>
      Effect.gen(function*() {
        const target = yield* resolve(key)
        const directory = Path.dirname(target)
        const temporary = Path.join(directory, `${temporaryPrefix}${randomBytes(12).toString("hex")}`)
        yield* Effect.tryPromise({
          try: () => Fs.mkdir(directory, { recursive: true, mode: 0o700 }),
          catch: persistence("blob store: cannot create a directory")
        })
        const write = Effect.acquireUseRelease(
          Effect.tryPromise({
            try: () => Fs.open(temporary, "wx", 0o600),
            catch: persistence("blob store: cannot create a file")
          }),
          (handle) =>
            Effect.gen(function*() {
              let size = 0
              yield* Stream.runForEach(bytes, (chunk): Effect.Effect<void, BlobTooLarge | PersistenceError> => {
                if (size + chunk.length > maxBytes) return Effect.fail(new BlobTooLarge({ maxBytes }))
                size += chunk.length
                return Effect.tryPromise({
                  try: () => writeAll(handle, chunk),
                  catch: persistence("blob store: write failed")
                })
              })
              yield* Effect.tryPromise({ try: () => handle.sync(), catch: persistence("blob store: write failed") })
              return size
            }),
          (handle) => Effect.promise(() => handle.close().catch(() => undefined))
        )
        const size = yield* write.pipe(
          Effect.tap(() =>
            Effect.tryPromise({
              try: () => Fs.rename(temporary, target),
              catch: persistence("blob store: cannot move the file into place")
            })
          ),
          Effect.onExit((exit) =>
            Exit.isSuccess(exit)
              ? Effect.promise(() => syncDirectory(directory))
              : Effect.promise(() => Fs.rm(temporary, { force: true }).catch(() => undefined))
          )
        )
        return { size }
      }).pipe(Effect.withSpan("FileBlobStore.put"))

    const get = (key: string): Stream.Stream<Uint8Array, PersistenceError> =>
      Stream.unwrap(Effect.map(
        resolve(key),
        (path) => NodeStream.fromReadable(() => createReadStream(path), persistence("blob store: read failed"))
      ))

    const range = (key: string, start: number, end: number): Stream.Stream<Uint8Array, PersistenceError> =>
      !(end > start) || start < 0
        ? Stream.empty
        : Stream.unwrap(Effect.map(
          resolve(key),
          (path) =>
            NodeStream.fromReadable(
              // `end` of createReadStream is inclusive.
              () => createReadStream(path, { start: Math.floor(start), end: Math.ceil(end) - 1 }),
              persistence("blob store: read failed")
            )
        ))

    const head = (key: string, n: number): Effect.Effect<Uint8Array, PersistenceError> =>
      Effect.gen(function*() {
        const path = yield* resolve(key)
        if (!(n > 0)) return new Uint8Array(0)
        return yield* Effect.acquireUseRelease(
          Effect.tryPromise({ try: () => Fs.open(path, "r"), catch: persistence("blob store: read failed") }),
          (handle) =>
            Effect.tryPromise({
              try: async () => {
                const { size } = await handle.stat()
                const buffer = new Uint8Array(Math.min(Math.floor(n), size))
                let filled = 0
                while (filled < buffer.length) {
                  const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled)
                  if (bytesRead === 0) break
                  filled += bytesRead
                }
                return filled === buffer.length ? buffer : buffer.subarray(0, filled)
              },
              catch: persistence("blob store: read failed")
            }),
          (handle) => Effect.promise(() => handle.close().catch(() => undefined))
        )
      })

    const exists = (key: string): Effect.Effect<boolean, PersistenceError> =>
      Effect.flatMap(resolve(key), (path) =>
        Effect.tryPromise({
          try: () =>
            Fs.stat(path).then(
              (stat) => stat.isFile(),
              (cause: unknown) => {
                if (isNotFound(cause)) return false
                throw cause
              }
            ),
          catch: persistence("blob store: stat failed")
        }))

    const remove = (key: string): Effect.Effect<void, PersistenceError> =>
      Effect.flatMap(resolve(key), (path) =>
        Effect.tryPromise({
          try: () => Fs.rm(path, { force: true }),
          catch: persistence("blob store: delete failed")
        }))

    const publicUrl = (key: string): Option.Option<string> =>
      base === undefined || validateKey(key) !== undefined
        ? Option.none()
        : Option.some(`${base}/${urlPath(key)}`)

    // Links to files on this disk are Herald's own (`/media-public`), never the store's.
    const presignedUrl = (key: string) => Effect.as(resolve(key), Option.none<string>())

    return BlobStore.of({ put, get, range, head, exists, delete: remove, publicUrl, presignedUrl })
  })

export const layer = (options: Options): Layer.Layer<BlobStore, PersistenceError> =>
  Layer.effect(BlobStore, make(options))
