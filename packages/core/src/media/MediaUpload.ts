/**
 * An upload from presign to ready: `presign` (POST /media/upload), `receiveUpload` (the PUT to the
 * upload URL, streamed to the blob store under the size cap), `finalize` and `complete` (the bytes
 * decide the type; the budget is counted once).
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { BlobStore } from "./BlobStore.js"
import { DomainError } from "../kernel/Errors.js"
import { EventStore } from "../webhooks/EventStore.js"
import * as FieldCaps from "../kernel/FieldCaps.js"
import { IdGenerator } from "../kernel/IdGenerator.js"
import { MediaId, OrganizationId } from "../kernel/Ids.js"
import { Media } from "../domain/Media.js"
import * as MediaRules from "./MediaRules.js"
import { MediaStore } from "./MediaStore.js"
import { decodeBody } from "../kernel/RequestBodies.js"
import { Transactor } from "../kernel/Transactor.js"
import { defaultUploadTtlSeconds, MediaProbe, MediaSettings, Probe } from "./MediaPorts.js"
import {
  addStoredBytes,
  eventData,
  invalid,
  loadIn,
  makeEvent,
  notFound,
  removeBlobQuietly,
  storageKey
} from "./internal/MediaRecords.js"
import { checkBudget, consumeBudget } from "./UploadBudget.js"
import { signUpload, verifyUpload } from "./UploadTokens.js"

export const UploadBody = Schema.Struct({
  filename: FieldCaps.cappedString(FieldCaps.maxLabel),
  content_type: Schema.optional(FieldCaps.cappedString(FieldCaps.maxLabel)),
  file_size: Schema.Number,
  alt_text: Schema.optional(Schema.NullOr(Schema.String))
})

/** The longest `alt_text`: X's limit (1000 characters), the strictest of the platforms that take one. */
export const maxAltTextLength = 1000

/** A usable alt text: trimmed, empty is none, at most 1000 characters (`validation_error` beyond). */
export const checkAltText = (raw: string | null | undefined): Effect.Effect<Option.Option<string>, DomainError> => {
  const text = raw?.trim() ?? ""
  if (text.length > maxAltTextLength) {
    return Effect.fail(invalid("alt_text", `Expected at most ${maxAltTextLength} characters (${text.length} given)`))
  }
  return Effect.succeed(text === "" ? Option.none() : Option.some(text))
}

export const UpdateBody = Schema.Struct({
  alt_text: Schema.optional(Schema.NullOr(Schema.String))
})
export type UpdateBody = typeof UpdateBody.Type
export type UploadBody = typeof UploadBody.Type

export interface Presigned {
  readonly media: Media
  readonly body: UploadBody
  readonly token: string
  readonly expiresAt: DateTime.Utc
  readonly expiresInSeconds: number
  readonly maxBytes: number
}

/**
 * The presign step: checks the declared filename, type (`unsupported_media_type`) and size
 * (`file_too_large`) and records a `pending_upload` medium. Not counted against the budget.
 */
export const presign = (organizationId: OrganizationId, raw: unknown) =>
  Effect.gen(function*() {
    const body = yield* decodeBody(UploadBody, raw)
    if (!Number.isSafeInteger(body.file_size) || body.file_size < 1) {
      return yield* Effect.fail(invalid("file_size", "Expected a positive integer number of bytes"))
    }
    const declared = yield* MediaRules.checkDeclared({
      filename: body.filename,
      contentType: body.content_type ?? "",
      size: body.file_size
    })
    const altText = yield* checkAltText(body.alt_text)
    const id = MediaId.make(yield* (yield* IdGenerator).uuid)
    const now = yield* DateTime.now
    const media = new Media({
      id,
      organizationId,
      filename: declared.filename,
      mimeType: declared.mimeType,
      size: declared.size,
      kind: declared.kind,
      width: Option.none(),
      height: Option.none(),
      durationMs: Option.none(),
      status: "pending_upload",
      error: Option.none(),
      storageKey: storageKey(organizationId, id),
      sourceUrl: Option.none(),
      altText,
      createdAt: now,
      updatedAt: now
    })
    yield* (yield* MediaStore).insert(media)
    const ttl = (yield* MediaSettings).uploadTtlSeconds ?? defaultUploadTtlSeconds
    const expiresAt = DateTime.addDuration(now, `${ttl} seconds`)
    const token = yield* signUpload(organizationId, id, expiresAt)
    const presigned: Presigned = {
      media,
      body,
      token,
      expiresAt,
      expiresInSeconds: ttl,
      maxBytes: MediaRules.maxBytes(declared.kind)
    }
    return presigned
  }).pipe(Effect.withSpan("MediaLibrary.presign"))

// ---------------------------------------------------------------------------------------------------
// receive (the PUT to the upload URL)
// ---------------------------------------------------------------------------------------------------

export interface IncomingUpload<E> {
  readonly id: string
  readonly token: string
  readonly contentType: Option.Option<string>
  readonly contentLength: Option.Option<number>
  readonly body: Stream.Stream<Uint8Array, E>
}

class UploadInterrupted extends Schema.TaggedError<UploadInterrupted>()("UploadInterrupted", {}) {}

export const unspecificTypes = new Set(["", "application/octet-stream", "binary/octet-stream"])

/**
 * Stores the bytes of a presigned upload. The token is the credential (no API key). A `Content-Type`
 * naming another type than the one declared is `file_type_mismatch`; more bytes than the kind's cap
 * are `file_too_large` (the stream stops being read there), and so is an image whose header declares
 * more pixels than `MediaRules.maxImagePixels` (its bytes are removed). The medium stays `pending_upload` until
 * complete; bytes may be sent again until then.
 */
export const receiveUpload = <E>(upload: IncomingUpload<E>) =>
  Effect.gen(function*() {
    const { id, organizationId } = yield* verifyUpload(upload.id, upload.token)
    const store = yield* MediaStore
    const found = yield* store.findById(organizationId, id)
    if (Option.isNone(found)) return yield* Effect.fail(notFound())
    const media = found.value
    if (media.status !== "pending_upload") {
      return yield* DomainError.fail(
        "upload_failed",
        `This media is already ${media.status}; its bytes cannot be replaced. Upload a new file with POST /media/upload`
      )
    }
    const declared = media.mimeType as MediaRules.MediaType
    if (
      Option.isSome(upload.contentType) && !unspecificTypes.has(MediaRules.normalizeMimeType(upload.contentType.value))
    ) {
      const sent = yield* MediaRules.checkType(upload.contentType.value, media.filename)
      if (sent.mimeType !== declared) {
        return yield* DomainError.fail(
          "file_type_mismatch",
          `The upload's Content-Type is ${sent.mimeType}, but ${declared} was declared at POST /media/upload`,
          { declared_type: declared, detected_type: sent.mimeType }
        )
      }
    }
    const cap = MediaRules.maxBytes(media.kind)
    if (Option.isSome(upload.contentLength) && upload.contentLength.value > cap) {
      return yield* Effect.fail(MediaRules.fileTooLarge(media.kind, upload.contentLength.value))
    }
    const body = Stream.mapError(upload.body, () => new UploadInterrupted())
    const { size } = yield* (yield* BlobStore).put(media.storageKey, body, cap).pipe(
      Effect.catchTags({
        BlobTooLarge: () => Effect.fail(MediaRules.fileTooLarge(media.kind)),
        UploadInterrupted: () =>
          DomainError.fail("upload_failed", "The upload was interrupted before all bytes arrived; send the file again")
      })
    )
    if (size === 0) {
      yield* removeBlobQuietly(media.storageKey)
      return yield* DomainError.fail("upload_failed", "The upload had no bytes; send the file as the request body")
    }
    if (media.kind === "image") {
      // A few KB can declare gigapixels: refused as the bytes arrive, not when a rendition is made.
      const probe = yield* MediaProbe
      const head = yield* (yield* BlobStore).head(media.storageKey, probe.headBytes)
      yield* checkProbedPixels(yield* probe.inspect(head)).pipe(
        Effect.tapError(() => removeBlobQuietly(media.storageKey))
      )
    }
    const updated = new Media({ ...media, size, updatedAt: yield* DateTime.now })
    const written = yield* store.update(updated, "pending_upload")
    if (!written) {
      return yield* DomainError.fail("upload_failed", "This media was finalized while the bytes were arriving")
    }
    return updated
  }).pipe(Effect.withSpan("MediaLibrary.receiveUpload"))

// ---------------------------------------------------------------------------------------------------
// finalize (complete, or a post's auto-finalize)
// ---------------------------------------------------------------------------------------------------

export const notUploadedMessage = (id: string) =>
  `Media ${id} has no uploaded file yet: upload the file first (PUT its bytes to the upload_url returned by ` +
  "POST /media/upload), then call POST /media/{id}/complete or create the post"

/** `file_too_large` when the header gives an image's pixel size and it is over the limit. */
const checkProbedPixels = (probe: Option.Option<Probe>): Either.Either<void, DomainError> =>
  Option.match(probe, {
    onNone: () => Either.void,
    onSome: (p) =>
      Option.isSome(p.width) && Option.isSome(p.height)
        ? MediaRules.checkPixels(p.width.value, p.height.value)
        : Either.void
  })

/** What the bytes are, checked against `declared` (`file_type_mismatch`) or, with none, against the supported types. */
export const inspectStored = (key: string, declared: MediaRules.MediaType | undefined) =>
  Effect.gen(function*() {
    const probe = yield* MediaProbe
    const head = yield* (yield* BlobStore).head(key, probe.headBytes)
    const inspected = yield* probe.inspect(head)
    const detected = Option.map(inspected, (p) => p.mime)
    const mimeType = declared !== undefined
      ? yield* MediaRules.checkDetected(declared, Option.getOrUndefined(detected))
      : yield* Option.match(detected, {
        onNone: () =>
          Either.left(DomainError.of(
            "unsupported_media_type",
            `The file's content is not a supported type; supported: ${MediaRules.supportedMediaTypes.join(", ")}`,
            { content_type: null, supported_types: MediaRules.supportedMediaTypes }
          )),
        onSome: (mime) => MediaRules.checkType(mime, "").pipe(Either.map((t) => t.mimeType))
      })
    if (MediaRules.kindOf(mimeType) === "image") yield* checkProbedPixels(inspected)
    return { mimeType, probe: inspected }
  })

/**
 * Finalizes a `pending_upload` medium whose bytes arrived: the bytes must be there
 * (`file_not_uploaded`) and be the declared type (`file_type_mismatch`; the refused bytes are removed,
 * the medium stays pending and may be uploaded again). Then, in one transaction: status `ready`, one
 * upload counted (429 when the budget is used up), event media.uploaded. A medium finalized by
 * someone else meanwhile is returned as it is now, uncounted; one deleted (or swept) meanwhile is
 * `file_not_uploaded`.
 */
export const finalize = (media: Media) =>
  Effect.gen(function*() {
    if (media.status !== "pending_upload") return media
    const blobs = yield* BlobStore
    if (!(yield* blobs.exists(media.storageKey))) {
      return yield* DomainError.fail("file_not_uploaded", notUploadedMessage(media.id), { media_ids: [media.id] })
    }
    yield* checkBudget(media.organizationId)
    const inspected = yield* inspectStored(media.storageKey, media.mimeType as MediaRules.MediaType).pipe(
      Effect.tapError((e) => e._tag === "DomainError" ? removeBlobQuietly(media.storageKey) : Effect.void)
    )
    const ready = new Media({
      ...media,
      mimeType: inspected.mimeType,
      width: Option.flatMap(inspected.probe, (p) => p.width),
      height: Option.flatMap(inspected.probe, (p) => p.height),
      durationMs: Option.flatMap(inspected.probe, (p) => p.durationMs),
      status: "ready",
      updatedAt: yield* DateTime.now
    })
    const store = yield* MediaStore
    const events = yield* EventStore
    const won = yield* (yield* Transactor).withTransaction(Effect.gen(function*() {
      if (!(yield* store.update(ready, "pending_upload"))) return false
      yield* consumeBudget(media.organizationId)
      yield* addStoredBytes(media.organizationId, ready.size)
      yield* events.append([yield* makeEvent(media.organizationId, "media.uploaded", eventData(ready))])
      return true
    }))
    if (won) return ready
    const now = yield* store.findById(media.organizationId, media.id)
    if (Option.isSome(now)) return now.value
    // Gone meanwhile: deleted, or swept as an abandoned upload (`sweepAbandoned`).
    return yield* DomainError.fail(
      "file_not_uploaded",
      `Media ${media.id} no longer exists (deleted, or swept as an upload never completed); upload the file again`,
      { media_ids: [media.id] }
    )
  }).pipe(Effect.withSpan("MediaLibrary.finalize"))

/** POST /media/{id}/complete. A medium already ready is returned as it is (and not counted again). */
export const complete = (organizationId: OrganizationId, rawId: string) =>
  Effect.flatMap(loadIn(organizationId, rawId), finalize).pipe(Effect.withSpan("MediaLibrary.complete"))
