/**
 * TikTok through the Content Posting API v2, Direct Post (platform reference §11), for accounts
 * connected with Login Kit (`oauth/TikTok.ts`): every call carries the stored `access_token` as a
 * Bearer token; the day-long token is renewed in the background by the refresh sweep.
 *
 * A post is one video, or a photo post (below):
 * 1. `creator_info/query` first, as TikTok requires: the privacy levels this creator may use (there is
 *    no default: `settings.privacyLevel` must be given, and one outside them is refused with the allowed
 *    ones named), whether comments, duets and stitches are disabled on the account (then they are
 *    disabled on the post too), and the longest video allowed (checked against the MP4 header before
 *    anything is uploaded).
 * 2. `video/init` with `FILE_UPLOAD`. TikTok's content-sharing guidelines
 *    (developers.tiktok.com/doc/content-sharing-guidelines) want every interaction off unless the user
 *    turned it on: comments, duets and stitches are allowed only when `allowComments`, `allowDuet`,
 *    `allowStitch` are `true`. The commercial-content disclosure (`brandContent`: a paid partnership,
 *    `brandOrganic`: the creator's own business) and `aiGenerated` go out as `brand_content_toggle`,
 *    `brand_organic_toggle` and `is_aigc`, false unless set. One chunk when the file fits in
 *    `chunkSize` (10,000,000 bytes), else chunks of `chunkSize` with the remainder in the last one
 *    (`total_chunk_count = floor(size / chunk_size)`, the media transfer guide's rule,
 *    developers.tiktok.com/doc/content-posting-api-media-transfer-guide).
 * 3. `PUT {upload_url}` per chunk with `Content-Range` (206 until the last, then 201).
 * 4. `status/fetch` until `PUBLISH_COMPLETE` (`FAILED` is a failure with TikTok's `fail_reason`).
 * The URL is `https://www.tiktok.com/@{username}/video/{id}` from `publicaly_available_post_id` (TikTok's
 * spelling), else the profile. TikTok has no comment API: a first comment is not posted.
 *
 * A post whose media are all images (1 to 35) is a photo post
 * (developers.tiktok.com/doc/content-posting-api-reference-photo-post): after `creator_info/query`,
 * `content/init` with `media_type: PHOTO`, `post_mode: DIRECT_POST` and `PULL_FROM_URL` (the only
 * source TikTok takes for photos): TikTok pulls each image from its public URL
 * (`HERALD_MEDIA_PUBLIC_URL`, on a domain verified for the app), the cover being `photoCoverIndex`.
 * Then `status/fetch` as for a video; the URL is `/photo/{id}`. The create-time rules refuse a photo
 * post without public URLs, of more than 35 images, or mixed with a video, before anything is sent.
 *
 * A post TikTok has not made public yet (moderation can take hours after `PUBLISH_COMPLETE`) keeps its
 * publish id and the profile URL; `resolvePost` asks `status/fetch` again, and the metrics sweep stores
 * the public id and video URL once they come (it asks at every step of its schedule).
 *
 * Metrics come from `POST /v2/video/query/` (scope `video.list`, asked at connect since it was added;
 * accounts connected before must reconnect, until then the query answers `scope_not_authorized`).
 *
 * Whether an abandoned attempt reached TikTok (`findPublished`): `POST /v2/video/list/` (scope
 * `video.list`), newest first, paged back by `create_time` only as far as the window; a video carrying
 * the caption as sent (`video_description`, or `title`) is found. TikTok lists only public videos that
 * passed moderation, so a video missing from the list may still be processing, in moderation or posted
 * non-public: the answer is then Unknown, never Absent (an Absent would re-send it).
 *
 * Stored credentials used: `access_token`.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { Metrics } from "@herald/core/domain/Destination"
import type {
  Credentials,
  MediaRef,
  MetricsContext,
  PlatformClient,
  PublishedAnswer,
  PublishedLookup,
  PublishError,
  PublishRequest,
  PublishResult,
  ResolvedPost
} from "@herald/core/platforms/Platforms"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as MediaBytes from "./internal/MediaBytes.js"
import * as Lookup from "./internal/PublishedLookup.js"
import { failure, field, numberField, publishError, send, stringField, trimSlash } from "./internal/PlatformHttp.js"
import {
  chunkPlan,
  classify,
  codeKinds,
  CreatorInfo,
  creatorInfoOf,
  defaultApiUrl,
  defaultChunk,
  kindOfPublishId,
  label,
  listedUrl,
  lookupFields,
  lookupMaxPages,
  lookupPageSize,
  maxPhotos,
  metricsBatchSize,
  metricsFields,
  Options,
  postUrl,
  profileUrl,
  publicPostId
} from "./TikTokApi.js"

export {
  chunkPlan,
  classify,
  creatorInfoOf,
  defaultApiUrl,
  defaultChunk,
  kindOfPublishId,
  listedUrl,
  lookupFields,
  lookupMaxPages,
  lookupPageSize,
  maxChunk,
  maxPhotos,
  metricsBatchSize,
  metricsFields,
  minChunk,
  postUrl,
  privacyLevels,
  profileUrl,
  publicPostId
} from "./TikTokApi.js"
export type { CreatorInfo, Options } from "./TikTokApi.js"

export const make = (options: Options = {}): Effect.Effect<PlatformClient, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const http = HttpClient.withTracerDisabledWhen(yield* HttpClient.HttpClient, () => true)
    const api = trimSlash(options.apiUrl ?? defaultApiUrl)
    const chunkSize = options.chunkSize ?? defaultChunk
    const interval = options.pollInterval ?? "5 seconds"
    const maxPolls = Math.max(1, options.maxPolls ?? 120)

    /** A JSON call to the API; anything but HTTP 2xx with `error.code` "ok" is a classified failure. */
    const call = (token: string, path: string, body: unknown) => Effect.map(callRaw(token, path, body), (r) => r.data)

    const post = (token: string, path: string, body: unknown) =>
      send(
        http,
        HttpClientRequest.post(`${api}${path}`).pipe(
          HttpClientRequest.bearerToken(token),
          HttpClientRequest.acceptJson,
          // TikTok documents this exact Content-Type for its JSON endpoints.
          HttpClientRequest.bodyText(JSON.stringify(body), "application/json; charset=UTF-8")
        ),
        label
      )

    const callRaw = (token: string, path: string, body: unknown) =>
      Effect.gen(function*() {
        const response = yield* post(token, path, body)
        const code = stringField(field(response.body, "error"), "code")
        if (response.status < 200 || response.status >= 300 || (code !== undefined && code !== "ok")) {
          return yield* classify(response, [token])
        }
        if (response.body === undefined) {
          return yield* publishError("transient", `TikTok: unexpected response from ${path}`)
        }
        return { data: field(response.body, "data"), text: response.text }
      })

    /**
     * `creator_info/query` and the privacy level the post asks for: required (TikTok allows no
     * default) and one of the creator's options.
     */
    const creatorAndPrivacy = (token: string, settings: PublishRequest["settings"]) =>
      Effect.gen(function*() {
        const creator = creatorInfoOf({ data: yield* call(token, "/v2/post/publish/creator_info/query/", {}) })
        const requested = typeof settings["privacyLevel"] === "string" ? settings["privacyLevel"] : undefined
        if (requested === undefined) {
          // TikTok's guidelines forbid a default: the user picks from the creator's options.
          return yield* publishError(
            "permanent",
            "TikTok: settings.privacyLevel is required (TikTok allows no default); this account allows " +
              (creator.privacyLevels.length > 0 ? creator.privacyLevels.join(", ") : "no level at the moment")
          )
        }
        if (creator.privacyLevels.length > 0 && !creator.privacyLevels.includes(requested)) {
          return yield* publishError(
            "permanent",
            `TikTok: privacy level ${requested} is not available to this account; it allows ` +
              `${creator.privacyLevels.join(", ")} (set settings.privacyLevel to one of them)`
          )
        }
        return { creator, privacyLevel: requested }
      })

    /**
     * `status/fetch` until the post is out (`PUBLISH_COMPLETE`, or `SEND_TO_USER_INBOX`), returning its
     * public id once TikTok gives one; `FAILED` is a failure with TikTok's `fail_reason`. A post still
     * processing after `maxPolls` is reported published: TikTok has it and finishes it.
     */
    const awaitPublished = (token: string, publishId: string) =>
      Effect.gen(function*() {
        for (let poll = 0; poll < maxPolls; poll++) {
          if (poll > 0) yield* Effect.sleep(interval)
          const answer = yield* callRaw(token, "/v2/post/publish/status/fetch/", { publish_id: publishId }).pipe(
            Effect.catchAll((error) =>
              error.kind === "auth" || error.kind === "permanent" ? Effect.fail(error) : Effect.succeed(undefined)
            )
          )
          const status = answer?.data
          const state = stringField(status, "status")
          if (state === "FAILED") {
            const reason = stringField(status, "fail_reason") ?? "unknown"
            const kind = codeKinds.get(reason) ?? "media"
            return yield* failure(label, kind, `the post failed: ${reason}`, [token])
          }
          if (state === "PUBLISH_COMPLETE" || state === "SEND_TO_USER_INBOX") return publicPostId(answer?.text ?? "")
        }
        yield* Effect.logWarning(`TikTok: ${publishId} still processing; reported published, TikTok finishes it`)
        return undefined
      })

    const publishedResult = (
      request: PublishRequest,
      creator: CreatorInfo,
      kind: "video" | "photo",
      publishId: string,
      postId: string | undefined
    ): Effect.Effect<PublishResult> =>
      Effect.gen(function*() {
        if (typeof request.settings["firstComment"] === "string" && request.settings["firstComment"].trim() !== "") {
          yield* Effect.logWarning("TikTok: the API has no comments; the first comment was not posted")
        }
        const username = creator.username ?? request.account.accountName.replace(/^@/, "")
        return {
          platformPostId: postId ?? publishId,
          platformPostUrl: postId === undefined || username === ""
            ? profileUrl(username)
            : postUrl(username, kind, postId)
        }
      })

    /** One video, uploaded by Herald in chunks (`FILE_UPLOAD`). */
    const publishVideo = (request: PublishRequest, token: string, medium: MediaRef) =>
      Effect.gen(function*() {
        const settings = request.settings
        const { creator, privacyLevel } = yield* creatorAndPrivacy(token, settings)
        const total = medium.size
        const duration = (yield* MediaBytes.videoInfoOf(medium))?.durationSeconds
        if (
          duration !== undefined && creator.maxDurationSeconds !== undefined && duration > creator.maxDurationSeconds
        ) {
          return yield* publishError(
            "media",
            `TikTok: ${medium.filename} lasts ${Math.round(duration)} s; this account may post videos of at most ` +
              `${creator.maxDurationSeconds} s`
          )
        }

        const plan = chunkPlan(total, chunkSize)
        const cover = numberField(settings, "videoCoverTimestamp")
        const init = yield* call(token, "/v2/post/publish/video/init/", {
          post_info: {
            title: request.main.content,
            privacy_level: privacyLevel,
            disable_comment: creator.commentDisabled || settings["allowComments"] !== true,
            disable_duet: creator.duetDisabled || settings["allowDuet"] !== true,
            disable_stitch: creator.stitchDisabled || settings["allowStitch"] !== true,
            video_cover_timestamp_ms: cover ?? 1000,
            brand_content_toggle: settings["brandContent"] === true,
            brand_organic_toggle: settings["brandOrganic"] === true,
            is_aigc: settings["aiGenerated"] === true
          },
          source_info: {
            source: "FILE_UPLOAD",
            video_size: total,
            chunk_size: plan.chunkSize,
            total_chunk_count: plan.count
          }
        })
        const publishId = stringField(init, "publish_id")
        const uploadUrl = stringField(init, "upload_url")
        if (publishId === undefined || uploadUrl === undefined) {
          return yield* publishError("transient", "TikTok: unexpected video/init response")
        }

        for (let index = 0; index < plan.count; index++) {
          const first = index * plan.chunkSize
          const last = index === plan.count - 1 ? total - 1 : first + plan.chunkSize - 1
          const response = yield* send(
            http,
            HttpClientRequest.put(uploadUrl).pipe(
              HttpClientRequest.setHeader("content-range", `bytes ${first}-${last}/${total}`),
              // One chunk, streamed from the store: the video is never whole in memory.
              HttpClientRequest.setBody(MediaBytes.rangeBody(medium, first, last + 1))
            ),
            label
          )
          if (response.status !== 201 && response.status !== 206 && response.status !== 200) {
            const refused = classify(response, [token, uploadUrl])
            return yield* refused.kind === "permanent" ? failure(label, "media", refused.message, []) : refused
          }
        }

        // The video is with TikTok from here on: a retry would post it twice.
        const postId = yield* awaitPublished(token, publishId)
        return yield* publishedResult(request, creator, "video", publishId, postId)
      })

    /**
     * A photo post: 1 to 35 images that TikTok pulls from their public URLs (`PULL_FROM_URL`, the only
     * source TikTok takes for photos), `content/init` with `media_type: PHOTO` and `DIRECT_POST`.
     * The text goes as the `description` (up to 4000; TikTok's photo `title` takes only 90). Comments
     * follow `allowComments` (off unless true); TikTok adds recommended music only with `autoAddMusic`.
     */
    const publishPhotos = (request: PublishRequest, token: string, images: ReadonlyArray<MediaRef>) =>
      Effect.gen(function*() {
        const settings = request.settings
        if (images.length > maxPhotos) {
          return yield* publishError(
            "media",
            `TikTok: a photo post takes at most ${maxPhotos} images, got ${images.length}`
          )
        }
        const urls: Array<string> = []
        for (const image of images) {
          if (Option.isNone(image.publicUrl)) {
            return yield* publishError(
              "media",
              `TikTok: ${image.filename} has no public URL, and TikTok pulls photo-post images from the web; ` +
                "set HERALD_MEDIA_PUBLIC_URL on the server so media is served publicly"
            )
          }
          urls.push(image.publicUrl.value)
        }
        const cover = numberField(settings, "photoCoverIndex") ?? 0
        if (!Number.isInteger(cover) || cover < 0 || cover >= images.length) {
          return yield* publishError(
            "permanent",
            `TikTok: settings.photoCoverIndex ${cover} names no image of this photo post of ${images.length}`
          )
        }
        const { creator, privacyLevel } = yield* creatorAndPrivacy(token, settings)
        const init = yield* call(token, "/v2/post/publish/content/init/", {
          media_type: "PHOTO",
          post_mode: "DIRECT_POST",
          post_info: {
            ...(request.main.content === "" ? {} : { description: request.main.content }),
            privacy_level: privacyLevel,
            disable_comment: creator.commentDisabled || settings["allowComments"] !== true,
            auto_add_music: settings["autoAddMusic"] === true,
            brand_content_toggle: settings["brandContent"] === true,
            brand_organic_toggle: settings["brandOrganic"] === true
          },
          source_info: { source: "PULL_FROM_URL", photo_images: urls, photo_cover_index: cover }
        })
        const publishId = stringField(init, "publish_id")
        if (publishId === undefined) return yield* publishError("transient", "TikTok: unexpected content/init response")
        // TikTok pulls the images from here on: a retry would post them twice.
        const postId = yield* awaitPublished(token, publishId)
        return yield* publishedResult(request, creator, "photo", publishId, postId)
      })

    const publish = (request: PublishRequest): Effect.Effect<PublishResult, PublishError> =>
      Effect.gen(function*() {
        const media = request.main.media
        const photoPost = media.length > 0 && media.every((m) => m.kind === "image")
        const medium = media[0]
        if (!photoPost && (media.length !== 1 || medium === undefined || medium.kind !== "video")) {
          return yield* publishError("media", "TikTok: a post is exactly one video, or 1 to 35 images (a photo post)")
        }
        const stored = Redacted.value(request.credentials)
        const token = stored["access_token"] ?? ""
        if (token === "") return yield* publishError("auth", "TikTok: the stored credentials lack an access token")
        return photoPost ? yield* publishPhotos(request, token, media) : yield* publishVideo(request, token, medium!)
      })

    /**
     * Views, likes, comments and shares of up to 20 videos in one `video/query`. A `platformPostId`
     * that is still the `publish_id` (TikTok gave no public id, e.g. a private post) cannot be asked
     * about and is left out, like a video TikTok does not return.
     */
    const metricsBatch = (
      credentials: Credentials,
      platformPostIds: ReadonlyArray<string>
    ): Effect.Effect<ReadonlyMap<string, Metrics>, PublishError> =>
      Effect.gen(function*() {
        const token = Redacted.value(credentials)["access_token"] ?? ""
        if (token === "") return yield* publishError("auth", "TikTok: the stored credentials lack an access token")
        const found = new Map<string, Metrics>()
        const ids = platformPostIds.filter((id) => /^\d+$/.test(id))
        if (ids.length === 0) return found
        const data = yield* call(token, `/v2/video/query/?fields=${metricsFields}`, { filters: { video_ids: ids } })
        const videos = field(data, "videos")
        for (const video of Array.isArray(videos) ? videos : []) {
          const id = stringField(video, "id")
          if (id === undefined || !ids.includes(id)) continue
          const count = (key: string) => Math.max(0, Math.floor(numberField(video, key) ?? 0))
          found.set(
            id,
            new Metrics({
              views: count("view_count"),
              likes: count("like_count"),
              comments: count("comment_count"),
              shares: count("share_count"),
              impressions: 0,
              saves: 0,
              clicks: 0
            })
          )
        }
        return found
      })

    const metrics = (credentials: Credentials, platformPostId: string): Effect.Effect<Metrics, PublishError> =>
      Effect.flatMap(metricsBatch(credentials, [platformPostId]), (found) => {
        const metrics = found.get(platformPostId)
        return metrics !== undefined
          ? Effect.succeed(metrics)
          : Effect.fail(
            publishError(
              "permanent",
              /^\d+$/.test(platformPostId)
                ? "TikTok: the video is gone or not visible to this account"
                : "TikTok: the post has no public video id (only its publish id), so its counts cannot be read"
            )
          )
      })

    /**
     * The public video id of a post still known by its publish id, once TikTok gives it
     * (`status/fetch`'s `publicaly_available_post_id`); none while it is pending, private or gone.
     */
    const resolvePost = (
      credentials: Credentials,
      platformPostId: string,
      context: MetricsContext
    ): Effect.Effect<Option.Option<ResolvedPost>, PublishError> =>
      Effect.gen(function*() {
        if (/^\d+$/.test(platformPostId)) return Option.none()
        const token = Redacted.value(credentials)["access_token"] ?? ""
        if (token === "") return yield* publishError("auth", "TikTok: the stored credentials lack an access token")
        const answer = yield* callRaw(token, "/v2/post/publish/status/fetch/", { publish_id: platformPostId })
        const id = publicPostId(answer.text)
        if (id === undefined) return Option.none()
        const username = context.account.accountName.replace(/^@/, "")
        return Option.some({
          platformPostId: id,
          platformPostUrl: username === ""
            ? profileUrl(username)
            : postUrl(username, kindOfPublishId(platformPostId), id)
        })
      })

    /**
     * Whether an abandoned attempt reached TikTok: `video/list` from the window's end back (its cursor is
     * a time in milliseconds; videos come newest first), page after page until a video older than the
     * window or the last page. A video created inside the window whose `video_description` (or `title`)
     * is the caption as sent is Found. Nothing found is Unknown, not Absent: TikTok lists only public
     * videos that passed moderation, and a post of this attempt may still be processing, be in
     * moderation, or be private. An account connected without `video.list` cannot be asked; a rate limit
     * or a server error fails the lookup.
     */
    const findPublished = (lookup: PublishedLookup): Effect.Effect<PublishedAnswer, PublishError> =>
      Effect.gen(function*() {
        const token = Redacted.value(lookup.credentials)["access_token"] ?? ""
        if (token === "") return yield* publishError("auth", "TikTok: the stored credentials lack an access token")
        const unknown = (reason: string): PublishedAnswer => ({ _tag: "Unknown", reason: `TikTok: ${reason}` })
        if (Lookup.canonical(lookup.content) === "") {
          return unknown("a post without a caption cannot be told apart from another video in the attempt's window")
        }
        const window = Lookup.windowOf(lookup)
        const username = lookup.account.accountName.replace(/^@/, "")
        let cursor = window.until
        for (let page = 0; page < lookupMaxPages; page++) {
          const response = yield* post(token, `/v2/video/list/?fields=${lookupFields}`, {
            cursor,
            max_count: lookupPageSize
          })
          const code = stringField(field(response.body, "error"), "code")
          if (code === "scope_not_authorized") {
            return unknown(
              "the account was connected without the video.list scope, so its videos cannot be listed; reconnect it"
            )
          }
          if (response.status < 200 || response.status >= 300 || (code !== undefined && code !== "ok")) {
            return yield* classify(response, [token])
          }
          const data = field(response.body, "data")
          const videos = field(data, "videos")
          let pastWindow = false
          for (const video of Array.isArray(videos) ? videos : []) {
            const id = stringField(video, "id")
            const at = (numberField(video, "create_time") ?? Number.NaN) * 1000
            if (at < window.since) pastWindow = true
            if (id === undefined || !Lookup.inWindow(window, at)) continue
            const texts = [stringField(video, "video_description"), stringField(video, "title")]
            if (texts.some((text) => text !== undefined && Lookup.sameText(lookup.content, text))) {
              return {
                _tag: "Found",
                platformPostId: id,
                platformPostUrl: listedUrl(stringField(video, "share_url"), username, id)
              }
            }
          }
          const next = numberField(data, "cursor")
          if (pastWindow || field(data, "has_more") !== true || next === undefined || next >= cursor) {
            return unknown(
              "no public video carries the caption in the attempt's window; TikTok lists only public videos that " +
                "passed moderation, so it may still be processing, in moderation or private"
            )
          }
          cursor = next
        }
        return unknown(`more than ${lookupMaxPages * lookupPageSize} videos to look through since the attempt began`)
      })

    return {
      platform: "tiktok",
      publish,
      metrics,
      resolvePost,
      findPublished,
      metricsBatch,
      metricsBatchSize,
      timeout: "30 minutes"
    } satisfies PlatformClient
  })
