import { describe, expect, it } from "@effect/vitest"
import { DomainError } from "@herald/core/kernel/Errors"
import type { Platform } from "@herald/core/domain/Platform"
import * as PlatformRules from "@herald/core/platforms/PlatformRules"
import * as PlatformSettings from "@herald/core/platforms/PlatformSettings"
import * as TextCounting from "@herald/core/platforms/TextCounting"
import { PlatformContentEntry, ThreadPost } from "@herald/core/domain/Post"
import type { PlatformContent } from "@herald/core/domain/Post"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

const run = (input: Partial<PlatformRules.ContentInput>): Either.Either<void, DomainError> =>
  Effect.runSync(Effect.either(PlatformRules.check({
    platforms: [],
    content: "",
    platformContent: {},
    threadPosts: [],
    hasMedia: false,
    mode: "publish",
    ...input
  })))

const failure = (input: Partial<PlatformRules.ContentInput>): DomainError => {
  const result = run(input)
  if (Either.isRight(result)) throw new Error("expected a failure")
  return result.left
}

const entry = (content: string, settings?: Record<string, unknown>, contentType?: string) =>
  new PlatformContentEntry({
    content,
    ...(settings === undefined ? {} : { settings }),
    ...(contentType === undefined ? {} : { contentType })
  })

describe("caption limits", () => {
  const cases: ReadonlyArray<readonly [Platform, number]> = [
    ["bluesky", 300],
    ["instagram", 2200],
    ["tiktok", 150],
    ["threads", 500],
    ["linkedin", 3000],
    ["telegram", 4096],
    ["discord", 2000],
    ["pinterest", 800],
    ["x", 280],
    ["facebook", 63206]
  ]
  // TikTok requires the user's privacy level to publish.
  const required = (platform: Platform): PlatformContent =>
    platform === "tiktok" ? { tiktok: entry("a".repeat(150), { privacyLevel: "SELF_ONLY" }) } : {}
  for (const [platform, limit] of cases) {
    it(`${platform}: ${limit} passes, ${limit + 1} is content_too_long`, () => {
      if (platform === "tiktok") {
        expect(Either.isRight(run({ platforms: [platform], platformContent: required(platform) }))).toBe(true)
        const error = failure({
          platforms: [platform],
          platformContent: { tiktok: entry("a".repeat(151), { privacyLevel: "SELF_ONLY" }) }
        })
        expect(error.code).toBe("content_too_long")
        expect(error.details).toMatchObject({
          platform,
          limit,
          length: limit + 1,
          field: "platform_content.tiktok.content"
        })
        return
      }
      expect(Either.isRight(run({ platforms: [platform], content: "a".repeat(limit) }))).toBe(true)
      const error = failure({ platforms: [platform], content: "a".repeat(limit + 1) })
      expect(error.code).toBe("content_too_long")
      expect(error.details).toMatchObject({ platform, limit, length: limit + 1, field: "content" })
    })
  }

  it("telegram with media is a caption of at most 1024", () => {
    expect(Either.isRight(run({ platforms: ["telegram"], content: "a".repeat(1024), hasMedia: true }))).toBe(true)
    expect(failure({ platforms: ["telegram"], content: "a".repeat(1025), hasMedia: true }).details).toMatchObject({
      limit: 1024,
      length: 1025
    })
  })

  it("youtube: the description is counted in UTF-8 bytes (5000)", () => {
    const title = { youtube: entry("é".repeat(2501), { title: "T" }) }
    expect(failure({ platforms: ["youtube"], platformContent: title }).details).toMatchObject({
      platform: "youtube",
      limit: 5000,
      length: 5002,
      unit: "bytes"
    })
  })

  it("the override content is what is checked for its platform", () => {
    const platformContent: PlatformContent = { x: entry("short") }
    expect(Either.isRight(run({ platforms: ["x"], content: "a".repeat(400), platformContent }))).toBe(true)
    const error = failure({ platforms: ["x"], content: "ok", platformContent: { x: entry("b".repeat(281)) } })
    expect(error.details).toMatchObject({ platform: "x", field: "platform_content.x.content" })
  })

  it("an override is checked even for a platform no account targets", () => {
    const error = failure({ platforms: [], platformContent: { tiktok: entry("c".repeat(151)) }, mode: "draft" })
    expect(error.code).toBe("content_too_long")
  })

  it("bluesky counts graphemes, not UTF-16 units", () => {
    const accented = "e\u0301" // one grapheme, two code points
    expect(Either.isRight(run({ platforms: ["bluesky"], content: accented.repeat(300) }))).toBe(true)
    expect(failure({ platforms: ["bluesky"], content: accented.repeat(301) }).details).toMatchObject({
      length: 301,
      unit: "graphemes"
    })
  })

  it("bluesky also caps the text at 3000 UTF-8 bytes", () => {
    const family = "👨‍👩‍👧‍👦" // one grapheme, 25 UTF-8 bytes
    expect(failure({ platforms: ["bluesky"], content: family.repeat(150) }).details).toMatchObject({
      limit: 3000,
      length: 3750,
      unit: "bytes"
    })
  })

  it("thread posts are checked on thread platforms", () => {
    const threadPosts = [new ThreadPost({ content: "fine" }), new ThreadPost({ content: "x".repeat(281) })]
    expect(failure({ platforms: ["x"], content: "hi", threadPosts }).details).toMatchObject({
      field: "threadPosts.1.content"
    })
    expect(Either.isRight(run({ platforms: ["linkedin"], content: "hi", threadPosts }))).toBe(true)
    const long = [new ThreadPost({ content: "y".repeat(501) })]
    expect(failure({ platforms: ["threads"], content: "hi", threadPosts: long }).details).toMatchObject({
      field: "threadPosts.0.content"
    })
  })
})

describe("x weighted length", () => {
  it("Latin counts 1, CJK 2, an emoji 2, a URL 23", () => {
    expect(TextCounting.xWeightedLength("hello")).toBe(5)
    expect(TextCounting.xWeightedLength("日本")).toBe(4)
    expect(TextCounting.xWeightedLength("👍")).toBe(2)
    expect(TextCounting.xWeightedLength("👍🏽")).toBe(2)
    expect(TextCounting.xWeightedLength("see https://example.com/a/very/long/path?x=1")).toBe(4 + 23)
    expect(TextCounting.xWeightedLength("www.example.com.")).toBe(24)
  })

  it("140 CJK characters fill a post; 141 do not fit", () => {
    expect(Either.isRight(run({ platforms: ["x"], content: "漢".repeat(140) }))).toBe(true)
    expect(failure({ platforms: ["x"], content: "漢".repeat(141) }).details).toMatchObject({ length: 282, limit: 280 })
  })

  it("a long URL fits where its characters would not", () => {
    const text = "a".repeat(250) + " https://example.com/" + "p".repeat(100)
    expect(TextCounting.xWeightedLength(text)).toBe(250 + 1 + 23)
    expect(Either.isRight(run({ platforms: ["x"], content: text }))).toBe(true)
  })
})

describe("settings", () => {
  const bad = (platform: Platform, settings: Record<string, unknown>, contentType?: string) =>
    failure({
      platforms: [platform],
      content: "hello",
      platformContent: {
        [platform]: entry("hello", {
          ...(platform === "youtube" ? { title: "T" } : {}),
          ...(platform === "tiktok" ? { privacyLevel: "SELF_ONLY" } : {}),
          ...settings
        }, contentType)
      },
      hasMedia: true
    })

  it.each(
    [
      ["tiktok", { privacyLevel: "EVERYONE" }, "platform_content.tiktok.settings.privacyLevel"],
      ["tiktok", { allowDuet: "yes" }, "platform_content.tiktok.settings.allowDuet"],
      ["tiktok", { videoCoverTimestamp: 1.5 }, "platform_content.tiktok.settings.videoCoverTimestamp"],
      ["youtube", { privacyStatus: "hidden" }, "platform_content.youtube.settings.privacyStatus"],
      ["youtube", { tags: ["a", 1] }, "platform_content.youtube.settings.tags"],
      ["youtube", { madeForKids: "no" }, "platform_content.youtube.settings.madeForKids"],
      ["linkedin", { visibility: "FRIENDS" }, "platform_content.linkedin.settings.visibility"],
      ["x", { replySettings: "nobody" }, "platform_content.x.settings.replySettings"],
      ["x", { mediaAltText: "a".repeat(1001) }, "platform_content.x.settings.mediaAltText"],
      ["facebook", { videoType: "short" }, "platform_content.facebook.settings.videoType"],
      ["facebook", { link: "not a url" }, "platform_content.facebook.settings.link"],
      ["threads", { replyControl: "anyone" }, "platform_content.threads.settings.replyControl"],
      ["instagram", { altText: "a".repeat(101) }, "platform_content.instagram.settings.altText"],
      ["pinterest", { boardId: 123 }, "platform_content.pinterest.settings.boardId"],
      ["pinterest", { title: "a".repeat(101) }, "platform_content.pinterest.settings.title"],
      ["pinterest", { link: "ftp://example.com/x" }, "platform_content.pinterest.settings.link"],
      ["pinterest", { link: `https://example.com/${"a".repeat(2040)}` }, "platform_content.pinterest.settings.link"],
      ["pinterest", { coverKeyFrameTime: -1 }, "platform_content.pinterest.settings.coverKeyFrameTime"]
    ] as const
  )("%s %j is a validation_error at its path", (platform, settings, path) => {
    const error = bad(platform, settings)
    expect(error.code).toBe("validation_error")
    expect(error.details?.validation_errors).toEqual([expect.objectContaining({ path })])
  })

  it("accepts every listed value", () => {
    const ok = run({
      platforms: ["tiktok", "youtube", "linkedin", "x", "facebook", "threads", "instagram"],
      content: "hello",
      hasMedia: true,
      platformContent: {
        tiktok: entry("t", {
          privacyLevel: "SELF_ONLY",
          allowComments: true,
          allowDuet: false,
          allowStitch: true,
          videoCoverTimestamp: 1000
        }),
        youtube: entry("d", {
          title: "A title",
          privacyStatus: "unlisted",
          tags: ["a"],
          categoryId: "22",
          madeForKids: false
        }),
        linkedin: entry("l", { visibility: "CONNECTIONS", firstComment: "first" }),
        x: entry("x", { replySettings: "mentionedUsers", mediaAltText: "alt" }),
        facebook: entry("f", { videoType: "video", link: "https://example.com" }),
        threads: entry("th", { replyControl: "mentioned" }),
        instagram: entry("i", { altText: "alt", firstComment: "c" }, "Trial Reel"),
        pinterest: entry("p", {
          boardId: "549755885175",
          title: "a".repeat(100),
          link: "https://example.com/recipe",
          coverImageUrl: "https://example.com/cover.jpg",
          coverKeyFrameTime: 2
        })
      }
    })
    expect(Either.isRight(ok)).toBe(true)
  })

  it("instagram contentType must be a listed one", () => {
    const error = bad("instagram", {}, "Carousel")
    expect(error.details?.validation_errors).toEqual([
      expect.objectContaining({ path: "platform_content.instagram.contentType" })
    ])
  })

  it("youtube needs a title of at most 100 characters when it is targeted", () => {
    const missing = failure({ platforms: ["youtube"], content: "d", hasMedia: true })
    expect(missing.details?.validation_errors).toEqual([
      expect.objectContaining({ path: "platform_content.youtube.settings.title" })
    ])
    const long = failure({
      platforms: ["youtube"],
      platformContent: { youtube: entry("d", { title: "t".repeat(101) }) },
      hasMedia: true
    })
    expect(long.code).toBe("validation_error")
  })

  it("a draft is not held to required fields, only to what it has", () => {
    expect(Either.isRight(run({ platforms: ["youtube"], mode: "draft" }))).toBe(true)
    expect(failure({ platforms: ["youtube"], mode: "publish", hasMedia: true }).code).toBe("validation_error")
  })

  it("a post needs text or media for each platform", () => {
    const error = failure({ platforms: ["x"], content: "  " })
    expect(error.code).toBe("validation_error")
    expect(Either.isRight(run({ platforms: ["x"], content: "", hasMedia: true }))).toBe(true)
  })

  it("reports every settings problem at once", () => {
    const error = bad("tiktok", { privacyLevel: "nope", allowDuet: 1 })
    expect(error.details?.validation_errors).toHaveLength(2)
  })
})

describe("one source of truth with the media table", () => {
  it("instagram's content types are those the media rules know", async () => {
    const MediaRules = await import("@herald/core/media/MediaRules")
    for (const [platform, types] of Object.entries(PlatformSettings.contentTypes)) {
      expect(Object.keys(MediaRules.mediaStructure[platform as Platform].contentTypes ?? {}).sort()).toEqual(
        [...types!].sort()
      )
    }
  })
})

describe("first comments", () => {
  const comment = (platform: Platform, text: string, hasMedia = true) =>
    run({
      platforms: [platform],
      content: "main",
      hasMedia,
      platformContent: {
        [platform]: entry("main", {
          firstComment: text,
          ...(platform === "youtube" ? { title: "t" } : {}),
          ...(platform === "tiktok" ? { privacyLevel: "SELF_ONLY" } : {})
        })
      }
    })

  it.each(
    [
      ["discord", 2000, "characters"],
      ["telegram", 4096, "utf16_units"],
      ["x", 280, "weighted_characters"],
      ["bluesky", 300, "graphemes"],
      ["threads", 500, "characters"],
      ["facebook", 8000, "characters"],
      ["instagram", 2200, "characters"],
      ["linkedin", 1250, "characters"],
      ["youtube", 10000, "characters"]
    ] as const
  )(
    "%s: a first comment over %i %s is content_too_long at its path; at the limit it passes",
    (platform, limit, unit) => {
      expect(Either.isRight(comment(platform, "a".repeat(limit)))).toBe(true)
      const result = comment(platform, "a".repeat(limit + 1))
      if (Either.isRight(result)) throw new Error("expected a failure")
      expect(result.left.code).toBe("content_too_long")
      expect(result.left.details).toMatchObject({
        platform,
        limit,
        unit,
        length: limit + 1,
        field: `platform_content.${platform}.settings.firstComment`
      })
    }
  )

  it("the limit is the platform's own counting: a Telegram reply counts UTF-16 units, an X reply is weighted", () => {
    // 2100 emoji are 4200 UTF-16 units: over Telegram's 4096.
    expect(Either.isLeft(comment("telegram", "😀".repeat(2100)))).toBe(true)
    expect(Either.isRight(comment("telegram", "😀".repeat(2048)))).toBe(true)
    // 141 CJK characters weigh 282 on X.
    expect(Either.isLeft(comment("x", "漢".repeat(141)))).toBe(true)
  })

  it("a draft's first comment is checked too", () => {
    const result = run({ mode: "draft", platformContent: { discord: entry("d", { firstComment: "a".repeat(2001) }) } })
    expect(Either.isLeft(result) && result.left.code).toBe("content_too_long")
  })
})

describe("tiktok content-sharing rules", () => {
  it("privacyLevel is required to publish (no default), not for a draft", () => {
    const error = failure({ platforms: ["tiktok"], content: "v", hasMedia: true, platformContent: {} })
    expect(error.code).toBe("validation_error")
    expect(error.details?.validation_errors).toEqual([
      expect.objectContaining({ path: "platform_content.tiktok.settings.privacyLevel" })
    ])
    expect(Either.isRight(run({ platforms: ["tiktok"], content: "v", hasMedia: true, mode: "draft" }))).toBe(true)
  })

  it("brandContent, brandOrganic and aiGenerated are booleans; branded content cannot be SELF_ONLY", () => {
    const check = (settings: Record<string, unknown>) =>
      run({ platforms: ["tiktok"], content: "v", hasMedia: true, platformContent: { tiktok: entry("v", settings) } })
    expect(
      Either.isRight(
        check({ privacyLevel: "PUBLIC_TO_EVERYONE", brandContent: true, brandOrganic: true, aiGenerated: true })
      )
    )
      .toBe(true)
    const typed = check({ privacyLevel: "PUBLIC_TO_EVERYONE", brandContent: "yes", aiGenerated: 1 })
    expect(Either.isLeft(typed) && typed.left.details?.validation_errors).toEqual([
      expect.objectContaining({ path: "platform_content.tiktok.settings.brandContent" }),
      expect.objectContaining({ path: "platform_content.tiktok.settings.aiGenerated" })
    ])
    const privateBrand = check({ privacyLevel: "SELF_ONLY", brandContent: true })
    expect(Either.isLeft(privateBrand) && privateBrand.left.details?.validation_errors).toEqual([
      expect.objectContaining({ path: "platform_content.tiktok.settings.brandContent" })
    ])
  })
})
