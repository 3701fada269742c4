import { describe, expect, it } from "@effect/vitest"
import * as TextLimits from "../src/platforms/TextLimits.js"
import * as TextPreview from "../src/platforms/TextPreview.js"

describe("TextPreview.measure: a text as a platform counts it, and where the part that fits ends", () => {
  it("a text within every limit fits whole, with its length in each limit's unit", () => {
    const measured = TextPreview.measure("bluesky", "Hello 👋🏽", false)
    expect(measured.fits).toBe("Hello 👋🏽".length)
    expect(measured.limits).toEqual([
      { limit: 300, unit: "graphemes", length: 7, length_is_minimum: false, over: false },
      { limit: 3000, unit: "bytes", length: 14, length_is_minimum: false, over: false }
    ])
  })

  it("X: a URL counts 23 however long, so the part that fits holds more characters than the limit", () => {
    const url = `https://example.com/${"a".repeat(100)}`
    const text = `${url} ${"b".repeat(300)}`
    const measured = TextPreview.measure("x", text, false)
    expect(measured.limits[0]).toMatchObject({ length: 23 + 1 + 300, over: true })
    // 23 + 1 + 256 = 280: the cut is after the 256th b.
    expect(measured.fits).toBe(url.length + 1 + 256)
    expect(TextLimits.captionLimits.x.count(text.slice(0, measured.fits))).toBe(280)
  })

  it("never cuts inside a character: Bluesky counts an emoji with its skin tone as one", () => {
    const text = "👋🏽".repeat(301)
    const measured = TextPreview.measure("bluesky", text, false)
    // 301 graphemes (over 300) and 2408 bytes (within 3000).
    expect(measured.limits.map((l) => l.over)).toEqual([true, false])
    expect(measured.fits).toBe("👋🏽".length * 300)
  })

  it("the strictest limit decides: Bluesky's 3000 bytes before its 300 characters", () => {
    const text = "👩‍👩‍👧".repeat(200) // 200 graphemes, 18 bytes each
    const measured = TextPreview.measure("bluesky", text, false)
    expect(measured.limits.map((l) => l.over)).toEqual([false, true])
    expect(measured.fits).toBe("👩‍👩‍👧".length * Math.floor(3000 / 18))
  })

  it("a text far over its limit reports where counting stopped, ten times the limit", () => {
    const measured = TextPreview.measure("tiktok", "z".repeat(5000), false)
    expect(measured.limits[0]).toMatchObject({ limit: 150, length: 1500, length_is_minimum: true, over: true })
    expect(measured.fits).toBe(150)
  })

  it("Telegram with media is a caption (1024) rather than a message (4096)", () => {
    expect(TextPreview.measure("telegram", "t".repeat(2000), true).limits[0]).toMatchObject({ limit: 1024, over: true })
    expect(TextPreview.measure("telegram", "t".repeat(2000), false).limits[0]).toMatchObject({
      limit: 4096,
      over: false
    })
  })
})
