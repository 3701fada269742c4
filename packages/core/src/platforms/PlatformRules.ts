/**
 * Per-platform content rules of POST /posts: caption limits (each counted the way its platform
 * counts), the settings of `platform_content` (enums and types of the spec's table) and the fields a
 * platform requires. Pure: no I/O.
 *
 * A post's text on a platform is the override `platform_content[platform].content` when an entry is
 * given (even empty), else the main `content` — the dispatcher publishes exactly that.
 */
import * as Effect from "effect/Effect"
import { DomainError } from "../kernel/Errors.js"
import type { Platform } from "./Platform.js"
import type { PlatformContent, PlatformContentEntry, ThreadPost } from "../posts/Post.js"

// ---------------------------------------------------------------------------------------------------
// Counting
// ---------------------------------------------------------------------------------------------------

const segmenter = new Intl.Segmenter("en", { granularity: "grapheme" })

/**
 * Every count here is one pass over the text, and each `...UpTo(text, max)` stops as soon as the
 * count passes `max` (returning a number above `max`, exact only up to `max`): a 400 KB text over a
 * 300-grapheme limit costs what 301 graphemes cost.
 *
 * `Intl.Segmenter` itself is not linear on long strings (each step costs with the string's length:
 * 100,000 characters took seconds), so it is only ever given short windows: a window is segmented,
 * its last segment (perhaps cut by the window's end) dropped, and the next window starts where that
 * segment started. A grapheme boundary depends only on what precedes it, and nothing before a true
 * boundary changes the boundaries after it, so the clusters are exactly those of the whole text. A
 * window holding a single cluster is doubled until it holds two.
 */
const segmentWindow = 256

/** The extended grapheme clusters of `text`, in order, as `Intl.Segmenter` finds them in the whole text. */
export function* graphemeClusters(text: string, window: number = segmentWindow): Generator<string, void, undefined> {
  let position = 0
  let span = window
  while (position < text.length) {
    let end = Math.min(text.length, position + span)
    // Never between the two halves of a surrogate pair: a boundary depends on the whole character after it.
    const last = text.charCodeAt(end - 1)
    const next = text.charCodeAt(end)
    if (end < text.length && last >= 0xd800 && last <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) end += 1
    const part = text.slice(position, end)
    if (end === text.length) {
      for (const { segment } of segmenter.segment(part)) yield segment
      return
    }
    const found: Array<string> = []
    for (const { segment } of segmenter.segment(part)) found.push(segment)
    if (found.length < 2) {
      span *= 2
      continue
    }
    found.pop()
    for (const segment of found) {
      position += segment.length
      yield segment
    }
    span = window
  }
}

/**
 * Characters that never join a neighbour of the same kind into one cluster: ASCII, the Latin letters
 * of Latin-1 and Latin Extended (not the pictographs © and ®), Greek and Cyrillic letters, common
 * punctuation (dashes, quotes, bullets, ellipsis, per mille), CJK ideographs, kana and Hangul
 * syllables. Between two of them there is always a grapheme boundary (none is a Prepend, Extend,
 * SpacingMark, ZWJ, regional indicator, pictograph, Hangul jamo or Indic consonant), except CR before
 * LF; each is one code unit and one code point.
 */
const isSimple = (c: number): boolean =>
  c < 0x80 ||
  (c >= 0xa0 && c <= 0x2ff && c !== 0xa9 && c !== 0xae) ||
  (c >= 0x370 && c <= 0x3ff) || (c >= 0x400 && c <= 0x482) || (c >= 0x48a && c <= 0x52f) ||
  (c >= 0x1e00 && c <= 0x1eff) || (c >= 0x2010 && c <= 0x2027) || (c >= 0x2030 && c <= 0x203b) ||
  (c >= 0x4e00 && c <= 0x9fff) || (c >= 0x3400 && c <= 0x4dbf) || (c >= 0x3041 && c <= 0x3096) ||
  (c >= 0x30a1 && c <= 0x30fa) || (c >= 0xac00 && c <= 0xd7a3)

/**
 * Code points after which a boundary is not certain even before a simple character: the blocks
 * holding the Prepend characters (Arabic, Syriac, Malayalam, the Brahmic scripts of plane 1) and the
 * Hangul leading jamo (L × LV).
 */
const joinsForward = (cp: number): boolean =>
  (cp >= 0x600 && cp <= 0x8ff) || (cp >= 0xd00 && cp <= 0xd7f) || (cp >= 0x11000 && cp <= 0x11fff) ||
  (cp >= 0x1100 && cp <= 0x115f) || (cp >= 0xa960 && cp <= 0xa97f)

/** A pictograph that nothing before it joins, unless a ZWJ (GB11): not an emoji modifier or extender. */
const freePictograph = /^(?!\p{Emoji_Modifier}|\p{Grapheme_Extend}|\p{Regional_Indicator})\p{Extended_Pictographic}$/u

/**
 * Whether there is certainly a grapheme boundary before the code unit at `j` (0 < j < length): the
 * character there is simple (nothing joins it to what precedes, by its own kind) or a pictograph not
 * preceded by a ZWJ, and the one before neither prepends nor is CR before LF.
 */
const certainBefore = (text: string, j: number): boolean => {
  const b = text.charCodeAt(j)
  let a = text.charCodeAt(j - 1)
  if (!isSimple(b)) {
    if (b < 0xd800 || b > 0xdbff || a === 0x200d) return false
    const cp = text.codePointAt(j) ?? 0
    if (cp <= 0xffff || !freePictograph.test(String.fromCodePoint(cp))) return false
  }
  if (a === 13) return b !== 10
  if (a >= 0xdc00 && a <= 0xdfff && j >= 2) {
    const high = text.charCodeAt(j - 2)
    if (high >= 0xd800 && high <= 0xdbff) a = ((high - 0xd800) << 10) + (a - 0xdc00) + 0x10000
  }
  return !joinsForward(a)
}

/** Whether `text[from, to)` is one code point. */
const oneCodePoint = (text: string, from: number, to: number): boolean => {
  if (to - from === 1) return true
  if (to - from !== 2) return false
  const high = text.charCodeAt(from)
  const low = text.charCodeAt(from + 1)
  return high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff
}

/**
 * Whether `text[from, to)` is a simple character that is no control, followed only by combining
 * diacritical marks (U+0300–U+036F, all Extend): one cluster (an accented letter, decomposed).
 */
const accentedLetter = (text: string, from: number, to: number): boolean => {
  const base = text.charCodeAt(from)
  if (!isSimple(base) || base < 0x20 || base === 0x7f || base === 0xad) return false
  for (let k = from + 1; k < to; k++) {
    const mark = text.charCodeAt(k)
    if (mark < 0x300 || mark > 0x36f) return false
  }
  return true
}

/**
 * The sum of `weigh` over the clusters of `text`, stopping once it passes `max`. The text is cut at
 * certain boundaries (`certainBefore`); a piece that is one simple character is weighed by
 * `simpleWeight`, a piece that is one code point or an accented letter by `weigh` (it is a cluster),
 * without the segmenter (most text is that, emoji included); only other pieces go through
 * `graphemeClusters`.
 */
const sumClusters = (
  text: string,
  weigh: (cluster: string) => number,
  simpleWeight: (code: number) => number,
  max: number
): number => {
  let total = 0
  let i = 0
  const n = text.length
  // Invariant: a grapheme boundary is certain at i.
  while (i < n) {
    let end = i + 1
    while (end < n && !certainBefore(text, end)) end += 1
    const c = text.charCodeAt(i)
    if (end === i + 1 && isSimple(c)) {
      total += simpleWeight(c)
    } else if (oneCodePoint(text, i, end) || accentedLetter(text, i, end)) {
      total += weigh(text.slice(i, end))
    } else {
      for (const cluster of graphemeClusters(text.slice(i, end))) {
        total += weigh(cluster)
        if (total > max) return total
      }
    }
    if (total > max) return total
    i = end
  }
  return total
}

const one = (): number => 1

/** Characters as people see them (extended grapheme clusters), counting stopped past `max`. */
export const graphemesUpTo = (text: string, max: number): number => sumClusters(text, one, one, max)

/** Characters as people see them (extended grapheme clusters). */
export const graphemes = (text: string): number => graphemesUpTo(text, Infinity)

/** Unicode code points, counting stopped past `max`. */
export const codePointsUpTo = (text: string, max: number): number => {
  let n = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    // A high surrogate followed by a low one is one code point.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) i += 1
    }
    n += 1
    if (n > max) return n
  }
  return n
}

/** Unicode code points. */
export const codePoints = (text: string): number => codePointsUpTo(text, Infinity)

/** UTF-16 code units (what JavaScript's `length` and Telegram count). */
export const utf16Units = (text: string): number => text.length

/** UTF-8 bytes (a lone surrogate counts 3, as TextEncoder writes U+FFFD), counting stopped past `max`. */
export const utf8BytesUpTo = (text: string, max: number): number => {
  let n = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x80) n += 1
    else if (c < 0x800) n += 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        n += 4
        i += 1
      } else n += 3
    } else n += 3
    if (n > max) return n
  }
  return n
}

export const utf8Bytes = (text: string): number => utf8BytesUpTo(text, Infinity)

const pictographic = /\p{Extended_Pictographic}|\p{Regional_Indicator}/u

/** Every URL counts as this many characters on X (t.co wrapping). */
export const xUrlWeight = 23

/** The characters X leaves out of the end of a URL. */
const xTrailingPunctuation = new Set([".", ",", ":", ";", "!", "?", ")", "]", "'", "\""])

/**
 * X's URL detection, simplified from twitter-text: `http(s)://` or `www.` followed by non-space
 * characters, with trailing punctuation left out of the URL. (The same matches as the regex
 * `/(?:https?:\/\/|www\.)[^\s]+?(?=[.,:;!?)\]'"]*(?:\s|$))/giu`, found in linear time: that regex
 * retries its lookahead at every character, quadratic on a long run of punctuation.)
 */
export const xUrls = (text: string): ReadonlyArray<{ readonly index: number; readonly length: number }> => {
  const start = /https?:\/\/|www\./giu
  const run = /[^\s]*/uy
  const found: Array<{ index: number; length: number }> = []
  let from = 0
  while (from < text.length) {
    start.lastIndex = from
    const match = start.exec(text)
    if (match === null) break
    const bodyStart = match.index + match[0].length
    run.lastIndex = bodyStart
    const runEnd = bodyStart + (run.exec(text)?.[0].length ?? 0)
    if (runEnd === bodyStart) {
      from = match.index + 1
      continue
    }
    let end = runEnd
    while (end > bodyStart && xTrailingPunctuation.has(text[end - 1]!)) end -= 1
    // At least one character after the prefix (the trailing punctuation is all ASCII: one unit).
    if (end === bodyStart) end = bodyStart + 1
    found.push({ index: match.index, length: end - match.index })
    from = end
  }
  return found
}

/** The code-point ranges twitter-text weighs 1; everything else weighs 2. */
const xLightRanges: ReadonlyArray<readonly [number, number]> = [
  [0, 4351],
  [8192, 8205],
  [8208, 8223],
  [8242, 8247]
]

const xCodePointWeight = (cp: number): number =>
  xLightRanges.some(([start, end]) => cp >= start && cp <= end) ? 1 : 2

const xClusterWeight = (cluster: string): number => {
  if (pictographic.test(cluster)) return 2
  let total = 0
  for (const char of cluster) total += xCodePointWeight(char.codePointAt(0) ?? 0)
  return total
}

/** A simple character's weight on X: its code point's (none is a pictograph). */
const xSimpleWeight = (code: number): number => xCodePointWeight(code)

/** X's weighted length (see `xWeightedLength`), counting stopped past `max`. */
export const xWeightedLengthUpTo = (text: string, max: number): number => {
  const normalized = text.normalize("NFC")
  let total = 0
  let rest = ""
  let last = 0
  for (const url of xUrls(normalized)) {
    rest += normalized.slice(last, url.index) + " "
    total += xUrlWeight - 1
    last = url.index + url.length
  }
  if (total > max) return total
  rest += normalized.slice(last)
  return total + sumClusters(rest, xClusterWeight, xSimpleWeight, max - total)
}

/**
 * X's weighted length (twitter-text v3 configuration): the text is NFC-normalized; every URL counts
 * 23; an emoji (a whole grapheme cluster, with its modifiers and joiners) counts 2; other code points
 * count 1 in the Latin and general-punctuation ranges and 2 elsewhere (CJK and most other scripts).
 */
export const xWeightedLength = (text: string): number => xWeightedLengthUpTo(text, Infinity)

const threadsClusterWeight = (cluster: string): number =>
  pictographic.test(cluster) ? utf8Bytes(cluster) : codePoints(cluster)

/** Threads' length (see `threadsLength`), counting stopped past `max`. */
export const threadsLengthUpTo = (text: string, max: number): number =>
  sumClusters(text, threadsClusterWeight, one, max)

/** Threads counts emoji as their UTF-8 bytes, other characters as one each. */
export const threadsLength = (text: string): number => threadsLengthUpTo(text, Infinity)

// ---------------------------------------------------------------------------------------------------
// Limits
// ---------------------------------------------------------------------------------------------------

export interface TextLimit {
  readonly limit: number
  /** What is counted, for the error's details. */
  readonly unit: "characters" | "weighted_characters" | "graphemes" | "bytes" | "utf16_units"
  readonly count: (text: string) => number
  /** How the platform counts, in words, where `unit` alone does not say it (GET /platform-rules). */
  readonly description?: string
  /** `count`, stopped once past `max`: exact up to `max`, above `max` otherwise. */
  readonly countUpTo: (text: string, max: number) => number
}

const characters = (limit: number): TextLimit => ({
  limit,
  unit: "characters",
  count: codePoints,
  countUpTo: codePointsUpTo
})

const utf16Limit = (limit: number): TextLimit => ({
  limit,
  unit: "utf16_units",
  count: utf16Units,
  countUpTo: utf16Units
})

/**
 * The caption limits: the spec's (x 280, bluesky 300, instagram 2200, tiktok 150, threads 500,
 * linkedin 3000) and the platform reference's (telegram 4096, discord 2000, facebook 63206, youtube
 * description 5000 bytes, pinterest 800: the pin description). Telegram with media is a caption: see `textLimits`.
 */
export const captionLimits: Record<Platform, TextLimit> = {
  x: {
    limit: 280,
    unit: "weighted_characters",
    count: xWeightedLength,
    countUpTo: xWeightedLengthUpTo,
    description: "twitter-text weighting: every URL counts 23, an emoji 2, CJK and most non-Latin characters 2, " +
      "Latin characters and general punctuation 1 (text NFC-normalized)"
  },
  bluesky: {
    limit: 300,
    unit: "graphemes",
    count: graphemes,
    countUpTo: graphemesUpTo,
    description: "Characters as people see them (extended grapheme clusters)"
  },
  instagram: characters(2200),
  tiktok: characters(150),
  threads: {
    limit: 500,
    unit: "characters",
    count: threadsLength,
    countUpTo: threadsLengthUpTo,
    description: "Unicode characters, except that an emoji counts its UTF-8 bytes"
  },
  linkedin: characters(3000),
  youtube: {
    limit: 5000,
    unit: "bytes",
    count: utf8Bytes,
    countUpTo: utf8BytesUpTo,
    description: "UTF-8 bytes of the description"
  },
  telegram: { ...utf16Limit(4096), description: "UTF-16 code units of a text message" },
  discord: characters(2000),
  facebook: characters(63206),
  pinterest: characters(800)
}

export const telegramCaptionLimit: TextLimit = {
  ...utf16Limit(1024),
  description: "UTF-16 code units of a media caption"
}

/** Bluesky also caps a post's text at 3000 UTF-8 bytes, beside its 300 graphemes. */
export const blueskyByteLimit: TextLimit = {
  limit: 3000,
  unit: "bytes",
  count: utf8Bytes,
  countUpTo: utf8BytesUpTo,
  description: "UTF-8 bytes of the post's text"
}

/**
 * The longest first comment (or reply) each platform takes, where `settings.firstComment` is posted:
 * a reply on x, bluesky and threads is a post like any other (same counting); a Telegram reply is a
 * text message (4096 UTF-16 units); a Discord follow-up a message (2000). Comments elsewhere:
 * Facebook 8000 and YouTube 10,000 characters, Instagram 2200 (its caption limit) and LinkedIn 1250,
 * as the platforms' comment boxes enforce them. Platforms without one post no first comment.
 */
export const firstCommentLimits: Readonly<Partial<Record<Platform, ReadonlyArray<TextLimit>>>> = {
  x: [captionLimits.x],
  bluesky: [captionLimits.bluesky, blueskyByteLimit],
  threads: [captionLimits.threads],
  telegram: [captionLimits.telegram],
  discord: [captionLimits.discord],
  facebook: [characters(8000)],
  instagram: [characters(2200)],
  linkedin: [characters(1250)],
  youtube: [characters(10000)]
}

/** Every limit the text of one post on `platform` must meet. */
export const textLimits = (platform: Platform, hasMedia: boolean): ReadonlyArray<TextLimit> => {
  switch (platform) {
    case "telegram":
      return [hasMedia ? telegramCaptionLimit : captionLimits.telegram]
    case "bluesky":
      return [captionLimits.bluesky, blueskyByteLimit]
    default:
      return [captionLimits[platform]]
  }
}

/**
 * Platforms that publish `threadPosts` as a thread of replies (the others publish the main post only):
 * the spec's x, plus bluesky and threads, whose posts chain the same way.
 */
export const threadPlatforms: ReadonlyArray<Platform> = ["x", "bluesky", "threads"]

// ---------------------------------------------------------------------------------------------------
// Settings
// ---------------------------------------------------------------------------------------------------

export interface Issue {
  /** Dotted path in the request body, e.g. `platform_content.tiktok.settings.privacyLevel`. */
  readonly path: string
  readonly message: string
}

type SettingRule = (value: unknown) => string | undefined

/**
 * What one setting of `platform_content[platform].settings` takes, as data: the validator interprets
 * it (`settingRule`) and GET /platform-rules publishes it, so the two cannot disagree.
 */
export type SettingType =
  | { readonly type: "enum"; readonly values: ReadonlyArray<string> }
  | { readonly type: "boolean" }
  | { readonly type: "string"; readonly maxLength?: number; readonly forbiddenCharacters?: ReadonlyArray<string> }
  | { readonly type: "integer"; readonly minimum: number; readonly unit: string }
  | { readonly type: "string_array" }
  | { readonly type: "url"; readonly maxLength?: number }

export type SettingSpec = SettingType & {
  /** Required when the platform is targeted and the post is not a draft. */
  readonly required?: boolean
  /** What the platform uses when the setting is absent (informative; the client applies it). */
  readonly default?: string | number | boolean
  readonly description?: string
}

const maxChars = (max: number): SettingRule => (value) =>
  typeof value !== "string"
    ? "Expected a string"
    : codePoints(value) > max
    ? `At most ${max} characters (${codePoints(value)} given)`
    : undefined

const httpUrl: SettingRule = (value) => {
  if (typeof value !== "string") return "Expected a URL"
  try {
    const url = new URL(value)
    return url.protocol === "http:" || url.protocol === "https:" ? undefined : "Expected an http(s) URL"
  } catch {
    return "Expected a URL"
  }
}

/** The check a setting's spec describes; `undefined` when the value is acceptable. */
export const settingRule = (spec: SettingType): SettingRule => {
  switch (spec.type) {
    case "enum":
      return (value) =>
        typeof value === "string" && spec.values.includes(value) ? undefined : `Expected one of ${spec.values.join(", ")}`
    case "boolean":
      return (value) => (typeof value === "boolean" ? undefined : "Expected a boolean")
    case "string": {
      const base: SettingRule = spec.maxLength === undefined
        ? (value) => (typeof value === "string" ? undefined : "Expected a string")
        : maxChars(spec.maxLength)
      const forbidden = spec.forbiddenCharacters ?? []
      return (value) =>
        base(value) ?? (typeof value === "string" && forbidden.some((c) => value.includes(c))
          ? `Must not contain ${forbidden.join(" or ")}`
          : undefined)
    }
    case "integer":
      return (value) =>
        typeof value === "number" && Number.isInteger(value) && value >= spec.minimum
          ? undefined
          : spec.minimum === 0
          ? `Expected a non-negative integer (${spec.unit})`
          : `Expected an integer of at least ${spec.minimum} (${spec.unit})`
    case "string_array":
      return (value) =>
        Array.isArray(value) && value.every((v) => typeof v === "string") ? undefined : "Expected an array of strings"
    case "url": {
      const max = spec.maxLength
      return max === undefined
        ? httpUrl
        : (value) => httpUrl(value) ?? (typeof value === "string" && value.length > max ? `At most ${max} characters` : undefined)
    }
  }
}

const firstComment: SettingSpec = { type: "string", description: "Posted as the first comment (or reply) after publishing" }

/**
 * The settings of the spec's platform_content table, by platform. Keys not listed are passed to the
 * platform client as given (e.g. bluesky `langs`). A platform supports a first comment exactly when
 * it lists `firstComment`.
 */
export const settingSpecs: Readonly<Record<Platform, Readonly<Record<string, SettingSpec>>>> = {
  instagram: { altText: { type: "string", maxLength: 100 }, firstComment },
  // TikTok's content-sharing guidelines: no default privacy level, interactions off unless chosen,
  // commercial content disclosed (developers.tiktok.com/doc/content-sharing-guidelines).
  tiktok: {
    privacyLevel: {
      type: "enum",
      values: ["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"],
      required: true,
      description: "Who can view the post; no default (TikTok requires the user's choice). It must be one of the " +
        "account's options (TikTok's creator_info), else the post fails naming them; unaudited apps: SELF_ONLY only"
    },
    allowComments: { type: "boolean", default: false, description: "Allow comments (off unless true)" },
    allowDuet: { type: "boolean", default: false, description: "Allow duets (off unless true; videos only)" },
    allowStitch: { type: "boolean", default: false, description: "Allow stitches (off unless true; videos only)" },
    videoCoverTimestamp: { type: "integer", minimum: 0, unit: "milliseconds", default: 1000 },
    photoCoverIndex: {
      type: "integer",
      minimum: 0,
      unit: "index",
      default: 0,
      description: "Which image of a photo post is its cover, counted from 0 (TikTok's photo_cover_index)"
    },
    autoAddMusic: {
      type: "boolean",
      default: false,
      description: "Let TikTok add recommended music to a photo post (TikTok's auto_add_music)"
    },
    brandContent: {
      type: "boolean",
      default: false,
      description: "Paid partnership: the post promotes a third party (TikTok's brand_content_toggle); " +
        "cannot be SELF_ONLY"
    },
    brandOrganic: {
      type: "boolean",
      default: false,
      description: "The post promotes the creator's own business (TikTok's brand_organic_toggle)"
    },
    aiGenerated: {
      type: "boolean",
      default: false,
      description: "The video is AI-generated content (TikTok's is_aigc; TikTok's photo posts have no such flag)"
    }
  },
  youtube: {
    title: { type: "string", maxLength: 100, forbiddenCharacters: ["<", ">"], required: true },
    privacyStatus: { type: "enum", values: ["public", "unlisted", "private"] },
    tags: { type: "string_array" },
    categoryId: { type: "string" },
    madeForKids: { type: "boolean" }
  },
  linkedin: { visibility: { type: "enum", values: ["PUBLIC", "CONNECTIONS", "LOGGED_IN_MEMBERS"] }, firstComment },
  x: {
    replySettings: { type: "enum", values: ["everyone", "following", "mentionedUsers"] },
    mediaAltText: { type: "string", maxLength: 1000 },
    firstComment: { ...firstComment, description: "Posted as a reply after publishing" }
  },
  facebook: {
    videoType: { type: "enum", values: ["reel", "video"], default: "reel" },
    link: { type: "url", description: "URL for the link preview" },
    firstComment
  },
  threads: {
    replyControl: {
      type: "enum",
      values: ["everyone", "following", "mentioned", "followers", "parentPostAuthor"],
      default: "everyone",
      description: "Who can reply: Threads' reply_control everyone, accounts_you_follow, mentioned_only, " +
        "followers_only, parent_post_author_only"
    },
    firstComment
  },
  bluesky: { firstComment },
  telegram: { firstComment },
  discord: {
    firstComment,
    allowMentions: {
      type: "enum",
      values: ["none", "users", "users_and_roles", "all"],
      default: "none",
      description: "Which mentions ping: none by default; all includes @everyone and @here"
    },
    threadName: {
      type: "string",
      maxLength: 100,
      description: "Title of the forum post (forum channels); default: the first line of the text"
    }
  },
  pinterest: {
    boardId: { type: "string", description: "The board to pin to; default: the account's default board" },
    title: { type: "string", maxLength: 100 },
    link: { type: "url", maxLength: 2048, description: "Where the pin leads" },
    coverImageUrl: { type: "url", description: "Cover of a video pin" },
    coverKeyFrameTime: {
      type: "integer",
      minimum: 0,
      unit: "seconds",
      default: 1,
      description: "Key frame used as the cover of a video pin when no coverImageUrl is given"
    }
  }
}

/** The checks of `settingSpecs`, by platform and key. */
export const settingRules: Partial<Record<Platform, Readonly<Record<string, SettingRule>>>> = Object.fromEntries(
  Object.entries(settingSpecs).map(([platform, specs]) => [
    platform,
    Object.fromEntries(Object.entries(specs).map(([key, spec]) => [key, settingRule(spec)]))
  ])
)

/** Settings a targeted platform requires before publishing, as `[key, spec]`. */
export const requiredSettings = (platform: Platform): ReadonlyArray<readonly [string, SettingSpec]> =>
  Object.entries(settingSpecs[platform]).filter(([, spec]) => spec.required === true)

/** `contentType` values where the spec lists them. */
export const contentTypes: Partial<Record<Platform, ReadonlyArray<string>>> = {
  instagram: ["Post", "Reels", "Story", "Trial Reel"]
}

/** Problems in one platform_content entry's contentType and settings. */
export const entryIssues = (platform: Platform, entry: PlatformContentEntry): ReadonlyArray<Issue> => {
  const issues: Array<Issue> = []
  const base = `platform_content.${platform}`
  if (platform === "tiktok" && entry.settings?.["brandContent"] === true && entry.settings["privacyLevel"] === "SELF_ONLY") {
    issues.push({
      path: `${base}.settings.brandContent`,
      message: "Branded content cannot be private on TikTok: choose a privacyLevel other than SELF_ONLY"
    })
  }
  const allowedTypes = contentTypes[platform]
  if (entry.contentType !== undefined && allowedTypes !== undefined && !allowedTypes.includes(entry.contentType)) {
    issues.push({ path: `${base}.contentType`, message: `Expected one of ${allowedTypes.join(", ")}` })
  }
  const rules = settingRules[platform] ?? {}
  for (const [key, value] of Object.entries(entry.settings ?? {})) {
    const rule = rules[key]
    const problem = rule === undefined ? undefined : rule(value)
    if (problem !== undefined) issues.push({ path: `${base}.settings.${key}`, message: problem })
  }
  return issues
}

// ---------------------------------------------------------------------------------------------------
// The check
// ---------------------------------------------------------------------------------------------------

export interface ContentInput {
  /** The platforms of the targeted accounts (empty for a draft without accounts). */
  readonly platforms: ReadonlyArray<Platform>
  readonly content: string
  readonly platformContent: PlatformContent
  readonly threadPosts: ReadonlyArray<ThreadPost>
  readonly hasMedia: boolean
  /**
   * `draft` checks only what is there (lengths, settings); `publish` also requires what a platform
   * needs before anything is sent (a YouTube title, some text or media).
   */
  readonly mode: "draft" | "publish"
}

/** The text published on `platform`: its override when one is given, else the main content. */
export const textFor = (
  platform: Platform,
  content: string,
  platformContent: PlatformContent
): { readonly text: string; readonly path: string } => {
  const entry = platformContent[platform]
  return entry === undefined
    ? { text: content, path: "content" }
    : { text: entry.content, path: `platform_content.${platform}.content` }
}

export const validationError = (issues: ReadonlyArray<Issue>): DomainError =>
  DomainError.of(
    "validation_error",
    issues.length === 1 ? `${issues[0].path}: ${issues[0].message}` : "The post's platform content is invalid",
    { validation_errors: issues }
  )

/** A text's length is reported exactly up to this many times its limit, as "more than" beyond. */
export const reportedLengthFactor = 10

/**
 * `content_too_long` for `text` over `limit`. The length is counted again, exactly up to 10 times the
 * limit (a few milliseconds at most); past that, `length` is the count where counting stopped and
 * `length_is_minimum` is true.
 */
const tooLong = (platform: Platform, limit: TextLimit, text: string, field: string): DomainError => {
  const ceiling = limit.limit * reportedLengthFactor
  const length = limit.countUpTo(text, ceiling)
  const exact = length <= ceiling
  return DomainError.of(
    "content_too_long",
    `${field} is too long for ${platform}: ${exact ? "" : "more than "}${exact ? length : ceiling} ${
      limit.unit.replace("_", " ")
    } where at most ${limit.limit} are allowed`,
    { platform, limit: limit.limit, length, unit: limit.unit, field, ...(exact ? {} : { length_is_minimum: true }) }
  )
}

/** Whether `text` is over `limit`, counting no further than one past it. */
const isOver = (limit: TextLimit, text: string): boolean => limit.countUpTo(text, limit.limit) > limit.limit

/**
 * Checks a post's content against its platforms' rules. Settings problems come first, all of them in
 * one `validation_error`; then the first text over its limit as `content_too_long`
 * (`details{platform, limit, length, unit, field}`).
 */
export const check = (input: ContentInput): Effect.Effect<void, DomainError> => {
  const issues: Array<Issue> = []
  const entries = Object.entries(input.platformContent) as ReadonlyArray<[Platform, PlatformContentEntry | undefined]>
  for (const [platform, entry] of entries) {
    if (entry !== undefined) issues.push(...entryIssues(platform, entry))
  }
  const targeted = [...new Set(input.platforms)]
  if (input.mode === "publish") {
    for (const platform of targeted) {
      for (const [key, spec] of requiredSettings(platform)) {
        const value = input.platformContent[platform]?.settings?.[key]
        const missing = spec.type === "string"
          ? typeof value !== "string" || value.trim() === ""
          : value === undefined || value === null
        if (missing) {
          const bound = spec.type === "string" && spec.maxLength !== undefined
            ? ` (at most ${spec.maxLength} characters)`
            : ""
          issues.push({
            path: `platform_content.${platform}.settings.${key}`,
            message: `${platform} requires settings.${key}${bound}`
          })
        }
      }
    }
    for (const platform of targeted) {
      const { path, text } = textFor(platform, input.content, input.platformContent)
      if (text.trim() === "" && !input.hasMedia) {
        issues.push({ path, message: `The post has neither text nor media for ${platform}` })
      }
    }
  }
  if (issues.length > 0) return Effect.fail(validationError(issues))

  // Every override is checked against its own platform, targeted or not; the main content against
  // every targeted platform without an override.
  const checked = new Set<Platform>([...targeted, ...entries.filter(([, e]) => e !== undefined).map(([p]) => p)])
  for (const platform of checked) {
    const { path, text } = textFor(platform, input.content, input.platformContent)
    for (const limit of textLimits(platform, input.hasMedia)) {
      if (isOver(limit, text)) return Effect.fail(tooLong(platform, limit, text, path))
    }
  }
  for (const platform of checked) {
    const comment = input.platformContent[platform]?.settings?.["firstComment"]
    if (typeof comment !== "string") continue
    for (const limit of firstCommentLimits[platform] ?? []) {
      if (isOver(limit, comment)) {
        return Effect.fail(tooLong(platform, limit, comment, `platform_content.${platform}.settings.firstComment`))
      }
    }
  }
  for (const platform of targeted.filter((p) => threadPlatforms.includes(p))) {
    for (const [i, part] of input.threadPosts.entries()) {
      const partHasMedia = (part.media_ids ?? []).length > 0
      for (const limit of textLimits(platform, partHasMedia)) {
        if (isOver(limit, part.content)) {
          return Effect.fail(tooLong(platform, limit, part.content, `threadPosts.${i}.content`))
        }
      }
    }
  }
  return Effect.void
}
