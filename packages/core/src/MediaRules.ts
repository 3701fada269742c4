/**
 * Media policy, pure: the supported types and their kind, the size caps of the spec's
 * `file_too_large`, the declared-versus-detected type check of `file_type_mismatch`, and what each
 * platform accepts in one post (formats, counts, mixing, per-file sizes). No I/O.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { DomainError } from "./Errors.js"
import type { MediaKind } from "./Media.js"
import type { Platform } from "./Platform.js"
import { threadPlatforms, validationError } from "./PlatformRules.js"
import type { Issue } from "./PlatformRules.js"
import type { PlatformContent } from "./Post.js"

// ---------------------------------------------------------------------------------------------------
// Types and sizes
// ---------------------------------------------------------------------------------------------------

/** One mebibyte. Every "MB" of the spec's size caps is read as 1,048,576 bytes (the lenient reading). */
export const MiB = 1024 * 1024

/** The MIME types Herald stores, with their kind. */
export const mediaTypes = {
  "image/jpeg": "image",
  "image/png": "image",
  "image/gif": "image",
  "image/webp": "image",
  "video/mp4": "video",
  "video/quicktime": "video",
  "video/webm": "video",
  "application/pdf": "document"
} as const satisfies Record<string, MediaKind>

export type MediaType = keyof typeof mediaTypes

export const supportedMediaTypes = Object.keys(mediaTypes) as ReadonlyArray<MediaType>

export const isMediaType = (value: string): value is MediaType => Object.hasOwn(mediaTypes, value)

export const kindOf = (type: MediaType): MediaKind => mediaTypes[type]

/**
 * Caps per kind: images 20 MiB and video 500 MiB (the spec's `file_too_large`), documents 100 MiB
 * (LinkedIn's document limit, the only platform that posts PDFs as such).
 */
export const maxBytes = (kind: MediaKind): number => {
  switch (kind) {
    case "image":
      return 20 * MiB
    case "video":
      return 500 * MiB
    case "document":
      return 100 * MiB
  }
}

/** Other names clients and detectors give the supported types. */
const aliases: Readonly<Record<string, MediaType>> = {
  "image/jpg": "image/jpeg",
  "image/pjpeg": "image/jpeg",
  "image/x-png": "image/png",
  // An animated PNG is a PNG (file-type reports APNG when an acTL chunk precedes the image data).
  "image/apng": "image/png",
  // M4V is Apple's MP4 brand; file-type reports `video/x-m4v` for it.
  "video/x-m4v": "video/mp4",
  "application/x-pdf": "application/pdf"
}

/** Lower-cased, parameters (`; charset=…`) dropped, aliases resolved. */
export const normalizeMimeType = (raw: string): string => {
  const bare = raw.split(";")[0]!.trim().toLowerCase()
  return aliases[bare] ?? bare
}

const byExtension: Readonly<Record<string, MediaType>> = {
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  jpe: "image/jpeg",
  jfif: "image/jpeg",
  png: "image/png",
  apng: "image/png",
  gif: "image/gif",
  webp: "image/webp",
  mp4: "video/mp4",
  m4v: "video/mp4",
  mov: "video/quicktime",
  qt: "video/quicktime",
  webm: "video/webm",
  pdf: "application/pdf"
}

/** The type a filename's extension names, if it names a supported one. */
export const typeFromFilename = (filename: string): MediaType | undefined => {
  const dot = filename.lastIndexOf(".")
  if (dot < 0) return undefined
  return byExtension[filename.slice(dot + 1).toLowerCase()]
}

/** Content types that say nothing; the filename's extension decides instead. */
const unspecific = new Set(["", "application/octet-stream", "binary/octet-stream"])

// ---------------------------------------------------------------------------------------------------
// Upload checks
// ---------------------------------------------------------------------------------------------------

export interface Declaration {
  readonly filename: string
  readonly contentType: string
  readonly size: number
}

export interface DeclaredMedia {
  readonly filename: string
  readonly mimeType: MediaType
  readonly kind: MediaKind
  readonly size: number
}

export const maxFilenameLength = 255

const controlCharacters = /[\u0000-\u001f\u007f]/

const kindNames: Readonly<Record<MediaKind, string>> = { image: "images", video: "videos", document: "documents" }

/** `file_too_large` for `kind`; also what a blob store's `BlobTooLarge` becomes at the API. */
export const fileTooLarge = (kind: MediaKind, size?: number): DomainError =>
  DomainError.of(
    "file_too_large",
    `The file is too large: ${kindNames[kind]} may be at most ${maxBytes(kind) / MiB} MB (${maxBytes(kind)} bytes)`,
    { kind, max_bytes: maxBytes(kind), ...(size === undefined ? {} : { size }) }
  )

/** `file_too_large` when `size` is over the cap of `kind`. */
export const checkSize = (kind: MediaKind, size: number): Either.Either<number, DomainError> =>
  size > maxBytes(kind) ? Either.left(fileTooLarge(kind, size)) : Either.right(size)

/**
 * The supported type a content type names (`unsupported_media_type` otherwise); an empty or
 * `application/octet-stream` content type falls back to the filename's extension.
 */
export const checkType = (
  contentType: string,
  filename: string
): Either.Either<{ readonly mimeType: MediaType; readonly kind: MediaKind }, DomainError> => {
  const normalized = normalizeMimeType(contentType)
  const type = unspecific.has(normalized) ? typeFromFilename(filename) : normalized
  if (type === undefined || !isMediaType(type)) {
    return Either.left(DomainError.of(
      "unsupported_media_type",
      `Unsupported media type ${contentType === "" ? "(none)" : contentType}; supported: ${
        supportedMediaTypes.join(", ")
      }`,
      { content_type: contentType, supported_types: supportedMediaTypes }
    ))
  }
  return Either.right({ mimeType: type, kind: kindOf(type) })
}

/**
 * Checks what a client declares before any byte is stored: a usable filename (1–255 characters,
 * no control characters), a positive integer size, a supported type (`unsupported_media_type`; an
 * empty or `application/octet-stream` content type falls back to the filename's extension) and the
 * size cap of its kind (`file_too_large`).
 */
export const checkDeclared = (declaration: Declaration): Either.Either<DeclaredMedia, DomainError> => {
  const { contentType, filename, size } = declaration
  if (filename.trim() === "" || filename.length > maxFilenameLength || controlCharacters.test(filename)) {
    return Either.left(DomainError.of(
      "validation_error",
      `filename: Expected 1 to ${maxFilenameLength} characters without control characters`,
      { validation_errors: [{ path: "filename", message: "Expected 1 to 255 characters without control characters" }] }
    ))
  }
  if (!Number.isSafeInteger(size) || size < 1) {
    return Either.left(DomainError.of(
      "validation_error",
      "size: Expected a positive integer number of bytes",
      { validation_errors: [{ path: "size", message: "Expected a positive integer number of bytes" }] }
    ))
  }
  return Either.flatMap(
    checkType(contentType, filename),
    ({ kind, mimeType }) => Either.map(checkSize(kind, size), () => ({ filename, mimeType, kind, size }))
  )
}

/**
 * Compares the declared type with the one detected from the bytes (`undefined`: not recognised).
 * They must name the same type after aliases: `image/apng` is `image/png`, `video/x-m4v` is
 * `video/mp4`. MP4 and QuickTime are different containers (file-type reports `video/quicktime` for
 * the `qt  ` brand and for files opening with a bare `moov`/`mdat`/`free`/`wide` box), so a `.mov`
 * declared as `video/mp4`, or the reverse, is a mismatch.
 */
export const checkDetected = (
  declared: MediaType,
  detected: string | undefined
): Either.Either<MediaType, DomainError> => {
  const actual = detected === undefined ? undefined : normalizeMimeType(detected)
  if (actual === declared) return Either.right(declared)
  return Either.left(DomainError.of(
    "file_type_mismatch",
    actual === undefined
      ? `The file's content is not recognisable as ${declared}`
      : `The file's content is ${actual}, not the declared ${declared}`,
    { declared_type: declared, detected_type: actual ?? null }
  ))
}

// ---------------------------------------------------------------------------------------------------
// What each platform accepts in one post
// ---------------------------------------------------------------------------------------------------

export interface PostMedium {
  readonly kind: MediaKind
  readonly mimeType: string
  /** Bytes; when given, the platform's per-file cap is checked too. */
  readonly size?: number
}

export type CheckMode = "draft" | "publish"

/** A problem with a post's media on one platform. `path` points at `media_ids` or one of its items. */
export interface MediaIssue extends Issue {
  readonly platform: Platform
}

const all = supportedMediaTypes

/** The types each platform takes, from the platform reference (§ Limits of each platform). */
export const acceptedTypes: Readonly<Record<Platform, ReadonlyArray<MediaType>>> = {
  x: ["image/jpeg", "image/png", "image/webp", "image/gif", "video/mp4", "video/quicktime"],
  bluesky: ["image/jpeg", "image/png", "image/webp", "video/mp4"],
  // The Graph API takes JPEG only for images; anything else fails at publish time with 2207005.
  instagram: ["image/jpeg", "video/mp4", "video/quicktime"],
  threads: ["image/jpeg", "image/png", "video/mp4", "video/quicktime"],
  facebook: ["image/jpeg", "image/png", "image/gif", "video/mp4", "video/quicktime"],
  linkedin: ["image/jpeg", "image/png", "image/gif", "video/mp4", "application/pdf"],
  tiktok: ["video/mp4", "video/webm", "video/quicktime"],
  youtube: ["video/mp4", "video/quicktime", "video/webm"],
  pinterest: ["image/jpeg", "image/png", "image/webp", "video/mp4", "video/quicktime"],
  telegram: all,
  discord: all
}

/**
 * Per-file caps below Herald's own, where the reference states them. "MB" is read as MiB (lenient),
 * except Bluesky's image cap, which the reference gives in bytes.
 */
export const platformMaxBytes = (platform: Platform, medium: PostMedium): number | undefined => {
  const gif = normalizeMimeType(medium.mimeType) === "image/gif"
  switch (platform) {
    case "x":
      return medium.kind === "video" ? 512 * MiB : gif ? 15 * MiB : medium.kind === "image" ? 5 * MiB : undefined
    case "bluesky":
      return medium.kind === "image" ? 1_000_000 : medium.kind === "video" ? 100 * MiB : undefined
    case "instagram":
      return medium.kind === "image" ? 8 * MiB : medium.kind === "video" ? 300 * MiB : undefined
    case "threads":
      return medium.kind === "image" ? 8 * MiB : undefined
    case "telegram":
      // Uploaded photos 10 MB, any other uploaded file 50 MB (the Bot API's multipart cap).
      return medium.kind === "image" && !gif ? 10 * MiB : 50 * MiB
    case "discord":
      return 10 * MiB
    default:
      return undefined
  }
}

/** Instagram's `contentType`, defaulting as the spec says: `Reels` for one video, else `Post`. */
export const instagramContentType = (contentType: string | undefined, media: ReadonlyArray<PostMedium>): string =>
  contentType ?? (media.length === 1 && media[0]!.kind === "video" ? "Reels" : "Post")

/** Counting and mixing rules, as messages. */
const structureProblems = (
  platform: Platform,
  contentType: string | undefined,
  media: ReadonlyArray<PostMedium>,
  mode: CheckMode
): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const count = media.length
  const videos = media.filter((m) => m.kind === "video").length
  const documents = media.filter((m) => m.kind === "document").length
  const gifs = media.filter((m) => normalizeMimeType(m.mimeType) === "image/gif").length
  const images = media.filter((m) => m.kind === "image").length
  const required = mode === "publish"
  switch (platform) {
    case "x":
      if (videos + gifs > 0 && count > 1) {
        problems.push("x: a video or a GIF must be the post's only medium (up to 4 images, or 1 video, or 1 GIF)")
      } else if (images > 4) problems.push(`x: at most 4 images per post (${images} given)`)
      break
    case "bluesky":
      if (videos > 0 && count > 1) {
        problems.push("bluesky: a video must be the post's only medium (up to 4 images, or 1 video)")
      } else if (images > 4) problems.push(`bluesky: at most 4 images per post (${images} given)`)
      break
    case "instagram": {
      if (count === 0) {
        if (required) problems.push("instagram requires media: an image or a video")
        break
      }
      const type = instagramContentType(contentType, media)
      if (type === "Reels" || type === "Trial Reel") {
        if (count !== 1 || videos !== 1) problems.push(`instagram: a ${type} post takes exactly one video`)
      } else if (type === "Story") {
        if (count > 1) problems.push("instagram: a Story takes exactly one image or video")
      } else if (count > 10) {
        problems.push(`instagram: a carousel takes at most 10 items (${count} given)`)
      }
      break
    }
    case "threads":
      if (count > 20) problems.push(`threads: a carousel takes at most 20 items (${count} given)`)
      break
    case "facebook":
      if (videos > 0 && count > 1) problems.push("facebook: a video must be the post's only medium")
      break
    case "linkedin":
      if (documents > 0 && count > 1) problems.push("linkedin: a PDF document must be the post's only medium")
      else if (videos > 0 && count > 1) problems.push("linkedin: a video must be the post's only medium")
      else if (images > 20) problems.push(`linkedin: at most 20 images per post (${images} given)`)
      break
    case "tiktok":
    case "youtube":
      if (count === 0) {
        if (required) problems.push(`${platform} requires one video`)
      } else if (count > 1) problems.push(`${platform}: a post takes exactly one video (${count} media given)`)
      break
    case "pinterest":
      if (count === 0) {
        if (required) problems.push("pinterest requires an image or a video")
      } else if (videos > 0 && count > 1) problems.push("pinterest: a video must be the Pin's only medium")
      else if (images > 5) problems.push(`pinterest: at most 5 images per Pin (${images} given)`)
      break
    case "telegram":
      if (count > 1 && documents > 0 && documents < count) {
        problems.push("telegram: documents cannot be grouped with photos or videos in one post")
      }
      break
    case "discord":
      break
  }
  return problems
}

/**
 * The problems of one post's media on `platform`: each medium's type (and size, when given) against
 * what the platform takes, then counts and mixing. `publish` also requires the media a platform
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
  const accepted = acceptedTypes[platform]
  for (const [i, medium] of media.entries()) {
    const type = normalizeMimeType(medium.mimeType)
    if (!accepted.some((t) => t === type)) {
      const sameKind = accepted.filter((t) => mediaTypes[t] === medium.kind)
      issues.push({
        platform,
        path: `${path}.${i}`,
        message: sameKind.length === 0
          ? `${platform} does not take ${kindNames[medium.kind]}`
          : `${platform} does not take ${type} ${kindNames[medium.kind]}; it takes ${sameKind.join(", ")}`
      })
      continue
    }
    const cap = platformMaxBytes(platform, medium)
    if (medium.size !== undefined && cap !== undefined && medium.size > cap) {
      issues.push({
        platform,
        path: `${path}.${i}`,
        message: `${platform} takes files of at most ${cap} bytes for this type (${medium.size} given)`
      })
    }
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
 * Checks a post's media on every targeted platform; all problems in one `validation_error`
 * (`details.validation_errors[]{path, message, platform}`), like the content rules.
 */
export const check = (input: PostMediaInput): Effect.Effect<void, DomainError> => {
  const issues: Array<MediaIssue> = []
  for (const platform of new Set(input.platforms)) {
    const contentType = input.platformContent[platform]?.contentType
    issues.push(...postMediaIssues(platform, contentType, input.media, { mode: input.mode }))
    if (threadPlatforms.includes(platform)) {
      for (const [i, part] of (input.threadMedia ?? []).entries()) {
        const path = `threadPosts.${i}.media_ids`
        issues.push(...postMediaIssues(platform, undefined, part, { mode: "draft", path }))
      }
    }
  }
  return issues.length === 0 ? Effect.void : Effect.fail(validationError(issues))
}
