/**
 * Media policy, pure: the supported types and their kind, the size caps of the spec's
 * `file_too_large`, the declared-versus-detected type check of `file_type_mismatch`, and what each
 * platform accepts in one post (formats, counts, mixing, per-file sizes). No I/O. The checks of a
 * post's media against these tables are `PostMediaRules`.
 */
import * as Either from "effect/Either"
import { DomainError } from "../kernel/Errors.js"
import type { MediaKind } from "../domain/Media.js"
import type { Platform } from "../domain/Platform.js"
import type { Issue } from "../platforms/PlatformRules.js"

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

/**
 * Pixels an image may have: 64,000,000 in all (a 50 MP phone or a 45 MP camera photo passes; a
 * "pixel bomb" of a few KB that decodes to gigabytes does not) and 20,000 on either side. Checked
 * from the header when the bytes arrive, and again as the decoder's own limit when a rendition is made.
 */
export const maxImagePixels = 64_000_000
export const maxImageSide = 20_000

const grouped = (n: number): string => n.toLocaleString("en-US")

/** `file_too_large` for an image whose pixel size is over `maxImagePixels` or `maxImageSide`. */
export const checkPixels = (width: number, height: number): Either.Either<void, DomainError> =>
  width * height <= maxImagePixels && width <= maxImageSide && height <= maxImageSide
    ? Either.void
    : Either.left(DomainError.of(
      "file_too_large",
      `The image is too large: ${grouped(width)} x ${grouped(height)} pixels; images may have at most ` +
        `${grouped(maxImagePixels)} pixels and ${grouped(maxImageSide)} pixels on a side`,
      { kind: "image", width, height, max_pixels: maxImagePixels, max_side: maxImageSide }
    ))

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
  /** A video's duration when known; checked against `platformMaxVideoMs`. */
  readonly durationMs?: number
  /** `false` when Herald has no public URL to give the platform for it (no public origin configured). */
  readonly hasPublicUrl?: boolean
}

/**
 * Whether a platform can only take this medium from a public URL (the platform fetches it itself):
 * Threads and Instagram, for every medium (Instagram's resumable upload is documented only for
 * Facebook Login for Business apps on graph.facebook.com; Herald connects Instagram with Instagram
 * Login); TikTok for images, since its photo posts take only `PULL_FROM_URL`
 * (developers.tiktok.com/doc/content-posting-api-reference-photo-post).
 */
export const needsPublicUrl = (platform: Platform, medium: PostMedium): boolean =>
  platform === "threads" || platform === "instagram" || (platform === "tiktok" && medium.kind === "image")

/**
 * The media a platform would have to fetch from a public URL that Herald cannot give it: one issue
 * per medium, naming `HERALD_MEDIA_PUBLIC_URL`, so the post is refused when made rather than failing
 * at publish.
 */
export const publicUrlIssues = (
  platform: Platform,
  media: ReadonlyArray<PostMedium>,
  path: string
): ReadonlyArray<MediaIssue> =>
  media.flatMap((medium, i) =>
    medium.hasPublicUrl === false && needsPublicUrl(platform, medium)
      ? [{
        platform,
        path: `${path}.${i}`,
        message: `${platform} fetches ${medium.kind === "video" ? "videos" : "images"} from a public URL, and ` +
          "this server has no public media origin; set HERALD_MEDIA_PUBLIC_URL (or save the post as a draft)"
      }]
      : []
  )

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
  // Photo posts take JPEG and WebP (TikTok's media transfer guide); PNG goes as a JPEG rendition.
  tiktok: ["image/jpeg", "image/webp", "video/mp4", "video/webm", "video/quicktime"],
  youtube: ["video/mp4", "video/quicktime", "video/webm"],
  pinterest: ["image/jpeg", "image/png", "image/webp", "video/mp4", "video/quicktime"],
  telegram: all,
  discord: all
}

/** Per-file caps by kind; a GIF takes the `gif` cap when given, else the `image` one. */
export interface SizeCaps {
  readonly image?: number
  readonly gif?: number
  readonly video?: number
  readonly document?: number
}

/**
 * Per-file caps below Herald's own, where the reference states them. "MB" is read as MiB (lenient),
 * except Bluesky's image cap, which the reference gives in bytes.
 */
export const platformSizeCaps: Readonly<Partial<Record<Platform, SizeCaps>>> = {
  x: { image: 5 * MiB, gif: 15 * MiB, video: 512 * MiB },
  bluesky: { image: 1_000_000, video: 100 * MiB },
  instagram: { image: 8 * MiB, video: 300 * MiB },
  threads: { image: 8 * MiB },
  tiktok: { image: 20 * MiB },
  // Uploaded photos 10 MB, any other uploaded file 50 MB (the Bot API's multipart cap).
  telegram: { image: 10 * MiB, gif: 50 * MiB, video: 50 * MiB, document: 50 * MiB },
  discord: { image: 10 * MiB, video: 10 * MiB, document: 10 * MiB }
}

/** A width:height ratio as the platform states it (4:5, 1.91:1). */
export interface Ratio {
  readonly width: number
  readonly height: number
}

/** The aspect ratios a platform takes for still images, inclusive. */
export interface AspectRange {
  readonly min: Ratio
  readonly max: Ratio
}

export const ratioValue = (ratio: Ratio): number => ratio.width / ratio.height

/**
 * Aspect ratios of feed images where the reference states them: Instagram feed posts and carousels
 * 4:5 (portrait) to 1.91:1 (landscape); outside it the Graph API refuses the image at publish time.
 */
export const platformAspectRatios: Readonly<Partial<Record<Platform, AspectRange>>> = {
  instagram: { min: { width: 4, height: 5 }, max: { width: 1.91, height: 1 } }
}

/**
 * The longest video each platform takes, in milliseconds, where the platform reference states it:
 * X 140 s, Bluesky 3 min, Threads 5 min, Pinterest 15 min, LinkedIn 30 min. A video whose duration
 * Herald could read (MP4/QuickTime with the moov box up front) and that is longer is refused at
 * create time; one whose duration is unknown is left to the platform.
 */
export const platformMaxVideoMs: Readonly<Partial<Record<Platform, number>>> = {
  x: 140_000,
  bluesky: 180_000,
  threads: 300_000,
  pinterest: 900_000,
  linkedin: 1_800_000
}

export const platformMaxBytes = (platform: Platform, medium: PostMedium): number | undefined => {
  const caps = platformSizeCaps[platform]
  if (caps === undefined) return undefined
  return normalizeMimeType(medium.mimeType) === "image/gif" ? caps.gif ?? caps.image : caps[medium.kind]
}

/** Instagram's `contentType`, defaulting as the spec says: `Reels` for one video, else `Post`. */
export const instagramContentType = (contentType: string | undefined, media: ReadonlyArray<PostMedium>): string =>
  contentType ?? (media.length === 1 && media[0]!.kind === "video" ? "Reels" : "Post")

/** Media that must be a post's only medium. */
export type AloneKind = "video" | "gif" | "document"

/** How many media of a content type a post takes (`video`: exactly one video). */
export interface ContentTypeMedia {
  readonly maxItems: number
  readonly video?: true
}

/**
 * What one post on a platform may carry, as data: `postMediaIssues` interprets it and
 * GET /platform-rules publishes it. Checks run in this order and stop at the first problem: required
 * media (none given), the content type's own rule, documents apart, kinds alone, images, items.
 */
export interface MediaStructure {
  /** What a published post must carry (`draft` requires nothing). */
  readonly required?: { readonly media: "any" | "video"; readonly description: string }
  /** Kinds that must be the post's only medium, checked in this order. */
  readonly alone: ReadonlyArray<AloneKind>
  readonly maxImages?: number
  /** Most media in one post (a carousel, or exactly one). */
  readonly maxItems?: number
  /** Documents may be grouped together but not with photos or videos. */
  readonly documentsApart?: boolean
  /** Per `contentType` rules, replacing `maxItems` (the type defaults by `instagramContentType`). */
  readonly contentTypes?: Readonly<Record<string, ContentTypeMedia>>
}

/** The platform reference's counts and mixing rules (§ Limits of each platform). */
export const mediaStructure: Readonly<Record<Platform, MediaStructure>> = {
  x: { alone: ["video", "gif"], maxImages: 4 },
  bluesky: { alone: ["video"], maxImages: 4 },
  instagram: {
    required: { media: "any", description: "media: an image or a video" },
    alone: [],
    maxItems: 10,
    contentTypes: {
      Post: { maxItems: 10 },
      Reels: { maxItems: 1, video: true },
      Story: { maxItems: 1 },
      "Trial Reel": { maxItems: 1, video: true }
    }
  },
  threads: { alone: [], maxItems: 20 },
  facebook: { alone: ["video"] },
  linkedin: { alone: ["document", "video"], maxImages: 20 },
  // One video, or a photo post of 1 to 35 images (developers.tiktok.com/doc/content-posting-api-reference-photo-post).
  tiktok: { required: { media: "any", description: "one video or 1 to 35 images" }, alone: ["video"], maxImages: 35 },
  youtube: { required: { media: "video", description: "one video" }, alone: [], maxItems: 1 },
  pinterest: { required: { media: "any", description: "an image or a video" }, alone: ["video"], maxImages: 5 },
  telegram: { alone: [], documentsApart: true },
  discord: { alone: [] }
}
