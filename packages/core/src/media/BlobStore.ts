import * as Context from "effect/Context"
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
  /** A URL platforms can fetch the blob from, when the operator configured a public base URL. */
  readonly publicUrl: (key: string) => Option.Option<string>
}>() {}
