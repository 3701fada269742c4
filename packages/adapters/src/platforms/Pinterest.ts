/**
 * Pinterest through API v5 (platform reference §12), for accounts connected with `oauth/Pinterest.ts`:
 * every call carries the stored `access_token` as a Bearer token; the 30-day token is renewed in the
 * background by the refresh sweep.
 *
 * A pin goes to a board: `settings.boardId`, else the account's default board (`default_board_id`,
 * chosen at connect: the first board in the account's own order), else the boards are listed now and
 * the first one is used; an account without any board is refused with a message saying what to do.
 * `settings.title` and `settings.link` are passed as the pin's title and link, the text is its
 * description.
 *
 * Media:
 * - one image: `image_url` when the medium has a public URL, else `image_base64` (JPEG or PNG);
 * - 2–5 images: a carousel, `multiple_image_urls` when every image has a public URL, else
 *   `multiple_image_base64`;
 * - one video: `POST /v5/media` registers it, the bytes go to the returned `upload_url` as a multipart
 *   form with every returned `upload_parameters` field and then `file`, `GET /v5/media/{id}` is polled
 *   until `succeeded`, and the pin is created with `video_id` and a cover (`settings.coverImageUrl`,
 *   else the key frame at `settings.coverKeyFrameTime` seconds, 1 by default).
 * The URL is `https://www.pinterest.com/pin/{id}/`. Pinterest has no comments: a first comment is not
 * posted.
 *
 * The API origin is configurable (`HERALD_PINTEREST_API_URL`, shared with the OAuth calls): apps with
 * Trial access must use `https://api-sandbox.pinterest.com`; Pinterest's code 29 answer says so and is
 * reported as a configuration error naming the setting.
 *
 * Stored credentials used: `access_token`, `default_board_id`.
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
import * as DateTime from "effect/DateTime"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as MediaBytes from "./internal/MediaBytes.js"
import * as Lookup from "./internal/PublishedLookup.js"
import {
  collectBytes,
  failure,
  failureReason,
  field,
  isRecord,
  numberField,
  publishError,
  type RawResponse,
  secondsHeader,
  send,
  stringField,
  textSetting,
  trimSlash
} from "./internal/PlatformHttp.js"

export interface Options {
  /** `https://api.pinterest.com` (or `https://api-sandbox.pinterest.com`); shared with the OAuth calls. */
  readonly apiUrl?: string
  /** Pause between `GET /v5/media/{id}` polls; 5 seconds. */
  readonly pollInterval?: Duration.DurationInput
  /** Polls before a video still processing is given up (transient: nothing was pinned yet); 120. */
  readonly maxPolls?: number
}

export const defaultApiUrl = "https://api.pinterest.com"
export const sandboxApiUrl = "https://api-sandbox.pinterest.com"

/** The API origin; a configured `…/v5` suffix (as Pinterest writes the sandbox URL) is tolerated. */
export const apiOrigin = (configured: string | undefined): string =>
  trimSlash(configured ?? defaultApiUrl).replace(/\/v5$/, "")

export const pinUrl = (id: string): string => `https://www.pinterest.com/pin/${id}/`

const label = "Pinterest"

/** Messages Pinterest gives for media it cannot use (reference §12 Errors). */
const mediaMessages = [
  /unable to reach the url/i,
  /maxItems/i,
  /minItems/i,
  /cover_image/i,
  /media_source/i,
  /image|video/i
]

const rateLimitDelay = (headers: Readonly<Record<string, string>>): number => {
  const retryAfter = secondsHeader(headers, "retry-after")
  if (retryAfter !== undefined) return retryAfter
  // Pinterest's x-ratelimit-reset is seconds until the window resets; an epoch value is tolerated.
  const reset = secondsHeader(headers, "x-ratelimit-reset")
  if (reset !== undefined) return reset > 1_000_000_000 ? Math.max(0, reset - Date.now() / 1000) : reset
  return 60
}

/** A failed call as one of the reference's classes (§12 Errors), from Pinterest's `{code, message}`. */
export const classify = (response: RawResponse, secrets: ReadonlyArray<string | undefined>): PublishError => {
  const code = numberField(response.body, "code")
  const message = stringField(response.body, "message")
  const reason = failureReason(response, message === undefined || message === "" ? [] : [message])
  if (code === 29) {
    return failure(
      label,
      "permanent",
      `${reason} (configuration: this Pinterest app has Trial access, which may only create pins in the ` +
        `sandbox; set HERALD_PINTEREST_API_URL=${sandboxApiUrl} and reconnect the account there)`,
      secrets
    )
  }
  const kind: PublishErrorKind = response.status === 401 || response.status === 403
    ? "auth"
    : response.status === 429
    ? "rate_limit"
    : response.status >= 500
    ? "transient"
    : response.status >= 400 && message !== undefined && !/board/i.test(message) &&
        mediaMessages.some((re) => re.test(message))
    ? "media"
    : "permanent"
  return failure(label, kind, reason, secrets, kind === "rate_limit" ? rateLimitDelay(response.headers) : undefined)
}

export interface Board {
  readonly id: string
  readonly name: string
  readonly privacy: string | undefined
}

/**
 * Every board of the account (`GET /v5/boards`, following `bookmark`, at most `maxPages` pages of 250),
 * in the account's order.
 */
export const listBoards = (
  http: HttpClient.HttpClient,
  api: string,
  token: string,
  maxPages = 10
): Effect.Effect<ReadonlyArray<Board>, PublishError> =>
  Effect.gen(function*() {
    const boards: Array<Board> = []
    let bookmark: string | undefined = undefined
    for (let page = 0; page < maxPages; page++) {
      const query: string = bookmark === undefined ? "" : `&bookmark=${encodeURIComponent(bookmark)}`
      const response = yield* send(
        http,
        HttpClientRequest.get(`${api}/v5/boards?page_size=250${query}`).pipe(
          HttpClientRequest.bearerToken(token),
          HttpClientRequest.acceptJson
        ),
        label
      )
      if (response.status !== 200) return yield* classify(response, [token])
      const items = field(response.body, "items")
      for (const item of Array.isArray(items) ? items : []) {
        const id = stringField(item, "id")
        if (id !== undefined) {
          boards.push({ id, name: stringField(item, "name") ?? id, privacy: stringField(item, "privacy") })
        }
      }
      bookmark = stringField(response.body, "bookmark")
      if (bookmark === undefined || bookmark === "") break
    }
    return boards
  })

/** The credentials fields the connect stores about the default board. */
export const defaultBoardFields = (boards: ReadonlyArray<Board>): Readonly<Record<string, string>> => {
  const first = boards[0]
  return first === undefined ? {} : { default_board_id: first.id, default_board_name: first.name }
}

const noBoard = "Pinterest: this account has no board to pin to; create a board on Pinterest, or set " +
  "platform_content.pinterest.settings.boardId"

const base64ContentTypes = ["image/jpeg", "image/png"]

/** Pages of 250 pins `findPublished` reads before it gives up. */
export const lookupMaxPages = 8

export const make = (options: Options = {}): Effect.Effect<PlatformClient, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const http = HttpClient.withTracerDisabledWhen(yield* HttpClient.HttpClient, () => true)
    const api = apiOrigin(options.apiUrl)
    const interval = options.pollInterval ?? "5 seconds"
    const maxPolls = Math.max(1, options.maxPolls ?? 120)

    const call = (token: string, request: HttpClientRequest.HttpClientRequest, ok: ReadonlyArray<number>) =>
      Effect.gen(function*() {
        const response = yield* send(
          http,
          request.pipe(HttpClientRequest.bearerToken(token), HttpClientRequest.acceptJson),
          label
        )
        if (!ok.includes(response.status)) return yield* classify(response, [token])
        return response.body
      })

    const boardOf = (
      token: string,
      stored: Readonly<Record<string, string>>,
      settings: Readonly<Record<string, unknown>>
    ) =>
      Effect.gen(function*() {
        const chosen = textSetting(settings, "boardId") ?? stored["default_board_id"]
        if (chosen !== undefined && chosen !== "") return chosen
        const boards = yield* listBoards(http, api, token)
        const first = boards[0]
        if (first === undefined) return yield* publishError("permanent", noBoard)
        return first.id
      })

    const imageSource = (images: ReadonlyArray<MediaRef>) =>
      Effect.gen(function*() {
        const urls = images.map((m) => Option.getOrUndefined(m.publicUrl))
        if (urls.every((u): u is string => u !== undefined)) {
          return urls.length === 1
            ? { source_type: "image_url", url: urls[0] }
            : { source_type: "multiple_image_urls", items: urls.map((url) => ({ url })) }
        }
        const items: Array<{ content_type: string; data: string }> = []
        for (const image of images) {
          if (!base64ContentTypes.includes(image.mimeType)) {
            return yield* publishError(
              "media",
              `Pinterest: ${image.filename} is ${image.mimeType}; Pinterest takes uploaded images as JPEG or PNG ` +
                "(other formats need a public URL)"
            )
          }
          // The API takes uploaded images as base64 inside JSON, so an image is read whole here: images
          // are renditions capped at the platform's image size, never videos.
          const bytes = yield* collectBytes(image.bytes, image.filename)
          items.push({ content_type: image.mimeType, data: Buffer.from(bytes).toString("base64") })
        }
        const only = items[0]
        return items.length === 1 && only !== undefined
          ? { source_type: "image_base64", ...only }
          : { source_type: "multiple_image_base64", items }
      })

    const videoSource = (token: string, video: MediaRef, settings: Readonly<Record<string, unknown>>) =>
      Effect.gen(function*() {
        const registered = yield* call(
          token,
          HttpClientRequest.post(`${api}/v5/media`).pipe(HttpClientRequest.bodyUnsafeJson({ media_type: "video" })),
          [200, 201]
        )
        const mediaId = stringField(registered, "media_id")
        const uploadUrl = stringField(registered, "upload_url")
        const parameters = field(registered, "upload_parameters")
        if (mediaId === undefined || uploadUrl === undefined) {
          return yield* publishError("transient", "Pinterest: unexpected response registering the video")
        }
        const parts: Array<MediaBytes.Part> = []
        if (isRecord(parameters)) {
          for (const [key, value] of Object.entries(parameters)) {
            if (typeof value === "string" || typeof value === "number") parts.push(MediaBytes.field(key, String(value)))
          }
        }
        // The video streams from the store into the form as it is sent.
        parts.push(MediaBytes.file("file", video))
        // The upload URL is pre-signed storage: it gets no Bearer token.
        const uploaded = yield* send(
          http,
          HttpClientRequest.post(uploadUrl).pipe(HttpClientRequest.setBody(MediaBytes.multipart(parts))),
          label
        )
        if (uploaded.status < 200 || uploaded.status >= 300) {
          return yield* failure(
            label,
            uploaded.status >= 500 || uploaded.status === 429 ? "transient" : "media",
            `the video upload was refused (HTTP ${uploaded.status})`,
            [token, uploadUrl]
          )
        }
        for (let poll = 0;; poll++) {
          if (poll > 0) yield* Effect.sleep(interval)
          const status = yield* call(
            token,
            HttpClientRequest.get(`${api}/v5/media/${encodeURIComponent(mediaId)}`),
            [200]
          )
          const state = stringField(status, "status")
          if (state === "succeeded") break
          if (state === "failed") {
            return yield* publishError("media", `Pinterest: the video ${video.filename} failed processing`)
          }
          if (poll >= maxPolls - 1) {
            return yield* publishError("transient", `Pinterest: the video ${video.filename} is still processing`)
          }
        }
        const coverUrl = textSetting(settings, "coverImageUrl")
        const keyFrame = numberField(settings, "coverKeyFrameTime")
        return coverUrl !== undefined
          ? { source_type: "video_id", media_id: mediaId, cover_image_url: coverUrl }
          : { source_type: "video_id", media_id: mediaId, cover_image_key_frame_time: keyFrame ?? 1 }
      })

    const publish = (request: PublishRequest): Effect.Effect<PublishResult, PublishError> =>
      Effect.gen(function*() {
        const media = request.main.media
        const videos = media.filter((m) => m.kind === "video")
        const images = media.filter((m) => m.kind === "image")
        const video = videos[0]
        if (media.length === 0) return yield* publishError("media", "Pinterest: a pin needs an image or a video")
        if (video !== undefined && media.length > 1) {
          return yield* publishError("media", "Pinterest: a video pin holds the one video and nothing else")
        }
        if (video === undefined && (images.length !== media.length || images.length > 5)) {
          return yield* publishError(
            "media",
            "Pinterest: a pin holds one image, 2 to 5 images (a carousel), or one video"
          )
        }
        const stored = Redacted.value(request.credentials)
        const token = stored["access_token"] ?? ""
        if (token === "") return yield* publishError("auth", "Pinterest: the stored credentials lack an access token")
        const settings = request.settings

        const boardId = yield* boardOf(token, stored, settings)
        const mediaSource = video === undefined
          ? yield* imageSource(images)
          : yield* videoSource(token, video, settings)
        const title = textSetting(settings, "title")
        const link = textSetting(settings, "link")
        // A pin has one `alt_text` (≤500): the first medium's.
        const altText = media[0]!.altText?.trim()
        const pin = yield* call(
          token,
          HttpClientRequest.post(`${api}/v5/pins`).pipe(HttpClientRequest.bodyUnsafeJson({
            board_id: boardId,
            ...(request.main.content.trim() === "" ? {} : { description: request.main.content }),
            ...(title === undefined ? {} : { title }),
            ...(link === undefined ? {} : { link }),
            ...(altText === undefined || altText === "" ? {} : { alt_text: altText.slice(0, 500) }),
            media_source: mediaSource
          })),
          [200, 201]
        )
        const id = stringField(pin, "id")
        if (id === undefined) return yield* publishError("transient", "Pinterest: unexpected response creating the pin")
        if (textSetting(settings, "firstComment") !== undefined) {
          yield* Effect.logWarning("Pinterest: the API has no comments; the first comment was not posted")
        }
        return { platformPostId: id, platformPostUrl: pinUrl(id) } satisfies PublishResult
      })

    /**
     * `GET /v5/pins/{id}/analytics` over the 90 days Pinterest keeps, lifetime figures: impressions
     * (IMPRESSION), saves (SAVE), clicks (PIN_CLICK + OUTBOUND_CLICK), views (VIDEO_MRC_VIEW, videos).
     * Pinterest reports no likes, comments or shares for a pin: they stay 0.
     */
    const metrics = (credentials: Credentials, platformPostId: string): Effect.Effect<Metrics, PublishError> =>
      Effect.gen(function*() {
        const token = Redacted.value(credentials)["access_token"] ?? ""
        if (token === "") return yield* publishError("auth", "Pinterest: the stored credentials lack an access token")
        const today = yield* DateTime.now
        const day = (d: DateTime.Utc) => DateTime.formatIso(d).slice(0, 10)
        const query = new URLSearchParams({
          start_date: day(DateTime.subtract(today, { days: 89 })),
          end_date: day(today),
          metric_types: "IMPRESSION,SAVE,PIN_CLICK,OUTBOUND_CLICK,VIDEO_MRC_VIEW"
        })
        const body = yield* call(
          token,
          HttpClientRequest.get(`${api}/v5/pins/${encodeURIComponent(platformPostId)}/analytics?${query.toString()}`),
          [200]
        )
        const all = field(body, "all")
        const figures = field(all, "lifetime_metrics") ?? field(all, "summary_metrics")
        const count = (name: string) => Math.max(0, Math.floor(numberField(figures, name) ?? 0))
        return new Metrics({
          views: count("VIDEO_MRC_VIEW"),
          likes: 0,
          comments: 0,
          shares: 0,
          impressions: count("IMPRESSION"),
          saves: count("SAVE"),
          clicks: count("PIN_CLICK") + count("OUTBOUND_CLICK")
        })
      })

    /**
     * Whether an attempt reached the account: its pins (`GET /v5/pins`, every board, so a pin sent to
     * `settings.boardId` is seen as well as one on the default board), 250 a page. A pin is the
     * attempt's when it was created inside the window with the description as sent. Pinterest does not
     * document the order: the listing stops at the window's start only while every pin so far came
     * newest first, and otherwise reads on to its end (Absent) or the page limit (Unknown). An error or
     * a rate limit fails the lookup (the engine keeps the outcome unknown).
     */
    const findPublished = (lookup: PublishedLookup): Effect.Effect<PublishedAnswer, PublishError> =>
      Effect.gen(function*() {
        const token = Redacted.value(lookup.credentials)["access_token"] ?? ""
        if (token === "") return yield* publishError("auth", "Pinterest: the stored credentials lack an access token")
        const window = Lookup.windowOf(lookup)
        const candidates: Array<Lookup.Candidate> = []
        let bookmark: string | undefined
        let previous = Infinity
        let newestFirst = true
        for (let page = 0; page < lookupMaxPages; page++) {
          const query = new URLSearchParams({ page_size: "250", ...(bookmark === undefined ? {} : { bookmark }) })
          const body = yield* call(token, HttpClientRequest.get(`${api}/v5/pins?${query.toString()}`), [200])
          const items = field(body, "items")
          let pastWindow = false
          for (const item of Array.isArray(items) ? items : []) {
            const id = stringField(item, "id")
            const at = Date.parse(stringField(item, "created_at") ?? "")
            if (id === undefined) continue
            if (!(at <= previous)) newestFirst = false
            previous = at
            if (at < window.since) pastWindow = true
            if (!Lookup.inWindow(window, at)) continue
            candidates.push({ id, url: pinUrl(id), text: stringField(item, "description") ?? "" })
          }
          bookmark = stringField(body, "bookmark")
          if ((pastWindow && newestFirst) || bookmark === undefined || bookmark === "") {
            return Lookup.answerFrom(lookup, candidates, label)
          }
          const found = Lookup.answerFrom(lookup, candidates, label)
          if (found._tag === "Found") return found
        }
        return Lookup.tooMany(label, lookupMaxPages * 250)
      })

    return {
      platform: "pinterest",
      publish,
      metrics,
      findPublished,
      timeout: "30 minutes"
    } satisfies PlatformClient
  })
