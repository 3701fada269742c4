/**
 * LinkedIn through the versioned REST Posts API (platform reference §9), for members connected with
 * OAuth 2.0 (`oauth/LinkedIn.ts`): every call carries the stored `access_token` as a Bearer token,
 * and every `/rest/*` call the `LinkedIn-Version` and `X-Restli-Protocol-Version: 2.0.0` headers.
 *
 * A post is `POST /rest/posts` by the stored `author_urn`; LinkedIn answers 201 with an empty body and
 * the post's URN in `x-restli-id`. Media is uploaded first, so a refusal leaves nothing visible:
 * - images (1 to 20; 2 or more become a `multiImage`) and a PDF document: `initializeUpload`, then the
 *   whole file in one `PUT` to the returned `uploadUrl`, then `GET /rest/images/{urn}` (or
 *   `/rest/documents/{urn}`) polled until `AVAILABLE` (`PROCESSING_FAILED` is a media error). Where
 *   LinkedIn refuses that read (some member tokens may not read assets back), a short grace pause
 *   stands in for it;
 * - one video: `initializeUpload` with its size, a `PUT` per byte range of the upload instructions
 *   (collecting each `ETag`), `finalizeUpload`, then `GET /rest/videos/{urn}` polls until `AVAILABLE`.
 * A post without media whose text carries a link gets an article card (`content.article`): the page's
 * title, description and image (uploaded through the Images API as its `thumbnail`), read by Herald
 * through the guarded fetcher since LinkedIn reads no page itself (`LinkPreview`, shared with Bluesky).
 * A first comment (`settings.firstComment`) goes to `/rest/socialActions/{urn}/comments` after the
 * post; its failure is logged, never a failed publish, since the post is already out.
 *
 * The commentary is "little text": its reserved characters are escaped, and `#tag` becomes a hashtag.
 * LinkedIn has no threads: thread parts are not published (the rules publish them on x/bluesky only).
 *
 * A LinkedIn Page connected through the member who administers it (`oauth/LinkedIn.ts`) stores
 * `author_urn` `urn:li:organization:{id}`: its posts, uploads (owner) and first comments (actor) are the
 * organization's, as the Posts API documents for `w_organization_social`. Its metrics are the page's
 * share statistics (see `metrics`).
 *
 * Stored credentials used: `access_token`, `author_urn` (else `urn:li:person:{user_id}`).
 */
import * as HttpBody from "@effect/platform/HttpBody"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type { UrlFetcher } from "@herald/core/media/MediaLibrary"
import { Metrics } from "@herald/core/posts/Destination"
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
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as MediaBytes from "./internal/MediaBytes.js"
import * as Lookup from "./internal/PublishedLookup.js"
import {
  afterPublished,
  failureReason,
  field,
  numberField,
  publishError,
  type RawResponse,
  scrub,
  secondsHeader,
  send,
  stringField,
  textSetting,
  trimSlash
} from "./internal/PlatformHttp.js"
import * as ApiVersions from "./ApiVersions.js"
import * as LinkPreview from "./LinkPreview.js"

export interface Options {
  /** `https://api.linkedin.com` unless a fake is used. */
  readonly apiUrl?: string
  /** The `LinkedIn-Version` header (YYYYMM); `defaultVersion` unless set. Versions sunset after ~12 months. */
  readonly version?: string
  /** Pause after an image or document upload when its status cannot be read; 2 seconds. */
  readonly mediaGrace?: Duration.DurationInput
  /** Pause between image or document status polls; 1 second. */
  readonly mediaPollInterval?: Duration.DurationInput
  /** Polls before an image or document still processing counts as stuck (transient); 60. */
  readonly mediaMaxPolls?: number
  /** Pause between video status polls; 3 seconds. */
  readonly videoPollInterval?: Duration.DurationInput
  /** Polls before a video still processing counts as stuck (transient); 200. */
  readonly videoMaxPolls?: number
  /** Fetches link preview pages and images (the media importer's, behind its address guard); no article cards without. */
  readonly linkCards?: UrlFetcher["Type"]
}

export const defaultApiUrl = "https://api.linkedin.com"
export const defaultVersion = ApiVersions.defaultLinkedInVersion
export const restliProtocolVersion = "2.0.0"

export const maxCommentary = 3000
export const maxImages = 20
export const maxImageBytes = 36 * 1024 * 1024
export const maxVideoBytes = 500 * 1024 * 1024
export const maxDocumentBytes = 100 * 1024 * 1024
export const maxAltText = 4086

/**
 * An article card's thumbnail goes through the Images API, which takes JPG, GIF and PNG
 * (learn.microsoft.com/linkedin/marketing/community-management/shares/images-api); Herald reads at most
 * 5 MiB of it.
 */
export const thumbRules: LinkPreview.ThumbRules = {
  maxBytes: 5 * 1024 * 1024,
  types: ["image/jpeg", "image/png", "image/gif"]
}

const label = "LinkedIn"

/** A failed API call, before classification. */
class ApiFailure extends Data.TaggedError("ApiFailure")<{
  readonly response: RawResponse
}> {}

/** Whether an author URN is a LinkedIn Page (an organization) rather than a member. */
export const isOrganization = (author: string): boolean => author.startsWith("urn:li:organization:")

/** A 403: LinkedIn refused for lack of a permission or a role (not a dead token). */
const isAccessDenied = (error: PublishError): boolean =>
  error.kind === "auth" && /\b403\b|ACCESS_DENIED|permission/i.test(error.message)

/** `https://www.linkedin.com/feed/update/{urn}/`. */
export const postUrl = (urn: string): string => `https://www.linkedin.com/feed/update/${urn}/`

const reserved = /[\\|{}@[\]()<>#*_~]/g

/**
 * Commentary in LinkedIn's "little text": each reserved character (`\ | { } @ [ ] ( ) < > # * _ ~`)
 * is escaped with a backslash, otherwise LinkedIn cuts the text off or refuses it; a `#tag` that
 * starts a word becomes the hashtag template `{hashtag|\#|tag}`.
 */
export const escapeLittleText = (text: string): string => {
  const out: Array<string> = []
  const hashtag = /(^|[^\p{L}\p{N}_&#])#([\p{L}\p{N}_]+)/gu
  let last = 0
  for (const match of text.matchAll(hashtag)) {
    const start = match.index + match[1]!.length
    out.push(text.slice(last, start).replace(reserved, "\\$&"))
    out.push(`{hashtag|\\#|${match[2]!.replace(reserved, "\\$&")}}`)
    last = start + 1 + match[2]!.length
  }
  out.push(text.slice(last).replace(reserved, "\\$&"))
  return out.join("")
}

/** Every human-readable piece of a LinkedIn error body: `message`, `code` and validation `inputErrors`. */
const errorTexts = (body: unknown): ReadonlyArray<string> => {
  const texts: Array<string> = []
  const message = stringField(body, "message")
  if (message !== undefined) texts.push(message)
  const inputErrors = field(field(body, "errorDetails"), "inputErrors")
  if (Array.isArray(inputErrors)) {
    for (const error of inputErrors) {
      const text = stringField(error, "description") ?? stringField(error, "code")
      if (text !== undefined && !texts.includes(text)) texts.push(text)
    }
  }
  // The OAuth-style body some gateways answer with.
  const error = stringField(body, "error")
  const description = stringField(body, "error_description")
  if (error !== undefined) texts.push(description === undefined ? error : `${error}: ${description}`)
  return texts
}

const codesOf = (body: unknown): string => {
  const codes = [stringField(body, "code") ?? "", String(numberField(body, "serviceErrorCode") ?? "")]
  const inputErrors = field(field(body, "errorDetails"), "inputErrors")
  if (Array.isArray(inputErrors)) for (const error of inputErrors) codes.push(stringField(error, "code") ?? "")
  return codes.join(" ")
}

/**
 * Seconds until LinkedIn accepts calls again. LinkedIn sends no standard reset header: `Retry-After`
 * when present; else, for a daily quota ("… DAY limit …"), until the next midnight UTC, when the
 * quotas reset; else a minute.
 */
export const retryAfterSeconds = (
  headers: Readonly<Record<string, string>>,
  text: string,
  nowMillis: number
): number => {
  const header = secondsHeader(headers, "retry-after")
  if (header !== undefined) return header
  if (/\bday\b/i.test(text)) {
    const day = 86_400_000
    return Math.ceil((Math.floor(nowMillis / day) * day + day - nowMillis) / 1000)
  }
  return 60
}

export type Context = "post" | "upload" | "comment" | "metrics"

/** Maps a failed call to the reference's error classes (§9 Errors). */
export const classify = (
  response: RawResponse,
  context: Context,
  nowMillis: number,
  secrets: ReadonlyArray<string | undefined>,
  version?: string
): PublishError => {
  const texts = errorTexts(response.body)
  const message = `${label}: ${scrub(failureReason(response, texts), secrets)}`
  const all = `${texts.join(" ")} ${codesOf(response.body)}`.toLowerCase()
  const status = response.status
  if (status === 429 || /throttle|too many requests/.test(all)) {
    return publishError("rate_limit", message, retryAfterSeconds(response.headers, texts.join(" "), nowMillis))
  }
  if (status >= 500 || all.includes("unable to obtain activity")) return publishError("transient", message)
  if (status === 426 || /version .*not active|nonexistent_version|version_missing/.test(all)) {
    // A configuration problem: retrying with the same version header cannot succeed.
    return publishError("permanent", `${message} (${ApiVersions.raiseHint("linkedin", version)})`)
  }
  if (
    status === 401 || /invalid_access_token|expired_access_token|revoked_access_token/.test(all) ||
    (status === 403 && !all.includes("duplicate"))
  ) {
    return publishError("auth", message)
  }
  if (all.includes("duplicate")) return publishError("duplicate", message)
  if (/too long|exceeds|maximum length|max length|length .*commentary|commentary .*length/.test(all)) {
    return publishError("too_long", message)
  }
  if (
    context === "upload" || status === 413 ||
    /urn:li:(image|video|document)|processing_failed|media|multiimage|image|video|document/.test(all)
  ) {
    return publishError("media", message)
  }
  return publishError("permanent", message)
}

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

/** The Posts API visibility for the `visibility` setting; `PUBLIC` unless set. */
export const visibilityOf = (value: unknown): "PUBLIC" | "CONNECTIONS" | "LOGGED_IN" =>
  value === "CONNECTIONS" ? "CONNECTIONS" : value === "LOGGED_IN_MEMBERS" || value === "LOGGED_IN" ? "LOGGED_IN" : "PUBLIC"

interface UploadInstruction {
  readonly uploadUrl: string
  readonly firstByte: number
  readonly lastByte: number
}

/** Pages of 100 posts `findPublished` reads before it gives up. */
export const lookupMaxPages = 10

export const make = (options: Options = {}): Effect.Effect<PlatformClient, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const client = HttpClient.withTracerDisabledWhen(yield* HttpClient.HttpClient, () => true)
    const api = trimSlash(options.apiUrl ?? defaultApiUrl)
    const version = options.version ?? defaultVersion
    const mediaGrace = options.mediaGrace ?? "2 seconds"
    const mediaPollInterval = options.mediaPollInterval ?? "1 second"
    const mediaMaxPolls = options.mediaMaxPolls ?? 60
    const videoPollInterval = options.videoPollInterval ?? "3 seconds"
    const videoMaxPolls = options.videoMaxPolls ?? 200

    const unexpected = (what: string) => publishError("transient", `LinkedIn: unexpected ${what} response`)

    /** One authenticated call; a non-2xx answer is an `ApiFailure`. */
    const call = (
      token: string,
      request: HttpClientRequest.HttpClientRequest
    ): Effect.Effect<RawResponse, ApiFailure | PublishError> =>
      Effect.gen(function*() {
        const response = yield* send(client, request.pipe(HttpClientRequest.bearerToken(token)), label)
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
            (now) => Effect.fail(classify(failure.response, context, now, [token], version))
          ))
      )

    /** A versioned `/rest/*` call. */
    const rest = (
      token: string,
      context: Context,
      request: HttpClientRequest.HttpClientRequest
    ): Effect.Effect<RawResponse, PublishError> =>
      classified(
        token,
        context,
        request.pipe(
          HttpClientRequest.acceptJson,
          HttpClientRequest.setHeaders({
            "LinkedIn-Version": version,
            "X-Restli-Protocol-Version": restliProtocolVersion
          })
        )
      )

    /** A PUT of streamed bytes (the whole file, or one part of a video). */
    const putBytes = (token: string, url: string, body: HttpBody.HttpBody) =>
      classified(token, "upload", HttpClientRequest.put(url).pipe(HttpClientRequest.setBody(body)))

    /** An image or a PDF document: initialize, then the whole file in one PUT. Returns its URN. */
    const uploadSimple = (token: string, author: string, kind: "image" | "document", body: HttpBody.HttpBody) =>
      Effect.gen(function*() {
        const resource = kind === "document" ? "documents" : "images"
        const init = yield* rest(
          token,
          "upload",
          HttpClientRequest.post(`${api}/rest/${resource}`).pipe(
            HttpClientRequest.setUrlParam("action", "initializeUpload"),
            HttpClientRequest.bodyUnsafeJson({ initializeUploadRequest: { owner: author } })
          )
        )
        const value = field(init.body, "value")
        const uploadUrl = stringField(value, "uploadUrl")
        const urn = stringField(value, kind)
        if (uploadUrl === undefined || urn === undefined) return yield* unexpected(`${resource} initializeUpload`)
        yield* putBytes(token, uploadUrl, body)
        return urn
      })

    /**
     * Waits for an image or document to be `AVAILABLE` (Images/Documents API `status`). A read LinkedIn
     * refuses (other than a rate limit or an outage) falls back to the grace pause.
     */
    const awaitAsset = (token: string, kind: "image" | "document", name: string, urn: string) =>
      Effect.gen(function*() {
        const resource = kind === "document" ? "documents" : "images"
        for (let poll = 0;; poll++) {
          const read = yield* Effect.either(
            rest(token, "upload", HttpClientRequest.get(`${api}/rest/${resource}/${encodeURIComponent(urn)}`))
          )
          if (read._tag === "Left") {
            if (read.left.kind === "transient" || read.left.kind === "rate_limit") return yield* read.left
            yield* Effect.logInfo(`LinkedIn: the status of ${name} cannot be read (${read.left.message}); waiting instead`)
            return yield* Effect.sleep(mediaGrace)
          }
          const status = stringField(read.right.body, "status")
          if (status === "AVAILABLE") return
          if (status === "PROCESSING_FAILED") {
            return yield* publishError("media", `LinkedIn: ${name} was rejected: processing failed`)
          }
          if (poll + 1 >= mediaMaxPolls) {
            return yield* publishError("transient", `LinkedIn: ${name} is still processing`)
          }
          yield* Effect.sleep(mediaPollInterval)
        }
      })

    /** Waits for LinkedIn to finish processing a video (`AVAILABLE`). */
    const awaitVideo = (token: string, media: MediaRef, urn: string) =>
      Effect.gen(function*() {
        for (let poll = 0;; poll++) {
          const response = yield* rest(
            token,
            "upload",
            HttpClientRequest.get(`${api}/rest/videos/${encodeURIComponent(urn)}`)
          )
          const status = stringField(response.body, "status")
          if (status === "AVAILABLE") return
          if (status === "PROCESSING_FAILED") {
            const reason = stringField(response.body, "processingFailureReason") ?? "processing failed"
            return yield* publishError("media", scrub(`LinkedIn: ${media.filename} was rejected: ${reason}`, [token]))
          }
          if (poll >= videoMaxPolls) {
            return yield* publishError("transient", `LinkedIn: ${media.filename} is still processing`)
          }
          yield* Effect.sleep(videoPollInterval)
        }
      })

    /** A video: initialize with its size, PUT each byte range, finalize with the ETags, wait for processing. */
    const uploadVideo = (token: string, author: string, media: MediaRef) =>
      Effect.gen(function*() {
        const init = yield* rest(
          token,
          "upload",
          HttpClientRequest.post(`${api}/rest/videos`).pipe(
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
          const response = yield* putBytes(
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
        yield* rest(
          token,
          "upload",
          HttpClientRequest.post(`${api}/rest/videos`).pipe(
            HttpClientRequest.setUrlParam("action", "finalizeUpload"),
            HttpClientRequest.bodyUnsafeJson({
              finalizeUploadRequest: { video: urn, uploadToken, uploadedPartIds: etags }
            })
          )
        )
        yield* awaitVideo(token, media, urn)
        return urn
      })

    const uploadMedia = (token: string, author: string, media: MediaRef) =>
      Effect.gen(function*() {
        return media.kind === "video"
          ? yield* uploadVideo(token, author, media)
          : yield* uploadSimple(token, author, media.kind === "document" ? "document" : "image", MediaBytes.body(media))
      })

    /** An image's `altText` (LinkedIn takes up to 4086 characters); none for videos and documents. */
    const altTextOf = (medium: MediaRef): { readonly altText?: string } =>
      medium.kind === "image" && medium.altText !== undefined && medium.altText.trim() !== ""
        ? { altText: medium.altText.slice(0, maxAltText) }
        : {}

    const contentOf = (part: PublishPart, urns: ReadonlyArray<string>): Record<string, unknown> | undefined => {
      if (urns.length === 0) return undefined
      if (urns.length === 1) {
        const medium = part.media[0]!
        // A document needs a title; LinkedIn shows it above the carousel.
        const title = medium.kind === "document" ? medium.filename.replace(/\.pdf$/i, "") : undefined
        return { media: title === undefined ? { id: urns[0], ...altTextOf(medium) } : { id: urns[0], title } }
      }
      return { multiImage: { images: urns.map((id, i) => ({ id, ...altTextOf(part.media[i]!) })) } }
    }

    /**
     * The article card of a post without media whose text carries a link: the page's title and
     * description, and its image uploaded through the Images API as the thumbnail. LinkedIn reads no
     * page itself (its Posts API takes the card as sent). A thumbnail LinkedIn will not take leaves the
     * card without one; a page that gives no card leaves a plain text post.
     */
    const articleOf = (token: string, author: string, text: string) =>
      Effect.gen(function*() {
        const fetcher = options.linkCards
        if (fetcher === undefined) return undefined
        const found = yield* LinkPreview.ofText(fetcher, text, { label, thumb: thumbRules })
        if (Option.isNone(found)) return undefined
        const card = found.value
        const thumbnail = yield* Option.match(card.thumb, {
          onNone: () => Effect.succeed(undefined),
          onSome: (thumb) =>
            Effect.gen(function*() {
              const urn = yield* uploadSimple(token, author, "image", HttpBody.uint8Array(thumb.bytes, thumb.mimeType))
              yield* awaitAsset(token, "image", "the link preview's image", urn)
              return urn
            }).pipe(
              Effect.catchAll((error) =>
                Effect.as(Effect.logInfo(`LinkedIn: the link preview goes without its image (${error.message})`), undefined)
              )
            )
        })
        return {
          article: {
            source: card.uri,
            // LinkedIn requires a title; a page that names none is shown by its host.
            title: card.title !== "" ? card.title : new URL(card.uri).hostname,
            ...(card.description === "" ? {} : { description: card.description }),
            ...(thumbnail === undefined ? {} : { thumbnail })
          }
        }
      })

    const createPost = (
      token: string,
      author: string,
      part: PublishPart,
      urns: ReadonlyArray<string>,
      visibility: string,
      article: Record<string, unknown> | undefined
    ): Effect.Effect<string, PublishError> =>
      Effect.gen(function*() {
        const body: Record<string, unknown> = {
          author,
          commentary: escapeLittleText(part.content),
          visibility,
          distribution: { feedDistribution: "MAIN_FEED", targetEntities: [], thirdPartyDistributionChannels: [] },
          lifecycleState: "PUBLISHED",
          isReshareDisabledByAuthor: false
        }
        const content = contentOf(part, urns) ?? article
        if (content !== undefined) body["content"] = content
        const response = yield* rest(
          token,
          "post",
          HttpClientRequest.post(`${api}/rest/posts`).pipe(HttpClientRequest.bodyUnsafeJson(body))
        )
        const urn = response.headers["x-restli-id"] ?? response.headers["x-linkedin-id"]
        if (urn === undefined || urn === "") {
          // The post is out but unnamed: a retry would post it twice.
          return yield* publishError("permanent", "LinkedIn: the post was accepted without an id (x-restli-id)")
        }
        return urn
      })

    const createComment = (token: string, author: string, post: string, text: string) =>
      rest(
        token,
        "comment",
        HttpClientRequest.post(`${api}/rest/socialActions/${encodeURIComponent(post)}/comments`).pipe(
          HttpClientRequest.bodyUnsafeJson({ actor: author, object: post, message: { text } })
        )
      )

    const publish = (request: PublishRequest): Effect.Effect<PublishResult, PublishError> =>
      Effect.gen(function*() {
        const stored = Redacted.value(request.credentials)
        const token = stored["access_token"] ?? ""
        if (token === "") return yield* publishError("auth", "LinkedIn: the stored credentials lack an access token")
        const userId = stored["user_id"] ?? ""
        const author = stored["author_urn"] ?? (userId === "" ? "" : `urn:li:person:${userId}`)
        if (author === "") return yield* publishError("auth", "LinkedIn: the stored credentials lack the author URN")

        const comment = textSetting(request.settings, "firstComment")
        const visibility = visibilityOf(request.settings["visibility"])

        const problem = checkMedia(request.main.media)
        if (problem !== undefined) return yield* problem
        const urns: Array<string> = []
        for (const media of request.main.media) urns.push(yield* uploadMedia(token, author, media))
        for (const [index, media] of request.main.media.entries()) {
          if (media.kind !== "video") {
            yield* awaitAsset(token, media.kind === "document" ? "document" : "image", media.filename, urns[index]!)
          }
        }

        const article = request.main.media.length === 0
          ? yield* articleOf(token, author, request.main.content)
          : undefined
        const post = yield* createPost(token, author, request.main, urns, visibility, article)

        return {
          platformPostId: post,
          platformPostUrl: postUrl(post),
          // Run by the engine once the post is recorded, outside the publish deadline.
          ...(comment === undefined
            ? {}
            : { followUps: Effect.asVoid(afterPublished(label, "first comment", createComment(token, author, post, comment))) })
        } satisfies PublishResult
      })

    /**
     * `GET /rest/socialActions/{urn}`: `likesSummary.totalLikes` and
     * `commentsSummary.totalFirstLevelComments`. LinkedIn serves a member's post only to apps granted
     * `r_member_social` (restricted), a page's to `r_organization_social`; without it the answer is
     * 403, an `auth` failure the sweep just records.
     */
    const socialActionCounts = (token: string, platformPostId: string, permission: string) =>
      Effect.gen(function*() {
        const response = yield* rest(
          token,
          "metrics",
          HttpClientRequest.get(`${api}/rest/socialActions/${encodeURIComponent(platformPostId)}`)
        ).pipe(
          Effect.mapError((error) =>
            isAccessDenied(error)
              ? publishError("auth", `${error.message} (reading a post's counts needs LinkedIn's ${permission} permission)`)
              : error
          )
        )
        const count = (summary: string, key: string) =>
          Math.max(0, Math.floor(numberField(field(response.body, summary), key) ?? 0))
        return new Metrics({
          views: 0,
          likes: count("likesSummary", "totalLikes"),
          comments: count("commentsSummary", "totalFirstLevelComments"),
          shares: 0,
          impressions: 0,
          saves: 0,
          clicks: 0
        })
      })

    /**
     * A page post's lifetime counts: `GET /rest/organizationalEntityShareStatistics` for the page, the
     * post named in `shares=List(…)` (a share) or `ugcPosts=List(…)` (a ugcPost, as video posts are),
     * Rest.li list syntax with the URN URL-encoded inside
     * (learn.microsoft.com/linkedin/marketing/community-management/organizations/share-statistics).
     * LinkedIn serves it to page administrators of apps granted `rw_organization_admin`, for posts of
     * the last 12 months.
     */
    const pageStatistics = (token: string, organization: string, platformPostId: string) =>
      Effect.gen(function*() {
        const list = platformPostId.startsWith("urn:li:ugcPost:") ? "ugcPosts" : "shares"
        const response = yield* rest(
          token,
          "metrics",
          HttpClientRequest.get(
            `${api}/rest/organizationalEntityShareStatistics?q=organizationalEntity` +
              `&organizationalEntity=${encodeURIComponent(organization)}` +
              `&${list}=List(${encodeURIComponent(platformPostId)})`
          )
        )
        const elements = field(response.body, "elements")
        const element = (Array.isArray(elements) ? elements : []).find((e) =>
          stringField(e, list === "shares" ? "share" : "ugcPost") === platformPostId
        )
        if (element === undefined) {
          return yield* publishError("permanent", "LinkedIn: no statistics for this post (LinkedIn keeps them for 12 months)")
        }
        const stats = field(element, "totalShareStatistics")
        const count = (key: string) => Math.max(0, Math.floor(numberField(stats, key) ?? 0))
        return new Metrics({
          views: 0,
          likes: count("likeCount"),
          comments: count("commentCount"),
          shares: count("shareCount"),
          impressions: count("impressionCount"),
          saves: 0,
          clicks: count("clickCount")
        })
      })

    /**
     * A post's counts. A page's post (the account's author is an organization): its share statistics
     * (impressions, clicks, likes, comments, shares); where LinkedIn refuses them (a role other than
     * administrator), the likes and comments of `socialActions`. A member's post: `socialActions` only;
     * member posts have no views, impressions, shares or clicks without LinkedIn's partner programs.
     */
    const metrics = (credentials: Credentials, platformPostId: string): Effect.Effect<Metrics, PublishError> =>
      Effect.gen(function*() {
        const stored = Redacted.value(credentials)
        const token = stored["access_token"] ?? ""
        if (token === "") return yield* publishError("auth", "LinkedIn: the stored credentials lack an access token")
        const author = stored["author_urn"] ?? ""
        if (!isOrganization(author)) return yield* socialActionCounts(token, platformPostId, "r_member_social")
        return yield* pageStatistics(token, author, platformPostId).pipe(
          Effect.catchIf(isAccessDenied, (error) =>
            Effect.zipRight(
              Effect.logInfo(`LinkedIn: the page's share statistics were refused (${error.message}); reading likes and comments`),
              socialActionCounts(token, platformPostId, "r_organization_social")
            ))
        )
      })

    /**
     * Whether an attempt reached LinkedIn: the author's posts (`GET /rest/posts?q=author`, newest created
     * first, 100 a page) until past the window, matched by the commentary as sent (escaped as at
     * publish). An error or a rate limit fails the lookup (the engine keeps the outcome unknown).
     */
    const findPublished = (lookup: PublishedLookup): Effect.Effect<PublishedAnswer, PublishError> =>
      Effect.gen(function*() {
        const stored = Redacted.value(lookup.credentials)
        const token = stored["access_token"] ?? ""
        if (token === "") return yield* publishError("auth", "LinkedIn: the stored credentials lack an access token")
        const userId = stored["user_id"] ?? ""
        const author = stored["author_urn"] ?? (userId === "" ? "" : `urn:li:person:${userId}`)
        if (author === "") return yield* publishError("auth", "LinkedIn: the stored credentials lack the author URN")
        const window = Lookup.windowOf(lookup)
        const wanted = { ...lookup, content: escapeLittleText(lookup.content) }
        const candidates: Array<Lookup.Candidate> = []
        const count = 100
        for (let page = 0; page < lookupMaxPages; page++) {
          const response = yield* rest(
            token,
            "metrics",
            HttpClientRequest.get(`${api}/rest/posts`).pipe(
              HttpClientRequest.setUrlParams({
                q: "author",
                author,
                sortBy: "CREATED",
                start: String(page * count),
                count: String(count)
              })
            )
          )
          const elements = field(response.body, "elements")
          const items = Array.isArray(elements) ? elements : []
          let pastWindow = false
          for (const item of items) {
            const id = stringField(item, "id")
            const at = numberField(item, "createdAt") ?? Number.NaN
            if (id === undefined) continue
            if (at < window.since) pastWindow = true
            if (!Lookup.inWindow(window, at)) continue
            candidates.push({ id, url: postUrl(id), text: stringField(item, "commentary") ?? "" })
          }
          if (pastWindow || items.length < count) return Lookup.answerFrom(wanted, candidates, label)
        }
        return Lookup.tooMany(label, lookupMaxPages * count)
      })

    return {
      platform: "linkedin",
      publish,
      metrics,
      findPublished,
      timeout: "20 minutes"
    } satisfies PlatformClient
  })
