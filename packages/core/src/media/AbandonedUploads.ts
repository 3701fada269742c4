/**
 * Housekeeping of uploads never completed: pending media older than the grace period are deleted
 * with their bytes, a batch at a time.
 */
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { BlobStore } from "./BlobStore.js"
import { MediaStore } from "./MediaStore.js"
import { defaultUploadTtlSeconds, MediaSettings } from "./MediaPorts.js"

/** How long after its upload URL expired a medium still `pending_upload` is kept: 24 hours. */
export const defaultPendingGrace: Duration.Duration = Duration.hours(24)

export interface SweepOptions {
  /** Kept this long after the upload URL expired (creation + URL lifetime + this); default 24 hours. */
  readonly grace?: Duration.DurationInput
  /** Media deleted per statement; default 100. */
  readonly batchSize?: number
  /** Statements at most per sweep (the next sweep goes on); default 50. */
  readonly maxBatches?: number
}

export interface SweepSummary {
  /** Abandoned media whose records were deleted. */
  readonly media: number
  /** Of those, the ones whose bytes could not be removed (logged; the file stays behind). */
  readonly blobsLeft: number
  /** Media created before this instant were eligible. */
  readonly createdBefore: DateTime.Utc
}

/**
 * Deletes media still `pending_upload` whose upload URL expired more than `grace` ago (24 hours by
 * default, so 25 hours after creation with the default one-hour URL), record first, then their bytes
 * (partial or complete, never finalized) through the `BlobStore`. Media that a post names are kept
 * (a post finalizes its pending media when it is created, so there should be none). No event: the
 * organization never had a ready medium (no `media.uploaded` was sent), so there is no `media.deleted`
 * either; nor is anything counted against the upload budget. Several processes may sweep at once:
 * each medium is deleted, and its bytes removed, by one of them.
 */
export const sweepAbandoned = (options: SweepOptions = {}) =>
  Effect.gen(function*() {
    const settings = yield* Effect.serviceOption(MediaSettings)
    const ttl = Option.match(settings, {
      onNone: () => defaultUploadTtlSeconds,
      onSome: (s) => s.uploadTtlSeconds ?? defaultUploadTtlSeconds
    })
    const grace = Duration.decode(options.grace ?? defaultPendingGrace)
    const limit = Math.max(1, Math.trunc(options.batchSize ?? 100))
    const maxBatches = Math.max(1, Math.trunc(options.maxBatches ?? 50))
    const now = yield* DateTime.now
    const createdBefore = DateTime.subtractDuration(now, Duration.sum(Duration.seconds(ttl), grace))
    const store = yield* MediaStore
    const blobs = yield* BlobStore
    let media = 0
    let blobsLeft = 0
    for (let batch = 0; batch < maxBatches; batch++) {
      const removed = yield* store.deleteAbandoned({ createdBefore, limit })
      media += removed.length
      const failures = yield* Effect.forEach(removed, (m) =>
        blobs.delete(m.storageKey).pipe(
          Effect.as(0),
          Effect.catchAll((e) =>
            Effect.logWarning("media: the bytes of an abandoned upload could not be removed", e).pipe(
              Effect.annotateLogs({ media_id: m.id, storage_key: m.storageKey }),
              Effect.as(1)
            )
          )
        ), { concurrency: 8 })
      blobsLeft += failures.reduce((a, b) => a + b, 0)
      if (removed.length < limit) break
    }
    const summary: SweepSummary = { media, blobsLeft, createdBefore }
    return summary
  }).pipe(Effect.withSpan("MediaLibrary.sweepAbandoned"))
