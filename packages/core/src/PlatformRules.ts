/**
 * Per-platform content rules of POST /posts: caption limits (each counted the way its platform
 * counts), the settings of `platform_content` (enums and types of the spec's table) and the fields a
 * platform requires. Pure: no I/O.
 *
 * A post's text on a platform is the override `platform_content[platform].content` when an entry is
 * given (even empty), else the main `content` — the dispatcher publishes exactly that.
 */
import * as Effect from "effect/Effect"
import { DomainError } from "./Errors.js"
import type { Platform } from "./Platform.js"
import type { PlatformContent, PlatformContentEntry, ThreadPost } from "./Post.js"

// ---------------------------------------------------------------------------------------------------
// Counting
// ---------------------------------------------------------------------------------------------------

const segmenter = new Intl.Segmenter("en", { granularity: "grapheme" })
const encoder = new TextEncoder()

/** Characters as people see them (extended grapheme clusters). */
export const graphemes = (text: string): number => {
  let n = 0
  for (const _ of segmenter.segment(text)) n += 1
  return n
}

/** Unicode code points. */
export const codePoints = (text: string): number => {
  let n = 0
  for (const _ of text) n += 1
  return n
}

/** UTF-16 code units (what JavaScript's `length` and Telegram count). */
export const utf16Units = (text: string): number => text.length

export const utf8Bytes = (text: string): number => encoder.encode(text).length

const pictographic = /\p{Extended_Pictographic}|\p{Regional_Indicator}/u

/** Every URL counts as this many characters on X (t.co wrapping). */
export const xUrlWeight = 23

/**
 * X's URL detection, simplified from twitter-text: `http(s)://` or `www.` followed by non-space
 * characters, with trailing punctuation left out of the URL.
 */
const xUrlPattern = /(?:https?:\/\/|www\.)[^\s]+?(?=[.,:;!?)\]'"]*(?:\s|$))/giu

/** The code-point ranges twitter-text weighs 1; everything else weighs 2. */
const xLightRanges: ReadonlyArray<readonly [number, number]> = [
  [0, 4351],
  [8192, 8205],
  [8208, 8223],
  [8242, 8247]
]

const xCodePointWeight = (cp: number): number =>
  xLightRanges.some(([start, end]) => cp >= start && cp <= end) ? 1 : 2

/**
 * X's weighted length (twitter-text v3 configuration): the text is NFC-normalized; every URL counts
 * 23; an emoji (a whole grapheme cluster, with its modifiers and joiners) counts 2; other code points
 * count 1 in the Latin and general-punctuation ranges and 2 elsewhere (CJK and most other scripts).
 */
export const xWeightedLength = (text: string): number => {
  const normalized = text.normalize("NFC")
  let total = 0
  let rest = ""
  let last = 0
  for (const match of normalized.matchAll(xUrlPattern)) {
    rest += normalized.slice(last, match.index) + " "
    total += xUrlWeight - 1
    last = match.index + match[0].length
  }
  rest += normalized.slice(last)
  for (const { segment } of segmenter.segment(rest)) {
    if (pictographic.test(segment)) {
      total += 2
      continue
    }
    for (const char of segment) total += xCodePointWeight(char.codePointAt(0) ?? 0)
  }
  return total
}

/** Threads counts emoji as their UTF-8 bytes, other characters as one each. */
export const threadsLength = (text: string): number => {
  let total = 0
  for (const { segment } of segmenter.segment(text)) {
    total += pictographic.test(segment) ? utf8Bytes(segment) : codePoints(segment)
  }
  return total
}

// ---------------------------------------------------------------------------------------------------
// Limits
// ---------------------------------------------------------------------------------------------------

export interface TextLimit {
  readonly limit: number
  /** What is counted, for the error's details. */
  readonly unit: "characters" | "weighted_characters" | "graphemes" | "bytes" | "utf16_units"
  readonly count: (text: string) => number
}

const characters = (limit: number): TextLimit => ({ limit, unit: "characters", count: codePoints })

/**
 * The caption limits: the spec's (x 280, bluesky 300, instagram 2200, tiktok 150, threads 500,
 * linkedin 3000) and the platform reference's (telegram 4096, discord 2000, facebook 63206, youtube
 * description 5000 bytes, pinterest 800: the pin description). Telegram with media is a caption: see `textLimits`.
 */
export const captionLimits: Record<Platform, TextLimit> = {
  x: { limit: 280, unit: "weighted_characters", count: xWeightedLength },
  bluesky: { limit: 300, unit: "graphemes", count: graphemes },
  instagram: characters(2200),
  tiktok: characters(150),
  threads: { limit: 500, unit: "characters", count: threadsLength },
  linkedin: characters(3000),
  youtube: { limit: 5000, unit: "bytes", count: utf8Bytes },
  telegram: { limit: 4096, unit: "utf16_units", count: utf16Units },
  discord: characters(2000),
  facebook: characters(63206),
  pinterest: characters(800)
}

export const telegramCaptionLimit: TextLimit = { limit: 1024, unit: "utf16_units", count: utf16Units }

/** Bluesky also caps a post's text at 3000 UTF-8 bytes, beside its 300 graphemes. */
export const blueskyByteLimit: TextLimit = { limit: 3000, unit: "bytes", count: utf8Bytes }

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

const oneOf = (...values: ReadonlyArray<string>): SettingRule => (value) =>
  typeof value === "string" && values.includes(value) ? undefined : `Expected one of ${values.join(", ")}`

const boolean: SettingRule = (value) => (typeof value === "boolean" ? undefined : "Expected a boolean")

const string: SettingRule = (value) => (typeof value === "string" ? undefined : "Expected a string")

const maxChars = (max: number): SettingRule => (value) =>
  typeof value !== "string"
    ? "Expected a string"
    : codePoints(value) > max
    ? `At most ${max} characters (${codePoints(value)} given)`
    : undefined

const nonNegativeInt: SettingRule = (value) =>
  typeof value === "number" && Number.isInteger(value) && value >= 0
    ? undefined
    : "Expected a non-negative integer (milliseconds)"

const stringArray: SettingRule = (value) =>
  Array.isArray(value) && value.every((v) => typeof v === "string") ? undefined : "Expected an array of strings"

const httpUrl: SettingRule = (value) => {
  if (typeof value !== "string") return "Expected a URL"
  try {
    const url = new URL(value)
    return url.protocol === "http:" || url.protocol === "https:" ? undefined : "Expected an http(s) URL"
  } catch {
    return "Expected a URL"
  }
}

const noAngleBrackets = (rule: SettingRule): SettingRule => (value) =>
  rule(value) ?? (typeof value === "string" && /[<>]/.test(value) ? "Must not contain < or >" : undefined)

/**
 * The settings of the spec's platform_content table, by platform. Keys not listed are passed to the
 * platform client as given (e.g. bluesky `langs`).
 */
export const settingRules: Partial<Record<Platform, Readonly<Record<string, SettingRule>>>> = {
  instagram: { altText: maxChars(100), firstComment: string },
  tiktok: {
    privacyLevel: oneOf("PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"),
    allowComments: boolean,
    allowDuet: boolean,
    allowStitch: boolean,
    videoCoverTimestamp: nonNegativeInt
  },
  youtube: {
    title: noAngleBrackets(maxChars(100)),
    privacyStatus: oneOf("public", "unlisted", "private"),
    tags: stringArray,
    categoryId: string,
    madeForKids: boolean
  },
  linkedin: { visibility: oneOf("PUBLIC", "CONNECTIONS", "LOGGED_IN_MEMBERS"), firstComment: string },
  x: { replySettings: oneOf("everyone", "following", "mentionedUsers"), mediaAltText: maxChars(1000), firstComment: string },
  facebook: { videoType: oneOf("reel", "video"), link: httpUrl, firstComment: string },
  threads: { replyControl: oneOf("everyone", "following", "mentioned"), firstComment: string },
  bluesky: { firstComment: string },
  telegram: { firstComment: string },
  discord: { firstComment: string },
  pinterest: {
    boardId: string,
    title: maxChars(100),
    link: (value) => httpUrl(value) ?? (typeof value === "string" && value.length > 2048 ? "At most 2048 characters" : undefined),
    coverImageUrl: httpUrl,
    coverKeyFrameTime: (value) =>
      typeof value === "number" && Number.isFinite(value) && value >= 0 ? undefined : "Expected a non-negative number (seconds)"
  }
}

/** `contentType` values where the spec lists them. */
export const contentTypes: Partial<Record<Platform, ReadonlyArray<string>>> = {
  instagram: ["Post", "Reels", "Story", "Trial Reel"]
}

/** Problems in one platform_content entry's contentType and settings. */
export const entryIssues = (platform: Platform, entry: PlatformContentEntry): ReadonlyArray<Issue> => {
  const issues: Array<Issue> = []
  const base = `platform_content.${platform}`
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

const tooLong = (platform: Platform, limit: TextLimit, length: number, field: string): DomainError =>
  DomainError.of(
    "content_too_long",
    `${field} is too long for ${platform}: ${length} ${limit.unit.replace("_", " ")} where at most ${limit.limit} are allowed`,
    { platform, limit: limit.limit, length, unit: limit.unit, field }
  )

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
    if (targeted.includes("youtube")) {
      const title = input.platformContent.youtube?.settings?.["title"]
      if (typeof title !== "string" || title.trim() === "") {
        issues.push({
          path: "platform_content.youtube.settings.title",
          message: "YouTube requires a title (at most 100 characters)"
        })
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
      const length = limit.count(text)
      if (length > limit.limit) return Effect.fail(tooLong(platform, limit, length, path))
    }
  }
  for (const platform of targeted.filter((p) => threadPlatforms.includes(p))) {
    for (const [i, part] of input.threadPosts.entries()) {
      const partHasMedia = (part.media_ids ?? []).length > 0
      for (const limit of textLimits(platform, partHasMedia)) {
        const length = limit.count(part.content)
        if (length > limit.limit) return Effect.fail(tooLong(platform, limit, length, `threadPosts.${i}.content`))
      }
    }
  }
  return Effect.void
}
