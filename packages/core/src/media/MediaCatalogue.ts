/**
 * The library's reads and edits: list (paged), get, update the alt text, delete (refused while a
 * scheduled post uses the medium).
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { BlobStore } from "./BlobStore.js"
import { DomainError } from "../kernel/Errors.js"
import { EventStore } from "../webhooks/EventStore.js"
import * as QueryParams from "../kernel/QueryParams.js"
import { OrganizationId } from "../kernel/Ids.js"
import { Media, MediaKind } from "../domain/Media.js"
import { MediaStore } from "./MediaStore.js"
import { decodeBody } from "../kernel/RequestBodies.js"
import { Transactor } from "../kernel/Transactor.js"
import {
  addStoredBytes,
  eventData,
  invalid,
  loadIn,
  makeEvent,
  notFound,
  removeBlobQuietly
} from "./internal/MediaRecords.js"
import { checkAltText, UpdateBody } from "./MediaUpload.js"
import { recordKey, renditionKeys, storedRendition } from "./MediaForDispatch.js"

export const defaultPageSize = QueryParams.defaultPageSize
export const maxPageSize = QueryParams.maxPageSize

export interface ListParams {
  readonly type?: string | undefined
  readonly limit?: string | undefined
  readonly offset?: string | undefined
}

export interface Listed {
  readonly items: ReadonlyArray<Media>
  readonly total: number
  readonly limit: number
  readonly offset: number
  readonly hasMore: boolean
}

/**
 * GET /media: newest first; `type` (image, video, document) filters by kind, anything else is
 * `validation_error`; `limit` and `offset` as on GET /posts (clamped into 1..100, default 20).
 */
export const list = (organizationId: OrganizationId, params: ListParams) =>
  Effect.gen(function*() {
    const typeRaw = params.type?.trim().toLowerCase()
    let kind: MediaKind | undefined
    if (typeRaw !== undefined && typeRaw !== "") {
      if (!Schema.is(MediaKind)(typeRaw)) {
        return yield* Effect.fail(invalid("type", "Expected one of image, video, document"))
      }
      kind = typeRaw
    }
    const { limit, offset } = QueryParams.pageParams({ limit: params.limit, offset: params.offset })
    const page = yield* (yield* MediaStore).list(organizationId, {
      ...(kind === undefined ? {} : { kind }),
      limit,
      offset
    })
    const listed: Listed = {
      items: page.items,
      total: page.total,
      limit,
      offset,
      hasMore: offset + page.items.length < page.total
    }
    return listed
  }).pipe(Effect.withSpan("MediaLibrary.list"))

export const get = (organizationId: OrganizationId, rawId: string) => loadIn(organizationId, rawId)

/**
 * PATCH /media/{id}: `alt_text` (a string sets it, null or empty clears it, absent leaves it). Any
 * status may be edited; the write is fenced on the status read, so a finalize racing it is not lost
 * (the edit is retried once on the fresh record).
 */
export const update = (organizationId: OrganizationId, rawId: string, raw: unknown) =>
  Effect.gen(function*() {
    const body = yield* decodeBody(UpdateBody, raw)
    if (body.alt_text === undefined) return yield* loadIn(organizationId, rawId)
    const altText = yield* checkAltText(body.alt_text)
    const store = yield* MediaStore
    for (let attempt = 0; attempt < 3; attempt++) {
      const media = yield* loadIn(organizationId, rawId)
      if (Option.getEquivalence((a: string, b: string) => a === b)(media.altText, altText)) return media
      const updated = new Media({ ...media, altText, updatedAt: yield* DateTime.now })
      if (yield* store.update(updated, media.status)) return updated
    }
    return yield* DomainError.fail("service_unavailable", "The medium changed while it was being edited; try again")
  }).pipe(Effect.withSpan("MediaLibrary.update"))

/**
 * DELETE /media/{id}: the record and event media.deleted in one transaction, then the bytes. Posts
 * that still name the medium fail to publish it with a message saying it was deleted.
 */
export const remove = (organizationId: OrganizationId, rawId: string) =>
  Effect.gen(function*() {
    const media = yield* loadIn(organizationId, rawId)
    const store = yield* MediaStore
    const events = yield* EventStore
    // The renditions made so far, each counted once when written: their sizes leave the total with the medium.
    const renditionBytes = yield* Effect.map(
      Effect.forEach(renditionKeys(media), (key) => storedRendition(key), { concurrency: 4 }),
      (found) => found.reduce((sum, r) => sum + Option.match(r, { onNone: () => 0, onSome: (x) => x.size }), 0)
    )
    const deleted = yield* (yield* Transactor).withTransaction(Effect.gen(function*() {
      if (!(yield* store.delete(organizationId, media.id))) return false
      yield* addStoredBytes(organizationId, -((media.status === "ready" ? media.size : 0) + renditionBytes))
      yield* events.append([yield* makeEvent(organizationId, "media.deleted", eventData(media))])
      return true
    }))
    if (!deleted) return yield* Effect.fail(notFound())
    yield* (yield* BlobStore).delete(media.storageKey).pipe(
      Effect.catchAll((e) => Effect.logWarning("media: the bytes of a deleted medium could not be removed", e))
    )
    yield* Effect.forEach(renditionKeys(media), (key) =>
      Effect.zipRight(removeBlobQuietly(key), removeBlobQuietly(recordKey(key))), { discard: true })
    return media
  }).pipe(Effect.withSpan("MediaLibrary.remove"))
