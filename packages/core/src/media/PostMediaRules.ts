/**
 * The checks of one post's media against what each platform accepts (`MediaRules`' tables): counts
 * and mixing, the media no rendition can fit (`MediaFitting.plan`), public URLs and photo covers,
 * as issues or as one `validation_error`. Pure.
 */
import * as Effect from "effect/Effect"
import { DomainError } from "../kernel/Errors.js"
import type { Platform } from "../domain/Platform.js"
import type { PlatformContent, PlatformSettings } from "../domain/Post.js"
import { threadPlatforms, validationError } from "../platforms/PlatformRules.js"
import * as MediaFitting from "./MediaFitting.js"
import {
  type AloneKind,
  type CheckMode,
  instagramContentType,
  type MediaIssue,
  mediaStructure,
  normalizeMimeType,
  type PostMedium,
  publicUrlIssues
} from "./MediaRules.js"

const aloneNames: Readonly<Record<AloneKind, string>> = { video: "a video", gif: "a GIF", document: "a PDF document" }

/** Counting and mixing rules, as messages (at most one per platform). */
const structureProblems = (
  platform: Platform,
  contentType: string | undefined,
  media: ReadonlyArray<PostMedium>,
  mode: CheckMode
): ReadonlyArray<string> => {
  const rules = mediaStructure[platform]
  const count = media.length
  const counts: Readonly<Record<AloneKind | "image", number>> = {
    video: media.filter((m) => m.kind === "video").length,
    document: media.filter((m) => m.kind === "document").length,
    gif: media.filter((m) => normalizeMimeType(m.mimeType) === "image/gif").length,
    image: media.filter((m) => m.kind === "image").length
  }
  if (count === 0) {
    return rules.required !== undefined && mode === "publish"
      ? [`${platform} requires ${rules.required.description}`]
      : []
  }
  if (rules.contentTypes !== undefined) {
    const type = instagramContentType(contentType, media)
    const rule = rules.contentTypes[type]
    if (rule !== undefined) {
      if (rule.video === true) {
        return count !== 1 || counts.video !== 1 ? [`${platform}: a ${type} post takes exactly one video`] : []
      }
      if (rule.maxItems === 1) return count > 1 ? [`${platform}: a ${type} takes exactly one image or video`] : []
      return count > rule.maxItems
        ? [`${platform}: a carousel takes at most ${rule.maxItems} items (${count} given)`]
        : []
    }
  }
  if (rules.documentsApart === true && count > 1 && counts.document > 0 && counts.document < count) {
    return [`${platform}: documents cannot be grouped with photos or videos in one post`]
  }
  for (const kind of rules.alone) {
    if (counts[kind] > 0 && count > 1) return [`${platform}: ${aloneNames[kind]} must be the post's only medium`]
  }
  if (rules.maxImages !== undefined && counts.image > rules.maxImages) {
    return [`${platform}: at most ${rules.maxImages} images per post (${counts.image} given)`]
  }
  if (rules.maxItems !== undefined && count > rules.maxItems) {
    return [
      rules.maxItems === 1
        ? `${platform}: a post takes exactly one ${
          rules.required?.media === "video" ? "video" : "medium"
        } (${count} media given)`
        : `${platform}: a carousel takes at most ${rules.maxItems} items (${count} given)`
    ]
  }
  return []
}

/**
 * The problems of one post's media on `platform`: each medium that no rendition can fit to what the
 * platform takes (`MediaFitting.plan`: a type with no conversion, a video or GIF over the cap), then
 * counts and mixing. `publish` also requires the media a platform
 * cannot post without (instagram and pinterest: some; tiktok and youtube: one video); `draft` checks
 * only what is there. `path` names the request field (`media_ids`, or a thread post's).
 */
export const postMediaIssues = (
  platform: Platform,
  contentType: string | undefined,
  media: ReadonlyArray<PostMedium>,
  options: { readonly mode?: CheckMode; readonly path?: string } = {}
): ReadonlyArray<MediaIssue> => {
  const path = options.path ?? "media_ids"
  const issues: Array<MediaIssue> = []
  for (const [i, medium] of media.entries()) {
    // A medium that a rendition can fit (another image type, too many bytes, an off ratio) passes.
    const planned = MediaFitting.plan(medium, { platform, contentType })
    if (planned._tag === "Unfit") issues.push({ platform, path: `${path}.${i}`, message: planned.message })
  }
  for (const message of structureProblems(platform, contentType, media, options.mode ?? "publish")) {
    issues.push({ platform, path, message })
  }
  return issues
}

/**
 * The same problems as `validation_error`s, one per problem, with `details{platform, path}`. The spec
 * has no media-specific code for platform rules (`unsupported_media_type` and `file_too_large` are
 * about Herald's own upload limits), so these are `validation_error`.
 */
export const checkPostMedia = (
  platform: Platform,
  contentType: string | undefined,
  media: ReadonlyArray<PostMedium>,
  mode: CheckMode = "publish"
): ReadonlyArray<DomainError> =>
  postMediaIssues(platform, contentType, media, { mode }).map((issue) =>
    DomainError.of("validation_error", `${issue.path}: ${issue.message}`, {
      platform: issue.platform,
      path: issue.path,
      validation_errors: [{ path: issue.path, message: issue.message }]
    })
  )

export interface PostMediaInput {
  /** The platforms of the targeted accounts. */
  readonly platforms: ReadonlyArray<Platform>
  readonly platformContent: PlatformContent
  readonly media: ReadonlyArray<PostMedium>
  /** The media of each thread post, checked on the platforms that publish threads. */
  readonly threadMedia?: ReadonlyArray<ReadonlyArray<PostMedium>>
  readonly mode: CheckMode
}

/**
 * TikTok's `photo_cover_index` (`settings.photoCoverIndex`, 0-based) must name one of a photo post's
 * images; TikTok would refuse the post at publish time.
 */
export const photoCoverIssues = (
  settings: PlatformSettings | undefined,
  media: ReadonlyArray<PostMedium>
): ReadonlyArray<MediaIssue> => {
  const index = settings?.["photoCoverIndex"]
  const images = media.filter((m) => m.kind === "image").length
  return typeof index === "number" && Number.isInteger(index) && images > 0 && index >= images
    ? [{
      platform: "tiktok",
      path: "platform_content.tiktok.settings.photoCoverIndex",
      message: `The cover is image ${index} (counted from 0) of a photo post of ${images} image${
        images === 1 ? "" : "s"
      }`
    }]
    : []
}

/**
 * Checks a post's media on every targeted platform; all problems in one `validation_error`
 * (`details.validation_errors[]{path, message, platform}`), like the content rules.
 */
export const check = (input: PostMediaInput): Effect.Effect<void, DomainError> => {
  const issues: Array<MediaIssue> = []
  for (const platform of new Set(input.platforms)) {
    const contentType = input.platformContent[platform]?.contentType
    issues.push(...postMediaIssues(platform, contentType, input.media, { mode: input.mode }))
    if (platform === "tiktok") issues.push(...photoCoverIssues(input.platformContent.tiktok?.settings, input.media))
    if (input.mode === "publish") issues.push(...publicUrlIssues(platform, input.media, "media_ids"))
    if (threadPlatforms.includes(platform)) {
      for (const [i, part] of (input.threadMedia ?? []).entries()) {
        const path = `threadPosts.${i}.media_ids`
        issues.push(...postMediaIssues(platform, undefined, part, { mode: "draft", path }))
        if (input.mode === "publish") issues.push(...publicUrlIssues(platform, part, path))
      }
    }
  }
  return issues.length === 0 ? Effect.void : Effect.fail(validationError(issues))
}
