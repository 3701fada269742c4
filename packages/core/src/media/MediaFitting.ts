/**
 * Fitting a medium to a platform, pure: whether it goes out as it is, through a rendition (a
 * re-encoded copy made to a `Profile`: type, byte cap, aspect ratio), or cannot be fitted at all;
 * and the `ImageRenditions` port an adapter makes renditions through. No I/O.
 *
 * Every JPEG, PNG and WebP that leaves Herald goes through a rendition, even when it already fits,
 * because only a re-encode drops its EXIF, XMP and GPS metadata (see docs/decisions/media.md, "Media
 * renditions"). GIFs go as they are where the platform takes them (re-encoding an animation is not
 * faithful), and are refused where it does not.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { MediaKind } from "../domain/Media.js"
import * as MediaRules from "./MediaRules.js"
import type { Platform } from "../domain/Platform.js"

/** An image format a rendition is written in. */
export type RenditionFormat = "jpeg" | "png" | "webp"

const formatTypes: Readonly<Record<RenditionFormat, MediaRules.MediaType>> = {
  jpeg: "image/jpeg",
  png: "image/png",
  webp: "image/webp"
}

export const renditionMimeType = (format: RenditionFormat): MediaRules.MediaType => formatTypes[format]

/** How a rendition reaches an allowed aspect ratio: `pad` (letterbox, the default) or `crop` (centred). */
export type AspectFit = "pad" | "crop"

/** What a rendition is made to; one rendition per medium and profile `key`. */
export interface Profile {
  /** Stable across releases: the name of the rendition in the blob store. */
  readonly key: string
  readonly format: RenditionFormat
  /** The rendition is at most this many bytes (downscaled and re-encoded until it is). */
  readonly maxBytes: number
  readonly aspect?: { readonly range: MediaRules.AspectRange; readonly fit: AspectFit }
}

export const makeProfile = (
  format: RenditionFormat,
  maxBytes: number,
  aspect?: { readonly range: MediaRules.AspectRange; readonly fit: AspectFit }
): Profile => ({
  key: `${format}-max${maxBytes}` +
    (aspect === undefined ? "" : `-${aspect.fit}-${ratioName(aspect.range.min)}-${ratioName(aspect.range.max)}`),
  format,
  maxBytes,
  ...(aspect === undefined ? {} : { aspect })
})

const ratioName = (ratio: MediaRules.Ratio): string => `${ratio.width}x${ratio.height}`.replace(/\./g, "_")

/** What a medium needs to go out on one platform. */
export type Plan =
  | { readonly _tag: "AsIs" }
  | { readonly _tag: "Rendition"; readonly profile: Profile }
  | { readonly _tag: "Unfit"; readonly rule: "type" | "size" | "duration"; readonly message: string }

export interface FitMedium {
  readonly kind: MediaKind
  readonly mimeType: string
  readonly size?: number
  readonly durationMs?: number
}

export interface FitTarget {
  readonly platform: Platform
  /** Instagram's `contentType`; the feed ratio applies to `Post` only (the default for images). */
  readonly contentType?: string | undefined
  /** `settings.mediaFit`: `crop` asks for a centred crop instead of letterbox padding. */
  readonly fit?: AspectFit
}

const kindNames: Readonly<Record<MediaKind, string>> = { image: "images", video: "videos", document: "documents" }

const stillFormats: Readonly<Partial<Record<string, RenditionFormat>>> = {
  "image/jpeg": "jpeg",
  "image/png": "png",
  "image/webp": "webp"
}

/** `settings.mediaFit` as a fit, when it names one. */
export const fitSetting = (settings: { readonly [key: string]: unknown } | undefined): AspectFit | undefined => {
  const value = settings?.mediaFit
  return value === "crop" || value === "pad" ? value : undefined
}

/**
 * The plan for one medium on one platform. Images the platform cannot take as they are, or over its
 * per-file cap, are planned as a JPEG rendition (downscaled to the cap) when the platform takes JPEG;
 * images outside the platform's aspect-ratio range are padded (or cropped, when asked) to the nearest
 * allowed ratio; every JPEG, PNG or WebP gets a rendition anyway (metadata stripped). A GIF the
 * platform takes goes as it is within the cap; one it does not take is refused. Videos and documents are never converted: a type the
 * platform refuses, or a file over its cap, is `Unfit`.
 */
export const plan = (medium: FitMedium, target: FitTarget): Plan => {
  const { platform } = target
  const type = MediaRules.normalizeMimeType(medium.mimeType)
  const accepted = MediaRules.acceptedTypes[platform]
  const takes = (t: string) => accepted.some((a) => a === t)
  const cap = (mimeType: string) =>
    MediaRules.platformMaxBytes(platform, { kind: medium.kind, mimeType }) ??
      MediaRules.maxBytes(medium.kind)
  const overCap = (mimeType: string) => medium.size !== undefined && medium.size > cap(mimeType)
  const refusedType = (): Plan => {
    const sameKind = accepted.filter((t) => MediaRules.kindOf(t) === medium.kind)
    return {
      _tag: "Unfit",
      rule: "type",
      message: sameKind.length === 0
        ? `${platform} does not take ${kindNames[medium.kind]}`
        : `${platform} does not take ${type} ${kindNames[medium.kind]}; it takes ${sameKind.join(", ")}`
    }
  }
  const tooLarge = (mimeType: string): Plan => ({
    _tag: "Unfit",
    rule: "size",
    message: `${platform} takes files of at most ${cap(mimeType)} bytes for this type (${medium.size} given)`
  })

  if (medium.kind !== "image" || !(type in stillFormats || type === "image/gif")) {
    if (!takes(type)) return refusedType()
    if (overCap(type)) return tooLarge(type)
    const longest = MediaRules.platformMaxVideoMs[platform]
    if (medium.kind === "video" && longest !== undefined && (medium.durationMs ?? 0) > longest) {
      return {
        _tag: "Unfit",
        rule: "duration",
        message: `${platform} takes videos of at most ${longest / 1000} seconds (${
          Math.ceil(medium.durationMs! / 100) / 10
        } seconds given)`
      }
    }
    return { _tag: "AsIs" }
  }
  const range = MediaRules.platformAspectRatios[platform]
  const aspect = range !== undefined && MediaRules.instagramContentType(target.contentType, [medium]) === "Post"
    ? { range, fit: target.fit ?? "pad" }
    : undefined
  if (type === "image/gif") {
    // An animation is not re-encoded (nor told from a still before decoding): a GIF goes as it is
    // where the platform takes it, within the cap, and is refused elsewhere.
    if (!takes(type) || aspect !== undefined) return refusedType()
    return overCap(type) ? tooLarge(type) : { _tag: "AsIs" }
  }
  const own = stillFormats[type]
  const format: RenditionFormat | undefined = own !== undefined && takes(type) && !overCap(type)
    ? own
    : takes("image/jpeg")
    ? "jpeg"
    : undefined
  if (format === undefined) return refusedType()
  return { _tag: "Rendition", profile: makeProfile(format, cap(formatTypes[format]), aspect) }
}

// ---------------------------------------------------------------------------------------------------
// The port
// ---------------------------------------------------------------------------------------------------

export class RenditionError extends Schema.TaggedError<RenditionError>()("RenditionError", {
  /** Says what could not be done (e.g. an animated GIF), never the medium's bytes or path. */
  message: Schema.String
}) {}

export interface Rendered {
  readonly bytes: Uint8Array
  readonly width: number
  readonly height: number
}

/**
 * Makes a rendition of an image's bytes to a profile: orientation applied, then the aspect fit, then
 * encoded in the profile's format without EXIF, XMP or GPS, downscaled until it fits `maxBytes`.
 */
export class ImageRenditions extends Context.Tag("@herald/core/ImageRenditions")<ImageRenditions, {
  readonly render: (source: Uint8Array, profile: Profile) => Effect.Effect<Rendered, RenditionError>
}>() {}
