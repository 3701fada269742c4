/**
 * What a Bluesky post embeds: up to 4 images (`app.bsky.embed.images`, each a blob uploaded to the
 * PDS), or one video (`app.bsky.embed.video`, uploaded to the video service and polled until
 * processed), or, for a post without media, the link card of its first link
 * (`app.bsky.embed.external`). Media are checked against what a post can embed before anything is sent.
 */
import * as HttpBody from "@effect/platform/HttpBody"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type { UrlFetcher } from "@herald/core/media/MediaLibrary"
import type { MediaRef, PublishError } from "@herald/core/platforms/Platforms"
import * as Clock from "effect/Clock"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as LinkPreview from "./LinkPreview.js"
import * as MediaBytes from "./internal/MediaBytes.js"
import { field, isRecord, publishError, scrub, stringField } from "./internal/PlatformHttp.js"
import { classify, unexpected, type Xrpc } from "./BlueskyXrpc.js"
import type { SessionScope } from "./BlueskySession.js"

export const maxImages = 4
export const maxImageBytes = 1_000_000
export const maxVideoBytes = 100 * 1024 * 1024

/** A link card's thumbnail is a blob like any image: under the blob cap, a type the PDS takes. */
const thumbRules: LinkPreview.ThumbRules = {
  maxBytes: maxImageBytes,
  types: ["image/jpeg", "image/png", "image/webp", "image/gif"]
}

/** An image's `alt` is required by the lexicon (empty when none); a video's is optional. */
const altOf = (media: MediaRef, required: boolean): { readonly alt?: string } =>
  media.altText !== undefined && media.altText.length > 0
    ? { alt: media.altText }
    : required
    ? { alt: "" }
    : {}

/** `aspectRatio` wants two positive integers; left out when the pixels are not known. */
const aspectRatioOf = (media: MediaRef): { readonly aspectRatio?: { width: number; height: number } } =>
  media.width !== undefined && media.height !== undefined && media.width > 0 && media.height > 0
    ? { aspectRatio: { width: Math.round(media.width), height: Math.round(media.height) } }
    : {}

/** Checks a post's media against what a Bluesky post can embed. */
export const checkMedia = (media: ReadonlyArray<MediaRef>): PublishError | undefined => {
  if (media.some((m) => m.kind === "document")) {
    return publishError("media", "Bluesky: documents cannot be posted; only images or one video")
  }
  const videos = media.filter((m) => m.kind === "video")
  const images = media.filter((m) => m.kind === "image")
  if (videos.length > 1 || (videos.length === 1 && images.length > 0)) {
    return publishError("media", "Bluesky: a post takes either up to 4 images or one video, not both")
  }
  if (images.length > maxImages) {
    return publishError("media", `Bluesky: a post takes at most ${maxImages} images, got ${images.length}`)
  }
  const big = images.find((m) => m.size > maxImageBytes)
  if (big !== undefined) {
    return publishError(
      "media",
      `Bluesky: image ${big.filename} is ${big.size} bytes; the limit is ${maxImageBytes} bytes per image`
    )
  }
  const bigVideo = videos.find((m) => m.size > maxVideoBytes)
  if (bigVideo !== undefined) {
    return publishError("media", `Bluesky: video ${bigVideo.filename} is ${bigVideo.size} bytes; the limit is 100 MB`)
  }
  return undefined
}

export interface EmbedOptions {
  /** The video service uploads go to. */
  readonly videoService: string
  /** Pause between video job polls. */
  readonly videoPollInterval: Duration.DurationInput
  /** Polls before a video job counts as stuck (transient). */
  readonly videoMaxPolls: number
  /** Fetches link card pages and thumbnails; no cards without. */
  readonly linkCards: UrlFetcher["Type"] | undefined
}

const uploadBlob = (xrpc: Xrpc, scope: SessionScope, upload: HttpBody.HttpBody) =>
  Effect.gen(function*() {
    const body = yield* scope.authed((session) =>
      xrpc.call(
        HttpClientRequest.post(`${session.pds}/xrpc/com.atproto.repo.uploadBlob`).pipe(
          HttpClientRequest.bearerToken(session.accessJwt),
          HttpClientRequest.setBody(upload)
        )
      ), "upload")
    const blob = field(body, "blob")
    if (!isRecord(blob)) return yield* unexpected("uploadBlob")
    return blob
  })

/** Streamed from the store (re-read if the session is renewed and the upload sent again). */
const uploadImage = (xrpc: Xrpc, scope: SessionScope, media: MediaRef) =>
  uploadBlob(xrpc, scope, MediaBytes.body(media))

/** The link card of a post without media: its first link's page, when link cards are on. */
const cardFor = (xrpc: Xrpc, options: EmbedOptions, scope: SessionScope, text: string) =>
  Effect.gen(function*() {
    const fetcher = options.linkCards
    if (fetcher === undefined) return undefined
    const card = yield* LinkPreview.ofText(fetcher, text, { label: "Bluesky", thumb: thumbRules })
    if (Option.isNone(card)) return undefined
    const { description, thumb, title, uri } = card.value
    // A thumbnail the PDS will not take leaves the card without one rather than failing the post.
    const blob = Option.isNone(thumb)
      ? undefined
      : yield* uploadBlob(xrpc, scope, HttpBody.uint8Array(thumb.value.bytes, thumb.value.mimeType)).pipe(
        Effect.orElseSucceed(() => undefined)
      )
    return {
      $type: "app.bsky.embed.external",
      external: { uri, title, description, ...(blob === undefined ? {} : { thumb: blob }) }
    }
  })

const uploadVideo = (xrpc: Xrpc, options: EmbedOptions, scope: SessionScope, media: MediaRef) =>
  Effect.gen(function*() {
    const videoService = options.videoService
    const now = yield* Clock.currentTimeMillis
    const auth = yield* scope.authed((session) =>
      xrpc.call(
        HttpClientRequest.get(`${session.pds}/xrpc/com.atproto.server.getServiceAuth`).pipe(
          HttpClientRequest.setUrlParams({
            aud: `did:web:${new URL(session.pds).hostname}`,
            lxm: "com.atproto.repo.uploadBlob",
            exp: String(Math.floor(now / 1000) + 30 * 60)
          }),
          HttpClientRequest.bearerToken(session.accessJwt)
        )
      )
    )
    const token = stringField(auth, "token")
    if (token === undefined) return yield* unexpected("getServiceAuth")
    const session = yield* Ref.get(scope.current)
    const secrets = [...scope.secrets(), token]
    const uploaded = yield* xrpc.send(
      HttpClientRequest.post(`${videoService}/xrpc/app.bsky.video.uploadVideo`).pipe(
        HttpClientRequest.setUrlParams({ did: session.did, name: media.filename }),
        HttpClientRequest.bearerToken(token),
        HttpClientRequest.setBody(MediaBytes.body(media))
      )
    )
    // A video uploaded before answers 409 already_exists with its job id.
    const alreadyExists = uploaded.status === 409 && stringField(uploaded.body, "jobId") !== undefined
    if ((uploaded.status < 200 || uploaded.status >= 300) && !alreadyExists) {
      return yield* Effect.fail(classify(uploaded, "upload", now, secrets))
    }
    let job: unknown = field(uploaded.body, "jobStatus") ?? uploaded.body
    for (let poll = 0;; poll++) {
      const state = stringField(job, "state")
      const blob = field(job, "blob")
      if (state === "JOB_STATE_COMPLETED" && isRecord(blob)) return blob
      if (state === "JOB_STATE_FAILED") {
        const reason = stringField(job, "error") ?? stringField(job, "message") ?? "processing failed"
        return yield* publishError("media", scrub(`Bluesky: video ${media.filename} was rejected: ${reason}`, secrets))
      }
      if (poll >= options.videoMaxPolls) {
        return yield* publishError("transient", `Bluesky: video ${media.filename} is still processing`)
      }
      const jobId = stringField(job, "jobId")
      if (jobId === undefined) return yield* unexpected("video job")
      yield* Effect.sleep(options.videoPollInterval)
      const status = yield* xrpc.call(
        HttpClientRequest.get(`${videoService}/xrpc/app.bsky.video.getJobStatus`).pipe(
          HttpClientRequest.setUrlParam("jobId", jobId)
        )
      ).pipe(Effect.catchTag("XrpcFailure", (f) => Effect.fail(classify(f.response, "upload", now, secrets))))
      job = field(status, "jobStatus") ?? status
      if (stringField(job, "jobId") === undefined && isRecord(job)) job = { ...job, jobId }
    }
  })

/** The embed of one post: its images or video, uploaded, else its link card; none for a plain post. */
export const embedFor = (
  xrpc: Xrpc,
  options: EmbedOptions,
  scope: SessionScope,
  media: ReadonlyArray<MediaRef>,
  text: string
) =>
  Effect.gen(function*() {
    if (media.length === 0) return yield* cardFor(xrpc, options, scope, text)
    const video = media.find((m) => m.kind === "video")
    if (video !== undefined) {
      const blob = yield* uploadVideo(xrpc, options, scope, video)
      return { $type: "app.bsky.embed.video", video: blob, ...altOf(video, false), ...aspectRatioOf(video) }
    }
    const images: Array<Record<string, unknown>> = []
    for (const image of media) {
      images.push({ ...altOf(image, true), image: yield* uploadImage(xrpc, scope, image), ...aspectRatioOf(image) })
    }
    return { $type: "app.bsky.embed.images", images }
  })
