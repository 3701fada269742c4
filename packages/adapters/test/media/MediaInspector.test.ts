import { describe, expect, it } from "@effect/vitest"
import * as MediaRules from "@herald/core/media/MediaRules"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import * as FileBlobStore from "../../src/media/FileBlobStore.js"
import * as MediaInspector from "../../src/media/MediaInspector.js"
import * as Fixtures from "../support/MediaFixtures.js"

const inspect = (bytes: Uint8Array) => Effect.map(MediaInspector.inspect(bytes), Option.getOrUndefined)

/** A 1×1 lossy WebP (VP8): the well-known sample used by browser feature tests, checked with dwebp. */
const lossyWebp = Uint8Array.from(Buffer.from("UklGRiIAAABXRUJQVlA4IBYAAAAwAQCdASoBAAEADsD+JaQAA3AAAAAA", "base64"))

describe("MediaInspector", () => {
  it.effect("detects each generated file by its bytes, with its size and duration", () =>
    Effect.gen(function*() {
      const found = (mime: string, ext: string, size?: readonly [number, number], durationMs?: number) => ({
        mime,
        ext,
        width: Option.fromNullable(size?.[0]),
        height: Option.fromNullable(size?.[1]),
        durationMs: Option.fromNullable(durationMs)
      })
      const cases: ReadonlyArray<readonly [string, Uint8Array, MediaInspector.Inspection]> = [
        ["png", Fixtures.png(37, 21), found("image/png", "png", [37, 21])],
        ["jpeg", Fixtures.jpeg(37, 21), found("image/jpeg", "jpg", [37, 21])],
        ["gif", Fixtures.gif(37, 21), found("image/gif", "gif", [37, 21])],
        ["webp lossless", Fixtures.webp(37, 21), found("image/webp", "webp", [37, 21])],
        ["webp extended", Fixtures.webp(300, 2, { extended: true }), found("image/webp", "webp", [300, 2])],
        ["webp lossy", lossyWebp, found("image/webp", "webp", [1, 1])],
        ["mp4", Fixtures.movie({ width: 640, height: 360 }), found("video/mp4", "mp4", [640, 360], 2500)],
        ["webm", Fixtures.webm(), found("video/webm", "webm")],
        ["pdf", Fixtures.pdf(), found("application/pdf", "pdf")]
      ]
      for (const [label, bytes, expected] of cases) {
        expect([label, yield* inspect(bytes)]).toEqual([label, expected])
      }
    }))

  it.effect("tells MP4 brands apart the way MediaRules expects", () =>
    Effect.gen(function*() {
      const mime = (options: Fixtures.MovieOptions) =>
        Effect.map(inspect(Fixtures.movie(options)), (found) => found?.mime)
      expect(yield* mime({ brand: "isom" })).toBe("video/mp4")
      expect(yield* mime({ brand: "mp42" })).toBe("video/mp4")
      expect(yield* mime({ brand: "qt" })).toBe("video/quicktime")
      expect(yield* mime({ brand: "M4V" })).toBe("video/x-m4v")
      expect(yield* mime({ brand: "3gp5" })).toBe("video/3gpp")
      expect(MediaRules.checkDetected("video/mp4", "video/x-m4v")).toEqual(Either.right("video/mp4"))
      expect(Either.isLeft(MediaRules.checkDetected("video/mp4", (yield* mime({ brand: "qt" }))!))).toBe(true)
    }))

  it.effect("reads video metadata from version-1 headers and turned tracks", () =>
    Effect.gen(function*() {
      const v1 = yield* inspect(Fixtures.movie({ width: 1920, height: 1080, durationMs: 61_234, version1: true }))
      expect([v1?.width, v1?.height, v1?.durationMs]).toEqual(
        [Option.some(1920), Option.some(1080), Option.some(61_234)]
      )
      const portrait = yield* inspect(Fixtures.movie({ brand: "qt", width: 1920, height: 1080, rotated: true }))
      expect(portrait?.mime).toBe("video/quicktime")
      expect([portrait?.width, portrait?.height]).toEqual([Option.some(1080), Option.some(1920)])
    }))

  it.effect("reads what the head holds and no more", () =>
    Effect.gen(function*() {
      // A large EXIF-like block before the frame header: found within the recommended head.
      const padded = Fixtures.jpeg(640, 480, 100_000)
      const inHead = yield* inspect(padded.subarray(0, MediaInspector.recommendedHeadBytes))
      expect([inHead?.width, inHead?.height]).toEqual([Option.some(640), Option.some(480)])
      const cut = yield* inspect(padded.subarray(0, 50_000))
      expect(cut?.mime).toBe("image/jpeg")
      expect(cut?.width).toEqual(Option.none())
      // moov after a large mdat (no "fast start"): the type is known, the duration is not.
      const late = Fixtures.movie({ mediaDataFirst: MediaInspector.recommendedHeadBytes })
      const head = yield* inspect(late.subarray(0, MediaInspector.recommendedHeadBytes))
      expect(head?.mime).toBe("video/mp4")
      expect(head?.durationMs).toEqual(Option.none())
      // The same file read whole has it.
      expect((yield* inspect(late))?.durationMs).toEqual(Option.some(2500))
    }))

  it.effect("recognises nothing in plain text or empty input", () =>
    Effect.gen(function*() {
      expect(yield* MediaInspector.inspect(Fixtures.noise(2000))).toEqual(Option.none())
      expect(yield* MediaInspector.inspect(new Uint8Array(0))).toEqual(Option.none())
    }))

  it("parses no size from malformed headers", () => {
    const png = Fixtures.png(4, 4)
    expect(MediaInspector.pngDimensions(png.subarray(0, 20))).toBeUndefined()
    const zeroWidth = png.slice()
    zeroWidth.fill(0, 16, 20)
    expect(MediaInspector.pngDimensions(zeroWidth)).toBeUndefined()
    const jpeg = Fixtures.jpeg(8, 8)
    // Corrupt the first segment's marker: the walk stops instead of reading garbage.
    const broken = jpeg.slice()
    broken[2] = 0x00
    expect(MediaInspector.jpegDimensions(broken)).toBeUndefined()
    expect(MediaInspector.gifDimensions(Fixtures.png(2, 2))).toBeUndefined()
    expect(MediaInspector.webpDimensions(Fixtures.gif(2, 2))).toBeUndefined()
    expect(MediaInspector.movieInfo(Fixtures.pdf())).toEqual({})
  })

  it.scoped("stored, headed and checked: a PNG declared as JPEG is a file_type_mismatch", () =>
    Effect.gen(function*() {
      const directory = yield* Effect.acquireRelease(
        Effect.promise(() => Fs.mkdtemp(Path.join(Os.tmpdir(), "herald-inspect-"))),
        (dir) => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true }))
      )
      const store = yield* FileBlobStore.make({ directory })
      const file = Fixtures.png(64, 48)
      const declared = MediaRules.checkDeclared({ filename: "photo.jpg", contentType: "image/jpeg", size: file.length })
      if (Either.isLeft(declared)) throw declared.left
      const { size } = yield* store.put("org/m1", Stream.make(file), MediaRules.maxBytes(declared.right.kind))
      expect(size).toBe(file.length)
      const found = yield* inspect(yield* store.head("org/m1", MediaInspector.recommendedHeadBytes))
      expect([found?.mime, found?.width, found?.height]).toEqual(["image/png", Option.some(64), Option.some(48)])
      const checked = MediaRules.checkDetected(declared.right.mimeType, found?.mime)
      expect(Either.isLeft(checked) && checked.left.code).toBe("file_type_mismatch")
      expect(Either.isLeft(checked) && checked.left.details).toEqual({
        declared_type: "image/jpeg",
        detected_type: "image/png"
      })
      // Declared truthfully, the same bytes pass.
      expect(MediaRules.checkDetected("image/png", found?.mime)).toEqual(Either.right("image/png"))
    }))
})
