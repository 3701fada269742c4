/**
 * The linear text counts of TextCounting against the implementations they replaced (kept here as the
 * oracle): identical on short random texts, with windows small enough that every cluster kind
 * crosses a window's edge; the early stop; and long hostile texts counted without the old quadratic
 * cost (the assertions are on results, the sizes make the old code take seconds to minutes).
 */
import { describe, expect, it } from "@effect/vitest"
import * as PlatformRules from "@herald/core/platforms/PlatformRules"
import * as TextCounting from "@herald/core/platforms/TextCounting"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"

// ---------------------------------------------------------------------------------------------------
// The previous implementations (quadratic on long texts), as the oracle
// ---------------------------------------------------------------------------------------------------

const segmenter = new Intl.Segmenter("en", { granularity: "grapheme" })
const pictographic = /\p{Extended_Pictographic}|\p{Regional_Indicator}/u
const oldGraphemes = (text: string): number => {
  let n = 0
  for (const _ of segmenter.segment(text)) n += 1
  return n
}
const oldCodePoints = (text: string): number => {
  let n = 0
  for (const _ of text) n += 1
  return n
}
const oldUtf8Bytes = (text: string): number => new TextEncoder().encode(text).length
const oldUrlPattern = /(?:https?:\/\/|www\.)[^\s]+?(?=[.,:;!?)\]'"]*(?:\s|$))/giu
const oldWeight = (cp: number): number =>
  [[0, 4351], [8192, 8205], [8208, 8223], [8242, 8247]].some(([s, e]) => cp >= s! && cp <= e!) ? 1 : 2
const oldXWeightedLength = (text: string): number => {
  const normalized = text.normalize("NFC")
  let total = 0
  let rest = ""
  let last = 0
  for (const match of normalized.matchAll(oldUrlPattern)) {
    rest += normalized.slice(last, match.index) + " "
    total += 22
    last = match.index + match[0].length
  }
  rest += normalized.slice(last)
  for (const { segment } of segmenter.segment(rest)) {
    if (pictographic.test(segment)) {
      total += 2
      continue
    }
    for (const char of segment) total += oldWeight(char.codePointAt(0) ?? 0)
  }
  return total
}
const oldThreadsLength = (text: string): number => {
  let total = 0
  for (const { segment } of segmenter.segment(text)) {
    total += pictographic.test(segment) ? oldUtf8Bytes(segment) : oldCodePoints(segment)
  }
  return total
}

// ---------------------------------------------------------------------------------------------------
// Texts
// ---------------------------------------------------------------------------------------------------

/** Pieces that exercise every grapheme rule and X's URL detection. */
const pieces = [
  "a",
  "Z",
  " ",
  "\n",
  "\r",
  "\r\n",
  "\t",
  ".",
  ",",
  ")",
  "]",
  "'",
  "\"",
  "!",
  "?",
  ":",
  ";",
  "/",
  "http://",
  "https://",
  "www.",
  "HTTPS://",
  "example.com",
  "\u00a0",
  "\u3000",
  "é",
  "e\u0301",
  "\u0301",
  "\u0308\u0301",
  "漢",
  "日本",
  "한",
  "\u1100",
  "\u1161",
  "\u11a8",
  "\uac00",
  "👍",
  "👍🏽",
  "\u{1f3fd}",
  "\u200d",
  "👨‍👩‍👧‍👦",
  "🏳️‍🌈",
  "\ufe0f",
  "🇫",
  "🇷",
  "🇫🇷",
  "#\ufe0f\u20e3",
  "क",
  "्",
  "ष",
  "\u0915\u094d\u0937",
  "\u0600",
  "\ud83d",
  "\ude00",
  "かな",
  "カ",
  "\u3099",
  "가",
  "각",
  "\u1100가",
  "\u0600",
  "\u0600a",
  "a\u0600",
  "\ufe00",
  "漢\udb40\udd00",
  "Ω",
  "Ж",
  "\u0483",
  "©",
  "®",
  "©\ufe0f",
  "‼",
  "—",
  "…",
  "‰",
  "\u00ad",
  "\u200b",
  "\u200c",
  "ǅ",
  "ạ",
  "\u{110bd}",
  "\u{110bd}a",
  "\u0d4e",
  "\ua960",
  "\u1100\u1161",
  "😀",
  "\u{1f1e6}",
  "\n\u0301",
  "\u00ad\u0301",
  "\u007f\u0301",
  "o\u0302\u0301",
  "\u2019",
  "\u2014",
  "ß",
  "ﬁ",
  "Å",
  "A\u030a"
]

const text = FastCheck.array(FastCheck.constantFrom(...pieces), { maxLength: 40 }).map((xs) => xs.join(""))
const mixed = FastCheck.oneof(
  text,
  FastCheck.string({ maxLength: 40, unit: "grapheme" }),
  FastCheck.string({ maxLength: 40, unit: "binary" })
)

describe("linear counts equal the previous ones", () => {
  it.prop("grapheme clusters, whatever the window", [mixed, FastCheck.integer({ min: 1, max: 9 })], ([t, w]) => {
    expect([...TextCounting.graphemeClusters(t, w)]).toEqual([...segmenter.segment(t)].map((s) => s.segment))
  }, { fastCheck: { numRuns: 500 } })

  it.prop("graphemes, code points, UTF-8 bytes", [mixed], ([t]) => {
    expect(TextCounting.graphemes(t)).toBe(oldGraphemes(t))
    expect(TextCounting.codePoints(t)).toBe(oldCodePoints(t))
    expect(TextCounting.utf8Bytes(t)).toBe(oldUtf8Bytes(t))
  }, { fastCheck: { numRuns: 500 } })

  it.prop("X's weighted length and URLs", [mixed], ([t]) => {
    expect(TextCounting.xWeightedLength(t)).toBe(oldXWeightedLength(t))
    const normalized = t.normalize("NFC")
    expect(TextCounting.xUrls(normalized)).toEqual(
      [...normalized.matchAll(oldUrlPattern)].map((m) => ({ index: m.index, length: m[0].length }))
    )
  }, { fastCheck: { numRuns: 500 } })

  it.prop("Threads' length", [mixed], ([t]) => {
    expect(TextCounting.threadsLength(t)).toBe(oldThreadsLength(t))
  }, { fastCheck: { numRuns: 500 } })

  it.prop(
    "each ...UpTo is exact up to max and above max past it",
    [mixed, FastCheck.integer({ min: 0, max: 60 })],
    ([t, max]) => {
      const pairs: ReadonlyArray<readonly [(s: string, m: number) => number, (s: string) => number]> = [
        [TextCounting.graphemesUpTo, oldGraphemes],
        [TextCounting.codePointsUpTo, oldCodePoints],
        [TextCounting.utf8BytesUpTo, oldUtf8Bytes],
        [TextCounting.xWeightedLengthUpTo, oldXWeightedLength],
        [TextCounting.threadsLengthUpTo, oldThreadsLength]
      ]
      for (const [upTo, full] of pairs) {
        const exact = full(t)
        const counted = upTo(t, max)
        if (exact <= max) expect(counted).toBe(exact)
        else expect(counted).toBeGreaterThan(max)
      }
    },
    { fastCheck: { numRuns: 300 } }
  )

  it("a cluster longer than the window is still one cluster", () => {
    const zalgo = "a" + "\u0301".repeat(1000) + "b"
    expect([...TextCounting.graphemeClusters(zalgo, 4)]).toEqual(["a" + "\u0301".repeat(1000), "b"])
    expect(TextCounting.graphemes("🇫🇷".repeat(700))).toBe(700)
  })

  it("a window never ends between the halves of a surrogate pair (lone surrogates included)", () => {
    for (const t of ["🏳️‍🌈🏳️‍🌈", "\ud83d🏽\ud83d🏽", "a\ude00👍🏽\ud83d"]) {
      for (let w = 1; w <= 6; w++) {
        expect([...TextCounting.graphemeClusters(t, w)]).toEqual([...segmenter.segment(t)].map((s) => s.segment))
      }
    }
  })
})

describe("content_too_long reports the length", () => {
  const failure = (content: string) =>
    Effect.runSync(Effect.flip(PlatformRules.check({
      platforms: ["x"],
      content,
      platformContent: {},
      threadPosts: [],
      hasMedia: false,
      mode: "publish"
    })))

  it("exactly up to 10 times the limit; beyond, where counting stopped, flagged as a minimum", () => {
    expect(failure("a".repeat(2_800)).details).toMatchObject({ length: 2_800, limit: 280 })
    expect(failure("a".repeat(2_800)).details?.["length_is_minimum"]).toBeUndefined()
    const long = failure("a".repeat(400_000))
    expect(long.details).toMatchObject({ length: 2_801, limit: 280, length_is_minimum: true })
    expect(long.message).toContain("more than 2800 weighted characters")
  })
})

describe("long hostile texts", () => {
  // The old counts took 169 s on 400 KB; these answer at once (no timing asserted).
  const long = 400_000
  it("400 KB of one letter, of CJK, of emoji: counted past the limit, stopping early", () => {
    for (const t of ["a".repeat(long), "漢".repeat(long), "👍".repeat(long / 2)]) {
      expect(TextCounting.graphemesUpTo(t, 300)).toBe(301)
      expect(TextCounting.xWeightedLengthUpTo(t, 280)).toBeGreaterThan(280)
      expect(TextCounting.xWeightedLengthUpTo(t, 280)).toBeLessThanOrEqual(282)
      expect(TextCounting.threadsLengthUpTo(t, 500)).toBeGreaterThan(500)
    }
  })

  it("a URL followed by 400 KB of punctuation, and 100,000 URL prefixes", () => {
    const dots = "see http://a" + ".".repeat(long) + " end"
    expect(TextCounting.xUrls(dots)).toEqual([{ index: 4, length: 8 }])
    expect(TextCounting.xWeightedLength(dots)).toBe(4 + 23 + long + 4)
    expect(TextCounting.xUrls("www. ".repeat(100_000))).toEqual([])
    expect(TextCounting.xUrls("http://x ".repeat(50_000))).toHaveLength(50_000)
  })

  it("full counts of 100,000 characters are exact", () => {
    expect(TextCounting.graphemes("ab".repeat(50_000))).toBe(100_000)
    expect(TextCounting.graphemes("e\u0301".repeat(50_000))).toBe(50_000)
    expect(TextCounting.threadsLength("👍".repeat(50_000))).toBe(200_000)
  })
})
