/**
 * A TikTok fake on open.tiktokapis.com (reference §11, §13): Login Kit's `/v2/oauth/token/` (code with
 * PKCE verifier, refresh) and `/v2/user/info/` (which refuses fields the granted scopes do not cover:
 * `username` needs `user.info.profile`, as TikTok answers `scope_not_authorized`), and the Content
 * Posting API: `creator_info/query`, `video/init` with `FILE_UPLOAD` checked against TikTok's chunk
 * rules, `PUT {upload_url}` per chunk (206, then 201 when complete), and `status/fetch` answering
 * PROCESSING_UPLOAD for `processingPolls` polls, then PUBLISH_COMPLETE with `publicaly_available_post_id`;
 * `video/query` (scope `video.list`) answers `videoCounts` for the asked fields of published videos.
 * `video/list` (scope `video.list`) lists the account's public videos newest first (the published
 * public ones and `listed`), `max_count` a page, older than `cursor` (milliseconds), as the Display API
 * does: only the asked fields, `create_time` in seconds, `video_description` at most 150 characters.
 * Photo posts: `content/init` with `media_type: PHOTO` and `PULL_FROM_URL` (URLs must start with one of
 * `verifiedUrlPrefixes`, else 403 `url_ownership_unverified`), then `status/fetch` answering
 * PROCESSING_DOWNLOAD, then PUBLISH_COMPLETE (`#fail-processing` in the description: FAILED
 * `photo_pull_failed`).
 * Bodies are `{data, error:{code,message,log_id}}`.
 *
 * TikTok publishes no machine-readable description, so the documented rules the client relies on are
 * encoded here (`rules`, each with its page): the Direct Post request (headers, required fields, enums,
 * lengths, booleans, branded content never private), the photo post request (fields, lengths, 1 to 35
 * URLs, cover index), the creator's privacy options, and the media
 * transfer guide's chunk rules (sizes, count, sequence, `Content-Type`/`Content-Range`, a declared
 * `Content-Length` matching the chunk). A request that breaks one is answered `invalid_params` and
 * recorded in `rules.violations`.
 *
 * Injected by caption: `#fail-rate` 429 rate_limit_exceeded, `#fail-spam` spam_risk_too_many_posts,
 * `#fail-500` internal_error, `#fail-processing` FAILED with file_format_check_failed. `unaudited` makes
 * every non-SELF_ONLY init fail as TikTok does for unaudited apps; `creator` sets what creator_info says.
 */
import { createHash, randomBytes } from "node:crypto"
import { lengthMatches, Rulebook } from "./DocumentedRules.js"
import * as FakeServer from "./FakeServer.js"

const directPost = "https://developers.tiktok.com/doc/content-posting-api-reference-direct-post"
const mediaTransfer = "https://developers.tiktok.com/doc/content-posting-api-media-transfer-guide"
const sharingGuidelines = "https://developers.tiktok.com/doc/content-sharing-guidelines"
const creatorInfo = "https://developers.tiktok.com/doc/content-posting-api-reference-query-creator-info"
const photoPost = "https://developers.tiktok.com/doc/content-posting-api-reference-photo-post"
const videoList = "https://developers.tiktok.com/doc/tiktok-api-v2-video-list"
const videoObject = "https://developers.tiktok.com/doc/tiktok-api-v2-video-object"
/** The fields of TikTok's video object (videoObject). */
const videoObjectFields = [
  "id",
  "create_time",
  "cover_image_url",
  "share_url",
  "video_description",
  "duration",
  "height",
  "width",
  "title",
  "embed_html",
  "embed_link",
  "like_count",
  "comment_count",
  "share_count",
  "view_count"
]
/** The fields of a photo post's `post_info` (photoPost). */
const photoPostInfoFields = [
  "title",
  "description",
  "privacy_level",
  "disable_comment",
  "auto_add_music",
  "brand_content_toggle",
  "brand_organic_toggle"
]
/** TikTok's "MB", read strictly: at least 5 MiB, at most 64,000,000 bytes (128,000,000 for the last chunk). */
const minChunk = 5 * 1024 * 1024
const maxChunk = 64_000_000
const maxLastChunk = 128_000_000
const privacyLevels = ["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"]
const videoTypes = ["video/mp4", "video/quicktime", "video/webm"]

export const clientKey = "awfaketiktokclientkey"
export const clientSecret = "tiktok-client-secret-0123456789"
export const openId = "-000fakeOpenIdAbCdEf"
export const username = "herald.tok"
export const mb = 1024 * 1024

export interface Creator {
  privacy_level_options: Array<string>
  comment_disabled: boolean
  duet_disabled: boolean
  stitch_disabled: boolean
  max_video_post_duration_sec: number
}

export interface Upload {
  readonly publishId: string
  readonly postInfo: Record<string, unknown>
  readonly sourceInfo: { video_size: number; chunk_size: number; total_chunk_count: number }
  readonly chunks: Array<string>
  received: Uint8Array
  polls: number
  /** The public post id: 19 digits, beyond a double's precision, sent as a bare JSON number as TikTok does. */
  postId: string | undefined
  /** When the public id was given (the video's `create_time`, in milliseconds). */
  createdAt?: number
}

/** A photo post (`content/init`, `media_type: PHOTO`): TikTok pulls its images from their URLs. */
export interface PhotoPost {
  readonly publishId: string
  readonly postMode: string
  readonly postInfo: Record<string, unknown>
  readonly photoImages: ReadonlyArray<string>
  readonly coverIndex: number
  polls: number
  postId: string | undefined
  createdAt?: number
}

/** A public video `video/list` answers besides those published through the fake (another app's, the app's). */
export interface ListedVideo {
  readonly id: string
  /** Seconds since the epoch, as TikTok gives it. */
  readonly create_time: number
  readonly video_description: string
  readonly title: string
  readonly share_url: string
}

export interface TikTokFake {
  readonly server: FakeServer.FakeServer
  readonly uploads: Array<Upload>
  readonly photos: Array<PhotoPost>
  /**
   * The URL prefixes verified for the app (TikTok pulls only from a verified domain or URL prefix);
   * `https://media.herald.example/` unless changed.
   */
  readonly verifiedUrlPrefixes: Array<string>
  /** Access tokens issued, with the scopes granted. */
  readonly tokens: Map<string, ReadonlyArray<string>>
  /** Codes the authorize step would have issued, with their PKCE challenge and the scopes granted. */
  readonly issueCode: (scopes: ReadonlyArray<string>, codeChallenge: string) => string
  /** A token granted the publishing and video.list scopes, for tests that skip the connect. */
  readonly accessToken: string
  creator: Creator
  /** Replies served, in order, to the next `video/query` calls instead of the counts. */
  readonly videoQueryFailures: Array<FakeServer.Reply>
  /** Public videos `video/list` answers besides the ones published through the fake. */
  readonly listed: Array<ListedVideo>
  /** Replies served, in order, to the next `video/list` calls instead of the page. */
  readonly videoListFailures: Array<FakeServer.Reply>
  unaudited: boolean
  processingPolls: number
  /** `status/fetch` answers after PUBLISH_COMPLETE without the public id (moderation still running); 0. */
  moderationPolls: number
  /** The documented rules checked on every request, and the requests that broke them. */
  readonly rules: Rulebook
}

/** What `video/query` answers for every published video. */
export const videoCounts = { view_count: 5300, like_count: 410, comment_count: 37, share_count: 22 }

export const tiktokError = (status: number, code: string, message: string): FakeServer.Reply => ({
  status,
  body: { data: {}, error: { code, message, log_id: `2026112300${randomBytes(6).toString("hex")}` } }
})

const ok = (data: unknown): FakeServer.Reply => ({
  status: 200,
  body: { data, error: { code: "ok", message: "", log_id: `2026112300${randomBytes(6).toString("hex")}` } }
})

export const invalidToken = tiktokError(
  401,
  "access_token_invalid",
  "The access token is invalid or not found in the request."
)

export const start = async (): Promise<TikTokFake> => {
  const rules = new Rulebook()
  const uploads: Array<Upload> = []
  const photos: Array<PhotoPost> = []
  const tokens = new Map<string, ReadonlyArray<string>>()
  const codes = new Map<string, { scopes: ReadonlyArray<string>; challenge: string }>()
  const refreshTokens = new Map<string, ReadonlyArray<string>>()
  let next = 7300000000000000000n

  const issueTokens = (scopes: ReadonlyArray<string>) => {
    const access = `act.${randomBytes(24).toString("hex")}`
    const refresh = `rft.${randomBytes(24).toString("hex")}`
    tokens.set(access, scopes)
    refreshTokens.set(refresh, scopes)
    return {
      access_token: access,
      expires_in: 86400,
      open_id: openId,
      refresh_token: refresh,
      refresh_expires_in: 31536000,
      scope: scopes.join(","),
      token_type: "Bearer"
    }
  }

  const handler = (request: FakeServer.Recorded): FakeServer.Reply => {
    if (request.path === "/v2/oauth/token/" && request.method === "POST") {
      const form = request.form
      if (form?.get("client_key") !== clientKey || form.get("client_secret") !== clientSecret) {
        return {
          status: 400,
          body: { error: "invalid_client", error_description: "Client key or secret is incorrect." }
        }
      }
      if (form.get("grant_type") === "refresh_token") {
        const scopes = refreshTokens.get(String(form.get("refresh_token")))
        if (scopes === undefined) {
          return {
            status: 400,
            body: { error: "invalid_grant", error_description: "Refresh token is invalid or expired." }
          }
        }
        return { status: 200, body: issueTokens(scopes) }
      }
      const code = codes.get(String(form.get("code")))
      const verifier = String(form.get("code_verifier") ?? "")
      const challenge = createHash("sha256").update(verifier).digest("base64url")
      if (code === undefined || code.challenge !== challenge) {
        return { status: 400, body: { error: "invalid_grant", error_description: "Authorization code is expired." } }
      }
      codes.delete(String(form.get("code")))
      return { status: 200, body: issueTokens(code.scopes) }
    }

    const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1]
    const upload = /^\/upload\/([^/]+)$/.exec(request.path)
    if (upload !== null && request.method === "PUT") {
      const target = uploads.find((u) => u.publishId === upload[1])
      if (target === undefined) return tiktokError(404, "invalid_params", "Upload URL not found")
      const range = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(request.headers["content-range"] ?? "")
      const headerBroken = rules.first(request, [
        [range !== null, {
          rule: "Content-Range: bytes {FIRST_BYTE}-{LAST_BYTE}/{TOTAL_BYTE_LENGTH} is required",
          source: mediaTransfer
        }],
        [
          videoTypes.includes((request.headers["content-type"] ?? "").split(";")[0]!.trim()),
          {
            rule: "Content-Type is the video's MIME type (video/mp4, video/quicktime or video/webm)",
            source: mediaTransfer
          }
        ],
        [
          request.headers["content-length"] !== undefined && lengthMatches(request),
          { rule: "Content-Length is the byte size of this chunk", source: mediaTransfer }
        ]
      ])
      if (headerBroken !== undefined || range === null) return tiktokError(400, "invalid_params", headerBroken ?? "")
      const [first, last, total] = [Number(range[1]), Number(range[2]), Number(range[3])]
      const { chunk_size, total_chunk_count, video_size } = target.sourceInfo
      const index = target.chunks.length
      const expectedLast = index === total_chunk_count - 1 ? video_size - 1 : first + chunk_size - 1
      const chunkBroken = rules.first(request, [
        [
          total === video_size && first === target.received.length && first === index * chunk_size &&
          last === expectedLast && request.body.length === last - first + 1,
          { rule: "File chunks must be uploaded sequentially, each as declared at init", source: mediaTransfer }
        ]
      ])
      if (chunkBroken !== undefined) return tiktokError(400, "invalid_file_upload", chunkBroken)
      const out = new Uint8Array(target.received.length + request.body.length)
      out.set(target.received)
      out.set(request.body, target.received.length)
      target.received = out
      target.chunks.push(request.headers["content-range"]!)
      return { status: target.received.length === video_size ? 201 : 206 }
    }

    if (token === undefined || !tokens.has(token)) return invalidToken
    const scopes = tokens.get(token)!

    if (request.path === "/v2/user/info/" && request.method === "GET") {
      const fields = (request.query.get("fields") ?? "").split(",")
      if (fields.includes("username") && !scopes.includes("user.info.profile")) {
        return tiktokError(
          401,
          "scope_not_authorized",
          "The user did not authorize the scope required for completing this request."
        )
      }
      return ok({
        user: {
          open_id: openId,
          union_id: "fake-union",
          avatar_url: "https://p16-sign.tiktokcdn.com/avatar.jpeg",
          display_name: "Herald Tok",
          ...(fields.includes("username") ? { username } : {})
        }
      })
    }

    if (request.path === "/v2/video/query/" && request.method === "POST") {
      if (!scopes.includes("video.list")) {
        return tiktokError(
          401,
          "scope_not_authorized",
          "The user did not authorize the scope required for completing this request."
        )
      }
      const injected = fake.videoQueryFailures.shift()
      if (injected !== undefined) return injected
      const fields = (request.query.get("fields") ?? "").split(",").filter((f) => f !== "")
      if (fields.length === 0) return tiktokError(400, "invalid_params", "fields is required")
      const ids = (request.json as { filters?: { video_ids?: Array<unknown> } } | undefined)?.filters?.video_ids
      if (!Array.isArray(ids) || ids.length === 0 || ids.length > 20) {
        return tiktokError(400, "invalid_params", "filters.video_ids must hold 1 to 20 ids")
      }
      const videos = uploads
        .filter((u) => u.postId !== undefined && ids.includes(u.postId))
        .map((u) => {
          const full: Record<string, unknown> = { id: u.postId, ...videoCounts }
          return Object.fromEntries(fields.filter((f) => f in full).map((f) => [f, full[f]]))
        })
      return ok({ videos, cursor: 0, has_more: false })
    }

    if (request.path === "/v2/video/list/" && request.method === "POST") {
      if (!scopes.includes("video.list")) {
        return tiktokError(
          401,
          "scope_not_authorized",
          "The user did not authorize the scope required for completing this request."
        )
      }
      const injected = fake.videoListFailures.shift()
      if (injected !== undefined) return injected
      const fields = (request.query.get("fields") ?? "").split(",").filter((f) => f !== "")
      const body = (request.json ?? {}) as { cursor?: unknown; max_count?: unknown }
      const cursor = body.cursor
      const maxCount = body.max_count
      const broken = rules.first(request, [
        [
          /^application\/json\b/i.test(request.headers["content-type"] ?? ""),
          { rule: "Content-Type: application/json", source: videoList }
        ],
        [fields.length > 0, { rule: "the fields query parameter is required", source: videoList }],
        [
          fields.every((f) => videoObjectFields.includes(f)),
          { rule: `fields are among the video object's: ${videoObjectFields.join(", ")}`, source: videoObject }
        ],
        [
          cursor === undefined || (typeof cursor === "number" && Number.isSafeInteger(cursor) && cursor >= 0),
          { rule: "cursor is an int64, a UTC Unix timestamp in milliseconds", source: videoList }
        ],
        [
          maxCount === undefined ||
          (typeof maxCount === "number" && Number.isInteger(maxCount) && maxCount >= 1 && maxCount <= 20),
          { rule: "max_count is an int32, at most 20", source: videoList }
        ]
      ])
      if (broken !== undefined) return tiktokError(400, "invalid_params", broken)
      const published: Array<ListedVideo> = [...uploads, ...photos].flatMap((post) => {
        if (post.postId === undefined || post.createdAt === undefined) return []
        const kind = "photoImages" in post ? "photo" : "video"
        // A video's caption is sent as its title, a photo post's as its description.
        const caption = String((kind === "photo" ? post.postInfo["description"] : post.postInfo["title"]) ?? "")
        return [{
          id: post.postId,
          create_time: Math.floor(post.createdAt / 1000),
          video_description: caption,
          title: kind === "photo" ? String(post.postInfo["title"] ?? "") : "",
          share_url:
            `https://www.tiktok.com/@${username}/${kind}/${post.postId}?utm_campaign=tt4d_open_api&utm_source=${clientKey}`
        }]
      })
      const all = [...published, ...fake.listed]
        .filter((v) => typeof cursor !== "number" || v.create_time * 1000 < cursor)
        .sort((a, b) => b.create_time - a.create_time)
      const pageSize = typeof maxCount === "number" ? maxCount : 10
      const page = all.slice(0, pageSize)
      const last = page.at(-1)
      return ok({
        videos: page.map((v) => {
          const full: Record<string, unknown> = { ...v, video_description: v.video_description.slice(0, 150) }
          return Object.fromEntries(fields.filter((f) => f in full).map((f) => [f, full[f]]))
        }),
        cursor: last === undefined ? (typeof cursor === "number" ? cursor : 0) : last.create_time * 1000,
        has_more: all.length > page.length
      })
    }

    if (!scopes.includes("video.publish")) {
      return tiktokError(
        401,
        "scope_not_authorized",
        "The user did not authorize the scope required for completing this request."
      )
    }

    if (request.path === "/v2/post/publish/creator_info/query/" && request.method === "POST") {
      return ok({
        creator_avatar_url: "https://p16-sign.tiktokcdn.com/avatar.jpeg",
        creator_username: username,
        creator_nickname: "Herald Tok",
        ...fake.creator
      })
    }

    if (request.path === "/v2/post/publish/video/init/" && request.method === "POST") {
      const body = request.json as
        | { post_info?: Record<string, unknown>; source_info?: Record<string, unknown> }
        | undefined
      const postInfo = body?.post_info ?? {}
      const sourceInfo = body?.source_info ?? {}
      const title = typeof postInfo["title"] === "string" ? postInfo["title"] : ""
      if (title.includes("#fail-rate")) return tiktokError(429, "rate_limit_exceeded", "API rate limit was exceeded.")
      if (title.includes("#fail-spam")) {
        return tiktokError(
          403,
          "spam_risk_too_many_posts",
          "The daily post cap from the API is reached for the current user."
        )
      }
      if (title.includes("#fail-500")) {
        return tiktokError(500, "internal_error", "Something went wrong. Please try again later.")
      }
      const privacy = postInfo["privacy_level"]
      const size = Number(sourceInfo["video_size"])
      const chunk = Number(sourceInfo["chunk_size"])
      const count = Number(sourceInfo["total_chunk_count"])
      const bools = [
        "disable_comment",
        "disable_duet",
        "disable_stitch",
        "brand_content_toggle",
        "brand_organic_toggle",
        "is_aigc"
      ]
      const broken = rules.first(request, [
        [
          /^application\/json; ?charset=UTF-8$/i.test(request.headers["content-type"] ?? ""),
          { rule: "Content-Type: application/json; charset=UTF-8", source: directPost }
        ],
        [
          typeof privacy === "string" && privacyLevels.includes(privacy),
          { rule: "post_info.privacy_level is required, one of " + privacyLevels.join(", "), source: directPost }
        ],
        [title.length <= 2200, { rule: "post_info.title is at most 2200 UTF-16 runes", source: directPost }],
        [
          bools.every((key) => postInfo[key] === undefined || typeof postInfo[key] === "boolean"),
          { rule: `post_info.${bools.join(", ")} are booleans`, source: directPost }
        ],
        [
          typeof postInfo["brand_content_toggle"] === "boolean" &&
          typeof postInfo["brand_organic_toggle"] === "boolean",
          { rule: "post_info.brand_content_toggle and brand_organic_toggle are required", source: directPost }
        ],
        [
          !(postInfo["brand_content_toggle"] === true && privacy === "SELF_ONLY"),
          { rule: "Branded content cannot be posted with privacy SELF_ONLY", source: sharingGuidelines }
        ],
        [
          postInfo["video_cover_timestamp_ms"] === undefined ||
          (typeof postInfo["video_cover_timestamp_ms"] === "number" &&
            Number.isInteger(postInfo["video_cover_timestamp_ms"])),
          { rule: "post_info.video_cover_timestamp_ms is an int32", source: directPost }
        ],
        [
          sourceInfo["source"] === "FILE_UPLOAD",
          { rule: "source_info.source is FILE_UPLOAD (PULL_FROM_URL needs a verified domain)", source: directPost }
        ],
        [
          [size, chunk, count].every((n) => Number.isInteger(n) && n > 0),
          {
            rule: "source_info.video_size, chunk_size and total_chunk_count are required for FILE_UPLOAD",
            source: directPost
          }
        ],
        [
          count === Math.floor(size / chunk),
          { rule: "total_chunk_count = video_size / chunk_size rounded down", source: mediaTransfer }
        ],
        [
          size >= minChunk || chunk === size,
          { rule: "A video of less than 5 MB is uploaded whole (chunk_size = video_size)", source: mediaTransfer }
        ],
        [
          size < minChunk || (chunk >= minChunk && chunk <= maxChunk),
          { rule: "Each chunk is at least 5 MB and at most 64 MB", source: mediaTransfer }
        ],
        [size <= maxChunk || count >= 2, {
          rule: "A video over 64 MB is uploaded in several chunks",
          source: mediaTransfer
        }],
        [
          size - (count - 1) * chunk <= maxLastChunk,
          { rule: "The final chunk holds the trailing bytes, at most 128 MB", source: mediaTransfer }
        ],
        [count >= 1 && count <= 1000, { rule: "Between 1 and 1000 chunks", source: mediaTransfer }]
      ])
      if (broken !== undefined) return tiktokError(400, "invalid_params", broken)
      if (fake.unaudited && privacy !== "SELF_ONLY") {
        return tiktokError(
          403,
          "unaudited_client_can_only_post_to_private_accounts",
          "Please review our integration guidelines at https://developers.tiktok.com/doc/content-sharing-guidelines/"
        )
      }
      if (typeof privacy !== "string" || !fake.creator.privacy_level_options.includes(privacy)) {
        rules.check(request, false, {
          rule: "privacy_level is one of creator_info's privacy_level_options",
          source: creatorInfo
        })
        return tiktokError(400, "privacy_level_option_mismatch", "privacy_level is not one of the creator's options.")
      }
      const publishId = `v_pub_file~v2-1.${++next}`
      uploads.push({
        publishId,
        postInfo,
        sourceInfo: { video_size: size, chunk_size: chunk, total_chunk_count: count },
        chunks: [],
        received: new Uint8Array(0),
        polls: 0,
        postId: undefined
      })
      return ok({ publish_id: publishId, upload_url: `${server.url}/upload/${encodeURIComponent(publishId)}` })
    }

    if (request.path === "/v2/post/publish/content/init/" && request.method === "POST") {
      const body = request.json as
        | {
          media_type?: unknown
          post_mode?: unknown
          post_info?: Record<string, unknown>
          source_info?: Record<string, unknown>
        }
        | undefined
      const postInfo = body?.post_info ?? {}
      const sourceInfo = body?.source_info ?? {}
      const postMode = body?.post_mode
      const privacy = postInfo["privacy_level"]
      const title = postInfo["title"]
      const description = postInfo["description"]
      const images = sourceInfo["photo_images"]
      const cover = sourceInfo["photo_cover_index"]
      const bools = ["disable_comment", "auto_add_music", "brand_content_toggle", "brand_organic_toggle"]
      const broken = rules.first(request, [
        [
          /^application\/json; ?charset=UTF-8$/i.test(request.headers["content-type"] ?? ""),
          { rule: "Content-Type: application/json; charset=UTF-8", source: photoPost }
        ],
        [body?.media_type === "PHOTO", { rule: "media_type is PHOTO (the only value allowed)", source: photoPost }],
        [
          postMode === "DIRECT_POST" || postMode === "MEDIA_UPLOAD",
          { rule: "post_mode is DIRECT_POST or MEDIA_UPLOAD", source: photoPost }
        ],
        [
          Object.keys(postInfo).every((key) => photoPostInfoFields.includes(key)),
          { rule: `post_info of a photo post has only ${photoPostInfoFields.join(", ")}`, source: photoPost }
        ],
        [
          postMode !== "DIRECT_POST" || (typeof privacy === "string" && privacyLevels.includes(privacy)),
          {
            rule: "post_info.privacy_level is required for DIRECT_POST, one of " + privacyLevels.join(", "),
            source: photoPost
          }
        ],
        [
          title === undefined || (typeof title === "string" && title.length <= 90),
          { rule: "post_info.title is at most 90 UTF-16 runes for photo posts", source: photoPost }
        ],
        [
          description === undefined || (typeof description === "string" && description.length <= 4000),
          { rule: "post_info.description is at most 4000 UTF-16 runes for photo posts", source: photoPost }
        ],
        [
          bools.every((key) => postInfo[key] === undefined || typeof postInfo[key] === "boolean"),
          { rule: `post_info.${bools.join(", ")} are booleans`, source: photoPost }
        ],
        [
          !(postInfo["brand_content_toggle"] === true && privacy === "SELF_ONLY"),
          { rule: "Branded content cannot be posted with privacy SELF_ONLY", source: sharingGuidelines }
        ],
        [sourceInfo["source"] === "PULL_FROM_URL", {
          rule: "source_info.source is PULL_FROM_URL (the only source for photos)",
          source: photoPost
        }],
        [
          Array.isArray(images) && images.length >= 1 && images.length <= 35 &&
          images.every((u) => typeof u === "string" && /^https?:\/\/\S+$/.test(u)),
          { rule: "source_info.photo_images holds 1 to 35 photo URLs", source: photoPost }
        ],
        [
          typeof cover === "number" && Number.isInteger(cover) && cover >= 0 && Array.isArray(images) &&
          cover < images.length,
          { rule: "source_info.photo_cover_index is the index of one of photo_images", source: photoPost }
        ]
      ])
      if (broken !== undefined) return tiktokError(400, "invalid_params", broken)
      const urls = images as ReadonlyArray<string>
      if (!urls.every((url) => fake.verifiedUrlPrefixes.some((prefix) => url.startsWith(prefix)))) {
        return tiktokError(
          403,
          "url_ownership_unverified",
          "Please review our URL ownership verification rules at https://developers.tiktok.com/doc/content-posting-api-media-transfer-guide#pull_from_url"
        )
      }
      const text = typeof description === "string" ? description : ""
      if (text.includes("#fail-rate")) return tiktokError(429, "rate_limit_exceeded", "API rate limit was exceeded.")
      if (fake.unaudited && privacy !== "SELF_ONLY") {
        return tiktokError(
          403,
          "unaudited_client_can_only_post_to_private_accounts",
          "Please review our integration guidelines at https://developers.tiktok.com/doc/content-sharing-guidelines/"
        )
      }
      if (postMode === "DIRECT_POST" && !fake.creator.privacy_level_options.includes(String(privacy))) {
        rules.check(request, false, {
          rule: "privacy_level is one of creator_info's privacy_level_options",
          source: creatorInfo
        })
        return tiktokError(400, "privacy_level_option_mismatch", "privacy_level is not one of the creator's options.")
      }
      const publishId = `p_pub_url~v2.${++next}`
      photos.push({
        publishId,
        postMode: String(postMode),
        postInfo,
        photoImages: urls,
        coverIndex: cover as number,
        polls: 0,
        postId: undefined
      })
      return ok({ publish_id: publishId })
    }

    if (request.path === "/v2/post/publish/status/fetch/" && request.method === "POST") {
      const id = (request.json as { publish_id?: string } | undefined)?.publish_id
      const photo = photos.find((p) => p.publishId === id)
      if (photo !== undefined) {
        if (photo.polls++ < fake.processingPolls) return ok({ status: "PROCESSING_DOWNLOAD" })
        if (String(photo.postInfo["description"] ?? "").includes("#fail-processing")) {
          return ok({ status: "FAILED", fail_reason: "photo_pull_failed" })
        }
        if (
          photo.postId === undefined && photo.postInfo["privacy_level"] === "PUBLIC_TO_EVERYONE" &&
          photo.polls > fake.processingPolls + fake.moderationPolls
        ) {
          photo.postId = String(++next)
          photo.createdAt = Date.now()
        }
        return {
          status: 200,
          headers: { "content-type": "application/json; charset=UTF-8" },
          body: `{"data":{"status":"PUBLISH_COMPLETE","publicaly_available_post_id":[${photo.postId ?? ""}]},` +
            `"error":{"code":"ok","message":"","log_id":"2026112300abd"}}`
        }
      }
      const target = uploads.find((u) => u.publishId === id)
      if (target === undefined) return tiktokError(400, "invalid_publish_id", "publish_id does not exist")
      if (target.received.length < target.sourceInfo.video_size) return ok({ status: "PROCESSING_UPLOAD" })
      if (target.polls++ < fake.processingPolls) {
        return ok({ status: "PROCESSING_UPLOAD", uploaded_bytes: target.received.length })
      }
      const title = String(target.postInfo["title"] ?? "")
      if (title.includes("#fail-processing")) return ok({ status: "FAILED", fail_reason: "file_format_check_failed" })
      if (
        target.postId === undefined && target.postInfo["privacy_level"] === "PUBLIC_TO_EVERYONE" &&
        target.polls > fake.processingPolls + fake.moderationPolls
      ) {
        target.postId = String(++next)
        target.createdAt = Date.now()
      }
      return {
        status: 200,
        headers: { "content-type": "application/json; charset=UTF-8" },
        body: `{"data":{"status":"PUBLISH_COMPLETE","publicaly_available_post_id":[${target.postId ?? ""}],` +
          `"uploaded_bytes":${target.received.length}},"error":{"code":"ok","message":"","log_id":"2026112300abc"}}`
      }
    }

    return tiktokError(404, "invalid_params", `Unknown path ${request.path}`)
  }

  const server = await FakeServer.start(handler)
  const access = issueTokens(["user.info.basic", "user.info.profile", "video.publish", "video.upload", "video.list"])
    .access_token
  const fake: TikTokFake = {
    server,
    uploads,
    photos,
    verifiedUrlPrefixes: ["https://media.herald.example/"],
    tokens,
    issueCode: (granted, codeChallenge) => {
      const code = `code-${randomBytes(8).toString("hex")}`
      codes.set(code, { scopes: granted, challenge: codeChallenge })
      return code
    },
    accessToken: access,
    creator: {
      privacy_level_options: ["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "SELF_ONLY"],
      comment_disabled: false,
      duet_disabled: false,
      stitch_disabled: false,
      max_video_post_duration_sec: 600
    },
    videoQueryFailures: [],
    listed: [],
    videoListFailures: [],
    unaudited: false,
    processingPolls: 2,
    moderationPolls: 0,
    rules
  }
  return fake
}
