/**
 * `ImageRenditions` over sharp (libvips): orientation applied from EXIF first, then the aspect fit
 * (letterbox padding in white, or a centred crop when the profile asks), then encoded in the
 * profile's format with no metadata at all (sharp writes none unless asked: no EXIF, XMP, GPS or
 * ICC; pixels are converted to sRGB), downscaled step by step until it fits the byte cap.
 *
 * sharp is imported on the first rendition, not with this module: loading it (and libvips) cost
 * ~130 ms and ~18 MB of RSS at every `herald serve` start, and most starts render nothing.
 *
 * Memory is bounded whatever the image: the decoder refuses more than `MediaRules.maxImagePixels`
 * (a header that lies about its size included), reads sequentially, and the only step that holds
 * pixels in memory (a pad or crop) works on a copy scaled down to at most `maxWorkingPixels`. At most
 * `defaultConcurrency` renditions run at once in a process.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { ImageRenditions, type Profile, type Rendered, RenditionError } from "@herald/core/media/MediaFitting"
import { maxImagePixels, ratioValue } from "@herald/core/media/MediaRules"
import * as os from "node:os"
import type { Sharp } from "sharp"

type SharpFunction = typeof import("sharp").default

let loading: Promise<SharpFunction> | undefined

/** sharp, imported once on first use; a failure to load it is a defect, not a bad image. */
const loadSharp: Effect.Effect<SharpFunction> = Effect.promise(
  () => (loading ??= import("sharp").then((module) => module.default))
)

const white = { r: 255, g: 255, b: 255, alpha: 1 }

/**
 * The largest picture a pad or crop holds in memory, as raw RGBA (4 bytes a pixel): 24 MP, about
 * 96 MB for the picture and as much for the padded canvas. Larger sources are scaled down to it
 * first, in libvips' streaming pipeline (so a padded or cropped rendition is at most this size).
 */
export const maxWorkingPixels = 24_000_000

/** Renditions at once in a process by default: each may hold a few hundred MB at its peak. */
export const defaultConcurrency = Math.max(1, Math.min(2, os.availableParallelism()))

/** Every decoder: refuses more pixels than an upload may have, and reads the file front to back. */
const input = { limitInputPixels: maxImagePixels, sequentialRead: true } as const

/** Encoder quality of the first attempt; later attempts lower it a little as they downscale. */
const startQuality = 88
const maxAttempts = 10

class Refused extends Error {}

interface Box {
  readonly width: number
  readonly height: number
}

/** The dimensions, after scaling by `scale`, kept inside the aspect range when one is given. */
const scaled = (box: Box, scale: number, profile: Profile): Box => {
  let width = Math.max(1, Math.round(box.width * scale))
  let height = Math.max(1, Math.round(box.height * scale))
  if (profile.aspect !== undefined) {
    const min = ratioValue(profile.aspect.range.min)
    const max = ratioValue(profile.aspect.range.max)
    if (width / height < min) width = Math.ceil(height * min)
    if (width / height > max) height = Math.ceil(width / max)
  }
  return { width, height }
}

const encode = (image: Sharp, profile: Profile, quality: number): Sharp => {
  switch (profile.format) {
    case "jpeg":
      return image.flatten({ background: white }).jpeg({ quality })
    case "png":
      return image.png({ compressionLevel: 9, palette: quality < startQuality })
    case "webp":
      return image.webp({ quality })
  }
}

const renderPromise = async (sharp: SharpFunction, source: Uint8Array, profile: Profile): Promise<Rendered> => {
  // The header alone (no pixels decoded), so that an oversized image is refused with its reason.
  const meta = await sharp(source, { limitInputPixels: false }).metadata()
  if ((meta.width ?? 0) * (meta.height ?? 0) > maxImagePixels) {
    throw new Refused(`the image has more than ${maxImagePixels} pixels`)
  }
  if ((meta.pages ?? 1) > 1) throw new Refused("an animated image cannot be converted to a still")
  // Orientation first: every later step sees the picture the way it is meant to be seen. libvips
  // streams `rotate()` then `resize()` in one pipeline; only a pad or crop needs the pixels in memory.
  const swapped = (meta.orientation ?? 1) >= 5
  let image = (): Sharp => sharp(source, input).rotate()
  let box: Box = swapped
    ? { width: meta.height ?? 1, height: meta.width ?? 1 }
    : { width: meta.width ?? 1, height: meta.height ?? 1 }
  if (profile.aspect !== undefined) {
    const min = ratioValue(profile.aspect.range.min)
    const max = ratioValue(profile.aspect.range.max)
    const ratio = box.width / box.height
    if (ratio < min || ratio > max) {
      // The canvas a pad makes (or the picture a crop cuts from) is kept under maxWorkingPixels.
      const canvas = ratio < min
        ? profile.aspect.fit === "pad" ? box.height * Math.ceil(box.height * min) : box.width * box.width / min
        : profile.aspect.fit === "pad"
        ? box.width * Math.ceil(box.width / max)
        : box.height * box.height * max
      const shrink = Math.min(1, Math.sqrt(maxWorkingPixels / Math.max(canvas, box.width * box.height)))
      const working = shrink < 1
        ? image().resize(Math.max(1, Math.floor(box.width * shrink)), Math.max(1, Math.floor(box.height * shrink)), {
          fit: "fill"
        })
        : image()
      const oriented = await working.ensureAlpha().raw().toBuffer({ resolveWithObject: true })
      const raw = { width: oriented.info.width, height: oriented.info.height, channels: oriented.info.channels }
      const orientedImage = () => sharp(oriented.data, { raw, ...input })
      box = { width: raw.width, height: raw.height }
      const target = ratio < min
        ? profile.aspect.fit === "pad"
          ? { width: Math.ceil(box.height * min), height: box.height }
          : { width: box.width, height: Math.floor(box.width / min) }
        : profile.aspect.fit === "pad"
        ? { width: box.width, height: Math.ceil(box.width / max) }
        : { width: Math.floor(box.height * max), height: box.height }
      const from = box
      const fitted = profile.aspect.fit === "pad"
        ? await orientedImage().extend({
          left: Math.floor((target.width - from.width) / 2),
          right: Math.ceil((target.width - from.width) / 2),
          top: Math.floor((target.height - from.height) / 2),
          bottom: Math.ceil((target.height - from.height) / 2),
          background: white
        }).raw().toBuffer({ resolveWithObject: true })
        : await orientedImage().extract({
          left: Math.floor((from.width - target.width) / 2),
          top: Math.floor((from.height - target.height) / 2),
          width: target.width,
          height: target.height
        }).raw().toBuffer({ resolveWithObject: true })
      const fittedRaw = { width: fitted.info.width, height: fitted.info.height, channels: fitted.info.channels }
      image = () => sharp(fitted.data, { raw: fittedRaw, ...input })
      box = { width: fittedRaw.width, height: fittedRaw.height }
    }
  }
  // A source over the cap starts near the scale that should fit (bytes grow with the pixel count).
  let scale = source.length > profile.maxBytes ? Math.sqrt(profile.maxBytes / source.length) : 1
  let quality = startQuality
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    const size = scaled(box, scale, profile)
    const resized = scale === 1 ? image() : image().resize(size.width, size.height, { fit: "fill" })
    const out = await encode(resized, profile, quality).toBuffer({ resolveWithObject: true })
    if (out.data.length <= profile.maxBytes) {
      return { bytes: new Uint8Array(out.data), width: out.info.width, height: out.info.height }
    }
    scale *= Math.min(0.9, Math.sqrt(profile.maxBytes / out.data.length) * 0.95)
    quality = Math.max(70, quality - 3)
  }
  throw new Refused(`no rendition under ${profile.maxBytes} bytes was found`)
}

export const render = (source: Uint8Array, profile: Profile): Effect.Effect<Rendered, RenditionError> =>
  Effect.flatMap(loadSharp, (sharp) =>
    Effect.tryPromise({
      try: () => renderPromise(sharp, source, profile),
      catch: (cause) =>
        new RenditionError({
          message: cause instanceof Refused
            ? cause.message
            // The decoder's own limit, for a header that understated the pixels.
            : cause instanceof Error && /pixel limit/i.test(cause.message)
            ? `the image has more than ${maxImagePixels} pixels`
            : "the image could not be decoded"
        })
    })).pipe(Effect.withSpan("SharpRenditions.render", { attributes: { profile: profile.key } }))

/**
 * At most `concurrency` renditions at once (`defaultConcurrency` unless given), so that many
 * publishes starting together do not each decode a large photo at the same time.
 */
export const make = (concurrency = defaultConcurrency) =>
  Effect.map(
    Effect.makeSemaphore(Math.max(1, concurrency)),
    (semaphore) =>
      ImageRenditions.of({ render: (source, profile) => semaphore.withPermits(1)(render(source, profile)) })
  )

export const layer: Layer.Layer<ImageRenditions> = Layer.effect(ImageRenditions, make())
