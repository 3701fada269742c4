/**
 * What a medium is, from its first bytes: the type by magic bytes (file-type), and where the header
 * holds them, the pixel size (PNG, GIF, JPEG, WebP; MP4/QuickTime from the video track's `tkhd`) and
 * the duration (MP4/QuickTime `mvhd`). Metadata is read only from the bytes given: a video whose
 * `moov` box sits after its media data (no "fast start") has no size or duration here.
 */
import { MediaProbe } from "@herald/core/media/MediaLibrary"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

// file-type (and its tokenizer packages, ~25 modules) is imported on the first inspection rather than
// at every server start; a failure to load it is a defect, never "type not recognised".
let loading: Promise<typeof import("file-type/core")> | undefined
const loadFileType = Effect.promise(() => (loading ??= import("file-type/core")))

/** How many leading bytes to read for `inspect`: enough for a JPEG's EXIF block and a fast-start `moov`. */
export const recommendedHeadBytes = 256 * 1024

export interface Detected {
  /** As file-type names it (e.g. `image/apng`, `video/x-m4v`); `MediaRules.checkDetected` resolves aliases. */
  readonly mime: string
  readonly ext: string
}

export interface Dimensions {
  readonly width: number
  readonly height: number
}

export interface Inspection extends Detected {
  readonly width: Option.Option<number>
  readonly height: Option.Option<number>
  readonly durationMs: Option.Option<number>
}

/** The type by magic bytes; `none` when nothing is recognised (or the detector itself fails). */
export const detect = (head: Uint8Array): Effect.Effect<Option.Option<Detected>> =>
  Effect.flatMap(loadFileType, ({ fileTypeFromBuffer }) =>
    Effect.tryPromise(() => fileTypeFromBuffer(head)).pipe(
      Effect.map((result) => Option.fromNullable(result).pipe(Option.map(({ ext, mime }) => ({ mime, ext })))),
      Effect.orElseSucceed(() => Option.none())
    ))

// ---------------------------------------------------------------------------------------------------
// Byte helpers
// ---------------------------------------------------------------------------------------------------

const u16be = (b: Uint8Array, i: number): number => (b[i]! << 8) | b[i + 1]!
const u16le = (b: Uint8Array, i: number): number => b[i]! | (b[i + 1]! << 8)
const u24le = (b: Uint8Array, i: number): number => b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16)
const u32be = (b: Uint8Array, i: number): number =>
  ((b[i]! << 24) >>> 0) + (b[i + 1]! << 16) + (b[i + 2]! << 8) + b[i + 3]!
const i32be = (b: Uint8Array, i: number): number => u32be(b, i) | 0
const u32le = (b: Uint8Array, i: number): number => (u24le(b, i) + (b[i + 3]! << 24)) >>> 0
const u64be = (b: Uint8Array, i: number): number => u32be(b, i) * 2 ** 32 + u32be(b, i + 4)
const ascii = (b: Uint8Array, i: number, n: number): string =>
  i + n > b.length ? "" : String.fromCharCode(...b.subarray(i, i + n))

const positive = (width: number, height: number): Dimensions | undefined =>
  width > 0 && height > 0 ? { width, height } : undefined

// ---------------------------------------------------------------------------------------------------
// Images
// ---------------------------------------------------------------------------------------------------

/** PNG: the IHDR chunk, which must come first. */
export const pngDimensions = (b: Uint8Array): Dimensions | undefined =>
  b.length >= 24 && b[0] === 0x89 && ascii(b, 1, 3) === "PNG" && ascii(b, 12, 4) === "IHDR"
    ? positive(u32be(b, 16), u32be(b, 20))
    : undefined

/** GIF: the logical screen descriptor. */
export const gifDimensions = (b: Uint8Array): Dimensions | undefined =>
  b.length >= 10 && (ascii(b, 0, 6) === "GIF87a" || ascii(b, 0, 6) === "GIF89a")
    ? positive(u16le(b, 6), u16le(b, 8))
    : undefined

/** SOF markers carry the frame size; C4 (DHT), C8 (JPG) and CC (DAC) share the range but do not. */
const isStartOfFrame = (marker: number): boolean =>
  marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc

/**
 * JPEG: walks the marker segments to the first start-of-frame. The size is the coded one; an EXIF
 * orientation that rotates the picture for display is not applied.
 */
export const jpegDimensions = (b: Uint8Array): Dimensions | undefined => {
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8) return undefined
  let i = 2
  while (i + 1 < b.length) {
    if (b[i] !== 0xff) return undefined
    let marker = b[i + 1]!
    while (marker === 0xff && i + 2 < b.length) {
      i += 1
      marker = b[i + 1]!
    }
    i += 2
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) continue
    if (marker === 0xd9 || marker === 0xda || i + 2 > b.length) return undefined
    const length = u16be(b, i)
    if (length < 2) return undefined
    if (isStartOfFrame(marker)) {
      if (i + 7 > b.length) return undefined
      // A height of 0 is defined later by a DNL marker: unknown here.
      return positive(u16be(b, i + 5), u16be(b, i + 3))
    }
    i += length
  }
  return undefined
}

/** WebP: the first chunk, lossy (`VP8 `), lossless (`VP8L`) or extended (`VP8X`, the canvas). */
export const webpDimensions = (b: Uint8Array): Dimensions | undefined => {
  if (b.length < 30 || ascii(b, 0, 4) !== "RIFF" || ascii(b, 8, 4) !== "WEBP") return undefined
  switch (ascii(b, 12, 4)) {
    case "VP8 ":
      return b[23] === 0x9d && b[24] === 0x01 && b[25] === 0x2a
        ? positive(u16le(b, 26) & 0x3fff, u16le(b, 28) & 0x3fff)
        : undefined
    case "VP8L": {
      if (b[20] !== 0x2f) return undefined
      const bits = u32le(b, 21)
      return positive((bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1)
    }
    case "VP8X":
      return positive(u24le(b, 24) + 1, u24le(b, 27) + 1)
    default:
      return undefined
  }
}

// ---------------------------------------------------------------------------------------------------
// ISO base media (MP4, QuickTime)
// ---------------------------------------------------------------------------------------------------

interface Box {
  readonly type: string
  /** Where the box's content starts and ends, clamped to the bytes at hand. */
  readonly start: number
  readonly end: number
}

/** The boxes between `from` and `to`; stops at the first header that is cut off or malformed. */
const boxes = (b: Uint8Array, from: number, to: number): ReadonlyArray<Box> => {
  const found: Array<Box> = []
  let i = from
  while (i + 8 <= to) {
    let size = u32be(b, i)
    const type = ascii(b, i + 4, 4)
    let header = 8
    if (size === 1) {
      if (i + 16 > to) break
      size = u64be(b, i + 8)
      header = 16
    } else if (size === 0) {
      size = to - i
    }
    if (size < header) break
    found.push({ type, start: i + header, end: Math.min(i + size, to) })
    if (i + size >= to) break
    i += size
  }
  return found
}

const child = (b: Uint8Array, parent: Box, type: string): Box | undefined =>
  boxes(b, parent.start, parent.end).find((box) => box.type === type)

/** `mvhd`: the movie's duration in its timescale. */
const movieDurationMs = (b: Uint8Array, mvhd: Box): number | undefined => {
  const version = b[mvhd.start]
  const [timescaleAt, duration] = version === 1
    ? [mvhd.start + 20, mvhd.start + 32 <= mvhd.end ? u64be(b, mvhd.start + 24) : undefined]
    : [mvhd.start + 12, mvhd.start + 20 <= mvhd.end ? u32be(b, mvhd.start + 16) : undefined]
  if (duration === undefined || timescaleAt + 4 > mvhd.end) return undefined
  const timescale = u32be(b, timescaleAt)
  // All ones means "unknown" in both versions.
  if (timescale === 0 || duration === 0xffffffff || duration >= 2 ** 64 - 1) return undefined
  return Math.round((duration * 1000) / timescale)
}

/** `tkhd`: the track's presentation size (16.16 fixed point), swapped when its matrix turns it a quarter. */
const trackDimensions = (b: Uint8Array, tkhd: Box): Dimensions | undefined => {
  const matrixAt = tkhd.start + (b[tkhd.start] === 1 ? 52 : 40)
  if (matrixAt + 44 > tkhd.end) return undefined
  const width = Math.round(u32be(b, matrixAt + 36) / 65536)
  const height = Math.round(u32be(b, matrixAt + 40) / 65536)
  const a = i32be(b, matrixAt)
  const d = i32be(b, matrixAt + 16)
  const quarterTurn = a === 0 && d === 0
  return quarterTurn ? positive(height, width) : positive(width, height)
}

const handlerType = (b: Uint8Array, trak: Box): string | undefined => {
  const mdia = child(b, trak, "mdia")
  const hdlr = mdia === undefined ? undefined : child(b, mdia, "hdlr")
  return hdlr === undefined || hdlr.start + 12 > hdlr.end ? undefined : ascii(b, hdlr.start + 8, 4)
}

export interface MovieInfo {
  readonly durationMs?: number
  readonly width?: number
  readonly height?: number
}

/** Duration and the first video track's size, when the `moov` box is within the bytes given. */
export const movieInfo = (b: Uint8Array): MovieInfo => {
  const moov = boxes(b, 0, b.length).find((box) => box.type === "moov")
  if (moov === undefined) return {}
  const mvhd = child(b, moov, "mvhd")
  const durationMs = mvhd === undefined ? undefined : movieDurationMs(b, mvhd)
  const video = boxes(b, moov.start, moov.end).find((box) => box.type === "trak" && handlerType(b, box) === "vide")
  const tkhd = video === undefined ? undefined : child(b, video, "tkhd")
  const size = tkhd === undefined ? undefined : trackDimensions(b, tkhd)
  return {
    ...(durationMs === undefined ? {} : { durationMs }),
    ...(size === undefined ? {} : size)
  }
}

// ---------------------------------------------------------------------------------------------------
// All together
// ---------------------------------------------------------------------------------------------------

/** Pixel size and duration for a detected type, from the header bytes. */
export const metadata = (mime: string, head: Uint8Array): MovieInfo => {
  switch (mime) {
    case "image/png":
    case "image/apng":
      return pngDimensions(head) ?? {}
    case "image/gif":
      return gifDimensions(head) ?? {}
    case "image/jpeg":
      return jpegDimensions(head) ?? {}
    case "image/webp":
      return webpDimensions(head) ?? {}
    case "video/mp4":
    case "video/quicktime":
    case "video/x-m4v":
      return movieInfo(head)
    default:
      return {}
  }
}

/** The detected type with whatever metadata the head holds; `none` when the type is not recognised. */
export const inspect = (head: Uint8Array): Effect.Effect<Option.Option<Inspection>> =>
  Effect.map(
    detect(head),
    Option.map((detected) => {
      const found = metadata(detected.mime, head)
      return {
        ...detected,
        width: Option.fromNullable(found.width),
        height: Option.fromNullable(found.height),
        durationMs: Option.fromNullable(found.durationMs)
      }
    })
  )

/** The media library's `MediaProbe` port over `inspect`. */
export const layer: Layer.Layer<MediaProbe> = Layer.succeed(
  MediaProbe,
  MediaProbe.of({ headBytes: recommendedHeadBytes, inspect })
)
