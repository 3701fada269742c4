/**
 * X (Twitter) through API v2 (platform reference §1), for accounts connected with OAuth 2.0
 * (`oauth/X.ts`): every call carries the stored `access_token` as a Bearer token.
 *
 * A post is `POST /2/tweets`; thread parts follow as replies, each to the one before, and a first
 * comment replies to the main post. Media is uploaded first, for every part, through the v2 upload
 * endpoints: an image in one multipart `POST /2/media/upload`, a video or GIF in chunks
 * (`initialize`, `append`, `finalize`, then `STATUS` polls while X processes it). A rejection
 * therefore fails the publish before anything is visible, so a retry never posts twice.
 *
 * Tokens are not refreshed here: the refresh sweep renews them ahead of expiry (X retires the old
 * refresh token on every refresh, and renewed credentials are only saved with a successful
 * publish), so a 401 is an `auth` failure.
 *
 * Stored credentials used: `access_token`, `username` (for the post URL), `user_id`.
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
  PublishPart,
  PublishRequest,
  PublishResult
} from "@herald/core/platforms/Platforms"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as MediaBytes from "./internal/MediaBytes.js"
import * as Lookup from "./internal/PublishedLookup.js"
import {
  failureReason,
  field,
  numberField,
  publishError,
  type RawResponse,
  scrub,
  secondsHeader,
  send,
  stringField,
  trimSlash
} from "./internal/PlatformHttp.js"

export interface Options {
  /** `https://api.x.com` unless a fake is used. */
  readonly apiUrl?: string
  /** Where media is uploaded; the API URL unless set. */
  readonly uploadUrl?: string
  /** Bytes per `append` of a chunked upload; 1 MiB. */
  readonly chunkSize?: number
  /** Pause between media `STATUS` polls; X's `check_after_secs` (at most 30 s) unless set. */
  readonly mediaPollInterval?: Duration.DurationInput
  /** Polls before a medium still processing counts as stuck (transient); 120. */
  readonly mediaMaxPolls?: number
}

export const defaultApiUrl = "https://api.x.com"

export const maxImages = 4
export const maxImageBytes = 5 * 1024 * 1024
export const maxGifBytes = 15 * 1024 * 1024
export const maxVideoBytes = 512 * 1024 * 1024
export const maxAltText = 1000
const defaultChunkSize = 1024 * 1024

const label = "X"

/** A failed API call, before classification. */
class ApiFailure extends Data.TaggedError("ApiFailure")<{
  readonly response: RawResponse
}> {}

/** `https://x.com/{username}/status/{id}`; `https://x.com/i/web/status/{id}` when the username is unknown. */
export const postUrl = (username: string | undefined, id: string): string =>
  username === undefined || username === ""
    ? `https://x.com/i/web/status/${id}`
    : `https://x.com/${username}/status/${id}`

/** Every human-readable piece of an X error body: problem JSON and/or `errors[]`. */
const errorTexts = (body: unknown): ReadonlyArray<string> => {
  const texts: Array<string> = []
  const title = stringField(body, "title")
  const detail = stringField(body, "detail")
  if (title !== undefined) texts.push(title)
  if (detail !== undefined && detail !== title) texts.push(detail)
  const errors = field(body, "errors")
  if (Array.isArray(errors)) {
    for (const error of errors) {
      const text = stringField(error, "message") ?? stringField(error, "detail")
      if (text !== undefined && !texts.includes(text)) texts.push(text)
    }
  }
  // The OAuth-style body of a refused token.
  const error = stringField(body, "error")
  const description = stringField(body, "error_description")
  if (error !== undefined) texts.push(description === undefined ? error : `${error}: ${description}`)
  return texts
}

const typesOf = (body: unknown): string => {
  const types = [stringField(body, "type") ?? ""]
  const errors = field(body, "errors")
  if (Array.isArray(errors)) { for (const error of errors) types.push(stringField(error, "type") ?? "") }
  return types.join(" ")
}

/**
 * Seconds until X accepts calls again: the reset of whichever window is exhausted (the 15-minute
 * endpoint window or the 24-hour user/app window), else `retry-after`, else the endpoint reset.
 */
export const retryAfterSeconds = (headers: Readonly<Record<string, string>>, nowMillis: number): number | undefined => {
  const untilReset = (name: string) => {
    const reset = secondsHeader(headers, name)
    return reset === undefined ? undefined : Math.max(0, Math.ceil(reset - nowMillis / 1000))
  }
  const exhausted: Array<number> = []
  for (const prefix of ["x-rate-limit", "x-user-limit-24hour", "x-app-limit-24hour"]) {
    const wait = untilReset(`${prefix}-reset`)
    if (headers[`${prefix}-remaining`] === "0" && wait !== undefined) exhausted.push(wait)
  }
  if (exhausted.length > 0) return Math.max(...exhausted)
  return secondsHeader(headers, "retry-after") ?? untilReset("x-rate-limit-reset")
}

export type Context = "post" | "upload" | "read"

/** Maps a failed call to the reference's error classes (§1 Errors). */
export const classify = (
  response: RawResponse,
  context: Context,
  nowMillis: number,
  secrets: ReadonlyArray<string | undefined>
): PublishError => {
  const texts = errorTexts(response.body)
  const message = `${label}: ${scrub(failureReason(response, texts), secrets)}`
  const all = `${texts.join(" ")} ${typesOf(response.body)}`.toLowerCase()
  const status = response.status
  if (status === 429 || all.includes("usage-capped") || /rate[ _]limit/.test(all)) {
    return publishError("rate_limit", message, retryAfterSeconds(response.headers, nowMillis))
  }
  if (status >= 500 || all.includes("service unavailable")) return publishError("transient", message)
  if (status === 401 || all.includes("unsupported authentication") || all.includes("invalid_request")) {
    return publishError("auth", message)
  }
  if (all.includes("duplicate")) return publishError("duplicate", message)
  if (/too long|text is too long|tweet length|text length/.test(all)) return publishError("too_long", message)
  if (
    context === "upload" || status === 413 ||
    /media id|media_id|media ids|maximum of 4|video longer|processing|media type|media file|unsupported media/.test(all)
  ) {
    return publishError("media", message)
  }
  return publishError("permanent", message)
}

/** Checks a post's media against what one X post can carry, before anything is sent. */
export const checkMedia = (media: ReadonlyArray<MediaRef>): PublishError | undefined => {
  if (media.length === 0) return undefined
  if (media.some((m) => m.kind === "document")) {
    return publishError("media", "X: documents cannot be posted; only images, one GIF or one video")
  }
  const videos = media.filter((m) => m.kind === "video")
  const gifs = media.filter((m) => m.kind === "image" && m.mimeType === "image/gif")
  if ((videos.length > 0 || gifs.length > 0) && media.length > 1) {
    return publishError("media", "X: a post takes up to 4 images, or one GIF, or one video, never mixed")
  }
  if (media.length > maxImages) {
    return publishError("media", `X: a post takes at most ${maxImages} images, got ${media.length}`)
  }
  for (const m of media) {
    const limit = m.kind === "video" ? maxVideoBytes : m.mimeType === "image/gif" ? maxGifBytes : maxImageBytes
    if (m.size > limit) {
      return publishError("media", `X: ${m.filename} is ${m.size} bytes; the limit for this kind is ${limit}`)
    }
  }
  return undefined
}

/**
 * The post lookup's field-selection parameter as X's current description names it (`post.fields`; the
 * docs still show `tweet.fields`).
 */
export const fieldsParameter = "post.fields"

/**
 * A post's `public_metrics` as Herald's metrics. X's current description names reposts `repost_count`;
 * answers in the older shape say `retweet_count`: either is read.
 */
export const metricsOf = (post: unknown): Metrics => {
  const publicMetrics = field(post, "public_metrics")
  const count = (key: string) => Math.max(0, Math.floor(numberField(publicMetrics, key) ?? 0))
  const reposts = numberField(publicMetrics, "repost_count") !== undefined
    ? count("repost_count")
    : count("retweet_count")
  return new Metrics({
    views: count("impression_count"),
    likes: count("like_count"),
    comments: count("reply_count"),
    shares: reposts + count("quote_count"),
    impressions: count("impression_count"),
    saves: count("bookmark_count"),
    clicks: 0
  })
}

/** Pages of 100 posts `findPublished` reads before it gives up (X's timeline holds the latest 3,200). */
export const lookupMaxPages = 10

/**
 * A timeline post's text as it was sent: X answers it with `&`, `<` and `>` escaped (read back by the
 * lookup's canonical form), every link as a `t.co` link (put back as its `expanded_url`), and a link to
 * the post's media appended (removed). A long post's whole text is in `note_post`.
 */
export const sentTextOf = (post: unknown): string => {
  const note = field(post, "note_post")
  const text = stringField(note, "text") ?? stringField(post, "text") ?? ""
  const urls = field(field(note, "entities") ?? field(post, "entities"), "urls")
  let out = text
  for (const entity of Array.isArray(urls) ? urls : []) {
    const short = stringField(entity, "url")
    if (short === undefined || short === "") continue
    const media = stringField(entity, "media_key") !== undefined
    out = out.split(short).join(media ? "" : stringField(entity, "expanded_url") ?? short)
  }
  return out
}

const categoryOf = (media: MediaRef): "tweet_image" | "tweet_gif" | "tweet_video" =>
  media.kind === "video" ? "tweet_video" : media.mimeType === "image/gif" ? "tweet_gif" : "tweet_image"

const replySettingOf = (value: unknown): string | undefined =>
  value === "following" || value === "mentionedUsers" || value === "subscribers" || value === "verified"
    ? value
    : undefined

export const make = (options: Options = {}): Effect.Effect<PlatformClient, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const client = HttpClient.withTracerDisabledWhen(yield* HttpClient.HttpClient, () => true)
    const api = trimSlash(options.apiUrl ?? defaultApiUrl)
    const upload = trimSlash(options.uploadUrl ?? api)
    const chunkSize = Math.max(1, options.chunkSize ?? defaultChunkSize)
    const maxPolls = options.mediaMaxPolls ?? 120

    const unexpected = (what: string) => publishError("transient", `X: unexpected ${what} response`)

    /** One authenticated call; a non-2xx answer is an `ApiFailure`. */
    const call = (
      token: string,
      request: HttpClientRequest.HttpClientRequest
    ): Effect.Effect<RawResponse, ApiFailure | PublishError> =>
      Effect.gen(function*() {
        const response = yield* send(
          client,
          request.pipe(HttpClientRequest.bearerToken(token), HttpClientRequest.acceptJson),
          label
        )
        if (response.status < 200 || response.status >= 300) return yield* new ApiFailure({ response })
        return response
      })

    const classified = (
      token: string,
      context: Context,
      request: HttpClientRequest.HttpClientRequest
    ): Effect.Effect<RawResponse, PublishError> =>
      call(token, request).pipe(
        Effect.catchTag("ApiFailure", (failure) =>
          Effect.flatMap(
            Clock.currentTimeMillis,
            (now) => Effect.fail(classify(failure.response, context, now, [token]))
          ))
      )

    const mediaIdOf = (body: unknown, what: string): Effect.Effect<string, PublishError> => {
      const data = field(body, "data")
      const id = stringField(data, "id") ?? stringField(body, "media_id_string")
      return id === undefined ? Effect.fail(unexpected(what)) : Effect.succeed(id)
    }

    /** Waits for X to finish processing a medium (`processing_info` absent or `succeeded`). */
    const awaitProcessing = (token: string, media: MediaRef, id: string, first: unknown) =>
      Effect.gen(function*() {
        let info = field(field(first, "data"), "processing_info")
        for (let poll = 0;; poll++) {
          const state = stringField(info, "state")
          if (info === undefined || state === undefined || state === "succeeded") return
          if (state === "failed") {
            const error = field(info, "error")
            const reason = stringField(error, "message") ?? stringField(error, "name") ?? "processing failed"
            return yield* publishError("media", scrub(`X: ${media.filename} was rejected: ${reason}`, [token]))
          }
          if (poll >= maxPolls) return yield* publishError("transient", `X: ${media.filename} is still processing`)
          const wait = options.mediaPollInterval ??
            Duration.seconds(Math.min(30, Math.max(1, numberField(info, "check_after_secs") ?? 1)))
          yield* Effect.sleep(wait)
          const status = yield* classified(
            token,
            "upload",
            HttpClientRequest.get(`${upload}/2/media/upload`).pipe(
              HttpClientRequest.setUrlParams({ command: "STATUS", media_id: id })
            )
          )
          info = field(field(status.body, "data"), "processing_info")
        }
      })

    /** An image in one multipart request. */
    const uploadSimple = (token: string, media: MediaRef) =>
      Effect.gen(function*() {
        // X's description closes this form to `media`, `media_category` and `additional_owners`: the
        // type travels as the file part's Content-Type.
        const form = MediaBytes.multipart([
          MediaBytes.file("media", media),
          MediaBytes.field("media_category", "tweet_image")
        ])
        const response = yield* classified(
          token,
          "upload",
          HttpClientRequest.post(`${upload}/2/media/upload`).pipe(HttpClientRequest.setBody(form))
        )
        const id = yield* mediaIdOf(response.body, "media upload")
        yield* awaitProcessing(token, media, id, response.body)
        return id
      })

    /** A video or GIF: initialize, append in chunks, finalize, then wait for processing. */
    const uploadChunked = (token: string, media: MediaRef) =>
      Effect.gen(function*() {
        const total = media.size
        const init = yield* classified(
          token,
          "upload",
          HttpClientRequest.post(`${upload}/2/media/upload/initialize`).pipe(
            HttpClientRequest.bodyUnsafeJson({
              media_type: media.mimeType,
              total_bytes: total,
              media_category: categoryOf(media)
            })
          )
        )
        const id = yield* mediaIdOf(init.body, "media initialize")
        const path = `${upload}/2/media/upload/${encodeURIComponent(id)}`
        // Each segment is a byte range read from the store as it is sent: the video is never whole in memory.
        for (let index = 0, offset = 0; offset < total; index++, offset += chunkSize) {
          const form = MediaBytes.multipart([
            MediaBytes.field("segment_index", String(index)),
            MediaBytes.fileRange("media", media, offset, Math.min(offset + chunkSize, total), "chunk")
          ])
          yield* classified(
            token,
            "upload",
            HttpClientRequest.post(`${path}/append`).pipe(HttpClientRequest.setBody(form))
          )
        }
        const finalized = yield* classified(token, "upload", HttpClientRequest.post(`${path}/finalize`))
        yield* awaitProcessing(token, media, id, finalized.body)
        return id
      })

    const uploadMedia = (token: string, media: MediaRef, altText: string | undefined) =>
      Effect.gen(function*() {
        const id = categoryOf(media) === "tweet_image"
          ? yield* uploadSimple(token, media)
          : yield* uploadChunked(token, media)
        if (altText !== undefined && media.kind === "image") {
          yield* classified(
            token,
            "upload",
            HttpClientRequest.post(`${upload}/2/media/metadata`).pipe(
              HttpClientRequest.bodyUnsafeJson({ id, metadata: { alt_text: { text: altText } } })
            )
          )
        }
        return id
      })

    const createPost = (
      token: string,
      part: PublishPart,
      mediaIds: ReadonlyArray<string>,
      replyTo: string | undefined,
      replySettings: string | undefined
    ): Effect.Effect<string, PublishError> =>
      Effect.gen(function*() {
        // Always sent, "" for a media post without text: X's backend refuses an absent `text`.
        const body: Record<string, unknown> = { text: part.content }
        if (mediaIds.length > 0) body["media"] = { media_ids: mediaIds }
        if (replyTo !== undefined) body["reply"] = { in_reply_to_tweet_id: replyTo }
        if (replySettings !== undefined) body["reply_settings"] = replySettings
        const response = yield* classified(
          token,
          "post",
          HttpClientRequest.post(`${api}/2/tweets`).pipe(HttpClientRequest.bodyUnsafeJson(body))
        )
        const id = stringField(field(response.body, "data"), "id")
        if (id === undefined) return yield* unexpected("create post")
        return id
      })

    const publish = (request: PublishRequest): Effect.Effect<PublishResult, PublishError> =>
      Effect.gen(function*() {
        const stored = Redacted.value(request.credentials)
        const token = stored["access_token"] ?? ""
        if (token === "") return yield* publishError("auth", "X: the stored credentials lack an access token")
        const username = stored["username"] ?? request.account.accountName.replace(/^@/, "")

        const firstComment = request.settings["firstComment"]
        const comment: PublishPart | undefined = typeof firstComment === "string" && firstComment.trim() !== ""
          ? { content: firstComment, media: [] }
          : undefined
        const altSetting = request.settings["mediaAltText"]
        const altText = typeof altSetting === "string" && altSetting.trim() !== ""
          ? altSetting.slice(0, maxAltText)
          : undefined
        const replySettings = replySettingOf(request.settings["replySettings"])

        // Every part is checked and its media uploaded before the first post: a refusal then leaves
        // nothing behind, where a late one would strand half a thread.
        const parts = [request.main, ...request.thread]
        for (const part of parts) {
          const problem = checkMedia(part.media)
          if (problem !== undefined) return yield* problem
        }
        const mediaIds: Array<ReadonlyArray<string>> = []
        for (const [index, part] of parts.entries()) {
          const ids: Array<string> = []
          for (const media of part.media) {
            // `mediaAltText` (main post only) wins where set; otherwise each medium's own alt text.
            const own = media.altText !== undefined && media.altText.trim() !== ""
              ? media.altText.slice(0, maxAltText)
              : undefined
            ids.push(yield* uploadMedia(token, media, (index === 0 ? altText : undefined) ?? own))
          }
          mediaIds.push(ids)
        }

        const main = yield* createPost(token, request.main, mediaIds[0]!, undefined, replySettings)

        const followUp = (what: string, effect: Effect.Effect<string, PublishError>) =>
          Effect.either(effect).pipe(
            Effect.tap((result) =>
              result._tag === "Left"
                // The main post is out: failing now would make a retry post it twice.
                ? Effect.logWarning(
                  `X: ${what} not published after the main post: ${result.left.kind}: ${result.left.message}`
                )
                : Effect.void
            )
          )
        // Run by the engine once the main post is recorded, outside the publish deadline.
        const followUps = Effect.gen(function*() {
          let previous = main
          for (const [index, part] of request.thread.entries()) {
            const post = createPost(token, part, mediaIds[index + 1]!, previous, replySettings)
            const sent = yield* followUp("thread part", post)
            if (sent._tag === "Left") break
            previous = sent.right
          }
          if (comment !== undefined) yield* followUp("first comment", createPost(token, comment, [], main, undefined))
        })

        return {
          platformPostId: main,
          platformPostUrl: postUrl(username, main),
          ...(request.thread.length > 0 || comment !== undefined ? { followUps } : {})
        } satisfies PublishResult
      })

    const metrics = (credentials: Credentials, platformPostId: string): Effect.Effect<Metrics, PublishError> =>
      Effect.gen(function*() {
        const token = Redacted.value(credentials)["access_token"] ?? ""
        if (token === "") return yield* publishError("auth", "X: the stored credentials lack an access token")
        const response = yield* classified(
          token,
          "read",
          HttpClientRequest.get(`${api}/2/tweets`).pipe(
            HttpClientRequest.setUrlParams({ ids: platformPostId, [fieldsParameter]: "public_metrics" })
          )
        )
        const data = field(response.body, "data")
        const post = Array.isArray(data) ? data.find((p) => stringField(p, "id") === platformPostId) : undefined
        if (post === undefined) return yield* publishError("permanent", "X: the post no longer exists")
        return metricsOf(post)
      })

    /** Up to 100 posts in one `GET /2/tweets?ids=` (X's limit); posts not found are left out. */
    const metricsBatch = (
      credentials: Credentials,
      platformPostIds: ReadonlyArray<string>
    ): Effect.Effect<ReadonlyMap<string, Metrics>, PublishError> =>
      Effect.gen(function*() {
        const token = Redacted.value(credentials)["access_token"] ?? ""
        if (token === "") return yield* publishError("auth", "X: the stored credentials lack an access token")
        const response = yield* classified(
          token,
          "read",
          HttpClientRequest.get(`${api}/2/tweets`).pipe(
            HttpClientRequest.setUrlParams({ ids: platformPostIds.join(","), [fieldsParameter]: "public_metrics" })
          )
        )
        const data = field(response.body, "data")
        const found = new Map<string, Metrics>()
        for (const post of Array.isArray(data) ? data : []) {
          const id = stringField(post, "id")
          if (id === undefined || !platformPostIds.includes(id)) continue
          found.set(id, metricsOf(post))
        }
        return found
      })

    /**
     * Whether an attempt reached the account: its own timeline (`GET /2/users/{id}/tweets`, replies and
     * reposts excluded) from the window's start, newest first, page by page until X has no more. The
     * timeline answers the author's own posts at once; an error or a rate limit fails the lookup (the
     * engine keeps the outcome unknown).
     */
    const findPublished = (lookup: PublishedLookup): Effect.Effect<PublishedAnswer, PublishError> =>
      Effect.gen(function*() {
        const stored = Redacted.value(lookup.credentials)
        const token = stored["access_token"] ?? ""
        if (token === "") return yield* publishError("auth", "X: the stored credentials lack an access token")
        const userId = stored["user_id"] ?? lookup.account.platformAccountId
        const username = stored["username"] ?? lookup.account.accountName.replace(/^@/, "")
        const window = Lookup.windowOf(lookup)
        const candidates: Array<Lookup.Candidate> = []
        let nextToken: string | undefined
        for (let page = 0; page < lookupMaxPages; page++) {
          const response = yield* classified(
            token,
            "read",
            HttpClientRequest.get(`${api}/2/users/${encodeURIComponent(userId)}/tweets`).pipe(
              HttpClientRequest.setUrlParams({
                start_time: new Date(window.since).toISOString(),
                max_results: "100",
                exclude: "replies,retweets",
                [fieldsParameter]: "created_at,entities,note_post",
                ...(nextToken === undefined ? {} : { pagination_token: nextToken })
              })
            )
          )
          const data = field(response.body, "data")
          for (const post of Array.isArray(data) ? data : []) {
            const id = stringField(post, "id")
            if (id === undefined) continue
            if (!Lookup.inWindow(window, Date.parse(stringField(post, "created_at") ?? ""))) continue
            candidates.push({ id, url: postUrl(username, id), text: sentTextOf(post) })
          }
          nextToken = stringField(field(response.body, "meta"), "next_token")
          if (nextToken === undefined || nextToken === "") return Lookup.answerFrom(lookup, candidates, label)
          const found = Lookup.answerFrom(lookup, candidates, label)
          if (found._tag === "Found") return found
        }
        return Lookup.tooMany(label, lookupMaxPages * 100)
      })

    return {
      platform: "x",
      publish,
      metrics,
      findPublished,
      metricsBatch,
      metricsBatchSize: 100,
      timeout: "10 minutes"
    } satisfies PlatformClient
  })
