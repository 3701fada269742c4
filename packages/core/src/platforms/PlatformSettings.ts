/**
 * The settings each platform takes in `platform_content[platform].settings` (the spec's
 * platform_content table), as data, and the check each one's spec describes; `contentType` values
 * where the spec lists them. Pure: no I/O.
 */
import type { Platform } from "../domain/Platform.js"
import { codePoints } from "./TextCounting.js"

/** A setting's check: what is wrong with the value, or `undefined` when it is acceptable. */
export type SettingRule = (value: unknown) => string | undefined

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
        typeof value === "string" && spec.values.includes(value)
          ? undefined
          : `Expected one of ${spec.values.join(", ")}`
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
        : (value) =>
          httpUrl(value) ?? (typeof value === "string" && value.length > max ? `At most ${max} characters` : undefined)
    }
  }
}

const firstComment: SettingSpec = {
  type: "string",
  description: "Posted as the first comment (or reply) after publishing"
}

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
