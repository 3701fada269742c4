/**
 * The media library's use cases: presign an upload, receive its bytes (streamed to the `BlobStore`
 * under a size cap), complete it (the bytes decide the type), import from a URL, list, get and delete;
 * plus the two services other use cases read media through: `Posts.PostMedia` (existence in the
 * organization, auto-finalize, per-platform rules at create time) and `Dispatcher.DispatchMedia`
 * (bytes for the platform clients).
 *
 * Budgets (spec, Limits): 60 uploads per hour and 300 per day per organization, counted when an upload
 * is finalized (complete, or a post auto-finalizing it) and on an import, never at presign. A
 * refused or rolled-back finalize does not use up the budget.
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { BlobStore } from "./BlobStore.js"
import { Crypto } from "../kernel/Crypto.js"
import { DispatchMedia, type MediaTarget } from "../publishing/Dispatcher.js"
import { DomainError } from "../kernel/Errors.js"
import { Event, type EventData } from "../webhooks/Event.js"
import { EventStore } from "../webhooks/EventStore.js"
import * as FieldCaps from "../kernel/FieldCaps.js"
import * as QueryParams from "../kernel/QueryParams.js"
import { IdGenerator } from "../kernel/IdGenerator.js"
import { EventId, MediaId, OrganizationId } from "../kernel/Ids.js"
import * as MediaFitting from "./MediaFitting.js"
import * as MediaLinks from "./MediaLinks.js"
import { Media, MediaKind } from "./Media.js"
import * as MediaRules from "./MediaRules.js"
import { MediaStore } from "./MediaStore.js"
import type { Platform } from "../platforms/Platform.js"
import { type MediaRef, PublishError } from "../platforms/Platforms.js"
import type { PlatformContent } from "../posts/Post.js"
import * as PostingLimits from "../posts/PostingLimits.js"
import * as Posts from "../posts/Posts.js"
import { Transactor } from "../kernel/Transactor.js"
import { UsageCounters } from "../access/UsageCounters.js"
import * as Spans from "../kernel/Spans.js"

// ---------------------------------------------------------------------------------------------------
// Ports and settings
// ---------------------------------------------------------------------------------------------------

/** What the first bytes of a file are (an adapter reads magic bytes and cheap header fields). */
export interface Probe {
  readonly mime: string
  readonly width: Option.Option<number>
  readonly height: Option.Option<number>
  readonly durationMs: Option.Option<number>
}

export class MediaProbe extends Context.Tag("@herald/core/MediaLibrary/MediaProbe")<MediaProbe, {
  /** How many leading bytes `inspect` wants. */
  readonly headBytes: number
  /** `none` when the bytes are not recognised. */
  readonly inspect: (head: Uint8Array) => Effect.Effect<Option.Option<Probe>>
}>() {}

export const UrlFetchFailure = Schema.Literal("refused", "network", "http_status", "timeout", "too_large")
export type UrlFetchFailure = typeof UrlFetchFailure.Type

export class UrlFetchError extends Schema.TaggedError<UrlFetchError>()("UrlFetchError", {
  reason: UrlFetchFailure,
  /** Names the host at most, never the URL's path or query. */
  message: Schema.String
}) {}

export interface FetchedUrl {
  readonly contentType: Option.Option<string>
  readonly contentLength: Option.Option<number>
  /** From `Content-Disposition`, else the last path segment of the final URL. */
  readonly filename: Option.Option<string>
  /** The body; the fetcher bounds the whole exchange in time. */
  readonly body: Stream.Stream<Uint8Array, UrlFetchError>
}

/** Fetches a user-supplied URL behind the SSRF guard; the connection lives as long as the scope. */
export class UrlFetcher extends Context.Tag("@herald/core/MediaLibrary/UrlFetcher")<UrlFetcher, {
  readonly fetch: (url: string) => Effect.Effect<FetchedUrl, UrlFetchError, Scope.Scope>
}>() {}

/** Signing of upload URLs. */
export class MediaSettings extends Context.Tag("@herald/core/MediaLibrary/MediaSettings")<MediaSettings, {
  readonly signingKey: Redacted.Redacted<string>
  /** How long an upload URL stays valid; 3600 by default. */
  readonly uploadTtlSeconds?: number
}>() {}

export interface Budget {
  readonly hour: number
  readonly day: number
}

export const defaultBudget: Budget = { hour: 60, day: 300 }

/** Optional: an operator's own upload budget (otherwise the spec's 60 per hour and 300 per day). */
export class MediaBudget extends Context.Tag("@herald/core/MediaLibrary/MediaBudget")<MediaBudget, Budget>() {}

/**
 * Optional: whether posts bound for platforms that fetch media themselves (Instagram images, Threads)
 * need a public URL for it at create time; `true` unless provided. The sandbox fetches nothing: `false`.
 */
export class PublicUrlsRequired extends Context.Tag("@herald/core/MediaLibrary/PublicUrlsRequired")<
  PublicUrlsRequired,
  boolean
>() {}

export const defaultUploadTtlSeconds = 3600

// ---------------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------------

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

const addStoredBytes = (organizationId: OrganizationId, bytes: number) =>
  bytes === 0
    ? Effect.void
    : Effect.flatMap(UsageCounters, (counters) =>
      Effect.asVoid(counters.increment(storedBytesKey(organizationId), storedBytesEnd, bytes)))

/** The bytes the organization stores now (see `storedBytesKey`). */
export const storedBytes = (organizationId: OrganizationId) =>
  Effect.flatMap(UsageCounters, (counters) => counters.get(storedBytesKey(organizationId), storedBytesEnd))

const invalid = (path: string, message: string): DomainError =>
  DomainError.of("validation_error", `${path}: ${message}`, { validation_errors: [{ path, message }] })

const notFound = () => DomainError.of("not_found", "Media not found")

const parseId = (raw: string): Option.Option<MediaId> => Schema.decodeUnknownOption(MediaId)(raw)

const makeEvent = (organizationId: OrganizationId, type: "media.uploaded" | "media.deleted", data: EventData) =>
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

const loadIn = (organizationId: OrganizationId, rawId: string) =>
  Effect.gen(function*() {
    const id = parseId(rawId)
    if (Option.isNone(id)) return yield* Effect.fail(notFound())
    const found = yield* (yield* MediaStore).findById(organizationId, id.value)
    if (Option.isNone(found)) return yield* Effect.fail(notFound())
    return found.value
  })

const removeBlobQuietly = (key: string) =>
  Effect.flatMap(BlobStore, (blobs) => blobs.delete(key)).pipe(Effect.ignore)

/** Cleans a filename taken from a remote answer: no control characters or path, at most 255 characters. */
export const sanitizeFilename = (raw: string): string => {
  const base = raw.replace(/[\u0000-\u001f\u007f]/g, "").split(/[/\\]/).pop()!.trim()
  return base.slice(0, MediaRules.maxFilenameLength)
}

// ---------------------------------------------------------------------------------------------------
// Budget
// ---------------------------------------------------------------------------------------------------

type BudgetPeriod = "hour" | "day"

export const budgetKey = (organizationId: OrganizationId, period: BudgetPeriod): string =>
  `media_uploads:${organizationId}:${period}`

/**
 * The 429 of an exhausted upload budget: `rate_limit_exceeded` for the hour (the spec's code for a
 * per-hour limit), `daily_limit_reached` for the day; `details{limit, remaining: 0, reset_at, period,
 * budget: "media_uploads"}`. The HTTP layer adds `Retry-After`.
 */
export const budgetExceeded = (period: BudgetPeriod, limit: number, resetAt: DateTime.Utc): DomainError =>
  DomainError.of(
    period === "day" ? "daily_limit_reached" : "rate_limit_exceeded",
    `The organization's media upload budget of ${limit} per ${period} is used up; try again after ` +
      DateTime.formatIso(resetAt),
    { limit, remaining: 0, reset_at: DateTime.formatIso(resetAt), period, budget: "media_uploads" }
  )

const budgetOf = Effect.map(Effect.serviceOption(MediaBudget), Option.getOrElse(() => defaultBudget))

const periods = (budget: Budget): ReadonlyArray<readonly [BudgetPeriod, number]> => [["hour", budget.hour], ["day", budget.day]]

/** Refuses early (before any work) when a window is already full; counts nothing. */
export const checkBudget = (organizationId: OrganizationId) =>
  Effect.gen(function*() {
    const counters = yield* UsageCounters
    const budget = yield* budgetOf
    const now = yield* DateTime.now
    for (const [period, limit] of periods(budget)) {
      const end = PostingLimits.windowEnd(now, period)
      const used = yield* counters.get(budgetKey(organizationId, period), end)
      if (used >= limit) return yield* Effect.fail(budgetExceeded(period, limit, end))
    }
  })

/** Counts one upload in both windows; meant to run inside the transaction that finalizes it. */
export const consumeBudget = (organizationId: OrganizationId) =>
  Effect.gen(function*() {
    const counters = yield* UsageCounters
    const budget = yield* budgetOf
    const now = yield* DateTime.now
    for (const [period, limit] of periods(budget)) {
      const end = PostingLimits.windowEnd(now, period)
      const used = yield* counters.increment(budgetKey(organizationId, period), end, 1)
      if (used > limit) return yield* Effect.fail(budgetExceeded(period, limit, end))
    }
  })

// ---------------------------------------------------------------------------------------------------
// Upload tokens
// ---------------------------------------------------------------------------------------------------

const tokenPayload = (organizationId: string, id: string, expires: number) =>
  `herald-media-upload:v1:${organizationId}:${id}:${expires}`

/** `v1.<organization id>.<expiry, unix seconds>.<HMAC-SHA256 hex>`: the upload URL's own credential. */
export const signUpload = (organizationId: OrganizationId, id: MediaId, expiresAt: DateTime.Utc) =>
  Effect.gen(function*() {
    const settings = yield* MediaSettings
    const expires = Math.floor(DateTime.toEpochMillis(expiresAt) / 1000)
    const signature = yield* (yield* Crypto).hmacSha256Hex(
      Redacted.value(settings.signingKey),
      tokenPayload(organizationId, id, expires)
    )
    return `v1.${organizationId}.${expires}.${signature}`
  })

const badUploadUrl = () =>
  DomainError.of(
    "auth_failed",
    "The upload URL is invalid or has expired; request a new one with POST /media/upload"
  )

/** The organization the token was issued for, when the token is genuine, for `id`, and unexpired. */
export const verifyUpload = (rawId: string, token: string) =>
  Effect.gen(function*() {
    const parts = token.split(".")
    const id = parseId(rawId)
    if (parts.length !== 4 || parts[0] !== "v1" || Option.isNone(id)) return yield* Effect.fail(badUploadUrl())
    const [, org, expiresRaw, signature] = parts as [string, string, string, string]
    const organizationId = Schema.decodeUnknownOption(OrganizationId)(org)
    if (Option.isNone(organizationId) || !/^\d{1,12}$/.test(expiresRaw)) return yield* Effect.fail(badUploadUrl())
    const settings = yield* MediaSettings
    const crypto = yield* Crypto
    const expected = yield* crypto.hmacSha256Hex(
      Redacted.value(settings.signingKey),
      tokenPayload(organizationId.value, id.value, Number(expiresRaw))
    )
    if (!crypto.timingSafeEqual(expected, signature)) return yield* Effect.fail(badUploadUrl())
    const now = yield* DateTime.now
    if (DateTime.toEpochMillis(now) >= Number(expiresRaw) * 1000) return yield* Effect.fail(badUploadUrl())
    return { organizationId: organizationId.value, id: id.value }
  })

// ---------------------------------------------------------------------------------------------------
// presign
// ---------------------------------------------------------------------------------------------------

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
    const body = yield* Posts.decodeBody(UploadBody, raw)
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

const unspecificTypes = new Set(["", "application/octet-stream", "binary/octet-stream"])

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
    if (Option.isSome(upload.contentType) && !unspecificTypes.has(MediaRules.normalizeMimeType(upload.contentType.value))) {
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
      Option.isSome(p.width) && Option.isSome(p.height) ? MediaRules.checkPixels(p.width.value, p.height.value) : Either.void
  })

/** What the bytes are, checked against `declared` (`file_type_mismatch`) or, with none, against the supported types. */
const inspectStored = (key: string, declared: MediaRules.MediaType | undefined) =>
  Effect.gen(function*() {
    const probe = yield* MediaProbe
    const head = yield* (yield* BlobStore).head(key, probe.headBytes)
    const inspected = yield* probe.inspect(head)
    const detected = Option.map(inspected, (p) => p.mime)
    const mimeType = declared !== undefined
      ? yield* MediaRules.checkDetected(declared, Option.getOrUndefined(detected))
      : yield* Option.match(detected, {
        onNone: () => Either.left(DomainError.of(
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

// ---------------------------------------------------------------------------------------------------
// import from a URL
// ---------------------------------------------------------------------------------------------------

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
    const body = yield* Posts.decodeBody(ImportBody, raw)
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

// ---------------------------------------------------------------------------------------------------
// list, get, delete
// ---------------------------------------------------------------------------------------------------

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
    const body = yield* Posts.decodeBody(UpdateBody, raw)
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

// ---------------------------------------------------------------------------------------------------
// Housekeeping: uploads never completed
// ---------------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------------
// Posts: existence, auto-finalize, per-platform rules
// ---------------------------------------------------------------------------------------------------

export interface PostMediaInput {
  readonly organizationId: OrganizationId
  readonly mediaIds: ReadonlyArray<MediaId>
  readonly threadMediaIds: ReadonlyArray<MediaId>
  readonly platforms: ReadonlyArray<Platform>
  readonly platformContent: PlatformContent
  /** `publish` also requires the media a platform cannot post without; `draft` by default. */
  readonly mode?: MediaRules.CheckMode
  /** The media of each thread post, for the per-platform rules; the thread ids above when absent. */
  readonly threadParts?: ReadonlyArray<ReadonlyArray<MediaId>>
}

/** Whether a post names any medium, in its own media or a thread post's. */
export const carriesMedia = (input: PostMediaInput): boolean =>
  input.mediaIds.length > 0 || input.threadMediaIds.length > 0 ||
  (input.threadParts !== undefined && input.threadParts.some((part) => part.length > 0))

/**
 * `checkPostMedia` of a post that names no medium: only the platforms' rules (a platform that cannot
 * post without media refuses it), with nothing to look up, so it needs no service.
 */
export const checkWithoutMedia = (input: PostMediaInput): Effect.Effect<void, DomainError> =>
  input.platforms.length === 0 ? Effect.void : MediaRules.check({
    platforms: input.platforms,
    platformContent: input.platformContent,
    media: [],
    ...(input.threadParts === undefined ? {} : { threadMedia: input.threadParts.map(() => []) }),
    mode: input.mode ?? "draft"
  })

const toMedium = (media: Media): MediaRules.PostMedium => ({
  kind: media.kind,
  mimeType: media.mimeType,
  size: media.size,
  ...(Option.isSome(media.durationMs) ? { durationMs: media.durationMs.value } : {})
})

/**
 * A post's media at create (or edit, or schedule) time: every id must be a medium of the organization
 * (`file_not_uploaded` names the unknown ones); pending uploads are finalized (their bytes must be
 * there, `file_not_uploaded` otherwise; counted like a complete); then each targeted platform's rules
 * (`validation_error` with `validation_errors[]{path, message, platform}`).
 */
export const checkPostMedia = (input: PostMediaInput, publicUrlsRequired = true) =>
  Effect.gen(function*() {
    const all = [...new Set([...input.mediaIds, ...input.threadMediaIds])]
    if (all.length === 0 && input.platforms.length === 0) return
    const found = all.length === 0 ? [] : yield* (yield* MediaStore).findByIds(input.organizationId, all)
    const byId = new Map(found.map((m) => [m.id as string, m]))
    const missing = all.filter((id) => !byId.has(id))
    if (missing.length > 0) {
      return yield* DomainError.fail(
        "file_not_uploaded",
        `Media not found in this organization: ${missing.join(", ")}. Upload files with POST /media/upload ` +
          "(or POST /media/upload-from-url) and send the media_id they return",
        { media_ids: missing }
      )
    }
    for (const id of all) {
      const media = byId.get(id)!
      if (media.status === "pending_upload") byId.set(id, yield* finalize(media))
      else if (media.status !== "ready") {
        return yield* DomainError.fail(
          "media_not_ready",
          `Media ${id} is ${media.status} and cannot be posted; upload the file again`,
          { media_ids: [id] }
        )
      }
    }
    const blobs = yield* BlobStore
    // Whether a platform that fetches media itself could be given a URL for each (HERALD_MEDIA_PUBLIC_URL).
    const mediaOf = (ids: ReadonlyArray<MediaId>) =>
      ids.map((id): MediaRules.PostMedium => {
        const media = byId.get(id)!
        return publicUrlsRequired
          ? { ...toMedium(media), hasPublicUrl: Option.isSome(blobs.publicUrl(media.storageKey)) }
          : toMedium(media)
      })
    yield* MediaRules.check({
      platforms: input.platforms,
      platformContent: input.platformContent,
      media: mediaOf(input.mediaIds),
      ...(input.threadParts === undefined ? {} : { threadMedia: input.threadParts.map(mediaOf) }),
      mode: input.mode ?? "draft"
    })
  }).pipe(Spans.withSpan("MediaLibrary.checkPostMedia"))

// ---------------------------------------------------------------------------------------------------
// Dispatch: bytes for the platform clients
// ---------------------------------------------------------------------------------------------------

/**
 * Where the rendition of a medium to a profile lives: beside the original, named by the profile, with
 * the format's extension (a web server publishing the media directory then sends the right type).
 */
export const renditionKey = (media: Media, profile: MediaFitting.Profile): string =>
  `${media.storageKey}.renditions/${profile.key}.${extensions[profile.format]}`

/** What is known of a stored rendition, kept next to it; written last, so its presence means done. */
const RenditionRecord = Schema.parseJson(Schema.Struct({
  size: Schema.NonNegativeInt,
  width: Schema.Int,
  height: Schema.Int
}))
type RenditionRecord = typeof RenditionRecord.Type

const recordKey = (key: string) => `${key}.json`

/** The record of a rendition already written, if any. */
const storedRendition = (key: string) =>
  Effect.gen(function*() {
    const blobs = yield* BlobStore
    if (!(yield* blobs.exists(recordKey(key)))) return Option.none<RenditionRecord>()
    const text = new TextDecoder().decode(yield* collectBytes(blobs.get(recordKey(key))))
    return Schema.decodeUnknownOption(RenditionRecord)(text)
  })

const extensions: Readonly<Record<MediaFitting.RenditionFormat, string>> = { jpeg: "jpg", png: "png", webp: "webp" }

const collectBytes = <E>(stream: Stream.Stream<Uint8Array, E>) =>
  Stream.runFold(stream, [] as Array<Uint8Array>, (chunks, chunk) => {
    chunks.push(chunk)
    return chunks
  }).pipe(Effect.map((chunks) => {
    const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0))
    let offset = 0
    for (const chunk of chunks) {
      out.set(chunk, offset)
      offset += chunk.length
    }
    return out
  }))

const renditionFailed = (media: Media, platform: Platform, message: string) =>
  new PublishError({ kind: "media", message: `Media ${media.id} cannot be fitted for ${platform}: ${message}` })

/**
 * The rendition of `media` to `profile`: the stored one when it was made before (by any process),
 * else made from the original now and stored beside it (the original is only read). Two processes
 * making the same rendition at once both write the same bytes; each write replaces the file whole.
 */
export const renditionOf = (media: Media, profile: MediaFitting.Profile, platform: Platform) =>
  Effect.gen(function*() {
    const blobs = yield* BlobStore
    const key = renditionKey(media, profile)
    const stored = yield* storedRendition(key)
    if (Option.isSome(stored)) return { key, ...stored.value }
    const renditions = yield* MediaFitting.ImageRenditions
    const source = yield* collectBytes(blobs.get(media.storageKey))
    const rendered = yield* renditions.render(source, profile).pipe(
      Effect.mapError((e) => renditionFailed(media, platform, e.message))
    )
    yield* blobs.put(key, Stream.make(rendered.bytes), profile.maxBytes).pipe(
      Effect.catchTag("BlobTooLarge", () => Effect.fail(renditionFailed(media, platform, "the rendition is too large")))
    )
    const record: RenditionRecord = { size: rendered.bytes.length, width: rendered.width, height: rendered.height }
    yield* blobs.put(
      recordKey(key),
      Stream.make(new TextEncoder().encode(Schema.encodeSync(RenditionRecord)(record))),
      64 * 1024
    ).pipe(Effect.catchTag("BlobTooLarge", () => Effect.fail(renditionFailed(media, platform, "record too large"))))
    // Counted once per rendition, however many processes wrote it at once (where counters are kept).
    const counters = yield* Effect.serviceOption(UsageCounters)
    if (Option.isSome(counters)) {
      const first = (yield* counters.value.increment(`storage:rendition:${key}`, storedBytesEnd, 1)) === 1
      if (first) yield* counters.value.increment(storedBytesKey(media.organizationId), storedBytesEnd, record.size)
    }
    return { key, ...record }
  }).pipe(Effect.withSpan("MediaLibrary.renditionOf"))

const renamed = (filename: string, format: MediaFitting.RenditionFormat): string => {
  const dot = filename.lastIndexOf(".")
  return `${dot > 0 ? filename.slice(0, dot) : filename}.${extensions[format]}`
}

/**
 * Every rendition key a medium can have (each platform, content type and fit), so that deleting the
 * medium removes them too.
 */
export const renditionKeys = (media: Media): ReadonlyArray<string> => {
  const keys = new Set<string>()
  for (const platform of Object.keys(MediaRules.acceptedTypes) as ReadonlyArray<Platform>) {
    for (const contentType of [undefined, "Story"]) {
      for (const fit of ["pad", "crop"] as const) {
        const planned = MediaFitting.plan(toMedium(media), { platform, contentType, fit })
        if (planned._tag === "Rendition") keys.add(renditionKey(media, planned.profile))
      }
    }
  }
  return [...keys]
}

/**
 * The media of a post as platform clients read them: bytes through the blob store, or its public URL.
 * With a `target` and an `ImageRenditions` service, each image goes out as its rendition for the
 * target's platform (made on first use, then reused), never as the original.
 */
export const resolveForDispatch = (
  organizationId: OrganizationId,
  ids: ReadonlyArray<MediaId>,
  target?: MediaTarget
) =>
  Effect.gen(function*() {
    const store = yield* MediaStore
    const blobs = yield* BlobStore
    const renditions = yield* Effect.serviceOption(MediaFitting.ImageRenditions)
    const signer = yield* Effect.serviceOption(MediaLinks.MediaLinkSigner)
    const crypto = yield* Effect.serviceOption(Crypto)
    // A signed short-lived link where Herald serves media itself, else the store's plain public URL.
    const linkTo = (key: string, contentType: string): Effect.Effect<Option.Option<string>> =>
      Option.isSome(signer) && Option.isSome(crypto)
        ? MediaLinks.signedUrl(key, contentType).pipe(
          Effect.provideService(MediaLinks.MediaLinkSigner, signer.value),
          Effect.provideService(Crypto, crypto.value),
          Effect.provideService(BlobStore, blobs)
        )
        : Effect.succeed(blobs.publicUrl(key))
    const found = yield* store.findByIds(organizationId, ids)
    const byId = new Map(found.map((m) => [m.id as string, m]))
    const refs: Array<MediaRef> = []
    for (const id of ids) {
      const media = byId.get(id)
      if (media === undefined) {
        return yield* new PublishError({ kind: "media", message: `Media ${id} was deleted from the library` })
      }
      if (media.status !== "ready") {
        return yield* new PublishError({ kind: "media", message: `Media ${id} is ${media.status}, not ready` })
      }
      const override = target?.settings?.["altText"]
      const altText = typeof override === "string" && override.trim() !== ""
        ? { altText: override.trim() }
        : Option.isSome(media.altText)
        ? { altText: media.altText.value }
        : {}
      const planned = target === undefined
        ? undefined
        : MediaFitting.plan(toMedium(media), {
          platform: target.platform,
          contentType: target.contentType,
          ...(MediaFitting.fitSetting(target.settings) === undefined
            ? {}
            : { fit: MediaFitting.fitSetting(target.settings)! })
        })
      if (target !== undefined && planned?._tag === "Unfit") {
        return yield* renditionFailed(media, target.platform, planned.message)
      }
      if (target !== undefined && planned?._tag === "Rendition" && Option.isSome(renditions)) {
        const made = yield* renditionOf(media, planned.profile, target.platform).pipe(
          Effect.provideService(MediaFitting.ImageRenditions, renditions.value)
        )
        refs.push({
          id: media.id,
          mimeType: MediaFitting.renditionMimeType(planned.profile.format),
          kind: media.kind,
          size: made.size,
          filename: renamed(media.filename, planned.profile.format),
          bytes: blobs.get(made.key),
          range: (start, end) => blobs.range(made.key, start, end),
          publicUrl: yield* linkTo(made.key, MediaFitting.renditionMimeType(planned.profile.format)),
          width: made.width,
          height: made.height,
          ...altText
        })
        continue
      }
      refs.push({
        id: media.id,
        mimeType: media.mimeType,
        kind: media.kind,
        size: media.size,
        filename: media.filename,
        bytes: blobs.get(media.storageKey),
        range: (start, end) => blobs.range(media.storageKey, start, end),
        publicUrl: yield* linkTo(media.storageKey, media.mimeType),
        ...(Option.isSome(media.width) ? { width: media.width.value } : {}),
        ...(Option.isSome(media.height) ? { height: media.height.value } : {}),
        ...(Option.isSome(media.durationMs) ? { durationMs: media.durationMs.value } : {}),
        ...altText
      })
    }
    return refs as ReadonlyArray<MediaRef>
  })

// ---------------------------------------------------------------------------------------------------
// Layers
// ---------------------------------------------------------------------------------------------------

/** What finalizing needs. */
export type FinalizeServices =
  | MediaStore
  | BlobStore
  | MediaProbe
  | Transactor
  | EventStore
  | IdGenerator
  | UsageCounters

/** `Posts.PostMedia` over the library (services captured when the layer is built). */
export const layerPostMedia: Layer.Layer<Posts.PostMedia, never, FinalizeServices> = Layer.effect(
  Posts.PostMedia,
  Effect.gen(function*() {
    const finalize = yield* Effect.context<FinalizeServices>()
    const budget = yield* Effect.serviceOption(MediaBudget)
    const context = Option.isSome(budget) ? Context.add(finalize, MediaBudget, budget.value) : finalize
    const publicUrlsRequired = Option.getOrElse(yield* Effect.serviceOption(PublicUrlsRequired), () => true)
    return Posts.PostMedia.of({
      // Most posts name no medium: their check provides nothing (each provide copies the request's
      // whole context, ~70 services, which showed in the create path's profile).
      check: (input) =>
        carriesMedia(input)
          ? Effect.provide(checkPostMedia(input, publicUrlsRequired), context)
          : checkWithoutMedia(input)
    })
  })
)

/**
 * `Dispatcher.DispatchMedia` over the library; with `ImageRenditions` in the context, images go out
 * as their renditions for the destination's platform.
 */
export const layerDispatchMedia: Layer.Layer<DispatchMedia, never, MediaStore | BlobStore> = Layer.effect(
  DispatchMedia,
  Effect.gen(function*() {
    const context = yield* Effect.context<MediaStore | BlobStore>()
    const renditions = yield* Effect.serviceOption(MediaFitting.ImageRenditions)
    const signer = yield* Effect.serviceOption(MediaLinks.MediaLinkSigner)
    const crypto = yield* Effect.serviceOption(Crypto)
    const counters = yield* Effect.serviceOption(UsageCounters)
    return DispatchMedia.of({
      resolve: (organizationId, ids, target) => {
        let resolved = resolveForDispatch(organizationId, ids, target).pipe(Effect.provide(context))
        if (Option.isSome(counters)) resolved = Effect.provideService(resolved, UsageCounters, counters.value)
        if (Option.isSome(signer) && Option.isSome(crypto)) {
          resolved = resolved.pipe(
            Effect.provideService(MediaLinks.MediaLinkSigner, signer.value),
            Effect.provideService(Crypto, crypto.value)
          )
        }
        return Option.isSome(renditions)
          ? Effect.provideService(resolved, MediaFitting.ImageRenditions, renditions.value)
          : resolved
      }
    })
  })
)

