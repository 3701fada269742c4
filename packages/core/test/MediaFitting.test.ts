import * as MediaFitting from "@herald/core/media/MediaFitting"
import { MiB } from "@herald/core/media/MediaRules"
import { describe, expect, it } from "vitest"

const image = (mimeType: string, size?: number): MediaFitting.FitMedium => ({
  kind: "image",
  mimeType,
  ...(size === undefined ? {} : { size })
})
const video = (mimeType: string, size?: number): MediaFitting.FitMedium => ({
  kind: "video",
  mimeType,
  ...(size === undefined ? {} : { size })
})

const key = (plan: MediaFitting.Plan) => plan._tag === "Rendition" ? plan.profile.key : plan._tag

describe("MediaFitting.plan", () => {
  it("converts stills Instagram does not take to JPEG, padded to its feed ratios", () => {
    expect(key(MediaFitting.plan(image("image/png", 5000), { platform: "instagram" }))).toBe(
      `jpeg-max${8 * MiB}-pad-4x5-1_91x1`
    )
    expect(key(MediaFitting.plan(image("image/webp"), { platform: "instagram", fit: "crop" }))).toBe(
      `jpeg-max${8 * MiB}-crop-4x5-1_91x1`
    )
    // A Story is not held to the feed's ratios.
    expect(key(MediaFitting.plan(image("image/jpeg"), { platform: "instagram", contentType: "Story" }))).toBe(
      `jpeg-max${8 * MiB}`
    )
  })

  it("keeps the format within the cap, and re-encodes (stripping metadata) anyway; over the cap it is a JPEG", () => {
    expect(key(MediaFitting.plan(image("image/png", 900_000), { platform: "bluesky" }))).toBe("png-max1000000")
    expect(key(MediaFitting.plan(image("image/png", 3 * MiB), { platform: "bluesky" }))).toBe("jpeg-max1000000")
    expect(key(MediaFitting.plan(image("image/jpeg", 12 * MiB), { platform: "x" }))).toBe(`jpeg-max${5 * MiB}`)
    // No platform cap: Herald's own 20 MiB.
    expect(key(MediaFitting.plan(image("image/webp"), { platform: "pinterest" }))).toBe(`webp-max${20 * MiB}`)
    // TikTok's photo posts take JPEG and WebP: a PNG goes as a JPEG.
    expect(key(MediaFitting.plan(image("image/png"), { platform: "tiktok" }))).toBe(`jpeg-max${20 * MiB}`)
  })

  it("refuses what no rendition can fit, naming the rule", () => {
    expect(MediaFitting.plan(image("image/png"), { platform: "youtube" })).toEqual({
      _tag: "Unfit",
      rule: "type",
      message: "youtube does not take images"
    })
    expect(MediaFitting.plan(video("video/mp4", 100 * MiB + 1), { platform: "bluesky" })).toMatchObject({
      _tag: "Unfit",
      rule: "size"
    })
    expect(MediaFitting.plan(video("video/webm"), { platform: "instagram" })).toMatchObject({
      _tag: "Unfit",
      rule: "type"
    })
    expect(MediaFitting.plan(image("image/gif"), { platform: "instagram" })).toMatchObject({
      _tag: "Unfit",
      rule: "type"
    })
    expect(MediaFitting.plan(image("image/gif", 16 * MiB), { platform: "x" })).toMatchObject({
      _tag: "Unfit",
      rule: "size"
    })
  })

  it("refuses a video longer than the platform takes, when its duration is known", () => {
    const long = { kind: "video" as const, mimeType: "video/mp4", durationMs: 140_001 }
    expect(MediaFitting.plan(long, { platform: "x" })).toEqual({
      _tag: "Unfit",
      rule: "duration",
      message: "x takes videos of at most 140 seconds (140.1 seconds given)"
    })
    expect(MediaFitting.plan({ ...long, durationMs: 140_000 }, { platform: "x" })).toEqual({ _tag: "AsIs" })
    expect(MediaFitting.plan(long, { platform: "bluesky" })).toEqual({ _tag: "AsIs" })
    expect(MediaFitting.plan({ ...long, durationMs: 181_000 }, { platform: "bluesky" })).toMatchObject({
      rule: "duration"
    })
    expect(MediaFitting.plan(long, { platform: "youtube" })).toEqual({ _tag: "AsIs" })
  })

  it("lets GIFs, videos and documents a platform takes go as they are", () => {
    expect(MediaFitting.plan(image("image/gif", 1000), { platform: "x" })).toEqual({ _tag: "AsIs" })
    expect(MediaFitting.plan(video("video/mp4", 1000), { platform: "instagram" })).toEqual({ _tag: "AsIs" })
    expect(MediaFitting.plan({ kind: "document", mimeType: "application/pdf" }, { platform: "linkedin" })).toEqual({
      _tag: "AsIs"
    })
  })

  it("reads settings.mediaFit", () => {
    expect(MediaFitting.fitSetting({ mediaFit: "crop" })).toBe("crop")
    expect(MediaFitting.fitSetting({ mediaFit: "stretch" })).toBeUndefined()
    expect(MediaFitting.fitSetting(undefined)).toBeUndefined()
  })
})
