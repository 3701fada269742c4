/**
 * What the media use cases share: where a medium's bytes live, the organization's stored-bytes
 * counter, loading a medium within its organization, media events and the errors they answer.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { BlobStore } from "../BlobStore.js"
import { DomainError } from "../../kernel/Errors.js"
import { Event, type EventData } from "../../webhooks/Event.js"
import { IdGenerator } from "../../kernel/IdGenerator.js"
import { EventId, MediaId, OrganizationId } from "../../kernel/Ids.js"
import { Media } from "../../domain/Media.js"
import * as MediaRules from "../MediaRules.js"
import { MediaStore } from "../MediaStore.js"
import { UsageCounters } from "../../access/UsageCounters.js"

/** Where the bytes of a medium live in the blob store. */
export const storageKey = (organizationId: OrganizationId, id: MediaId): string => `${organizationId}/${id}`

/**
 * The bytes an organization stores (originals of ready media and their renditions), maintained as a
 * `UsageCounters` total: added in the transaction that makes a medium ready (finalize, import),
 * subtracted in the one that deletes it; a rendition adds its size once, when first written (its
 * bytes are files, not rows: a marker counter per rendition makes concurrent writers count it once).
 * `/me` reads it in one lookup, never a scan.
 */
export const storedBytesKey = (organizationId: OrganizationId): string => `storage:${organizationId}`

/** The window end of the storage counters: never reached, so never purged. */
export const storedBytesEnd: DateTime.Utc = DateTime.unsafeMake(Date.UTC(9999, 11, 31))

export const addStoredBytes = (organizationId: OrganizationId, bytes: number) =>
  bytes === 0
    ? Effect.void
    : Effect.flatMap(UsageCounters, (counters) =>
      Effect.asVoid(counters.increment(storedBytesKey(organizationId), storedBytesEnd, bytes)))

/** The bytes the organization stores now (see `storedBytesKey`). */
export const storedBytes = (organizationId: OrganizationId) =>
  Effect.flatMap(UsageCounters, (counters) => counters.get(storedBytesKey(organizationId), storedBytesEnd))

export const invalid = (path: string, message: string): DomainError =>
  DomainError.of("validation_error", `${path}: ${message}`, { validation_errors: [{ path, message }] })

export const notFound = () => DomainError.of("not_found", "Media not found")

export const parseId = (raw: string): Option.Option<MediaId> => Schema.decodeUnknownOption(MediaId)(raw)

export const makeEvent = (organizationId: OrganizationId, type: "media.uploaded" | "media.deleted", data: EventData) =>
  Effect.gen(function*() {
    const id = yield* (yield* IdGenerator).uuid
    return new Event({ id: EventId.make(id), organizationId, type, data, createdAt: yield* DateTime.now })
  })

/** The data of media.uploaded and media.deleted. */
export const eventData = (media: Media): EventData => ({
  media_id: media.id,
  filename: media.filename,
  mime_type: media.mimeType,
  type: media.kind,
  size: media.size,
  width: Option.getOrNull(media.width),
  height: Option.getOrNull(media.height),
  duration_ms: Option.getOrNull(media.durationMs),
  status: media.status,
  source_url: Option.getOrNull(media.sourceUrl)
})

export const loadIn = (organizationId: OrganizationId, rawId: string) =>
  Effect.gen(function*() {
    const id = parseId(rawId)
    if (Option.isNone(id)) return yield* Effect.fail(notFound())
    const found = yield* (yield* MediaStore).findById(organizationId, id.value)
    if (Option.isNone(found)) return yield* Effect.fail(notFound())
    return found.value
  })

export const removeBlobQuietly = (key: string) =>
  Effect.flatMap(BlobStore, (blobs) => blobs.delete(key)).pipe(Effect.ignore)

/** Cleans a filename taken from a remote answer: no control characters or path, at most 255 characters. */
export const sanitizeFilename = (raw: string): string => {
  const base = raw.replace(/[\u0000-\u001f\u007f]/g, "").split(/[/\\]/).pop()!.trim()
  return base.slice(0, MediaRules.maxFilenameLength)
}
