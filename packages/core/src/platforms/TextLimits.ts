/**
 * The documented text limits of each platform: the caption limit (each counted the way its platform
 * counts), Telegram's media caption, Bluesky's byte cap and the longest first comment. Pure: no I/O.
 */
import type { Platform } from "../domain/Platform.js"
import {
  codePoints,
  codePointsUpTo,
  graphemes,
  graphemesUpTo,
  threadsLength,
  threadsLengthUpTo,
  utf16Units,
  utf8Bytes,
  utf8BytesUpTo,
  xWeightedLength,
  xWeightedLengthUpTo
} from "./TextCounting.js"

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
