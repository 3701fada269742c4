import * as Context from "effect/Context"
import type * as DateTime from "effect/DateTime"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { PersistenceError } from "../kernel/Errors.js"
import type { MediaId, OrganizationId } from "../kernel/Ids.js"
import type { Media, MediaKind, MediaStatus } from "../domain/Media.js"

export interface MediaQuery {
  readonly kind?: MediaKind
  readonly limit: number
  readonly offset: number
}

export interface MediaPage {
  readonly items: ReadonlyArray<Media>
  readonly total: number
}

/** The media library's records (the bytes live in the `BlobStore`). */
export class MediaStore extends Context.Tag("@herald/core/media/MediaStore")<MediaStore, {
  readonly insert: (media: Media) => Effect.Effect<void, PersistenceError>
  readonly findById: (
    organizationId: OrganizationId,
    id: MediaId
  ) => Effect.Effect<Option.Option<Media>, PersistenceError>
  /** The organization's media among `ids`, in no particular order; unknown ids are left out. */
  readonly findByIds: (
    organizationId: OrganizationId,
    ids: ReadonlyArray<MediaId>
  ) => Effect.Effect<ReadonlyArray<Media>, PersistenceError>
  /** Newest first (ties on the id), optionally of one kind. */
  readonly list: (organizationId: OrganizationId, query: MediaQuery) => Effect.Effect<MediaPage, PersistenceError>
  /**
   * Writes every field of `media` when the stored record still has status `expected` (a fence, so two
   * finalizers cannot both win); false when it did not.
   */
  readonly update: (media: Media, expected: MediaStatus) => Effect.Effect<boolean, PersistenceError>
  /** False when there was nothing to delete. */
  readonly delete: (organizationId: OrganizationId, id: MediaId) => Effect.Effect<boolean, PersistenceError>
  /**
   * Housekeeping: deletes up to `limit` media, oldest first, that are still `pending_upload` and were
   * created before `createdBefore`, leaving out any that a post's `media_ids` or thread posts name.
   * Returns the deleted records (their bytes are the caller's to remove). Each medium is returned to
   * one caller only, however many sweep at once; one that a finalizer turns `ready` meanwhile is kept.
   */
  readonly deleteAbandoned: (options: {
    readonly createdBefore: DateTime.Utc
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<Media>, PersistenceError>
}>() {}
