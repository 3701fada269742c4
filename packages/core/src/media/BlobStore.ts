import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import type { PersistenceError } from "../kernel/Errors.js"

export class BlobTooLarge extends Schema.TaggedError<BlobTooLarge>()("BlobTooLarge", {
  maxBytes: Schema.Number
}) {}

/** Where media bytes live. Reads and writes stream; nothing holds a whole file in memory. */
export class BlobStore extends Context.Tag("@herald/core/media/BlobStore")<BlobStore, {
  /** Streams the bytes to `key`, refusing (and removing the partial blob) past `maxBytes`. */
  readonly put: <E>(
    key: string,
    bytes: Stream.Stream<Uint8Array, E>,
    maxBytes: number
  ) => Effect.Effect<{ readonly size: number }, E | BlobTooLarge | PersistenceError>
  readonly get: (key: string) => Stream.Stream<Uint8Array, PersistenceError>
  /**
   * Bytes `start` (inclusive) to `end` (exclusive) of the blob, streamed, fewer when it is shorter:
   * a chunked upload reads (and re-reads, on a retry) one chunk at a time this way.
   */
  readonly range: (key: string, start: number, end: number) => Stream.Stream<Uint8Array, PersistenceError>
  /** The first `n` bytes (type detection), fewer if the blob is shorter. */
  readonly head: (key: string, n: number) => Effect.Effect<Uint8Array, PersistenceError>
  readonly exists: (key: string) => Effect.Effect<boolean, PersistenceError>
  readonly delete: (key: string) => Effect.Effect<void, PersistenceError>
  /**
   * The blob's address for platforms that fetch media by URL, unsigned: Herald's public media base
   * (`HERALD_MEDIA_PUBLIC_URL`) plus the key, or the object's own URL where the store signs links
   * itself; none when the blob cannot be served by URL.
   */
  readonly publicUrl: (key: string) => Option.Option<string>
  /**
   * A link the store signs itself, valid for `lifetime` (an S3 presigned GET URL, answered with
   * `contentType` when given); none where links are signed by Herald and served by its
   * `/media-public` route instead.
   */
  readonly presignedUrl: (
    key: string,
    options: { readonly lifetime: Duration.Duration; readonly contentType?: string | undefined }
  ) => Effect.Effect<Option.Option<string>, PersistenceError>
}>() {}
