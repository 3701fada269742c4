/**
 * What a composer needs to know about each platform before a post is sent (GET /platform-rules),
 * generated from the very tables POST /posts validates with: `TextLimits` (caption and first comment
 * limits), `PlatformSettings` (settings, content types), `PlatformRules` (threads) and `MediaRules`
 * (types, sizes, counts, required media). Pure.
 */
import type { MediaKind } from "../domain/Media.js"
import * as MediaRules from "../media/MediaRules.js"
import type { Platform } from "../domain/Platform.js"
import { platforms } from "../domain/Platform.js"
import * as PlatformRules from "../platforms/PlatformRules.js"
import * as PlatformSettings from "../platforms/PlatformSettings.js"
import * as TextLimits from "../platforms/TextLimits.js"

export interface TextLimitRule {
  readonly limit: number
  readonly unit: TextLimits.TextLimit["unit"]
  /** `always`, or only for a post without media (`text_only`) or with media (`with_media`). */
  readonly applies: "always" | "text_only" | "with_media"
  readonly description: string | null
}

export interface CaptionRule {
  /** The main limit (a text post's). */
  readonly limit: number
  readonly unit: TextLimits.TextLimit["unit"]
  readonly description: string | null
  /** Every limit the text must meet, the main one first. */
  readonly limits: ReadonlyArray<TextLimitRule>
}

export interface MediaSizes {
  readonly image: number | null
  readonly gif: number | null
  readonly video: number | null
  readonly document: number | null
}

export interface MediaRule {
  readonly required: { readonly media: "any" | "video"; readonly description: string } | null
  readonly types: ReadonlyArray<string>
  readonly kinds: ReadonlyArray<MediaKind>
  readonly max_items: number | null
  readonly max_images: number | null
  readonly alone: ReadonlyArray<MediaRules.AloneKind>
  readonly documents_apart: boolean
  /** The largest file of each kind the platform takes (its cap or Herald's, the lower); null: not taken. */
  readonly max_bytes: MediaSizes
  /** Still image types the platform does not take that Herald sends as a JPEG rendition. */
  readonly converted_types: ReadonlyArray<string>
  /** Feed images outside this range are letterboxed (or cropped with settings.mediaFit "crop"). */
  readonly aspect_ratio: { readonly min: string; readonly max: string } | null
  /** The longest video the platform takes, in seconds; longer ones are refused at create time. */
  readonly max_video_seconds: number | null
}

export interface ContentTypeRule {
  readonly value: string
  readonly max_items: number
  readonly video_only: boolean
}

export type SettingRule =
  & { readonly type: PlatformSettings.SettingType["type"]; readonly required: boolean }
  & {
    readonly values?: ReadonlyArray<string>
    readonly max_length?: number
    readonly forbidden_characters?: ReadonlyArray<string>
    readonly minimum?: number
    readonly unit?: string
    readonly default?: string | number | boolean
    readonly description?: string
  }

export interface PlatformRule {
  readonly platform: Platform
  readonly caption: CaptionRule
  /** A published post needs some text or some media on every platform. */
  readonly requires_text_or_media: true
  readonly media: MediaRule
  readonly content_types: ReadonlyArray<ContentTypeRule> | null
  readonly default_content_type: string | null
  readonly settings: Readonly<Record<string, SettingRule>>
  /** `threadPosts` are published as a thread of replies. */
  readonly threads: boolean
  /** `settings.firstComment` is posted after publishing. */
  readonly first_comment: boolean
  /** Every limit a first comment must meet (empty where none is posted). */
  readonly first_comment_limits: ReadonlyArray<TextLimitRule>
}

const textLimit = (limit: TextLimits.TextLimit, applies: TextLimitRule["applies"]): TextLimitRule => ({
  limit: limit.limit,
  unit: limit.unit,
  applies,
  description: limit.description ?? null
})

const caption = (platform: Platform): CaptionRule => {
  const textOnly = TextLimits.textLimits(platform, false)
  const withMedia = TextLimits.textLimits(platform, true)
  const main = TextLimits.captionLimits[platform]
  return {
    limit: main.limit,
    unit: main.unit,
    description: main.description ?? null,
    limits: [
      ...textOnly.map((l) => textLimit(l, withMedia.includes(l) ? "always" : "text_only")),
      ...withMedia.filter((l) => !textOnly.includes(l)).map((l) => textLimit(l, "with_media"))
    ]
  }
}

const media = (platform: Platform): MediaRule => {
  const types = MediaRules.acceptedTypes[platform]
  const structure = MediaRules.mediaStructure[platform]
  const kinds = [...new Set(types.map(MediaRules.kindOf))]
  const largest = (mimeType: MediaRules.MediaType): number | null => {
    if (!types.includes(mimeType)) return null
    const kind = MediaRules.kindOf(mimeType)
    const own = MediaRules.maxBytes(kind)
    const cap = MediaRules.platformMaxBytes(platform, { kind, mimeType })
    return cap === undefined ? own : Math.min(own, cap)
  }
  /** Of the accepted types of `kind` (other than GIF), the largest allowed file. */
  const ofKind = (kind: MediaKind): number | null => {
    const sizes = types.filter((t) => t !== "image/gif" && MediaRules.kindOf(t) === kind).map(largest)
      .filter((n): n is number => n !== null)
    return sizes.length === 0 ? null : Math.max(...sizes)
  }
  return {
    required: structure.required ?? null,
    types,
    kinds,
    max_items: structure.maxItems ?? null,
    max_images: structure.maxImages ?? null,
    alone: structure.alone,
    documents_apart: structure.documentsApart ?? false,
    max_bytes: {
      image: ofKind("image"),
      gif: largest("image/gif"),
      video: ofKind("video"),
      document: ofKind("document")
    },
    converted_types: types.includes("image/jpeg")
      ? MediaRules.supportedMediaTypes.filter((t) =>
        t !== "image/gif" && MediaRules.kindOf(t) === "image" && !types.includes(t)
      )
      : [],
    aspect_ratio: ratioRange(MediaRules.platformAspectRatios[platform]),
    max_video_seconds: MediaRules.platformMaxVideoMs[platform] === undefined
      ? null
      : MediaRules.platformMaxVideoMs[platform]! / 1000
  }
}

const ratioRange = (range: MediaRules.AspectRange | undefined): MediaRule["aspect_ratio"] =>
  range === undefined
    ? null
    : { min: `${range.min.width}:${range.min.height}`, max: `${range.max.width}:${range.max.height}` }

const setting = (spec: PlatformSettings.SettingSpec): SettingRule => {
  const common = {
    required: spec.required ?? false,
    ...(spec.default === undefined ? {} : { default: spec.default }),
    ...(spec.description === undefined ? {} : { description: spec.description })
  }
  switch (spec.type) {
    case "enum":
      return { type: spec.type, values: spec.values, ...common }
    case "string":
      return {
        type: spec.type,
        ...(spec.maxLength === undefined ? {} : { max_length: spec.maxLength }),
        ...(spec.forbiddenCharacters === undefined ? {} : { forbidden_characters: spec.forbiddenCharacters }),
        ...common
      }
    case "integer":
      return { type: spec.type, minimum: spec.minimum, unit: spec.unit, ...common }
    case "url":
      return { type: spec.type, ...(spec.maxLength === undefined ? {} : { max_length: spec.maxLength }), ...common }
    default:
      return { type: spec.type, ...common }
  }
}

export const describePlatform = (platform: Platform): PlatformRule => {
  const specs = PlatformSettings.settingSpecs[platform]
  const types = PlatformSettings.contentTypes[platform]
  const typeMedia = MediaRules.mediaStructure[platform].contentTypes ?? {}
  return {
    platform,
    caption: caption(platform),
    requires_text_or_media: true,
    media: media(platform),
    content_types: types === undefined ? null : types.map((value) => ({
      value,
      max_items: typeMedia[value]?.maxItems ?? MediaRules.mediaStructure[platform].maxItems ?? 0,
      video_only: typeMedia[value]?.video === true
    })),
    default_content_type: types === undefined
      ? null
      : `${MediaRules.instagramContentType(undefined, [{ kind: "video", mimeType: "video/mp4" }])} for exactly one ` +
        `video, else ${MediaRules.instagramContentType(undefined, [])}`,
    settings: Object.fromEntries(Object.entries(specs).map(([key, spec]) => [key, setting(spec)])),
    threads: PlatformRules.threadPlatforms.includes(platform),
    first_comment: Object.hasOwn(specs, "firstComment"),
    first_comment_limits: Object.hasOwn(specs, "firstComment")
      ? (TextLimits.firstCommentLimits[platform] ?? []).map((l) => textLimit(l, "always"))
      : []
  }
}

/** Every platform's rules, keyed by platform value. */
export const describeAll = (): Readonly<Record<Platform, PlatformRule>> =>
  Object.fromEntries(platforms.map((p) => [p, describePlatform(p)])) as Record<Platform, PlatformRule>
