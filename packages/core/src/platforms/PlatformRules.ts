/**
 * Per-platform content rules of POST /posts: a post's texts against each platform's limits
 * (`TextLimits`), its `platform_content` entries against the platforms' settings
 * (`PlatformSettings`), and the settings and text a platform requires before publishing. Pure: no I/O.
 *
 * A post's text on a platform is the override `platform_content[platform].content` when an entry is
 * given (even empty), else the main `content` — the dispatcher publishes exactly that.
 */
import * as Effect from "effect/Effect"
import { DomainError } from "../kernel/Errors.js"
import type { Platform } from "../domain/Platform.js"
import { contentTypes, requiredSettings, settingRules } from "./PlatformSettings.js"
import { firstCommentLimits, type TextLimit, textLimits } from "./TextLimits.js"
import type { PlatformContent, PlatformContentEntry, ThreadPost } from "../domain/Post.js"

/**
 * Platforms that publish `threadPosts` as a thread of replies (the others publish the main post only):
 * the spec's x, plus bluesky and threads, whose posts chain the same way.
 */
export const threadPlatforms: ReadonlyArray<Platform> = ["x", "bluesky", "threads"]

export interface Issue {
  /** Dotted path in the request body, e.g. `platform_content.tiktok.settings.privacyLevel`. */
  readonly path: string
  readonly message: string
}

/** Problems in one platform_content entry's contentType and settings. */
export const entryIssues = (platform: Platform, entry: PlatformContentEntry): ReadonlyArray<Issue> => {
  const issues: Array<Issue> = []
  const base = `platform_content.${platform}`
  if (
    platform === "tiktok" && entry.settings?.["brandContent"] === true && entry.settings["privacyLevel"] === "SELF_ONLY"
  ) {
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
