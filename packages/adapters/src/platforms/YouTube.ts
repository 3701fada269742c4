/**
 * YouTube through the Data API v3 (platform reference §10), for channels connected with Google OAuth
 * (`oauth/YouTube.ts`): every call carries the stored `access_token` as a Bearer token. The token lasts
 * an hour and is renewed in the background by the refresh sweep (the OAuth provider holds the client
 * secret a refresh needs); a 401 here is `auth`.
 *
 * A post is one video, sent with the resumable protocol:
 * 1. `POST {upload}/upload/youtube/v3/videos?uploadType=resumable&part=snippet,status` with the
 *    metadata (`snippet` title, description, tags, categoryId; `status` privacyStatus,
 *    selfDeclaredMadeForKids) and `X-Upload-Content-Length`/`-Type`; the session URI is the `Location`.
 * 2. `PUT {session}` chunk by chunk (multiples of 256 KiB, `Content-Range: bytes a-b/N`); YouTube
 *    answers `308` with `Range: bytes=0-x` until the last chunk, which answers the video resource.
 * 3. After an interruption (a 5xx, a network failure) the client asks where the session stands
 *    (`PUT` with no body and `Content-Range: bytes *\/N`) and resumes from the server's offset; a session
 *    that is gone (404/410) is started again from the first byte.
 * The URL is `https://youtube.com/shorts/{id}` for a vertical or square video of at most 3 minutes (read
 * from the MP4 header), else `https://www.youtube.com/watch?v={id}`. A first comment goes through
 * `commentThreads` afterwards.
 *
 * Stored credentials used: `access_token`.
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
  PublishRequest,
  PublishResult
} from "@herald/core/platforms/Platforms"
import * as Clock from "effect/Clock"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as MediaBytes from "./internal/MediaBytes.js"
import * as Lookup from "./internal/PublishedLookup.js"
import type * as Mp4 from "./internal/Mp4.js"
import {
  afterPublished,
  failure,
  failureReason,
  field,
  publishError,
  type RawResponse,
  secondsHeader,
  send,
  stringField,
  textSetting,
  trimSlash
} from "./internal/PlatformHttp.js"

export interface Options {
  /** `https://www.googleapis.com` unless a fake is used (shared with the OAuth identity call). */
  readonly apiUrl?: string
  /** Where uploads go (`/upload/youtube/v3/...`): `apiUrl` unless set. */
  readonly uploadUrl?: string
  /** Bytes per upload request, rounded down to a multiple of 256 KiB (at least one); 8 MiB. */
  readonly chunkSize?: number
  /** Interruptions (5xx, network) one upload may survive before it is `transient`; 5. */
  readonly maxInterruptions?: number
  /** Pause before asking an interrupted session where it stands; 1 second. */
  readonly resumeDelay?: Duration.DurationInput
}

export const defaultApiUrl = "https://www.googleapis.com"
export const chunkUnit = 256 * 1024
export const defaultChunkSize = 8 * 1024 * 1024
/** Session restarts (404/410) before the upload gives up as `transient`. */
export const maxRestarts = 2
export const maxTitle = 100
/** The longest video YouTube shows as a Short. */
export const maxShortSeconds = 180

const label = "YouTube"

/** Google's error object `{error:{code,message,status,errors:[{reason,domain,message}]}}`. */
interface GoogleError {
  readonly message: string | undefined
  readonly status: string | undefined
  readonly reasons: ReadonlyArray<string>
}

const googleErrorOf = (body: unknown): GoogleError => {
  const error = field(body, "error")
  const errors = field(error, "errors")
  const reasons = Array.isArray(errors)
    ? errors.map((e) => stringField(e, "reason")).filter((r): r is string => r !== undefined)
    : []
  // The OAuth shape `{error:"invalid_grant", error_description}`.
  if (typeof error === "string") {
    return { message: stringField(body, "error_description") ?? error, status: undefined, reasons: [error] }
  }
  return { message: stringField(error, "message"), status: stringField(error, "status"), reasons }
}

/**
 * Seconds until the next midnight in America/Los_Angeles, when YouTube's daily quotas reset (Pacific
 * time, daylight saving included).
 */
export const secondsUntilQuotaReset = (nowMillis: number): number => {
  const now = DateTime.unsafeMakeZoned(nowMillis, { timeZone: "America/Los_Angeles" })
  const midnight = DateTime.startOf(DateTime.add(now, { days: 1 }), "day")
  return Math.max(1, Math.ceil((DateTime.toEpochMillis(midnight) - nowMillis) / 1000))
}

const quotaReasons = new Set(["quotaExceeded", "dailyLimitExceeded", "uploadLimitExceeded"])
const rateReasons = new Set(["rateLimitExceeded", "userRateLimitExceeded"])
const authReasons = new Set([
  "authError",
  "youtubeSignupRequired",
  "insufficientPermissions",
  "forbidden",
  "invalid_grant",
  "accountClosed",
  "accountSuspended"
])
const tooLongReasons = new Set(["invalidTitle", "invalidDescription", "invalidTags"])
const mediaReasons = new Set(["mediaBodyRequired", "invalidFilename", "uploadRejected", "invalidVideoMetadata"])

/** A failed call as one of the reference's classes (§10 Errors), branching on `reason`. */
export const classify = (
  response: RawResponse,
  nowMillis: number,
  secrets: ReadonlyArray<string | undefined>
): PublishError => {
  const error = googleErrorOf(response.body)
  const reasons = error.reasons
  const has = (set: ReadonlySet<string>) => reasons.some((r) => set.has(r))
  const reason = failureReason(response, error.message === undefined ? [] : [error.message])
  const detail = reasons.length > 0 ? `${reason} (${reasons.join(", ")})` : reason
  const fail = (kind: PublishError["kind"], retryAfter?: number) => failure(label, kind, detail, secrets, retryAfter)
  if (has(quotaReasons)) {
    // Daily quotas: nothing succeeds before they reset at midnight Pacific.
    return failure(
      label,
      "rate_limit",
      `${detail}; the quota resets at midnight Pacific time`,
      secrets,
      secondsUntilQuotaReset(nowMillis)
    )
  }
  if (response.status === 429 || has(rateReasons)) {
    return fail("rate_limit", secondsHeader(response.headers, "retry-after"))
  }
  if (response.status === 401 || error.status === "UNAUTHENTICATED" || has(authReasons)) return fail("auth")
  if (response.status >= 500 || reasons.includes("backendError")) return fail("transient")
  if (has(tooLongReasons)) return fail("too_long")
  if (has(mediaReasons) || response.status === 413) return fail("media")
  if (response.status === 403) return fail("auth")
  return fail("permanent")
}

/** YouTube refuses `<` and `>` in titles and descriptions: they become look-alike angle quotes. */
export const withoutAngleBrackets = (text: string): string => text.replace(/</g, "‹").replace(/>/g, "›")

/** The title: `settings.title`, else the file name without its extension; at most 100 characters. */
export const titleOf = (setting: string | undefined, medium: MediaRef): string => {
  const raw = (setting ?? medium.filename.replace(/\.[^.]+$/, "")).trim()
  return [...withoutAngleBrackets(raw === "" ? "Untitled" : raw)].slice(0, maxTitle).join("")
}

/** The URL: a Short for a vertical or square video of at most 3 minutes, else the watch page. */
export const videoUrl = (id: string, info: Mp4.VideoInfo | undefined): string =>
  info !== undefined && info.height >= info.width && info.durationSeconds !== undefined &&
    info.durationSeconds <= maxShortSeconds
    ? `https://youtube.com/shorts/${id}`
    : `https://www.youtube.com/watch?v=${id}`

/** The last byte the server holds, from `Range: bytes=0-x`; none means nothing was kept. */
export const receivedBytes = (headers: Readonly<Record<string, string>>): number => {
  const match = /bytes=\d+-(\d+)/.exec(headers["range"] ?? "")
  return match === null ? 0 : Number(match[1]) + 1
}

/** Pages of 50 uploads `findPublished` reads before it gives up. */
export const lookupMaxPages = 10

export const make = (options: Options = {}): Effect.Effect<PlatformClient, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const http = HttpClient.withTracerDisabledWhen(yield* HttpClient.HttpClient, () => true)
    const api = trimSlash(options.apiUrl ?? defaultApiUrl)
    const uploadOrigin = trimSlash(options.uploadUrl ?? api)
    const chunkSize = Math.max(1, Math.floor((options.chunkSize ?? defaultChunkSize) / chunkUnit)) * chunkUnit
    const maxInterruptions = Math.max(0, options.maxInterruptions ?? 5)
    const resumeDelay = options.resumeDelay ?? "1 second"

    /**
     * Sends a request; `308 Resume Incomplete` is an answer here, never a redirect to follow (the
     * platform transport, `PlatformTransport`, follows none).
     */
    const call = (token: string, request: HttpClientRequest.HttpClientRequest) =>
      send(http, request.pipe(HttpClientRequest.bearerToken(token)), label)

    const classified = (token: string, response: RawResponse) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.fail(classify(response, now, [token])))

    const openSession = (token: string, metadata: unknown, medium: MediaRef, total: number) =>
      Effect.gen(function*() {
        const response = yield* call(
          token,
          HttpClientRequest.post(`${uploadOrigin}/upload/youtube/v3/videos`).pipe(
            HttpClientRequest.setUrlParams({
              uploadType: "resumable",
              part: "snippet,status",
              notifySubscribers: "true"
            }),
            HttpClientRequest.setHeaders({
              "x-upload-content-type": medium.mimeType,
              "x-upload-content-length": String(total)
            }),
            HttpClientRequest.bodyUnsafeJson(metadata)
          )
        )
        if (response.status < 200 || response.status >= 300) return yield* classified(token, response)
        const location = response.headers["location"]
        if (location === undefined || location === "") {
          return yield* publishError("transient", "YouTube: the upload session was opened without a Location")
        }
        return location
      })

    /**
     * The resumable upload: chunks, `308` progress, a status query after an interruption, a fresh
     * session when the old one is gone. Answers the video resource.
     */
    const upload = (token: string, metadata: unknown, medium: MediaRef) =>
      Effect.gen(function*() {
        const total = medium.size
        let session = yield* openSession(token, metadata, medium, total)
        let offset = 0
        let interruptions = 0
        let restarts = 0
        // After an interruption the offset is unknown until the server says where it stands.
        let mode: "send" | "query" = "send"
        for (;;) {
          const last = Math.min(offset + chunkSize, total) - 1
          const request = mode === "query"
            ? HttpClientRequest.put(session).pipe(
              HttpClientRequest.setHeader("content-range", `bytes */${total}`),
              HttpClientRequest.bodyUint8Array(new Uint8Array(0), medium.mimeType)
            )
            : HttpClientRequest.put(session).pipe(
              HttpClientRequest.setHeader("content-range", `bytes ${offset}-${last}/${total}`),
              // One chunk, read from the store as it is sent (and again after an interruption).
              HttpClientRequest.setBody(MediaBytes.rangeBody(medium, offset, last + 1))
            )
          const sent = yield* Effect.either(call(token, request))
          if (sent._tag === "Right") {
            const response = sent.right
            if (response.status === 200 || response.status === 201) return response.body
            if (response.status === 308) {
              offset = receivedBytes(response.headers)
              mode = "send"
              continue
            }
            if (response.status === 404 || response.status === 410) {
              if (++restarts > maxRestarts) {
                return yield* publishError("transient", "YouTube: the upload session kept expiring")
              }
              yield* Effect.logInfo(`YouTube: upload session gone (HTTP ${response.status}); starting a new one`)
              session = yield* openSession(token, metadata, medium, total)
              offset = 0
              mode = "send"
              continue
            }
            if (response.status < 500) return yield* classified(token, response)
          }
          // A 5xx or a broken connection: the session stays resumable.
          if (++interruptions > maxInterruptions) {
            return yield* sent._tag === "Right"
              ? classified(token, sent.right)
              : publishError("transient", "YouTube: the upload kept being interrupted")
          }
          yield* Effect.sleep(Duration.times(Duration.decode(resumeDelay), interruptions))
          mode = "query"
        }
      })

    const publish = (request: PublishRequest): Effect.Effect<PublishResult, PublishError> =>
      Effect.gen(function*() {
        const media = request.main.media
        const medium = media[0]
        if (media.length !== 1 || medium === undefined || medium.kind !== "video") {
          return yield* publishError("media", "YouTube: a post is exactly one video")
        }
        const stored = Redacted.value(request.credentials)
        const token = stored["access_token"] ?? ""
        if (token === "") return yield* publishError("auth", "YouTube: the stored credentials lack an access token")

        const settings = request.settings
        const tags = Array.isArray(settings["tags"])
          ? settings["tags"].filter((t): t is string => typeof t === "string" && t.trim() !== "")
          : []
        const categoryId = textSetting(settings, "categoryId")
        const privacy = settings["privacyStatus"]
        const metadata = {
          snippet: {
            title: titleOf(textSetting(settings, "title"), medium),
            description: withoutAngleBrackets(request.main.content),
            ...(tags.length > 0 ? { tags } : {}),
            ...(categoryId === undefined ? {} : { categoryId })
          },
          status: {
            privacyStatus: privacy === "private" || privacy === "unlisted" ? privacy : "public",
            selfDeclaredMadeForKids: settings["madeForKids"] === true
          }
        }

        // Read before the upload: nothing after it may fail the publish. Shorts are told by size and length.
        const info = yield* MediaBytes.videoInfoOf(medium)
        const video = yield* upload(token, metadata, medium)
        const id = stringField(video, "id")
        if (id === undefined || id === "") {
          // The bytes are in: a retry would upload the video twice.
          return yield* publishError("permanent", "YouTube: the upload finished without a video id")
        }
        const status = field(video, "status")
        const uploadStatus = stringField(status, "uploadStatus")
        if (uploadStatus === "rejected" || uploadStatus === "failed") {
          const why = stringField(status, uploadStatus === "rejected" ? "rejectionReason" : "failureReason") ??
            "unknown"
          return yield* failure(label, "media", `the video ${id} was ${uploadStatus}: ${why}`, [token])
        }

        const requestedPrivacy = metadata.status.privacyStatus
        const actualPrivacy = stringField(status, "privacyStatus")
        if (actualPrivacy !== undefined && actualPrivacy !== requestedPrivacy) {
          // Uploads through API projects YouTube has not audited are locked to private.
          yield* Effect.logWarning(
            `YouTube: video ${id} is ${actualPrivacy}, not ${requestedPrivacy}; YouTube locks uploads from ` +
              "unaudited API projects to private until the project passes its audit"
          )
        }

        // The video is out from here on: nothing below may fail the publish.
        const comment = textSetting(settings, "firstComment")
        // Run by the engine once the video is recorded, outside the publish deadline.
        const followUps = comment === undefined ? undefined : Effect.asVoid(
          afterPublished(
            label,
            "first comment",
            Effect.gen(function*() {
              const response = yield* call(
                token,
                HttpClientRequest.post(`${api}/youtube/v3/commentThreads`).pipe(
                  HttpClientRequest.setUrlParam("part", "snippet"),
                  // The thread names its channel (the connected one) and its video, or YouTube refuses it
                  // (`channelOrVideoIdMissing`).
                  HttpClientRequest.bodyUnsafeJson({
                    snippet: {
                      channelId: request.account.platformAccountId,
                      videoId: id,
                      topLevelComment: { snippet: { textOriginal: comment } }
                    }
                  })
                )
              )
              if (response.status < 200 || response.status >= 300) return yield* classified(token, response)
            })
          )
        )
        return {
          platformPostId: id,
          platformPostUrl: videoUrl(id, info),
          ...(followUps === undefined ? {} : { followUps })
        } satisfies PublishResult
      })

    /**
     * `videos?part=statistics` (1 quota unit): views, likes and comments. YouTube has no share, save or
     * click counts outside YouTube Analytics, and `favoriteCount` is always 0: those stay 0.
     */
    const metrics = (credentials: Credentials, platformPostId: string): Effect.Effect<Metrics, PublishError> =>
      Effect.gen(function*() {
        const token = Redacted.value(credentials)["access_token"] ?? ""
        if (token === "") return yield* publishError("auth", "YouTube: the stored credentials lack an access token")
        const response = yield* call(
          token,
          HttpClientRequest.get(`${api}/youtube/v3/videos`).pipe(
            HttpClientRequest.setUrlParams({ part: "statistics", id: platformPostId }),
            HttpClientRequest.acceptJson
          )
        )
        if (response.status < 200 || response.status >= 300) return yield* classified(token, response)
        const items = field(response.body, "items")
        const video = Array.isArray(items) ? items.find((v) => stringField(v, "id") === platformPostId) : undefined
        if (video === undefined) return yield* publishError("permanent", "YouTube: the video no longer exists")
        const statistics = field(video, "statistics")
        // Counts arrive as decimal strings.
        const count = (key: string) => {
          const n = Number(stringField(statistics, key) ?? field(statistics, key) ?? 0)
          return Number.isFinite(n) ? Math.max(0, Math.floor(n)) : 0
        }
        return new Metrics({
          views: count("viewCount"),
          likes: count("likeCount"),
          comments: count("commentCount"),
          shares: 0,
          impressions: 0,
          saves: 0,
          clicks: 0
        })
      })

    const read = (token: string, path: string, params: Readonly<Record<string, string>>) =>
      Effect.gen(function*() {
        const response = yield* call(
          token,
          HttpClientRequest.get(`${api}/youtube/v3/${path}`).pipe(
            HttpClientRequest.setUrlParams(params),
            HttpClientRequest.acceptJson
          )
        )
        if (response.status < 200 || response.status >= 300) return yield* classified(token, response)
        return response.body
      })

    /**
     * Whether an attempt reached the channel: its uploads playlist (`channels?part=contentDetails&mine=true`
     * names it, 1 quota unit; `playlistItems`, 1 unit a page of 50), newest first, until past the window.
     * A video is the attempt's when it was added inside the window with the description as sent (the
     * angle brackets replaced as at publish). An error or a quota refusal fails the lookup (the engine
     * keeps the outcome unknown).
     */
    const findPublished = (lookup: PublishedLookup): Effect.Effect<PublishedAnswer, PublishError> =>
      Effect.gen(function*() {
        const token = Redacted.value(lookup.credentials)["access_token"] ?? ""
        if (token === "") return yield* publishError("auth", "YouTube: the stored credentials lack an access token")
        const channels = field(yield* read(token, "channels", { part: "contentDetails", mine: "true" }), "items")
        const channel = Array.isArray(channels) ? channels[0] : undefined
        const uploads = stringField(field(field(channel, "contentDetails"), "relatedPlaylists"), "uploads")
        if (uploads === undefined) {
          return yield* publishError("transient", "YouTube: the channel's uploads playlist could not be read")
        }
        const window = Lookup.windowOf(lookup)
        const wanted = { ...lookup, content: withoutAngleBrackets(lookup.content) }
        const candidates: Array<Lookup.Candidate> = []
        let pageToken: string | undefined
        for (let page = 0; page < lookupMaxPages; page++) {
          const body = yield* read(token, "playlistItems", {
            part: "snippet",
            playlistId: uploads,
            maxResults: "50",
            ...(pageToken === undefined ? {} : { pageToken })
          })
          const items = field(body, "items")
          let pastWindow = false
          for (const item of Array.isArray(items) ? items : []) {
            const snippet = field(item, "snippet")
            const id = stringField(field(snippet, "resourceId"), "videoId")
            const at = Date.parse(stringField(snippet, "publishedAt") ?? "")
            if (id === undefined) continue
            if (Number.isFinite(at) && at < window.since) pastWindow = true
            if (!Lookup.inWindow(window, at)) continue
            candidates.push({
              id,
              url: `https://www.youtube.com/watch?v=${id}`,
              text: stringField(snippet, "description") ?? ""
            })
          }
          pageToken = stringField(body, "nextPageToken")
          if (pastWindow || pageToken === undefined || pageToken === "") {
            return Lookup.answerFrom(wanted, candidates, label)
          }
        }
        return Lookup.tooMany(label, lookupMaxPages * 50)
      })

    return {
      platform: "youtube",
      publish,
      metrics,
      findPublished,
      timeout: "30 minutes"
    } satisfies PlatformClient
  })
