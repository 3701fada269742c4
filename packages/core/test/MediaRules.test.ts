import { describe, expect, it } from "@effect/vitest"
import type { DomainError } from "@herald/core/kernel/Errors"
import * as MediaRules from "@herald/core/media/MediaRules"
import * as PostMediaRules from "@herald/core/media/PostMediaRules"
import type { Platform } from "@herald/core/domain/Platform"
import { PlatformContentEntry } from "@herald/core/domain/Post"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"

const MiB = 1024 * 1024

const left = <A>(result: Either.Either<A, DomainError>): DomainError => {
  if (Either.isRight(result)) throw new Error(`expected a failure, got ${JSON.stringify(result.right)}`)
  return result.left
}

const declared = (contentType: string, size = 1000, filename = "file.bin") =>
  MediaRules.checkDeclared({ filename, contentType, size })

describe("checkDeclared", () => {
  it("accepts every supported type with its kind", () => {
    const cases: ReadonlyArray<readonly [string, string, string]> = [
      ["image/jpeg", "image/jpeg", "image"],
      ["image/png", "image/png", "image"],
      ["image/gif", "image/gif", "image"],
      ["image/webp", "image/webp", "image"],
      ["video/mp4", "video/mp4", "video"],
      ["video/quicktime", "video/quicktime", "video"],
      ["video/webm", "video/webm", "video"],
      ["application/pdf", "application/pdf", "document"]
    ]
    for (const [contentType, mimeType, kind] of cases) {
      expect(declared(contentType)).toEqual(Either.right({ filename: "file.bin", mimeType, kind, size: 1000 }))
    }
  })

  it("reads aliases, case and parameters", () => {
    for (const contentType of ["image/jpg", "IMAGE/JPEG", "image/jpeg; charset=binary", "image/pjpeg", " image/jpg "]) {
      expect(Either.map(declared(contentType), (d) => d.mimeType)).toEqual(Either.right("image/jpeg"))
    }
    expect(Either.map(declared("video/x-m4v"), (d) => d.mimeType)).toEqual(Either.right("video/mp4"))
  })

  it("falls back to the extension only when the content type says nothing", () => {
    expect(Either.map(declared("application/octet-stream", 10, "clip.MOV"), (d) => d.mimeType)).toEqual(
      Either.right("video/quicktime")
    )
    expect(Either.map(declared("", 10, "photo.jpeg"), (d) => d.mimeType)).toEqual(Either.right("image/jpeg"))
    // A declared type wins over the extension.
    expect(Either.map(declared("image/png", 10, "photo.jpeg"), (d) => d.mimeType)).toEqual(Either.right("image/png"))
    expect(left(declared("application/octet-stream", 10, "archive.zip")).code).toBe("unsupported_media_type")
    expect(left(declared("", 10, "noextension")).code).toBe("unsupported_media_type")
  })

  it("refuses unsupported types with unsupported_media_type", () => {
    const unsupported = [
      "image/tiff",
      "image/svg+xml",
      "video/x-msvideo",
      "text/plain",
      "application/zip",
      "image/heic"
    ]
    for (const contentType of unsupported) {
      const error = left(declared(contentType))
      expect(error.code).toBe("unsupported_media_type")
      expect(error.details?.["content_type"]).toBe(contentType)
      expect(error.details?.["supported_types"]).toEqual(MediaRules.supportedMediaTypes)
    }
  })

  it("caps images at 20 MiB, video at 500 MiB, documents at 100 MiB", () => {
    expect(MediaRules.maxBytes("image")).toBe(20 * MiB)
    expect(MediaRules.maxBytes("video")).toBe(500 * MiB)
    expect(MediaRules.maxBytes("document")).toBe(100 * MiB)
    const cases: ReadonlyArray<readonly [string, number]> = [
      ["image/png", 20 * MiB],
      ["image/gif", 20 * MiB],
      ["video/mp4", 500 * MiB],
      ["application/pdf", 100 * MiB]
    ]
    for (const [contentType, cap] of cases) {
      expect(Either.isRight(declared(contentType, cap))).toBe(true)
      const error = left(declared(contentType, cap + 1))
      expect(error.code).toBe("file_too_large")
      expect(error.details).toMatchObject({ max_bytes: cap, size: cap + 1 })
      expect(error.message).toContain(`at most ${cap / MiB} MB (${cap} bytes)`)
    }
  })

  it.prop(
    "an image is too large exactly when it is over 20 MiB",
    [FastCheck.integer({ min: 1, max: 40 * MiB })],
    ([size]) => {
      const result = declared("image/webp", size)
      expect(Either.isLeft(result)).toBe(size > 20 * MiB)
      if (Either.isLeft(result)) expect(result.left.code).toBe("file_too_large")
    },
    { fastCheck: { numRuns: 300 } }
  )

  it.prop(
    "a video is too large exactly when it is over 500 MiB (around the boundary)",
    [FastCheck.integer({ min: -4096, max: 4096 })],
    ([delta]) => {
      const size = 500 * MiB + delta
      expect(Either.isLeft(declared("video/quicktime", size))).toBe(delta > 0)
    }
  )

  it("refuses empty, fractional and negative sizes, and unusable filenames, with validation_error", () => {
    for (const size of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      const error = left(declared("image/png", size))
      expect(error.code).toBe("validation_error")
      expect(error.message).toContain("size")
    }
    for (const filename of ["", "   ", "a\u0000b.png", "line\nbreak.png", "x".repeat(252) + ".png"]) {
      const error = left(declared("image/png", 10, filename))
      expect(error.code).toBe("validation_error")
      expect(error.message).toContain("filename")
    }
    expect(Either.isRight(declared("image/png", 10, "x".repeat(251) + ".png"))).toBe(true)
  })
})

describe("checkDetected", () => {
  it("accepts the same type and its aliases", () => {
    expect(MediaRules.checkDetected("image/jpeg", "image/jpeg")).toEqual(Either.right("image/jpeg"))
    expect(MediaRules.checkDetected("image/png", "image/apng")).toEqual(Either.right("image/png"))
    expect(MediaRules.checkDetected("video/mp4", "video/x-m4v")).toEqual(Either.right("video/mp4"))
    expect(MediaRules.checkDetected("video/quicktime", "video/quicktime")).toEqual(Either.right("video/quicktime"))
    expect(MediaRules.checkDetected("application/pdf", "application/pdf")).toEqual(Either.right("application/pdf"))
  })

  it("reports a PNG declared as JPEG as file_type_mismatch", () => {
    const error = left(MediaRules.checkDetected("image/jpeg", "image/png"))
    expect(error.code).toBe("file_type_mismatch")
    expect(error.details).toEqual({ declared_type: "image/jpeg", detected_type: "image/png" })
  })

  it("keeps MP4 and QuickTime apart, and refuses other ISO media", () => {
    expect(left(MediaRules.checkDetected("video/mp4", "video/quicktime")).code).toBe("file_type_mismatch")
    expect(left(MediaRules.checkDetected("video/quicktime", "video/mp4")).code).toBe("file_type_mismatch")
    for (const other of ["video/3gpp", "image/heic", "audio/x-m4a", "image/avif"]) {
      expect(left(MediaRules.checkDetected("video/mp4", other)).code).toBe("file_type_mismatch")
    }
  })

  it("reports unrecognised content as a mismatch with detected_type null", () => {
    const error = left(MediaRules.checkDetected("image/gif", undefined))
    expect(error.code).toBe("file_type_mismatch")
    expect(error.details).toEqual({ declared_type: "image/gif", detected_type: null })
  })
})

const image = (mimeType = "image/jpeg", size?: number): MediaRules.PostMedium => ({
  kind: "image",
  mimeType,
  ...(size === undefined ? {} : { size })
})
const video = (mimeType = "video/mp4", size?: number): MediaRules.PostMedium => ({
  kind: "video",
  mimeType,
  ...(size === undefined ? {} : { size })
})
const pdfDocument: MediaRules.PostMedium = { kind: "document", mimeType: "application/pdf" }
const times = <A>(n: number, a: A): ReadonlyArray<A> => Array.from({ length: n }, () => a)

const messages = (
  platform: Platform,
  media: ReadonlyArray<MediaRules.PostMedium>,
  contentType?: string,
  mode: MediaRules.CheckMode = "publish"
): ReadonlyArray<string> => PostMediaRules.postMediaIssues(platform, contentType, media, { mode }).map((i) => i.message)

describe("media that must be fetched from a public URL", () => {
  it.effect("any instagram or threads medium without a public URL is refused when publishing, not as a draft", () =>
    Effect.gen(function*() {
      const privateImage = { ...image(), hasPublicUrl: false }
      const privateVideo = { ...video(), hasPublicUrl: false }
      const input = (platforms: ReadonlyArray<Platform>, media: ReadonlyArray<MediaRules.PostMedium>) => ({
        platforms,
        platformContent: {},
        media,
        mode: "publish" as const
      })
      const error = yield* Effect.flip(
        PostMediaRules.check(input(["instagram", "threads"], [privateImage, privateVideo]))
      )
      expect(error.code).toBe("validation_error")
      const errors = error.details?.["validation_errors"] as ReadonlyArray<
        { platform: string; path: string; message: string }
      >
      expect(errors.every((e) => e.message.includes("HERALD_MEDIA_PUBLIC_URL"))).toBe(true)
      const paths = errors.map((e) => `${e.platform} ${e.path}`)
      expect(paths).toEqual(expect.arrayContaining([
        "instagram media_ids.0",
        "instagram media_ids.1",
        "threads media_ids.0",
        "threads media_ids.1"
      ]))
      const reel = yield* Effect.flip(PostMediaRules.check(input(["instagram"], [privateVideo])))
      expect(reel.details?.["validation_errors"]).toEqual([
        expect.objectContaining({
          platform: "instagram",
          path: "media_ids.0",
          message: expect.stringContaining("videos from a public URL")
        })
      ])
      yield* PostMediaRules.check({ ...input(["instagram"], [privateImage, privateVideo]), mode: "draft" })
      yield* PostMediaRules.check(input(["instagram", "threads", "x"], [{ ...image(), hasPublicUrl: true }]))
      yield* PostMediaRules.check(input(["x", "bluesky"], [privateImage]))
      // TikTok pulls photo-post images from their URL; a video is uploaded by Herald.
      const photos = yield* Effect.flip(PostMediaRules.check(input(["tiktok"], [privateImage, privateImage])))
      expect(photos.details?.["validation_errors"]).toEqual([
        expect.objectContaining({
          platform: "tiktok",
          path: "media_ids.0",
          message: expect.stringContaining("HERALD_MEDIA_PUBLIC_URL")
        }),
        expect.objectContaining({
          platform: "tiktok",
          path: "media_ids.1",
          message: expect.stringContaining("images from a public URL")
        })
      ])
      yield* PostMediaRules.check(input(["tiktok"], [privateVideo]))
      yield* PostMediaRules.check(input(["tiktok"], [{ ...image(), hasPublicUrl: true }]))
    }))
})

describe("checkPostMedia", () => {
  it("returns validation_error per problem, naming the platform", () => {
    const errors = PostMediaRules.checkPostMedia("x", undefined, [...times(5, image()), pdfDocument])
    expect(errors.map((e) => e.code)).toEqual(["validation_error", "validation_error"])
    expect(errors.every((e) => e.details?.["platform"] === "x")).toBe(true)
    expect(errors.map((e) => e.details?.["path"])).toEqual(["media_ids.5", "media_ids"])
    expect(PostMediaRules.checkPostMedia("x", undefined, times(4, image()))).toEqual([])
  })

  it("x: up to 4 images, or one video, or one GIF, never mixed", () => {
    expect(messages("x", times(4, image("image/png")))).toEqual([])
    expect(messages("x", [video()])).toEqual([])
    expect(messages("x", [image("image/gif")])).toEqual([])
    expect(messages("x", [])).toEqual([])
    expect(messages("x", times(5, image()))).toEqual(["x: at most 4 images per post (5 given)"])
    expect(messages("x", [video(), image()])).toHaveLength(1)
    expect(messages("x", [image("image/gif"), image()])).toHaveLength(1)
    expect(messages("x", [video(), video()])).toHaveLength(1)
    expect(messages("x", [pdfDocument])).toEqual(["x does not take documents"])
    expect(messages("x", [video("video/webm")])).toEqual([
      "x does not take video/webm videos; it takes video/mp4, video/quicktime"
    ])
  })

  it("bluesky: up to 4 images (JPEG, PNG, WebP) or one MP4 video", () => {
    expect(messages("bluesky", times(4, image("image/webp")))).toEqual([])
    expect(messages("bluesky", [video()])).toEqual([])
    expect(messages("bluesky", times(5, image()))).toHaveLength(1)
    expect(messages("bluesky", [video(), image()])).toHaveLength(1)
    expect(messages("bluesky", [video("video/quicktime")])).toHaveLength(1)
    // A GIF is not converted (it may be animated): refused where the platform does not take GIFs.
    expect(messages("bluesky", [image("image/gif")])).toHaveLength(1)
  })

  it("instagram: requires media; JPEG-only images; Reels one video; carousel up to 10", () => {
    expect(messages("instagram", [])).toEqual(["instagram requires media: an image or a video"])
    expect(messages("instagram", [], undefined, "draft")).toEqual([])
    expect(messages("instagram", [image()])).toEqual([])
    expect(messages("instagram", [video()])).toEqual([])
    // Planned as a JPEG rendition, not refused.
    expect(messages("instagram", [image("image/png")])).toEqual([])
    expect(messages("instagram", [...times(9, image()), video("video/quicktime")])).toEqual([])
    expect(messages("instagram", times(11, image()))).toEqual([
      "instagram: a carousel takes at most 10 items (11 given)"
    ])
    expect(messages("instagram", [image()], "Reels")).toEqual(["instagram: a Reels post takes exactly one video"])
    expect(messages("instagram", [video(), video()], "Trial Reel")).toHaveLength(1)
    expect(messages("instagram", [video()], "Story")).toEqual([])
    expect(messages("instagram", [image(), image()], "Story")).toHaveLength(1)
    expect(messages("instagram", [pdfDocument])).toEqual(["instagram does not take documents"])
  })

  it("youtube: one video, required when publishing", () => {
    expect(messages("youtube", [video()])).toEqual([])
    expect(messages("youtube", [video("video/webm")])).toEqual([])
    expect(messages("youtube", [])).toEqual(["youtube requires one video"])
    expect(messages("youtube", [], undefined, "draft")).toEqual([])
    expect(messages("youtube", [video(), video()])).toHaveLength(1)
    expect(messages("youtube", [image()])).toEqual(["youtube does not take images"])
  })

  it("tiktok: one video, or a photo post of 1 to 35 images (JPEG, WebP; PNG as a rendition), never mixed", () => {
    expect(messages("tiktok", [video()])).toEqual([])
    expect(messages("tiktok", [video("video/webm")])).toEqual([])
    expect(messages("tiktok", [image()])).toEqual([])
    expect(messages("tiktok", times(35, image("image/webp")))).toEqual([])
    expect(messages("tiktok", [image("image/png")])).toEqual([])
    expect(messages("tiktok", [])).toEqual(["tiktok requires one video or 1 to 35 images"])
    expect(messages("tiktok", [], undefined, "draft")).toEqual([])
    expect(messages("tiktok", times(36, image()))).toEqual(["tiktok: at most 35 images per post (36 given)"])
    expect(messages("tiktok", [image(), video()])).toEqual(["tiktok: a video must be the post's only medium"])
    expect(messages("tiktok", [video(), video()])).toEqual(["tiktok: a video must be the post's only medium"])
    expect(messages("tiktok", [image("image/gif")])).toEqual([
      "tiktok does not take image/gif images; it takes image/jpeg, image/webp"
    ])
    expect(messages("tiktok", [pdfDocument])).toEqual(["tiktok does not take documents"])
  })

  it.effect("tiktok: photoCoverIndex names one of the photo post's images", () =>
    Effect.gen(function*() {
      const check = (index: unknown, media: ReadonlyArray<MediaRules.PostMedium>) =>
        PostMediaRules.check({
          platforms: ["tiktok"],
          platformContent: { tiktok: new PlatformContentEntry({ content: "p", settings: { photoCoverIndex: index } }) },
          media,
          mode: "publish"
        })
      yield* check(2, times(3, image()))
      yield* check(0, [image()])
      const error = yield* Effect.flip(check(3, times(3, image())))
      expect(error.details?.["validation_errors"]).toEqual([{
        platform: "tiktok",
        path: "platform_content.tiktok.settings.photoCoverIndex",
        message: "The cover is image 3 (counted from 0) of a photo post of 3 images"
      }])
      // A video post has no photo cover: the setting is not checked against it.
      yield* check(4, [video()])
    }))

  it("linkedin: images up to 20, or one video, or one PDF", () => {
    expect(messages("linkedin", times(20, image("image/gif")))).toEqual([])
    expect(messages("linkedin", [pdfDocument])).toEqual([])
    expect(messages("linkedin", [video()])).toEqual([])
    expect(messages("linkedin", times(21, image()))).toHaveLength(1)
    expect(messages("linkedin", [pdfDocument, image()])).toEqual([
      "linkedin: a PDF document must be the post's only medium"
    ])
    expect(messages("linkedin", [video(), image()])).toEqual(["linkedin: a video must be the post's only medium"])
    expect(messages("linkedin", [image("image/webp")])).toEqual([])
  })

  it("threads: carousel up to 20, JPEG/PNG images", () => {
    expect(messages("threads", [])).toEqual([])
    expect(messages("threads", [...times(19, image("image/png")), video()])).toEqual([])
    expect(messages("threads", times(21, image()))).toHaveLength(1)
    expect(messages("threads", [image("image/webp")])).toEqual([])
  })

  it("pinterest: requires an image or a video; up to 5 images; a video alone", () => {
    expect(messages("pinterest", [])).toEqual(["pinterest requires an image or a video"])
    expect(messages("pinterest", [image("image/webp")])).toEqual([])
    expect(messages("pinterest", times(5, image()))).toEqual([])
    expect(messages("pinterest", times(6, image()))).toHaveLength(1)
    expect(messages("pinterest", [video(), image()])).toHaveLength(1)
  })

  it("facebook: a video alone; images of JPEG, PNG or GIF", () => {
    expect(messages("facebook", [])).toEqual([])
    expect(messages("facebook", times(12, image("image/png")))).toEqual([])
    expect(messages("facebook", [video(), image()])).toHaveLength(1)
    expect(messages("facebook", [image("image/webp")])).toEqual([])
  })

  it("telegram and discord take any supported type; telegram groups no documents with other media", () => {
    expect(messages("telegram", [image("image/webp"), video("video/webm"), image("image/gif")])).toEqual([])
    expect(messages("telegram", times(3, pdfDocument))).toEqual([])
    expect(messages("telegram", [pdfDocument])).toEqual([])
    expect(messages("telegram", [pdfDocument, image()])).toEqual([
      "telegram: documents cannot be grouped with photos or videos in one post"
    ])
    // More than 10 go out as several groups or messages (the adapters split them).
    expect(messages("telegram", times(12, image()))).toEqual([])
    expect(messages("discord", [...times(12, image()), pdfDocument, video("video/webm")])).toEqual([])
  })

  it("checks per-file platform caps when sizes are given; still images over a cap are fitted, not refused", () => {
    expect(messages("bluesky", [image("image/jpeg", 1_000_000)])).toEqual([])
    expect(messages("bluesky", [image("image/jpeg", 1_000_001)])).toEqual([])
    expect(messages("x", [image("image/png", 5 * MiB + 1)])).toEqual([])
    expect(messages("x", [image("image/gif", 15 * MiB + 1)])).toEqual([
      `x takes files of at most ${15 * MiB} bytes for this type (${15 * MiB + 1} given)`
    ])
    expect(messages("x", [image("image/gif", 15 * MiB)])).toEqual([])
    expect(messages("bluesky", [video("video/mp4", 100 * MiB + 1)])).toHaveLength(1)
    expect(messages("instagram", [image("image/jpeg", 8 * MiB + 1)])).toEqual([])
    expect(messages("telegram", [image("image/png", 10 * MiB + 1)])).toEqual([])
    expect(messages("telegram", [image("image/gif", 10 * MiB + 1)])).toEqual([])
    expect(messages("discord", [video("video/mp4", 10 * MiB + 1)])).toHaveLength(1)
    expect(messages("youtube", [video("video/mp4", 500 * MiB)])).toEqual([])
  })
})

describe("check (a post across its platforms)", () => {
  it("passes a post every platform takes", () => {
    const result = Effect.runSync(Effect.either(PostMediaRules.check({
      platforms: ["x", "bluesky", "linkedin", "telegram"],
      platformContent: {},
      media: [image(), image("image/png")],
      mode: "publish"
    })))
    expect(Either.isRight(result)).toBe(true)
  })

  it("collects every platform's problems in one validation_error", () => {
    const error = left(Effect.runSync(Effect.either(PostMediaRules.check({
      platforms: ["instagram", "youtube", "x", "x"],
      platformContent: { instagram: new PlatformContentEntry({ content: "", contentType: "Reels" }) },
      media: [image("image/png")],
      threadMedia: [[video(), image()]],
      mode: "publish"
    }))))
    expect(error.code).toBe("validation_error")
    const issues = error.details?.["validation_errors"] as ReadonlyArray<MediaRules.MediaIssue>
    expect(issues.map((i) => [i.platform, i.path])).toEqual([
      ["instagram", "media_ids"],
      ["youtube", "media_ids.0"],
      ["x", "threadPosts.0.media_ids"]
    ])
  })

  it("in draft mode requires nothing but still refuses what can never be posted", () => {
    const draft = (media: ReadonlyArray<MediaRules.PostMedium>) =>
      Effect.runSync(Effect.either(PostMediaRules.check({
        platforms: ["instagram", "youtube", "pinterest"],
        platformContent: {},
        media,
        mode: "draft"
      })))
    expect(Either.isRight(draft([]))).toBe(true)
    expect(left(draft([pdfDocument])).code).toBe("validation_error")
  })
})
