/**
 * `/media`: the presign step (`POST /media/upload`), the upload itself (`PUT /uploads/media/{id}?token=`,
 * authenticated by the signed token in its URL, no API key), `POST /media/{id}/complete`,
 * `POST /media/upload-from-url`, and list, get and delete. Scopes: `write` for changes, `read` for GETs.
 *
 * The layers `herald serve` and `herald worker` run the media library with are `MediaServices`.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as NodeStream from "@effect/platform-node/NodeStream"
import { BlobStore } from "@herald/core/media/BlobStore"
import { DomainError, type PersistenceError } from "@herald/core/kernel/Errors"
import type { Media } from "@herald/core/domain/Media"
import * as MediaLibrary from "@herald/core/media/MediaLibrary"
import * as MediaLinks from "@herald/core/media/MediaLinks"
import { MediaStore } from "@herald/core/media/MediaStore"
import { Crypto } from "@herald/core/kernel/Crypto"
import { MediaId, OrganizationId } from "@herald/core/kernel/Ids"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import * as ApiGroup from "../ApiGroup.js"
import * as Auth from "../Auth.js"
import * as Envelope from "../Envelope.js"
import * as Idempotency from "../Idempotency.js"
import * as RequestMiddleware from "../RequestMiddleware.js"

// ---------------------------------------------------------------------------------------------------
// Wire shapes
// ---------------------------------------------------------------------------------------------------

const Instant = Schema.String.annotations({ description: "ISO 8601, UTC" })

const mediaFields = {
  id: Schema.String.annotations({ description: "UUID; send it in a post's media_ids" }),
  media_id: Schema.String.annotations({ description: "The same as id" }),
  filename: Schema.String,
  mime_type: Schema.String.annotations({ description: "What the bytes are (once ready), else the declared type" }),
  type: Schema.Literal("image", "video", "document"),
  size: Schema.Int.annotations({ description: "Bytes; the declared size until the bytes arrive" }),
  width: Schema.NullOr(Schema.Int).annotations({ description: "Pixels, where the header tells cheaply" }),
  height: Schema.NullOr(Schema.Int),
  duration_ms: Schema.NullOr(Schema.Int).annotations({ description: "MP4/QuickTime with the moov box up front" }),
  status: Schema.Literal("pending_upload", "ready", "action_required", "failed"),
  error: Schema.NullOr(Schema.String),
  source_url: Schema.NullOr(Schema.String).annotations({ description: "The URL an import was fetched from" }),
  alt_text: Schema.NullOr(Schema.String).annotations({
    description: "Alternative text sent to every platform that takes it (a platform's settings.altText overrides it)"
  }),
  public_url: Schema.NullOr(Schema.String).annotations({
    description: "Where platforms fetch the file, when the operator serves the media directory publicly"
  }),
  created_at: Instant,
  updated_at: Instant
}

export const MediaView = Schema.Struct(mediaFields).annotations({ identifier: "Media" })
export type MediaView = typeof MediaView.Type

export const PresignedView = Schema.Struct({
  ...mediaFields,
  content_type: Schema.String.annotations({ description: "The declared type, as normalized" }),
  file_size: Schema.Int.annotations({ description: "The declared size in bytes" }),
  upload_url: Schema.String.annotations({
    description: "PUT the file's bytes here (Content-Type: the declared type); no API key: the URL is signed"
  }),
  upload_method: Schema.Literal("PUT"),
  upload_headers: Schema.Record({ key: Schema.String, value: Schema.String }),
  expires_in_seconds: Schema.Int,
  expires_at: Instant,
  max_bytes: Schema.Int.annotations({ description: "The most bytes the upload may carry" }),
  next_steps: Schema.String
}).annotations({ identifier: "MediaUpload" })
export type PresignedView = typeof PresignedView.Type

export const UploadedView = Schema.Struct({ ...mediaFields, next_steps: Schema.String }).annotations({
  identifier: "MediaUploaded"
})
export type UploadedView = typeof UploadedView.Type

export const ImportedView = Schema.Struct({
  ...mediaFields,
  url: Schema.String.annotations({ description: "The URL imported (as sent)" })
}).annotations({ identifier: "MediaImported" })
export type ImportedView = typeof ImportedView.Type

export const MediaList = Schema.Struct({
  media: Schema.Array(MediaView),
  pagination: Schema.Struct({ limit: Schema.Int, offset: Schema.Int, total: Schema.Int, has_more: Schema.Boolean })
}).annotations({ identifier: "MediaList" })

export const DeletedMedia = Schema.Struct({ id: Schema.String, media_id: Schema.String, deleted: Schema.Literal(true) })
  .annotations({ identifier: "DeletedMedia" })

const iso = (d: DateTime.Utc) => DateTime.formatIso(d)

export const toMediaView = (media: Media, publicUrl: Option.Option<string>): MediaView => ({
  id: media.id,
  media_id: media.id,
  filename: media.filename,
  mime_type: media.mimeType,
  type: media.kind,
  size: media.size,
  width: Option.getOrNull(media.width),
  height: Option.getOrNull(media.height),
  duration_ms: Option.getOrNull(media.durationMs),
  status: media.status,
  error: Option.getOrNull(media.error),
  source_url: Option.getOrNull(media.sourceUrl),
  alt_text: Option.getOrNull(media.altText),
  public_url: media.status === "ready" ? Option.getOrNull(publicUrl) : null,
  created_at: iso(media.createdAt),
  updated_at: iso(media.updatedAt)
})

/**
 * The link a platform (or the client) fetches a blob from: signed and short-lived where Herald serves
 * media itself (`HERALD_MEDIA_PUBLIC_URL` with the signer), else none.
 */
export const publicUrlOf = (
  key: string,
  contentType?: string
): Effect.Effect<Option.Option<string>, never, BlobStore> =>
  Effect.gen(function*() {
    const signer = yield* Effect.serviceOption(MediaLinks.MediaLinkSigner)
    const crypto = yield* Effect.serviceOption(Crypto)
    if (Option.isNone(signer) || Option.isNone(crypto)) return (yield* BlobStore).publicUrl(key)
    return yield* MediaLinks.signedUrl(key, contentType).pipe(
      Effect.provideService(MediaLinks.MediaLinkSigner, signer.value),
      Effect.provideService(Crypto, crypto.value)
    )
  })

const view = (media: Media) =>
  Effect.map(publicUrlOf(media.storageKey, media.mimeType), (url) => toMediaView(media, url))

const IdPath = Schema.Struct({ id: Schema.String.annotations({ description: "The media's UUID" }) })

const ListParams = Schema.Struct({
  type: Schema.optional(Schema.String.annotations({ description: "image, video or document" })),
  limit: Schema.optional(Schema.String.annotations({ description: "1 to 100, default 20" })),
  offset: Schema.optional(Schema.String.annotations({ description: "0 or more, default 0" }))
})

/**
 * Where Herald serves signed media links: `HERALD_MEDIA_PUBLIC_URL` should name this path on Herald's
 * public origin (e.g. `https://herald.example.com/media-public`), so that a link is that base, the
 * blob key, and the signature.
 */
export const publicMediaPath = "/media-public"

const LinkParams = Schema.Struct({
  expires: Schema.optional(Schema.String.annotations({ description: "Expiry of the signed link, unix seconds" })),
  signature: Schema.optional(Schema.String.annotations({ description: "HMAC-SHA256 of the link (hex)" }))
})

const PublicOriginalPath = Schema.Struct({ org: Schema.String, name: Schema.String })
const PublicRenditionPath = Schema.Struct({ org: Schema.String, name: Schema.String, rendition: Schema.String })

const TokenParams = Schema.Struct({
  token: Schema.optional(Schema.String.annotations({ description: "The signed token of the upload URL" }))
})

// ---------------------------------------------------------------------------------------------------
// Groups
// ---------------------------------------------------------------------------------------------------

export const MediaGroup = HttpApiGroup.make("media")
  .add(
    HttpApiEndpoint.post("presign", "/media/upload")
      .setPayload(MediaLibrary.UploadBody)
      .setHeaders(Idempotency.Headers)
      .addSuccess(Envelope.ok(PresignedView), { status: 201 })
      .annotate(
        OpenApi.Summary,
        "Start an upload (scope write): JSON {filename, content_type, file_size}; checks the type and size, " +
          "answers a signed upload_url to PUT the bytes to (1 hour), then call POST /media/{id}/complete. " +
          "Not counted against the upload budget"
      )
  )
  .add(
    HttpApiEndpoint.post("complete", "/media/:id/complete")
      .setPath(IdPath)
      .addSuccess(Envelope.ok(MediaView))
      .annotate(
        OpenApi.Summary,
        "Finalize an upload (scope write): the bytes must be there (file_not_uploaded) and be the declared type " +
          "(file_type_mismatch); status ready and event media.uploaded. Counted: 60 per hour, 300 per day"
      )
  )
  .add(
    HttpApiEndpoint.post("importFromUrl", "/media/upload-from-url")
      .setPayload(MediaLibrary.ImportBody)
      .setHeaders(Idempotency.Headers)
      .addSuccess(Envelope.ok(ImportedView), { status: 201 })
      .annotate(
        OpenApi.Summary,
        "Import a file from a URL (scope write): {url, filename?}; private, loopback, link-local and metadata " +
          "addresses are refused, also behind redirects; size and time capped. Counted against the upload budget"
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/media")
      .setUrlParams(ListParams)
      .addSuccess(Envelope.ok(MediaList))
      .annotate(OpenApi.Summary, "The organization's media, newest first (scope read); filter type")
  )
  .add(
    HttpApiEndpoint.get("get", "/media/:id")
      .setPath(IdPath)
      .addSuccess(Envelope.ok(MediaView))
      .annotate(OpenApi.Summary, "One medium (scope read)")
  )
  .add(
    HttpApiEndpoint.patch("update", "/media/:id")
      .setPath(IdPath)
      .setPayload(MediaLibrary.UpdateBody)
      .addSuccess(Envelope.ok(MediaView))
      .annotate(
        OpenApi.Summary,
        "Edit a medium (scope write): {alt_text} sets its alternative text (at most 1000 characters; null or " +
          "empty clears it)"
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/media/:id")
      .setPath(IdPath)
      .addSuccess(Envelope.ok(DeletedMedia))
      .annotate(OpenApi.Summary, "Delete a medium and its file (scope write); event media.deleted")
  )
  .addError(ApiGroup.errors.notFound)
  .addError(ApiGroup.errors.tooManyRequests)
  .pipe(ApiGroup.authenticated)

/**
 * The upload URL's target: no API key, the signed token in the query is the credential. It lives
 * outside `/api/v1` (like a storage service's signed URL): nothing about it is part of the keyed API.
 */
export const MediaUploadGroup = HttpApiGroup.make("mediaUpload")
  .add(
    HttpApiEndpoint.put("upload", "/uploads/media/:id")
      .setPath(IdPath)
      .setUrlParams(TokenParams)
      .addSuccess(Envelope.ok(UploadedView))
      .annotate(
        OpenApi.Summary,
        "The upload_url of POST /media/upload: PUT the raw bytes (Content-Type: the declared type). No API key; " +
          "401 auth_failed for an expired or altered URL; file_too_large past the cap"
      )
  )
  .add(
    HttpApiEndpoint.get("publicOriginal", `${publicMediaPath}/:org/:name`)
      .setPath(PublicOriginalPath)
      .setUrlParams(LinkParams)
      .annotate(
        OpenApi.Summary,
        "A signed, short-lived media link (for platforms that fetch media by URL): streams the bytes. No API key; " +
          "403 auth_failed for an unsigned, altered or expired link, 404 for a medium that is gone"
      )
  )
  .add(
    HttpApiEndpoint.get("publicRendition", `${publicMediaPath}/:org/:name/:rendition`)
      .setPath(PublicRenditionPath)
      .setUrlParams(LinkParams)
      .annotate(OpenApi.Summary, "A signed, short-lived link to a medium's rendition for one platform")
  )
  .addError(ApiGroup.errors.badRequest)
  .addError(Envelope.errorResponse(401))
  .addError(Envelope.errorResponse(403))
  .addError(ApiGroup.errors.notFound)
  .addError(ApiGroup.errors.internal)

// ---------------------------------------------------------------------------------------------------
// Handlers
// ---------------------------------------------------------------------------------------------------

/** Herald's public base URL (`HERALD_PUBLIC_URL`), for upload URLs; without it the request's Host is used. */
export class PublicBaseUrl extends Context.Tag("@herald/http/groups/Media/PublicBaseUrl")<PublicBaseUrl, string>() {}

const formMessage = (contentType: string) =>
  `POST /media/upload takes a JSON body (Content-Type: application/json), not ${contentType}: send ` +
  "{\"filename\": \"photo.jpg\", \"content_type\": \"image/jpeg\", \"file_size\": 12345}, then PUT the bytes to " +
  "the upload_url of the answer and call POST /media/{id}/complete (or import with POST /media/upload-from-url)."

/** The parsed JSON body; undefined when there is none. Malformed JSON is 400 `invalid_json`. */
const jsonBody = (endpoint: "upload" | "import") =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const contentType = (request.headers["content-type"] ?? "").toLowerCase()
    if (
      endpoint === "upload" &&
      (contentType.startsWith("multipart/") || contentType.startsWith("application/x-www-form"))
    ) {
      return yield* DomainError.fail("validation_error", formMessage(contentType.split(";")[0]!), {
        validation_errors: [{ path: "", message: formMessage(contentType.split(";")[0]!) }]
      })
    }
    const text = yield* request.text.pipe(
      Effect.mapError(() => DomainError.of("invalid_json", "The request body could not be read"))
    )
    if (text.trim() === "") return undefined
    try {
      return JSON.parse(text) as unknown
    } catch {
      return yield* DomainError.fail("invalid_json", "The request body is not valid JSON")
    }
  })

const dieOnStorage = <A, R>(
  self: Effect.Effect<A, DomainError | PersistenceError, R>
): Effect.Effect<A, DomainError, R> => Effect.catchTag(self, "PersistenceError", Effect.die)

const logMedia = (id: string) => RequestMiddleware.annotateRequestLog("media_id", id)

const baseUrlOf = Effect.gen(function*() {
  const configured = yield* Effect.serviceOption(PublicBaseUrl)
  if (Option.isSome(configured)) return configured.value.replace(/\/+$/, "")
  const request = yield* HttpServerRequest.HttpServerRequest
  const host = request.headers["host"] ?? "127.0.0.1"
  return `http://${host}`
})

export const MediaLive = HttpApiBuilder.group(ApiGroup.apiOf(MediaGroup), "media", (handlers) =>
  handlers
    .handleRaw("presign", () =>
      Idempotency.idempotent(Effect.gen(function*() {
        const { organization } = yield* Auth.requireScope("write")
        const body = yield* jsonBody("upload")
        const presigned = yield* MediaLibrary.presign(organization.id, body).pipe(dieOnStorage)
        yield* logMedia(presigned.media.id)
        const base = yield* baseUrlOf
        const out: PresignedView = {
          ...(yield* view(presigned.media)),
          content_type: presigned.media.mimeType,
          file_size: presigned.body.file_size,
          upload_url: `${base}/uploads/media/${presigned.media.id}?token=${encodeURIComponent(presigned.token)}`,
          upload_method: "PUT",
          upload_headers: { "Content-Type": presigned.media.mimeType },
          expires_in_seconds: presigned.expiresInSeconds,
          expires_at: iso(presigned.expiresAt),
          max_bytes: presigned.maxBytes,
          next_steps: `PUT the file's bytes to upload_url within ${presigned.expiresInSeconds} seconds, then ` +
            `POST /media/${presigned.media.id}/complete (or send the media_id in a post: it is finalized then)`
        }
        return yield* Idempotency.respond(PresignedView, 201)(out)
      })))
    .handle("complete", ({ path }) =>
      Effect.gen(function*() {
        const { organization } = yield* Auth.requireScope("write")
        yield* logMedia(path.id)
        const media = yield* MediaLibrary.complete(organization.id, path.id).pipe(dieOnStorage)
        return yield* view(media)
      }))
    .handleRaw("importFromUrl", () =>
      Idempotency.idempotent(Effect.gen(function*() {
        const { organization } = yield* Auth.requireScope("write")
        const body = yield* jsonBody("import")
        const media = yield* MediaLibrary.importFromUrl(organization.id, body).pipe(dieOnStorage)
        yield* logMedia(media.id)
        const out: ImportedView = { ...(yield* view(media)), url: Option.getOrElse(media.sourceUrl, () => "") }
        return yield* Idempotency.respond(ImportedView, 201)(out)
      })))
    .handle("list", ({ urlParams }) =>
      Effect.gen(function*() {
        const { organization } = yield* Auth.requireScope("read")
        const listed = yield* MediaLibrary.list(organization.id, urlParams).pipe(dieOnStorage)
        return {
          media: yield* Effect.forEach(listed.items, view),
          pagination: { limit: listed.limit, offset: listed.offset, total: listed.total, has_more: listed.hasMore }
        }
      }))
    .handle("get", ({ path }) =>
      Effect.gen(function*() {
        const { organization } = yield* Auth.requireScope("read")
        yield* logMedia(path.id)
        return yield* view(yield* MediaLibrary.get(organization.id, path.id).pipe(dieOnStorage))
      }))
    .handleRaw("update", ({ path }) =>
      Effect.gen(function*() {
        const { organization } = yield* Auth.requireScope("write")
        yield* logMedia(path.id)
        const body = yield* jsonBody("import")
        const media = yield* MediaLibrary.update(organization.id, path.id, body).pipe(dieOnStorage)
        return yield* view(media)
      }))
    .handle("delete", ({ path }) =>
      Effect.gen(function*() {
        const { organization } = yield* Auth.requireScope("write")
        yield* logMedia(path.id)
        const removed = yield* MediaLibrary.remove(organization.id, path.id).pipe(dieOnStorage)
        return { id: removed.id, media_id: removed.id, deleted: true as const }
      })))

/**
 * The request body as a stream that leaves the request open when reading stops early (at the size
 * cap): Node then discards the rest of the body after the answer, so the client reads a 400 rather
 * than a reset connection.
 */
const bodyOf = (request: HttpServerRequest.HttpServerRequest): Stream.Stream<Uint8Array, unknown> => {
  const incoming = NodeHttpServerRequest.toIncomingMessage(request)
  return NodeStream.fromReadable<unknown, Uint8Array>(() => incoming, (error) => error, { closeOnDone: false })
}

const renditionTypes: Readonly<Record<string, string>> = { jpg: "image/jpeg", png: "image/png", webp: "image/webp" }
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/**
 * Serves a signed link: the signature and expiry are checked first (so an unsigned request learns
 * nothing about what exists), then the medium must still be in the library and ready, and its bytes
 * are streamed from the blob store. Never lists, never serves what is not signed.
 */
const servePublic = (
  org: string,
  name: string,
  rendition: string | undefined,
  params: { readonly expires?: string | undefined; readonly signature?: string | undefined }
) =>
  Effect.gen(function*() {
    const key = rendition === undefined ? `${org}/${name}` : `${org}/${name}/${rendition}`
    const signer = yield* Effect.serviceOption(MediaLinks.MediaLinkSigner)
    const notFound = DomainError.of("not_found", "No such medium")
    if (Option.isNone(signer)) return yield* Effect.fail(notFound)
    const refused = yield* MediaLinks.verify(key, params.expires, params.signature).pipe(
      Effect.provideService(MediaLinks.MediaLinkSigner, signer.value)
    )
    if (Option.isSome(refused)) {
      return yield* Effect.fail(
        new DomainError({
          code: "auth_failed",
          status: 403,
          message: refused.value === "expired"
            ? "This media link has expired"
            : "This media link is not valid (unsigned or altered)"
        })
      )
    }
    const id = rendition === undefined ? name : name.replace(/\.renditions$/, "")
    const extension = rendition === undefined ? undefined : /^[A-Za-z0-9_-]+\.(jpg|png|webp)$/.exec(rendition)?.[1]
    if (!uuid.test(org) || !uuid.test(id) || (rendition !== undefined && (extension === undefined || id === name))) {
      return yield* Effect.fail(notFound)
    }
    const found = yield* (yield* MediaStore).findByIds(OrganizationId.make(org), [MediaId.make(id)])
    const media = found[0]
    const blobs = yield* BlobStore
    if (media === undefined || media.status !== "ready" || !(yield* blobs.exists(key))) {
      return yield* Effect.fail(notFound)
    }
    return HttpServerResponse.stream(blobs.get(key), {
      contentType: extension === undefined ? media.mimeType : renditionTypes[extension]!,
      ...(rendition === undefined ? { contentLength: media.size } : {}),
      headers: { "cache-control": "private, no-store", "x-content-type-options": "nosniff" }
    })
  }).pipe(dieOnStorage)

export const MediaUploadLive = HttpApiBuilder.group(
  ApiGroup.apiOf(MediaUploadGroup),
  "mediaUpload",
  (handlers) =>
    handlers
      .handle("publicOriginal", ({ path, urlParams }) => servePublic(path.org, path.name, undefined, urlParams))
      .handle("publicRendition", ({ path, urlParams }) => servePublic(path.org, path.name, path.rendition, urlParams))
      .handleRaw("upload", ({ path, urlParams }) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          yield* logMedia(path.id)
          const lengthHeader = request.headers["content-length"]
          const media = yield* MediaLibrary.receiveUpload({
            id: path.id,
            token: urlParams.token ?? "",
            contentType: Option.fromNullable(request.headers["content-type"]),
            contentLength: lengthHeader !== undefined && /^\d+$/.test(lengthHeader)
              ? Option.some(Number(lengthHeader))
              : Option.none(),
            body: bodyOf(request)
          }).pipe(dieOnStorage)
          const out: UploadedView = {
            ...(yield* view(media)),
            next_steps: `Call POST /media/${media.id}/complete to finalize (or send the media_id in a post)`
          }
          return out
        }))
)
