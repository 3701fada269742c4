/**
 * POST /media/import: a medium fetched from a user-supplied URL through the SSRF guard, under the
 * largest size cap, inspected and finalized like an upload.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { BlobStore } from "./BlobStore.js"
import { DomainError } from "../kernel/Errors.js"
import { EventStore } from "../webhooks/EventStore.js"
import * as FieldCaps from "../kernel/FieldCaps.js"
import { IdGenerator } from "../kernel/IdGenerator.js"
import { MediaId, OrganizationId } from "../kernel/Ids.js"
import { Media, MediaKind } from "../domain/Media.js"
import * as MediaRules from "./MediaRules.js"
import { MediaStore } from "./MediaStore.js"
import { decodeBody } from "../kernel/RequestBodies.js"
import { Transactor } from "../kernel/Transactor.js"
import { UrlFetcher, UrlFetchError } from "./MediaPorts.js"
import {
  addStoredBytes,
  eventData,
  invalid,
  makeEvent,
  removeBlobQuietly,
  sanitizeFilename,
  storageKey
} from "./internal/MediaRecords.js"
import { checkBudget, consumeBudget } from "./UploadBudget.js"
import { checkAltText, inspectStored, unspecificTypes } from "./MediaUpload.js"

export const ImportBody = Schema.Struct({
  url: FieldCaps.cappedString(FieldCaps.maxUrl),
  filename: Schema.optional(Schema.NullOr(FieldCaps.cappedString(FieldCaps.maxLabel))),
  alt_text: Schema.optional(Schema.NullOr(Schema.String))
})
export type ImportBody = typeof ImportBody.Type

const largestCap = Math.max(...MediaKind.literals.map(MediaRules.maxBytes))

const fetchFailure = (error: UrlFetchError): DomainError => {
  switch (error.reason) {
    case "refused":
      return invalid("url", error.message)
    case "too_large":
      return DomainError.of("file_too_large", `The file at the URL is too large: ${error.message}`)
    default:
      return DomainError.of("upload_failed", `The file could not be fetched from the URL: ${error.message}`)
  }
}

/**
 * POST /media/upload-from-url: fetches the URL (behind the SSRF guard, size and time capped), stores
 * the bytes and finalizes them in one go; counted against the budget. The answer's `Content-Type`
 * (or the filename's extension when it says nothing) is the declared type, checked against the bytes;
 * when neither names a type, the bytes decide.
 */
export const importFromUrl = (organizationId: OrganizationId, raw: unknown) =>
  Effect.gen(function*() {
    const body = yield* decodeBody(ImportBody, raw)
    const url = body.url.trim()
    if (url === "") return yield* Effect.fail(invalid("url", "Expected an http(s) URL"))
    const altText = yield* checkAltText(body.alt_text)
    if (body.filename !== undefined && body.filename !== null) {
      const name = body.filename
      if (name.trim() === "" || name.length > MediaRules.maxFilenameLength || /[\u0000-\u001f\u007f]/.test(name)) {
        return yield* Effect.fail(invalid("filename", "Expected 1 to 255 characters without control characters"))
      }
    }
    yield* checkBudget(organizationId)
    const id = MediaId.make(yield* (yield* IdGenerator).uuid)
    const key = storageKey(organizationId, id)
    const blobs = yield* BlobStore
    const fetcher = yield* UrlFetcher

    const stored = yield* Effect.scoped(Effect.gen(function*() {
      const fetched = yield* fetcher.fetch(url)
      const filename = (body.filename ?? undefined) ??
        Option.getOrUndefined(Option.filter(Option.map(fetched.filename, sanitizeFilename), (n) => n !== "")) ??
        "download"
      const contentType = Option.getOrElse(fetched.contentType, () => "")
      const normalized = MediaRules.normalizeMimeType(contentType)
      const typed = MediaRules.checkType(contentType, filename)
      let declared: MediaRules.MediaType | undefined
      if (Either.isRight(typed)) declared = typed.right.mimeType
      else if (!unspecificTypes.has(normalized)) return yield* Effect.fail(typed.left)
      const cap = declared === undefined ? largestCap : MediaRules.maxBytes(MediaRules.kindOf(declared))
      if (Option.isSome(fetched.contentLength) && fetched.contentLength.value > cap) {
        return yield* Effect.fail(
          declared === undefined
            ? DomainError.of("file_too_large", `The file at the URL is larger than ${cap} bytes`)
            : MediaRules.fileTooLarge(MediaRules.kindOf(declared), fetched.contentLength.value)
        )
      }
      const { size } = yield* blobs.put(key, fetched.body, cap).pipe(
        Effect.catchTags({
          BlobTooLarge: () =>
            Effect.fail(
              declared === undefined
                ? DomainError.of("file_too_large", `The file at the URL is larger than ${cap} bytes`)
                : MediaRules.fileTooLarge(MediaRules.kindOf(declared))
            ),
          UrlFetchError: (e) => Effect.fail(fetchFailure(e))
        })
      )
      return { filename, declared, size }
    })).pipe(Effect.catchTag("UrlFetchError", (e) => Effect.fail(fetchFailure(e))))

    const media = yield* Effect.gen(function*() {
      if (stored.size === 0) return yield* DomainError.fail("upload_failed", "The URL answered with an empty body")
      const inspected = yield* inspectStored(key, stored.declared)
      const kind = MediaRules.kindOf(inspected.mimeType)
      yield* MediaRules.checkSize(kind, stored.size)
      const now = yield* DateTime.now
      const media = new Media({
        id,
        organizationId,
        filename: stored.filename,
        mimeType: inspected.mimeType,
        size: stored.size,
        kind,
        width: Option.flatMap(inspected.probe, (p) => p.width),
        height: Option.flatMap(inspected.probe, (p) => p.height),
        durationMs: Option.flatMap(inspected.probe, (p) => p.durationMs),
        status: "ready",
        error: Option.none(),
        storageKey: key,
        sourceUrl: Option.some(url),
        altText,
        createdAt: now,
        updatedAt: now
      })
      const store = yield* MediaStore
      const events = yield* EventStore
      yield* (yield* Transactor).withTransaction(Effect.gen(function*() {
        yield* store.insert(media)
        yield* consumeBudget(organizationId)
        yield* addStoredBytes(organizationId, media.size)
        yield* events.append([yield* makeEvent(organizationId, "media.uploaded", eventData(media))])
      }))
      return media
    }).pipe(Effect.onError(() => removeBlobQuietly(key)))
    return media
  }).pipe(Effect.withSpan("MediaLibrary.importFromUrl"))
