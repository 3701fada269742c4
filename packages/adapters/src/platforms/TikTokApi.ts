/**
 * What TikTok's Content Posting API says, apart from the calls: the client's options and limits
 * (chunk sizes, photo count, page sizes), how an error body is classified, the creator info, and the
 * post, profile and listed-video URLs.
 */
import type { PublishError, PublishErrorKind } from "@herald/core/platforms/Platforms"
import type * as Duration from "effect/Duration"
import {
  failure,
  failureReason,
  field,
  numberField,
  type RawResponse,
  secondsHeader,
  stringField
} from "./internal/PlatformHttp.js"

export interface Options {
  /** `https://open.tiktokapis.com` unless a fake is used (shared with the OAuth calls). */
  readonly apiUrl?: string
  /** Chunk size for files larger than it, clamped to TikTok's 5–64 MB; 10,000,000 bytes. */
  readonly chunkSize?: number
  /** Pause between `status/fetch` polls; 5 seconds. */
  readonly pollInterval?: Duration.DurationInput
  /** Polls before a post still processing is reported published anyway; 120. */
  readonly maxPolls?: number
}

export const defaultApiUrl = "https://open.tiktokapis.com"
/**
 * TikTok's chunk bounds, "at least 5 MB but no greater than 64 MB", read strictly whichever MB is meant
 * (5 MiB and 64,000,000 bytes).
 */
export const minChunk = 5 * 1024 * 1024
export const maxChunk = 64_000_000
/** The chunk size used: well inside the bounds, so the last chunk (at most twice it) stays under 128 MB. */
export const defaultChunk = 10_000_000

export const privacyLevels = [
  "PUBLIC_TO_EVERYONE",
  "MUTUAL_FOLLOW_FRIENDS",
  "FOLLOWER_OF_CREATOR",
  "SELF_ONLY"
] as const

export const label = "TikTok"

/** Images in one photo post (TikTok's `photo_images`). */
export const maxPhotos = 35

/** The fields `video/query` is asked for. */
export const metricsFields = "id,view_count,like_count,comment_count,share_count"
/** Video ids per `video/query` call (TikTok's maximum). */
export const metricsBatchSize = 20

/** The fields `video/list` is asked for by `findPublished`. */
export const lookupFields = "id,create_time,video_description,title,share_url"
/** Videos per `video/list` page (TikTok's maximum). */
export const lookupPageSize = 20
/** Pages of `video/list` `findPublished` reads before it gives up. */
export const lookupMaxPages = 5

const parsedUrl = (text: string): URL | undefined => {
  try {
    return new URL(text)
  } catch {
    return undefined
  }
}

/**
 * A listed video's page without the tracking parameters TikTok appends to `share_url`; built from the
 * account's name when TikTok gives none.
 */
export const listedUrl = (shareUrl: string | undefined, username: string, id: string): string => {
  const url = shareUrl === undefined ? undefined : parsedUrl(shareUrl)
  if (url?.protocol === "https:") return `${url.origin}${url.pathname}`
  return username === "" ? profileUrl(username) : postUrl(username, "video", id)
}

/** How TikTok's `FILE_UPLOAD` chunking splits a file of `size` bytes. */
export const chunkPlan = (size: number, chunkSize: number): { readonly chunkSize: number; readonly count: number } => {
  const chunk = Math.min(maxChunk, Math.max(minChunk, Math.floor(chunkSize)))
  return size <= chunk ? { chunkSize: size, count: 1 } : { chunkSize: chunk, count: Math.floor(size / chunk) }
}

export const codeKinds: ReadonlyMap<string, PublishErrorKind> = new Map<string, PublishErrorKind>([
  ["access_token_invalid", "auth"],
  ["scope_not_authorized", "auth"],
  ["scope_permission_missed", "auth"],
  ["rate_limit_exceeded", "rate_limit"],
  ["spam_risk_too_many_posts", "rate_limit"],
  ["spam_risk_too_many_pending_share", "rate_limit"],
  ["reached_active_user_cap", "rate_limit"],
  ["spam_risk_text", "permanent"],
  ["spam_risk_user_banned_from_posting", "permanent"],
  ["unaudited_client_can_only_post_to_private_accounts", "permanent"],
  ["privacy_level_option_mismatch", "permanent"],
  ["url_ownership_unverified", "permanent"],
  ["invalid_params", "permanent"],
  ["file_format_check_failed", "media"],
  ["duration_check_failed", "media"],
  ["frame_rate_check_failed", "media"],
  ["video_pull_failed", "media"],
  ["photo_pull_failed", "media"],
  ["picture_size_check_failed", "media"],
  ["invalid_file_upload", "media"],
  ["internal_error", "transient"]
])

/** A failed call as one of the reference's classes (§11 Errors), by TikTok's `error.code`. */
export const classify = (response: RawResponse, secrets: ReadonlyArray<string | undefined>): PublishError => {
  const error = field(response.body, "error")
  const code = stringField(error, "code") ?? (typeof error === "string" ? error : undefined)
  const text = stringField(error, "message") ?? stringField(response.body, "error_description")
  const reason = failureReason(response, [text, code].filter((t): t is string => t !== undefined && t !== ""))
  if (code === "unaudited_client_can_only_post_to_private_accounts") {
    return failure(
      label,
      "permanent",
      `${reason}. This TikTok app has not passed TikTok's audit yet, and until it does TikTok only accepts ` +
        "posts with settings.privacyLevel SELF_ONLY to private accounts",
      secrets
    )
  }
  if (code === "url_ownership_unverified") {
    return failure(
      label,
      "permanent",
      `${reason}. TikTok pulls photo-post images only from a domain or URL prefix verified for this app: ` +
        "verify the origin of HERALD_MEDIA_PUBLIC_URL under the app's URL properties in TikTok's developer portal",
      secrets
    )
  }
  const kind = (code === undefined ? undefined : codeKinds.get(code)) ??
    (response.status === 429
      ? "rate_limit"
      : response.status === 401
      ? "auth"
      : response.status >= 500
      ? "transient"
      : response.status === 403
      ? "auth"
      : "permanent")
  return failure(
    label,
    kind,
    reason,
    secrets,
    kind === "rate_limit" ? secondsHeader(response.headers, "retry-after") ?? 60 : undefined
  )
}

/** What `creator_info/query` tells about the account. */
export interface CreatorInfo {
  readonly username: string | undefined
  readonly privacyLevels: ReadonlyArray<string>
  readonly commentDisabled: boolean
  readonly duetDisabled: boolean
  readonly stitchDisabled: boolean
  readonly maxDurationSeconds: number | undefined
}

export const creatorInfoOf = (body: unknown): CreatorInfo => {
  const data = field(body, "data")
  const levels = field(data, "privacy_level_options")
  return {
    username: stringField(data, "creator_username"),
    privacyLevels: Array.isArray(levels) ? levels.filter((l): l is string => typeof l === "string") : [],
    commentDisabled: field(data, "comment_disabled") === true,
    duetDisabled: field(data, "duet_disabled") === true,
    stitchDisabled: field(data, "stitch_disabled") === true,
    maxDurationSeconds: numberField(data, "max_video_post_duration_sec")
  }
}

/**
 * The first `publicaly_available_post_id` (TikTok's spelling), read from the raw body: the ids are bare
 * JSON numbers of 19 digits, which `JSON.parse` would round.
 */
export const publicPostId = (text: string): string | undefined =>
  /"publicaly_available_post_id"\s*:\s*\[\s*"?(\d+)/.exec(text)?.[1]

/**
 * A post's page: `/video/{id}` for a video, `/photo/{id}` for a photo post. TikTok's examples name the
 * publish id of a photo post `p_pub_…` and a video's `v_pub_…`, which is how a post known only by its
 * publish id is told apart when its public id arrives.
 */
export const postUrl = (username: string, kind: "video" | "photo", id: string): string =>
  `https://www.tiktok.com/@${username}/${kind}/${id}`

export const kindOfPublishId = (publishId: string): "video" | "photo" => publishId.startsWith("p_") ? "photo" : "video"

export const profileUrl = (username: string | undefined): string =>
  username === undefined || username === "" ? "https://www.tiktok.com/" : `https://www.tiktok.com/@${username}`
