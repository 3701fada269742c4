/**
 * Captions held to the platform's limit: `fitCaption` never returns a caption over any limit (with
 * the posts' own counting: X weighted characters, Bluesky graphemes and bytes), cuts at a word
 * boundary with an ellipsis, keeps whole graphemes, and leaves fitting captions untouched.
 */
import { describe, expect, it } from "@effect/vitest"
import * as AiGeneration from "@herald/core/ai/AiGeneration"
import { platforms } from "@herald/core/domain/Platform"
import * as TextCounting from "@herald/core/platforms/TextCounting"
import * as TextLimits from "@herald/core/platforms/TextLimits"
import * as fc from "effect/FastCheck"

describe("AiGeneration.fitCaption", () => {
  it("leaves a fitting caption as it is (trimmed of outer spaces)", () => {
    expect(AiGeneration.fitCaption("  Hello world  ", AiGeneration.captionLimitsFor("x"))).toBe("Hello world")
  })

  it("cuts an over-long caption at a word boundary with an ellipsis", () => {
    const text = "word ".repeat(100).trim()
    const fitted = AiGeneration.fitCaption(text, AiGeneration.captionLimitsFor("tiktok"))!
    expect(TextLimits.captionLimits.tiktok.count(fitted)).toBeLessThanOrEqual(150)
    expect(fitted.endsWith("word…")).toBe(true)
    expect(fitted.length).toBeGreaterThan(140)
  })

  it("counts as posts do: X weighs CJK double, Bluesky counts graphemes and bytes", () => {
    const cjk = "漢".repeat(200)
    const x = AiGeneration.fitCaption(cjk, AiGeneration.captionLimitsFor("x"))!
    expect(TextCounting.xWeightedLength(x)).toBeLessThanOrEqual(280)
    expect(x.length).toBeLessThan(141)
    const family = "👨‍👩‍👧‍👦".repeat(400)
    const bsky = AiGeneration.fitCaption(family, AiGeneration.captionLimitsFor("bluesky"))!
    expect(TextCounting.graphemes(bsky)).toBeLessThanOrEqual(300)
    expect(TextCounting.utf8Bytes(bsky)).toBeLessThanOrEqual(3000)
    // Whole graphemes only: the cut never splits the family emoji.
    expect(bsky.replace(/…$/, "").split("👨‍👩‍👧‍👦").every((s) => s === "")).toBe(true)
  })

  it("holds Telegram captions to the 1024 of a media caption", () => {
    expect(AiGeneration.captionLimitsFor("telegram").map((l) => l.limit)).toEqual([1024, 4096])
    const fitted = AiGeneration.fitCaption("a ".repeat(3000), AiGeneration.captionLimitsFor("telegram"))!
    expect(fitted.length).toBeLessThanOrEqual(1024)
  })

  it("never returns a caption over any platform's limits (property)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...platforms),
        fc.array(
          fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom(" ", "https://example.com/a", "漢字", "👍🏽", "#tag")),
          { maxLength: 700 }
        ),
        (platform, parts) => {
          const limits = AiGeneration.captionLimitsFor(platform)
          const fitted = AiGeneration.fitCaption(parts.join(""), limits)
          return fitted === undefined || limits.every((l) => l.count(fitted) <= l.limit)
        }
      ),
      { numRuns: 200 }
    )
  })

  it("gives nothing for a blank caption", () => {
    expect(AiGeneration.fitCaption("   ", AiGeneration.captionLimitsFor(undefined))).toBeUndefined()
  })
})
