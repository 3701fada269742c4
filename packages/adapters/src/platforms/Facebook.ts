/**
 * Facebook Pages through the Graph API (platform reference §5, §6), for Pages connected with Facebook
 * Login (`oauth/Facebook.ts`): each connected account is one Page, whose stored `access_token` is the
 * Page token (it does not expire, so there is nothing to refresh) and whose `platformAccountId` is the
 * Page id. Every call carries the token as the `access_token` parameter.
 *
 * - Text, and a link with its preview (`settings.link`): `POST /{page-id}/feed {message, link}`.
 * - One photo: `POST /{page-id}/photos {caption, url | source}`; several: each one unpublished
 *   (`published=false`), then `POST /{page-id}/feed {message, attached_media}`. A photo goes by its
 *   public URL when there is one, else its bytes as the multipart `source`.
 * - One video: a reel for `settings.videoType` `reel`, a regular video for `video`; without the setting
 *   a reel when the video fits one (vertical, at most 90 s, read from the MP4 header), else a video. Reels:
 *   `POST /{page-id}/video_reels upload_phase=start`, the bytes (or `file_url`) to the returned rupload
 *   URL with `Authorization: OAuth`, then `upload_phase=finish video_state=PUBLISHED`; a plain video is
 *   `POST /{page-id}/videos` (graph-video) with `file_url` or `source`. Either is then polled
 *   (`GET /{video-id}?fields=status`) until Facebook has processed it.
 * The URL is the post's `permalink_url` (made absolute; videos answer a relative one), else
 * `https://www.facebook.com/{post-id}`. A first comment goes to `/{post-id}/comments` afterwards.
 *
 * Stored credentials used: `access_token` (the Page token), `page_id` (when the account id is missing).
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { Metrics } from "@herald/core/domain/Destination"
import type {
  Credentials,
  MediaRef,
  PlatformClient,
  PublishedAnswer,
  PublishedLookup,
  PublishError,
  PublishErrorKind,
  PublishRequest,
  PublishResult
} from "@herald/core/platforms/Platforms"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as MetaContainers from "./internal/MetaContainers.js"
import * as MetaGraph from "./internal/MetaGraph.js"
import * as MetaLookup from "./internal/MetaLookup.js"
import * as MediaBytes from "./internal/MediaBytes.js"
import type * as Mp4 from "./internal/Mp4.js"
import {
  afterPublished,
  failure,
  field,
  publishError,
  send,
  stringField,
  textSetting,
  trimSlash
} from "./internal/PlatformHttp.js"

export interface Options {
  /** `https://graph.facebook.com` unless a fake is used. */
  readonly apiUrl?: string
  /** Where `/videos` uploads go: `https://graph-video.facebook.com`, or `apiUrl` when that is set. */
  readonly videoApiUrl?: string
  /** Pause between video status polls; 5 seconds. */
  readonly pollInterval?: Duration.DurationInput
  /** Status polls before a video still processing is reported published anyway; 120. */
  readonly maxPolls?: number
  /** The Graph API version (`HERALD_GRAPH_VERSION`); `MetaGraph.version` unless set. */
  readonly graphVersion?: string
}

export const defaultApiUrl = "https://graph.facebook.com"
export const defaultVideoApiUrl = "https://graph-video.facebook.com"

const label = "Facebook"

/** A photo's `alt_text_custom`: the medium's alt text (with `settings.altText` applied by the dispatcher). */
const altTextOf = (medium: MediaRef): string | undefined =>
  medium.altText !== undefined && medium.altText.trim() !== "" ? medium.altText : undefined

/**
 * Facebook's own codes and subcodes (reference §6 Errors, from Postiz's `handleErrors`), by the class
 * each means whatever the top-level code says (1390008 arrives under 368, which is otherwise permanent).
 */
const facebookCodes: ReadonlyMap<number, PublishErrorKind> = new Map<number, PublishErrorKind>([
  [1366046, "media"],
  [1390008, "rate_limit"],
  [1346003, "permanent"],
  [1404102, "permanent"],
  [1404078, "auth"],
  [2061006, "permanent"],
  [1363047, "transient"],
  [1609010, "transient"]
])

/** A Graph error answer as one of the reference's classes: `MetaGraph` refined by Facebook's codes. */
export const classify: MetaContainers.Classify = (label, response, secrets) => {
  const base = MetaGraph.classify(label, response, secrets)
  const error = MetaGraph.errorOf(response.body)
  const kind = (error?.subcode === undefined ? undefined : facebookCodes.get(error.subcode)) ??
    (error?.code === undefined ? undefined : facebookCodes.get(error.code))
  if (kind !== undefined) return publishError(kind, base.message, base.retryAfterSeconds)
  if (base.kind === "permanent") {
    const text = `${error?.message ?? ""} ${stringField(field(response.body, "error"), "error_user_msg") ?? ""}`
    if (/parameter too long|too long|exceeds? the maximum/i.test(text)) return publishError("too_long", base.message)
    if (/photo|image|video|file|upload/i.test(text) && /invalid|unsupported|format|size|large/i.test(text)) {
      return publishError("media", base.message)
    }
  }
  return base
}

/** The longest video a Facebook reel takes. */
export const maxReelSeconds = 90

/**
 * Whether a video without `settings.videoType` goes out as a reel: vertical and at most 90 s, as reels
 * require; a header that cannot be read leaves it to the spec's default (a reel).
 */
export const fitsReel = (info: Mp4.VideoInfo | undefined): boolean =>
  info === undefined ||
  (info.height > info.width && (info.durationSeconds === undefined || info.durationSeconds <= maxReelSeconds))

/** Checks the media against what one Page post can carry, before anything is sent. */
export const checkMedia = (media: ReadonlyArray<MediaRef>): PublishError | undefined => {
  if (media.some((m) => m.kind === "document")) {
    return publishError("media", "Facebook: documents cannot be posted to a Page; only photos and videos")
  }
  if (media.some((m) => m.kind === "video") && media.length > 1) {
    return publishError("media", "Facebook: a video must be the post's only medium")
  }
  return undefined
}

/** `permalink_url` made absolute (video and reel permalinks come back as a path). */
export const absoluteUrl = (permalink: string): string =>
  /^https?:\/\//i.test(permalink)
    ? permalink
    : `https://www.facebook.com${permalink.startsWith("/") ? "" : "/"}${permalink}`

/** A video's processing state from `GET /{video-id}?fields=status`. */
export type VideoState =
  | { readonly _tag: "ready" }
  | { readonly _tag: "processing" }
  | { readonly _tag: "failed"; readonly detail: string; readonly expired: boolean }

export const videoStateOf = (body: unknown): VideoState => {
  const status = field(body, "status")
  const videoStatus = stringField(status, "video_status")?.toLowerCase()
  const phases = ["uploading_phase", "processing_phase", "publishing_phase"].map((name) => field(status, name))
  const failedPhase = phases.find((phase) => stringField(phase, "status")?.toLowerCase() === "error")
  if (videoStatus === "error" || videoStatus === "expired" || failedPhase !== undefined) {
    const detail = stringField(field(failedPhase, "error"), "message") ?? videoStatus ?? "error"
    return { _tag: "failed", detail, expired: videoStatus === "expired" }
  }
  const publishing = stringField(phases[2], "status")?.toLowerCase()
  if (videoStatus === "ready" || videoStatus === "published" || publishing === "complete") return { _tag: "ready" }
  return { _tag: "processing" }
}

export const make = (options: Options = {}): Effect.Effect<PlatformClient, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    // Request URLs carry the Page token: no spans for them.
    const http = HttpClient.withTracerDisabledWhen(yield* HttpClient.HttpClient, () => true)
    const graphVersion = options.graphVersion ?? MetaGraph.version
    const api = `${trimSlash(options.apiUrl ?? defaultApiUrl)}/${graphVersion}`
    const videoApi = `${
      trimSlash(options.videoApiUrl ?? (options.apiUrl === undefined ? defaultVideoApiUrl : options.apiUrl))
    }/${graphVersion}`
    const interval = options.pollInterval ?? "5 seconds"
    const maxPolls = Math.max(1, options.maxPolls ?? 120)

    const publish = (request: PublishRequest): Effect.Effect<PublishResult, PublishError> =>
      Effect.gen(function*() {
        const media = request.main.media
        const problem = checkMedia(media)
        if (problem !== undefined) return yield* problem
        const stored = Redacted.value(request.credentials)
        const token = stored["access_token"] ?? ""
        if (token === "") return yield* publishError("auth", "Facebook: the stored credentials lack the Page token")
        const pageId = request.account.platformAccountId !== ""
          ? request.account.platformAccountId
          : stored["page_id"] ?? ""
        if (pageId === "") return yield* publishError("auth", "Facebook: the stored credentials lack the Page id")
        const graph = MetaContainers.graph(http, label, token, classify)
        const page = `${api}/${encodeURIComponent(pageId)}`

        const link = textSetting(request.settings, "link")
        const comment = textSetting(request.settings, "firstComment")
        const content = request.main.content
        // A link preview cannot go with photos or a video: the link then travels in the text.
        const text = link !== undefined && media.length > 0 && !content.includes(link)
          ? (content === "" ? link : `${content}\n\n${link}`)
          : content
        const message = text === "" ? undefined : text

        const idOf = (body: unknown, what: string) => MetaContainers.idOf(label, what, body)

        /** Posts one photo: by URL when public, else its bytes as `source`. */
        const postPhoto = (medium: MediaRef, base: MetaContainers.Params) => {
          const params = { ...base, alt_text_custom: altTextOf(medium) }
          return Option.isSome(medium.publicUrl)
            ? graph.post(`${page}/photos`, { ...params, url: medium.publicUrl.value })
            : graph.postFile(`${page}/photos`, params, { field: "source", media: medium })
        }

        /** Polls a video until processed; one still processing at the end is out anyway, so no failure. */
        const awaitVideo = (videoId: string) =>
          Effect.gen(function*() {
            for (let poll = 0; poll < maxPolls; poll++) {
              if (poll > 0) yield* Effect.sleep(interval)
              const state = videoStateOf(
                yield* graph.get(`${api}/${encodeURIComponent(videoId)}`, { fields: "status" })
              )
              if (state._tag === "ready") return
              if (state._tag === "failed") {
                return yield* failure(
                  label,
                  state.expired ? "permanent" : "media",
                  `the video ${videoId} failed processing: ${state.detail}`,
                  [token]
                )
              }
            }
            yield* Effect.logWarning(
              `Facebook: video ${videoId} still processing; reported published, Facebook finishes it`
            )
          })

        const postReel = (medium: MediaRef) =>
          Effect.gen(function*() {
            const started = yield* graph.post(`${page}/video_reels`, { upload_phase: "start" })
            const videoId = stringField(started, "video_id")
            const uploadUrl = stringField(started, "upload_url")
            if (videoId === undefined || uploadUrl === undefined) {
              return yield* publishError("transient", "Facebook: unexpected reel start response")
            }
            const upload = HttpClientRequest.post(uploadUrl).pipe(
              HttpClientRequest.setHeader("authorization", `OAuth ${token}`),
              HttpClientRequest.acceptJson
            )
            const sent = Option.isSome(medium.publicUrl)
              ? upload.pipe(HttpClientRequest.setHeader("file_url", medium.publicUrl.value))
              : upload.pipe(
                HttpClientRequest.setHeaders({ offset: "0", file_size: String(medium.size) }),
                HttpClientRequest.setBody(MediaBytes.body(medium, "application/octet-stream"))
              )
            const response = yield* send(http, sent, label)
            if (response.status < 200 || response.status >= 300 || field(response.body, "success") !== true) {
              return yield* MetaContainers.ruploadError(label, response, token)
            }
            yield* graph.post(`${page}/video_reels`, {
              upload_phase: "finish",
              video_id: videoId,
              video_state: "PUBLISHED",
              description: message
            })
            return videoId
          })

        const postVideo = (medium: MediaRef) =>
          Effect.gen(function*() {
            const params: MetaContainers.Params = { description: message, published: "true" }
            const created = Option.isSome(medium.publicUrl)
              ? yield* graph.post(`${videoApi}/${encodeURIComponent(pageId)}/videos`, {
                ...params,
                file_url: medium.publicUrl.value
              })
              : yield* graph.postFile(`${videoApi}/${encodeURIComponent(pageId)}/videos`, params, {
                field: "source",
                media: medium
              })
            return yield* idOf(created, "video")
          })

        let postId: string
        const video = media.find((m) => m.kind === "video")
        if (video !== undefined) {
          const videoType = request.settings["videoType"]
          // Only the `moov` box is read to tell a reel; the upload streams the file.
          const info = videoType === "video" ? undefined : yield* MediaBytes.videoInfoOf(video)
          if (videoType === "reel" && !fitsReel(info)) {
            // Facebook would refuse it after the upload; say why before sending anything.
            return yield* publishError(
              "media",
              `Facebook: ${video.filename} cannot be a reel (reels are vertical and at most ${maxReelSeconds} s); ` +
                "set settings.videoType to video to post it as a regular video"
            )
          }
          const reel = videoType === "reel" || (videoType !== "video" && fitsReel(info))
          postId = reel ? yield* postReel(video) : yield* postVideo(video)
          yield* awaitVideo(postId)
        } else if (media.length === 1) {
          const body = yield* postPhoto(media[0]!, { caption: message, published: "true" })
          postId = stringField(body, "post_id") ?? (yield* idOf(body, "photo"))
        } else if (media.length > 1) {
          const photos: Array<string> = []
          for (const medium of media) {
            photos.push(yield* Effect.flatMap(postPhoto(medium, { published: "false" }), (b) => idOf(b, "photo")))
          }
          postId = yield* idOf(
            yield* graph.post(`${page}/feed`, {
              message,
              attached_media: JSON.stringify(photos.map((id) => ({ media_fbid: id }))),
              published: "true"
            }),
            "post"
          )
        } else {
          if (message === undefined && link === undefined) {
            return yield* publishError("permanent", "Facebook: a post needs text, a link or media")
          }
          postId = yield* idOf(yield* graph.post(`${page}/feed`, { message, link, published: "true" }), "post")
        }

        // The post is out from here on: nothing below may fail the publish.
        const permalink = yield* afterPublished(
          label,
          "permalink read",
          Effect.map(
            graph.get(`${api}/${encodeURIComponent(postId)}`, { fields: "permalink_url" }),
            (body) => stringField(body, "permalink_url")
          )
        )
        return {
          platformPostId: postId,
          platformPostUrl: permalink === undefined || permalink === ""
            ? `https://www.facebook.com/${postId}`
            : absoluteUrl(permalink),
          // Run by the engine once the post is recorded, outside the publish deadline.
          ...(comment === undefined ? {} : {
            followUps: Effect.asVoid(afterPublished(
              label,
              "first comment",
              graph.post(`${api}/${encodeURIComponent(postId)}/comments`, { message: comment })
            ))
          })
        } satisfies PublishResult
      })

    /**
     * Reactions, comments and shares of a Page post (`reactions.summary`, `comments.summary`, `shares`);
     * a video or reel (an id without the `{page}_` prefix) has no `shares` field. Views, impressions and
     * clicks need the insights metrics (`read_insights`), which the connect does not ask for: they stay 0.
     */
    const metrics = (credentials: Credentials, platformPostId: string): Effect.Effect<Metrics, PublishError> =>
      Effect.gen(function*() {
        const token = Redacted.value(credentials)["access_token"] ?? ""
        if (token === "") return yield* publishError("auth", "Facebook: the stored credentials lack the Page token")
        const graph = MetaContainers.graph(http, label, token, classify)
        const video = !platformPostId.includes("_")
        const body = yield* graph.get(`${api}/${encodeURIComponent(platformPostId)}`, {
          fields: `reactions.summary(total_count),comments.summary(total_count)${video ? "" : ",shares"}`
        })
        const total = (edge: string) =>
          Math.max(0, Math.floor(Number(field(field(field(body, edge), "summary"), "total_count") ?? 0) || 0))
        return new Metrics({
          views: 0,
          likes: total("reactions"),
          comments: total("comments"),
          shares: Math.max(0, Math.floor(Number(field(field(body, "shares"), "count") ?? 0) || 0)),
          impressions: 0,
          saves: 0,
          clicks: 0
        })
      })

    /**
     * Whether an attempt reached the Page: its posts (`/{page-id}/posts`, text and photo posts by
     * `message`) and its videos and reels (`/{page-id}/videos`, by `description`), each from the
     * window's start (`since`), newest first. A link appended to the text of a post with media
     * (`settings.link`) is read off before comparing. Found in either is Found; Absent only when both
     * are. An error or a rate limit fails the lookup.
     */
    const findPublished = (lookup: PublishedLookup): Effect.Effect<PublishedAnswer, PublishError> =>
      Effect.gen(function*() {
        const stored = Redacted.value(lookup.credentials)
        const token = stored["access_token"] ?? ""
        if (token === "") return yield* publishError("auth", "Facebook: the stored credentials lack the Page token")
        const pageId = lookup.account.platformAccountId !== ""
          ? lookup.account.platformAccountId
          : stored["page_id"] ?? ""
        if (pageId === "") return yield* publishError("auth", "Facebook: the stored credentials lack the Page id")
        const graph = MetaContainers.graph(http, label, token, MetaGraph.classify)
        const edge = (name: string, textField: string) => ({
          graph,
          url: `${api}/${encodeURIComponent(pageId)}/${name}`,
          fields: `id,${textField},created_time,permalink_url`,
          since: true,
          timeField: "created_time",
          textField,
          urlOf: (item: unknown, id: string) => {
            const permalink = stringField(item, "permalink_url")
            return permalink === undefined || permalink === ""
              ? `https://www.facebook.com/${id}`
              : absoluteUrl(permalink)
          },
          variants: (text: string) => {
            const appended = /^([\s\S]*?)(?:\n\n)?https?:\/\/\S+$/.exec(text)
            return appended === null ? [] : [appended[1] ?? ""]
          },
          limit: 100,
          maxPages: 10,
          label
        })
        const posts = yield* MetaLookup.find(edge("posts", "message"), lookup)
        if (posts._tag !== "Absent") return posts
        return yield* MetaLookup.find(edge("videos", "description"), lookup)
      })

    return {
      platform: "facebook",
      findPublished,
      publish,
      metrics,
      timeout: "15 minutes"
    } satisfies PlatformClient
  })
