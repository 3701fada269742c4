/**
 * The AI use cases behind `POST /ai/generate-caption` and `POST /ai/generate-image`: credits are
 * reserved before the provider is called and settled at what was delivered (nothing charged on any
 * failure), captions are held to the platform's caption limit with the same counting as posts (an
 * over-long one is trimmed, never returned as is), and a generated image becomes a ready medium of
 * the library in the same transaction that settles its charge (event media.uploaded).
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as AiCredits from "./AiCredits.js"
import { BlobStore } from "../media/BlobStore.js"
import { CaptionGenerator, CaptionLength, type GenerationFailure, Tone } from "./CaptionGenerator.js"
import { DomainError } from "../kernel/Errors.js"
import { Event } from "../webhooks/Event.js"
import { EventStore } from "../webhooks/EventStore.js"
import { IdGenerator } from "../kernel/IdGenerator.js"
import { EventId, MediaId } from "../kernel/Ids.js"
import { AspectRatio, ImageGenerator, ImageModel } from "./ImageGenerator.js"
import { Media } from "../domain/Media.js"
import * as MediaLibrary from "../media/MediaLibrary.js"
import * as MediaRules from "../media/MediaRules.js"
import { MediaStore } from "../media/MediaStore.js"
import type { Organization } from "../access/Organization.js"
import { Platform } from "../domain/Platform.js"
import * as TextCounting from "../platforms/TextCounting.js"
import * as TextLimits from "../platforms/TextLimits.js"
import { Transactor } from "../kernel/Transactor.js"

// ---------------------------------------------------------------------------------------------------
// Request bodies
// ---------------------------------------------------------------------------------------------------

const nonBlank = (max: number) =>
  Schema.String.pipe(
    Schema.filter((s) => s.trim().length > 0, { message: () => "Expected a non-empty string" }),
    Schema.maxLength(max, { message: () => `Expected at most ${max} characters` })
  )

export const defaultCaptionCount = 3
export const maxCaptionCount = 5

export const CaptionBody = Schema.Struct({
  topic: nonBlank(1000).annotations({ description: "What the caption is about; 1 to 1000 characters" }),
  platform: Schema.optional(Schema.NullOr(Platform)).annotations({
    description: "Hold every caption to this platform's caption limit (counted as for posts)"
  }),
  tone: Schema.optional(Tone).annotations({ description: "Default professional" }),
  length: Schema.optional(CaptionLength).annotations({ description: "Default medium" }),
  include_hashtags: Schema.optional(Schema.Boolean).annotations({ description: "Default true" }),
  include_emojis: Schema.optional(Schema.Boolean).annotations({ description: "Default false" }),
  count: Schema.optional(
    Schema.Int.pipe(Schema.between(1, maxCaptionCount, { message: () => "Expected an integer from 1 to 5" }))
  ).annotations({ description: "How many variants, 1 to 5; default 3; 1 credit per returned caption" })
}).annotations({ identifier: "GenerateCaptionRequest" })
export type CaptionBody = typeof CaptionBody.Type

export const ImageBody = Schema.Struct({
  prompt: nonBlank(2000).annotations({ description: "What to draw; 1 to 2000 characters" }),
  aspect_ratio: Schema.optional(AspectRatio).annotations({ description: "Default 1:1" }),
  model: Schema.optional(ImageModel).annotations({ description: "standard (2 credits, default) or hd (4 credits)" })
}).annotations({ identifier: "GenerateImageRequest" })
export type ImageBody = typeof ImageBody.Type

// ---------------------------------------------------------------------------------------------------
// Credits
// ---------------------------------------------------------------------------------------------------

export interface Credits {
  readonly charged: number
  readonly used: number
  readonly limit: number
  readonly remaining: number
  readonly resetAt: DateTime.Utc
}

const insufficient = (required: number, used: number, limit: number, resetAt: DateTime.Utc) =>
  DomainError.of(
    "insufficient_credits",
    `This needs ${required} AI credit${required === 1 ? "" : "s"} and the organization has ` +
      `${Math.max(0, limit - used)} of its ${limit} left this month; they renew at ${DateTime.formatIso(resetAt)}`,
    { required, used, limit, remaining: Math.max(0, limit - used), reset_at: DateTime.formatIso(resetAt) }
  )

interface Reserved {
  readonly id: string
  readonly usedAfter: number
  readonly limit: number
  readonly reserved: number
  readonly windowEnd: DateTime.Utc
}

const reserve = (organization: Organization, operation: AiCredits.Operation, model: string, credits: number) =>
  Effect.gen(function*() {
    const now = yield* DateTime.now
    const limit = AiCredits.monthlyAllowance(organization.plan)
    const windowEnd = AiCredits.monthWindowEnd(now)
    const id = yield* (yield* IdGenerator).uuid
    const result = yield* (yield* AiCredits.AiCreditLedger).reserve({
      id,
      organizationId: organization.id,
      operation,
      model,
      credits,
      limit,
      windowEnd,
      createdAt: now
    })
    if (result._tag === "Insufficient") return yield* Effect.fail(insufficient(credits, result.used, limit, windowEnd))
    return { id, usedAfter: result.used, limit, reserved: credits, windowEnd } satisfies Reserved
  })

const refund = (organization: Organization, reserved: Reserved) =>
  Effect.flatMap(AiCredits.AiCreditLedger, (ledger) => ledger.settle(organization.id, reserved.id, 0)).pipe(
    Effect.catchAllCause((cause) => Effect.logWarning("AI credit refund failed", cause))
  )

const creditsAfter = (reserved: Reserved, charged: number): Credits => {
  const used = reserved.usedAfter - (reserved.reserved - charged)
  return {
    charged,
    used,
    limit: reserved.limit,
    remaining: Math.max(0, reserved.limit - used),
    resetAt: reserved.windowEnd
  }
}

// ---------------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------------

const providerError = (reason: GenerationFailure, message: string): DomainError => {
  switch (reason) {
    case "rejected":
      return DomainError.of("prompt_rejected", `The AI provider's safety filter refused this request: ${message}`)
    case "unconfigured":
      return DomainError.of("misconfig", message)
    case "failed":
      return DomainError.of("generation_failed", `Generation failed; nothing was charged, try again: ${message}`)
  }
}

/** Checked before anything is reserved. */
export const unconfigured = DomainError.of(
  "misconfig",
  "No AI provider is configured on this server: the operator sets HERALD_AI_BASE_URL (and HERALD_AI_API_KEY), " +
    "or runs herald serve --sandbox for sandbox output"
)

// ---------------------------------------------------------------------------------------------------
// Captions
// ---------------------------------------------------------------------------------------------------

/** Without a platform a caption is held to 2200 characters (the longest common caption field). */
export const genericCaptionLimit: TextLimits.TextLimit = {
  limit: 2200,
  unit: "characters",
  count: TextCounting.codePoints,
  countUpTo: TextCounting.codePointsUpTo
}

/**
 * Every limit a caption for `platform` must meet: the post text limits with and without media (so
 * a Telegram caption fits the 1024 of a media caption too), the strictest first.
 */
export const captionLimitsFor = (platform: Platform | undefined): ReadonlyArray<TextLimits.TextLimit> => {
  if (platform === undefined) return [genericCaptionLimit]
  const all = [...TextLimits.textLimits(platform, false), ...TextLimits.textLimits(platform, true)]
  const unique = all.filter((l, i) => all.findIndex((m) => m.unit === l.unit && m.limit === l.limit) === i)
  return unique.sort((a, b) => a.limit - b.limit)
}

const fits = (text: string, limits: ReadonlyArray<TextLimits.TextLimit>) =>
  limits.every((l) => l.count(text) <= l.limit)

const segmenter = new Intl.Segmenter("en", { granularity: "grapheme" })

/**
 * The caption within every limit: as it is when it fits, else cut at the last word boundary that
 * fits (whole graphemes, never half an emoji) with an ellipsis. `undefined` when nothing usable is
 * left (blank, or no prefix fits).
 */
export const fitCaption = (raw: string, limits: ReadonlyArray<TextLimits.TextLimit>): string | undefined => {
  const text = raw.trim()
  if (text === "") return undefined
  if (fits(text, limits)) return text
  const parts = Array.from(segmenter.segment(text), (s) => s.segment)
  const cut = (n: number) => parts.slice(0, n).join("").trimEnd() + "…"
  let lo = 0
  let hi = parts.length
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    if (fits(cut(mid), limits)) lo = mid
    else hi = mid - 1
  }
  if (lo === 0) return undefined
  // Back off to a word boundary when one is near (within the last 40% of what fits).
  let n = lo
  while (n > 0 && !/\s/.test(parts[n] ?? " ")) n -= 1
  const candidate = n >= lo * 0.6 ? cut(n) : cut(lo)
  const result = candidate.replace(/[\s.,;:!?-]+…$/, "…")
  if (result === "…" || !fits(result, limits)) return fits(cut(lo), limits) ? cut(lo) : undefined
  return result
}

export interface CaptionVariant {
  readonly text: string
  /** Its length in `unit`, counted as for posts on the platform. */
  readonly length: number
  readonly limit: number
  readonly unit: TextLimits.TextLimit["unit"]
  /** Whether it was cut to fit. */
  readonly trimmed: boolean
}

export interface CaptionResult {
  readonly topic: string
  readonly platform: Platform | null
  readonly tone: Tone
  readonly length: CaptionLength
  readonly includeHashtags: boolean
  readonly includeEmojis: boolean
  readonly count: number
  readonly variants: ReadonlyArray<CaptionVariant>
  readonly provider: string
  readonly model: string
  readonly credits: Credits
}

/** POST /ai/generate-caption. */
export const generateCaption = (organization: Organization, body: CaptionBody) =>
  Effect.gen(function*() {
    const generator = yield* CaptionGenerator
    const platform = body.platform ?? undefined
    const tone = body.tone ?? "professional"
    const length = body.length ?? "medium"
    const includeHashtags = body.include_hashtags ?? true
    const includeEmojis = body.include_emojis ?? false
    const count = body.count ?? defaultCaptionCount
    const limits = captionLimitsFor(platform)
    const strictest = limits[0]!
    if (!generator.configured) return yield* Effect.fail(unconfigured)
    const reserved = yield* reserve(organization, "caption", "caption", count * AiCredits.creditsPerCaption)
    return yield* Effect.gen(function*() {
      const generated = yield* generator.generate({
        topic: body.topic.trim(),
        tone,
        length,
        ...(platform === undefined ? {} : { platform }),
        includeHashtags,
        includeEmojis,
        count,
        maxLength: strictest.limit
      }).pipe(Effect.mapError((e) => providerError(e.reason, e.message)))
      const variants: Array<CaptionVariant> = []
      for (const raw of generated.captions) {
        if (variants.length >= count) break
        const text = fitCaption(raw, limits)
        if (text === undefined || variants.some((v) => v.text === text)) continue
        variants.push({
          text,
          length: strictest.count(text),
          limit: strictest.limit,
          unit: strictest.unit,
          trimmed: text !== raw.trim()
        })
      }
      if (variants.length === 0) {
        return yield* DomainError.fail(
          "generation_failed",
          "The AI provider returned no usable caption; nothing was charged, try again"
        )
      }
      const charged = variants.length * AiCredits.creditsPerCaption
      yield* (yield* AiCredits.AiCreditLedger).settle(organization.id, reserved.id, charged)
      return {
        topic: body.topic,
        platform: platform ?? null,
        tone,
        length,
        includeHashtags,
        includeEmojis,
        count,
        variants,
        provider: generated.provider,
        model: generated.model,
        credits: creditsAfter(reserved, charged)
      } satisfies CaptionResult
    }).pipe(Effect.onError(() => refund(organization, reserved)))
  }).pipe(Effect.withSpan("AiGeneration.generateCaption"))

// ---------------------------------------------------------------------------------------------------
// Images
// ---------------------------------------------------------------------------------------------------

export interface ImageResult {
  readonly media: Media
  readonly prompt: string
  readonly aspectRatio: AspectRatio
  readonly model: ImageModel
  readonly provider: string
  readonly providerModel: string
  readonly credits: Credits
}

const imageCap = MediaRules.maxBytes("image")

/** POST /ai/generate-image: the image becomes a ready medium (its id usable in media_ids at once). */
export const generateImage = (organization: Organization, body: ImageBody) =>
  Effect.gen(function*() {
    const generator = yield* ImageGenerator
    const aspectRatio = body.aspect_ratio ?? "1:1"
    const model = body.model ?? "standard"
    const cost = AiCredits.imageCredits[model]
    if (!generator.configured) return yield* Effect.fail(unconfigured)
    const reserved = yield* reserve(organization, "image", model, cost)
    const id = MediaId.make(yield* (yield* IdGenerator).uuid)
    const key = MediaLibrary.storageKey(organization.id, id)
    const blobs = yield* BlobStore
    return yield* Effect.gen(function*() {
      const image = yield* generator.generate({ prompt: body.prompt.trim(), aspectRatio, model }).pipe(
        Effect.mapError((e) => providerError(e.reason, e.message))
      )
      const unusable = (why: string) =>
        DomainError.of(
          "generation_failed",
          `The AI provider's image is unusable (${why}); nothing was charged, try again`
        )
      if (image.bytes.byteLength === 0) return yield* Effect.fail(unusable("empty"))
      if (image.bytes.byteLength > imageCap) return yield* Effect.fail(unusable("larger than 20 MB"))
      const probe = yield* MediaLibrary.MediaProbe
      const inspected = yield* probe.inspect(image.bytes.subarray(0, probe.headBytes))
      if (Option.isNone(inspected)) return yield* Effect.fail(unusable("not an image type Herald stores"))
      const typed = MediaRules.checkType(inspected.value.mime, "")
      if (Either.isLeft(typed) || typed.right.kind !== "image") {
        return yield* Effect.fail(unusable(`type ${inspected.value.mime}`))
      }
      const mimeType = typed.right.mimeType
      const { size } = yield* blobs.put(key, Stream.make(image.bytes), imageCap).pipe(
        Effect.catchTag("BlobTooLarge", () => Effect.fail(unusable("larger than 20 MB")))
      )
      const now = yield* DateTime.now
      const extension = mimeType.split("/")[1] === "jpeg" ? "jpg" : mimeType.split("/")[1]
      const media = new Media({
        id,
        organizationId: organization.id,
        filename: `ai-image-${id.slice(0, 8)}.${extension}`,
        mimeType,
        size,
        kind: "image",
        width: inspected.value.width,
        height: inspected.value.height,
        durationMs: Option.none(),
        status: "ready",
        error: Option.none(),
        storageKey: key,
        sourceUrl: Option.none(),
        createdAt: now,
        updatedAt: now
      })
      const store = yield* MediaStore
      const events = yield* EventStore
      const ledger = yield* AiCredits.AiCreditLedger
      const eventId = EventId.make(yield* (yield* IdGenerator).uuid)
      yield* (yield* Transactor).withTransaction(Effect.gen(function*() {
        yield* store.insert(media)
        yield* events.append([
          new Event({
            id: eventId,
            organizationId: organization.id,
            type: "media.uploaded",
            data: MediaLibrary.eventData(media),
            createdAt: now
          })
        ])
        yield* ledger.settle(organization.id, reserved.id, cost)
      }))
      return {
        media,
        prompt: body.prompt,
        aspectRatio,
        model,
        provider: image.provider,
        providerModel: image.model,
        credits: creditsAfter(reserved, cost)
      } satisfies ImageResult
    }).pipe(
      Effect.onError(() => Effect.zipRight(blobs.delete(key).pipe(Effect.ignore), refund(organization, reserved)))
    )
  }).pipe(Effect.withSpan("AiGeneration.generateImage"))
