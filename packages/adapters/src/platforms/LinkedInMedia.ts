/**
 * A LinkedIn post's media, uploaded before the post so a refusal leaves nothing visible:
 * - images (1 to 20) and a PDF document: `initializeUpload`, then the whole file in one `PUT` to the
 *   returned `uploadUrl`, then `GET /rest/images/{urn}` (or `/rest/documents/{urn}`) polled until
 *   `AVAILABLE` (`PROCESSING_FAILED` is a media error). Where LinkedIn refuses that read (some member
 *   tokens may not read assets back), a short grace pause stands in for it;
 * - one video: `initializeUpload` with its size, a `PUT` per byte range of the upload instructions
 *   (collecting each `ETag`), `finalizeUpload`, then `GET /rest/videos/{urn}` polls until `AVAILABLE`.
 * The uploads' owner is the post's author (a member, or a Page for `urn:li:organization:{id}`).
 */
import type * as HttpBody from "@effect/platform/HttpBody"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type { MediaRef, PublishError } from "@herald/core/platforms/Platforms"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as MediaBytes from "./internal/MediaBytes.js"
import { field, numberField, publishError, scrub, stringField } from "./internal/PlatformHttp.js"
import { type RestApi, unexpected } from "./LinkedInApi.js"

export const maxImages = 20
export const maxImageBytes = 36 * 1024 * 1024
export const maxVideoBytes = 500 * 1024 * 1024
export const maxDocumentBytes = 100 * 1024 * 1024

/** Checks a post's media against what one LinkedIn post can carry, before anything is sent. */
export const checkMedia = (media: ReadonlyArray<MediaRef>): PublishError | undefined => {
  if (media.length === 0) return undefined
  const documents = media.filter((m) => m.kind === "document")
  const videos = media.filter((m) => m.kind === "video")
  if (documents.length > 0 && media.length > 1) {
    return publishError("media", "LinkedIn: a PDF document must be the post's only medium")
  }
  if (videos.length > 0 && media.length > 1) {
    return publishError("media", "LinkedIn: a video must be the post's only medium, never mixed with images")
  }
  if (media.length > maxImages) {
    return publishError("media", `LinkedIn: a post takes at most ${maxImages} images, got ${media.length}`)
  }
  for (const m of media) {
    if (m.kind === "document" && m.mimeType !== "application/pdf") {
      return publishError("media", `LinkedIn: ${m.filename} is ${m.mimeType}; documents must be PDF`)
    }
    const limit = m.kind === "video" ? maxVideoBytes : m.kind === "document" ? maxDocumentBytes : maxImageBytes
    if (m.size > limit) {
      return publishError("media", `LinkedIn: ${m.filename} is ${m.size} bytes; the limit for this kind is ${limit}`)
    }
  }
  return undefined
}

export interface MediaOptions {
  /** Pause after an image or document upload when its status cannot be read. */
  readonly mediaGrace: Duration.DurationInput
  /** Pause between image or document status polls. */
  readonly mediaPollInterval: Duration.DurationInput
  /** Polls before an image or document still processing counts as stuck (transient). */
  readonly mediaMaxPolls: number
  /** Pause between video status polls. */
  readonly videoPollInterval: Duration.DurationInput
  /** Polls before a video still processing counts as stuck (transient). */
  readonly videoMaxPolls: number
}

interface UploadInstruction {
  readonly uploadUrl: string
  readonly firstByte: number
  readonly lastByte: number
}

/** An image or a PDF document: initialize, then the whole file in one PUT. Returns its URN. */
export const uploadSimple = (
  api: RestApi,
  token: string,
  author: string,
  kind: "image" | "document",
  body: HttpBody.HttpBody
) =>
  Effect.gen(function*() {
    const resource = kind === "document" ? "documents" : "images"
    const init = yield* api.rest(
      token,
      "upload",
      HttpClientRequest.post(`${api.url}/rest/${resource}`).pipe(
        HttpClientRequest.setUrlParam("action", "initializeUpload"),
        HttpClientRequest.bodyUnsafeJson({ initializeUploadRequest: { owner: author } })
      )
    )
    const value = field(init.body, "value")
    const uploadUrl = stringField(value, "uploadUrl")
    const urn = stringField(value, kind)
    if (uploadUrl === undefined || urn === undefined) return yield* unexpected(`${resource} initializeUpload`)
    yield* api.putBytes(token, uploadUrl, body)
    return urn
  })

/**
 * Waits for an image or document to be `AVAILABLE` (Images/Documents API `status`). A read LinkedIn
 * refuses (other than a rate limit or an outage) falls back to the grace pause.
 */
export const awaitAsset = (
  api: RestApi,
  options: MediaOptions,
  token: string,
  kind: "image" | "document",
  name: string,
  urn: string
) =>
  Effect.gen(function*() {
    const resource = kind === "document" ? "documents" : "images"
    for (let poll = 0;; poll++) {
      const read = yield* Effect.either(
        api.rest(token, "upload", HttpClientRequest.get(`${api.url}/rest/${resource}/${encodeURIComponent(urn)}`))
      )
      if (read._tag === "Left") {
        if (read.left.kind === "transient" || read.left.kind === "rate_limit") return yield* read.left
        yield* Effect.logInfo(`LinkedIn: the status of ${name} cannot be read (${read.left.message}); waiting instead`)
        return yield* Effect.sleep(options.mediaGrace)
      }
      const status = stringField(read.right.body, "status")
      if (status === "AVAILABLE") return
      if (status === "PROCESSING_FAILED") {
        return yield* publishError("media", `LinkedIn: ${name} was rejected: processing failed`)
      }
      if (poll + 1 >= options.mediaMaxPolls) {
        return yield* publishError("transient", `LinkedIn: ${name} is still processing`)
      }
      yield* Effect.sleep(options.mediaPollInterval)
    }
  })

/** Waits for LinkedIn to finish processing a video (`AVAILABLE`). */
const awaitVideo = (api: RestApi, options: MediaOptions, token: string, media: MediaRef, urn: string) =>
  Effect.gen(function*() {
    for (let poll = 0;; poll++) {
      const response = yield* api.rest(
        token,
        "upload",
        HttpClientRequest.get(`${api.url}/rest/videos/${encodeURIComponent(urn)}`)
      )
      const status = stringField(response.body, "status")
      if (status === "AVAILABLE") return
      if (status === "PROCESSING_FAILED") {
        const reason = stringField(response.body, "processingFailureReason") ?? "processing failed"
        return yield* publishError("media", scrub(`LinkedIn: ${media.filename} was rejected: ${reason}`, [token]))
      }
      if (poll >= options.videoMaxPolls) {
        return yield* publishError("transient", `LinkedIn: ${media.filename} is still processing`)
      }
      yield* Effect.sleep(options.videoPollInterval)
    }
  })

/** A video: initialize with its size, PUT each byte range, finalize with the ETags, wait for processing. */
const uploadVideo = (api: RestApi, options: MediaOptions, token: string, author: string, media: MediaRef) =>
  Effect.gen(function*() {
    const init = yield* api.rest(
      token,
      "upload",
      HttpClientRequest.post(`${api.url}/rest/videos`).pipe(
        HttpClientRequest.setUrlParam("action", "initializeUpload"),
        HttpClientRequest.bodyUnsafeJson({
          initializeUploadRequest: {
            owner: author,
            fileSizeBytes: media.size,
            uploadCaptions: false,
            uploadThumbnail: false
          }
        })
      )
    )
    const value = field(init.body, "value")
    const urn = stringField(value, "video")
    const uploadToken = stringField(value, "uploadToken") ?? ""
    const rawInstructions = field(value, "uploadInstructions")
    if (urn === undefined || !Array.isArray(rawInstructions) || rawInstructions.length === 0) {
      return yield* unexpected("videos initializeUpload")
    }
    const instructions: Array<UploadInstruction> = []
    for (const raw of rawInstructions) {
      const uploadUrl = stringField(raw, "uploadUrl")
      const firstByte = numberField(raw, "firstByte")
      const lastByte = numberField(raw, "lastByte")
      if (uploadUrl === undefined || firstByte === undefined || lastByte === undefined) {
        return yield* unexpected("videos initializeUpload")
      }
      instructions.push({ uploadUrl, firstByte, lastByte })
    }
    const etags: Array<string> = []
    for (const part of instructions) {
      // Each part is its byte range, read from the store as it is sent.
      const response = yield* api.putBytes(
        token,
        part.uploadUrl,
        MediaBytes.rangeBody(
          media,
          Math.min(part.firstByte, media.size),
          Math.min(part.lastByte + 1, media.size),
          "application/octet-stream"
        )
      )
      const etag = response.headers["etag"]
      if (etag === undefined) return yield* unexpected("video part upload")
      etags.push(etag)
    }
    yield* api.rest(
      token,
      "upload",
      HttpClientRequest.post(`${api.url}/rest/videos`).pipe(
        HttpClientRequest.setUrlParam("action", "finalizeUpload"),
        HttpClientRequest.bodyUnsafeJson({
          finalizeUploadRequest: { video: urn, uploadToken, uploadedPartIds: etags }
        })
      )
    )
    yield* awaitVideo(api, options, token, media, urn)
    return urn
  })

/** Uploads one medium and returns its URN; a video is also processed, an image or document not yet awaited. */
const uploadMedia = (api: RestApi, options: MediaOptions, token: string, author: string, media: MediaRef) =>
  Effect.gen(function*() {
    return media.kind === "video"
      ? yield* uploadVideo(api, options, token, author, media)
      : yield* uploadSimple(
        api,
        token,
        author,
        media.kind === "document" ? "document" : "image",
        MediaBytes.body(media)
      )
  })

/**
 * Uploads a post's media in order, then waits for each image or document to be available (a video
 * is awaited as it is uploaded). Returns their URNs, in the media's order.
 */
export const uploadAll = (
  api: RestApi,
  options: MediaOptions,
  token: string,
  author: string,
  media: ReadonlyArray<MediaRef>
) =>
  Effect.gen(function*() {
    const urns: Array<string> = []
    for (const medium of media) urns.push(yield* uploadMedia(api, options, token, author, medium))
    for (const [index, medium] of media.entries()) {
      if (medium.kind !== "video") {
        yield* awaitAsset(
          api,
          options,
          token,
          medium.kind === "document" ? "document" : "image",
          medium.filename,
          urns[index]!
        )
      }
    }
    return urns
  })
