/**
 * `/ai`: `POST /ai/generate-caption` and `POST /ai/generate-image` (scope ai). The use cases are in
 * core (`AiGeneration`); the generators come from `@herald/adapters/ai/Providers` (the
 * OpenAI-compatible provider, the sandbox, or the misconfig stand-in).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as OpenApi from "@effect/platform/OpenApi"
import * as AiGeneration from "@herald/core/ai/AiGeneration"
import { CaptionLength, Tone } from "@herald/core/ai/CaptionGenerator"
import { DomainError } from "@herald/core/kernel/Errors"
import { AspectRatio, ImageModel } from "@herald/core/ai/ImageGenerator"
import { Platform } from "@herald/core/domain/Platform"
import * as Posts from "@herald/core/posts/Posts"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as ApiGroup from "../ApiGroup.js"
import * as Auth from "../Auth.js"
import * as Envelope from "../Envelope.js"
import * as Idempotency from "../Idempotency.js"
import * as RequestMiddleware from "../RequestMiddleware.js"
import { MediaView, publicUrlOf, toMediaView } from "./Media.js"

// ---------------------------------------------------------------------------------------------------
// Wire shapes
// ---------------------------------------------------------------------------------------------------

const CreditsView = Schema.Struct({
  used: Schema.Int.annotations({ description: "Credits used this calendar month (UTC), this request included" }),
  limit: Schema.Int.annotations({ description: "The plan's credits per month" }),
  remaining: Schema.Int,
  reset_at: Schema.String.annotations({ description: "When the month's credits renew (ISO 8601, UTC)" })
}).annotations({ identifier: "AiCredits" })

const providerFields = {
  provider: Schema.String.annotations({
    description: "Who generated it: \"sandbox\" (deterministic sandbox output, herald serve --sandbox) or " +
      "\"openai-compatible\""
  }),
  sandbox: Schema.Boolean.annotations({ description: "True when this is sandbox output, not a real model's" }),
  credits_charged: Schema.Int,
  credits: CreditsView
}

export const CaptionVariantView = Schema.Struct({
  text: Schema.String,
  length: Schema.Int.annotations({ description: "Counted as posts are on the platform, in unit" }),
  limit: Schema.Int.annotations({ description: "The platform's caption limit (2200 characters without a platform)" }),
  unit: Schema.Literal("characters", "weighted_characters", "graphemes", "bytes", "utf16_units"),
  trimmed: Schema.Boolean.annotations({ description: "Cut at a word boundary to fit the limit" })
}).annotations({ identifier: "CaptionVariant" })

export const GeneratedCaptions = Schema.Struct({
  topic: Schema.String,
  platform: Schema.NullOr(Platform),
  tone: Tone,
  length: CaptionLength,
  include_hashtags: Schema.Boolean,
  include_emojis: Schema.Boolean,
  count: Schema.Int.annotations({ description: "Variants asked for; fewer may come back, each charged" }),
  captions: Schema.Array(Schema.String).annotations({ description: "The variants' texts" }),
  variants: Schema.Array(CaptionVariantView),
  model: Schema.String,
  ...providerFields
}).annotations({ identifier: "GeneratedCaptions" })
export type GeneratedCaptions = typeof GeneratedCaptions.Type

export const GeneratedImage = Schema.Struct({
  ...MediaView.fields,
  prompt: Schema.String,
  aspect_ratio: AspectRatio,
  model: ImageModel,
  provider_model: Schema.String.annotations({ description: "The provider's model name" }),
  ...providerFields
}).annotations({ identifier: "GeneratedImage" })
export type GeneratedImage = typeof GeneratedImage.Type

// ---------------------------------------------------------------------------------------------------
// Group
// ---------------------------------------------------------------------------------------------------

const errorsSummary = "402 insufficient_credits when the month's credits cannot cover it (nothing charged); " +
  "400 prompt_rejected when the provider's safety filter refuses; 500 generation_failed (retryable, nothing " +
  "charged); 400 misconfig when the server has no AI provider"

export const AiGroup = HttpApiGroup.make("ai")
  .add(
    HttpApiEndpoint.post("generateCaption", "/ai/generate-caption")
      .setPayload(ApiGroup.payload(AiGeneration.CaptionBody))
      .addSuccess(Envelope.ok(GeneratedCaptions))
      .annotate(
        OpenApi.Summary,
        "Generate caption variants (scope ai): topic (required, at most 1000 characters), platform, tone, length, " +
          "include_hashtags, include_emojis, count (1 to 5, default 3). Each variant is within the platform's caption " +
          "limit, counted as for posts. 1 credit per returned caption. " + errorsSummary
      )
  )
  .add(
    HttpApiEndpoint.post("generateImage", "/ai/generate-image")
      .setPayload(ApiGroup.payload(AiGeneration.ImageBody))
      .setHeaders(Idempotency.Headers)
      .addSuccess(Envelope.ok(GeneratedImage), { status: 201 })
      .annotate(
        OpenApi.Summary,
        "Generate an image (scope ai): prompt (required, at most 2000 characters), aspect_ratio (1:1, 16:9, 9:16, " +
          "4:3, 3:4, 4:5, 5:4; default 1:1), model (standard: 2 credits, default; hd: 4 credits). The image is " +
          "a ready medium of the library at once (its id goes in media_ids; event media.uploaded). " + errorsSummary
      )
  )
  .addError(ApiGroup.errors.paymentRequired)
  .pipe(ApiGroup.authenticated)

// ---------------------------------------------------------------------------------------------------
// Handlers
// ---------------------------------------------------------------------------------------------------

/** The parsed JSON body (`{}` when there is none); malformed JSON is 400 `invalid_json`. */
const jsonBody = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const text = yield* request.text.pipe(
    Effect.mapError(() => DomainError.of("invalid_json", "The request body could not be read"))
  )
  if (text.trim() === "") return {}
  try {
    return JSON.parse(text) as unknown
  } catch {
    return yield* DomainError.fail("invalid_json", "The request body is not valid JSON")
  }
})

const creditsView = (credits: AiGeneration.Credits) => ({
  used: credits.used,
  limit: credits.limit,
  remaining: credits.remaining,
  reset_at: DateTime.formatIso(credits.resetAt)
})

const dieOnStorage = <A, R>(self: Effect.Effect<A, DomainError | { readonly _tag: "PersistenceError" }, R>) =>
  Effect.catchTag(self, "PersistenceError", Effect.die)

/** `POST /ai/generate-caption`'s answer (also the in-process API's). */
export const toGeneratedCaptions = (
  result: Effect.Effect.Success<ReturnType<typeof AiGeneration.generateCaption>>
): GeneratedCaptions => ({
  topic: result.topic,
  platform: result.platform,
  tone: result.tone,
  length: result.length,
  include_hashtags: result.includeHashtags,
  include_emojis: result.includeEmojis,
  count: result.count,
  captions: result.variants.map((v) => v.text),
  variants: result.variants,
  model: result.model,
  provider: result.provider,
  sandbox: result.provider === "sandbox",
  credits_charged: result.credits.charged,
  credits: creditsView(result.credits)
})

/** `POST /ai/generate-image`'s answer (also the in-process API's). */
export const toGeneratedImage = (result: Effect.Effect.Success<ReturnType<typeof AiGeneration.generateImage>>) =>
  Effect.map(publicUrlOf(result.media.storageKey, result.media.mimeType), (url): GeneratedImage => ({
    ...toMediaView(result.media, url),
    prompt: result.prompt,
    aspect_ratio: result.aspectRatio,
    model: result.model,
    provider_model: result.providerModel,
    provider: result.provider,
    sandbox: result.provider === "sandbox",
    credits_charged: result.credits.charged,
    credits: creditsView(result.credits)
  }))

export const AiLive = HttpApiBuilder.group(ApiGroup.apiOf(AiGroup), "ai", (handlers) =>
  handlers
    .handleRaw("generateCaption", () =>
      Effect.gen(function*() {
        const { organization } = yield* Auth.requireScope("ai")
        const body = yield* Posts.decodeBody(AiGeneration.CaptionBody, yield* jsonBody)
        const result = yield* AiGeneration.generateCaption(organization, body).pipe(dieOnStorage)
        yield* RequestMiddleware.annotateRequestLog("ai_credits_charged", String(result.credits.charged))
        return toGeneratedCaptions(result)
      }))
    .handleRaw("generateImage", () =>
      Idempotency.idempotent(Effect.gen(function*() {
        const { organization } = yield* Auth.requireScope("ai")
        const body = yield* Posts.decodeBody(AiGeneration.ImageBody, yield* jsonBody)
        const result = yield* AiGeneration.generateImage(organization, body).pipe(dieOnStorage)
        yield* RequestMiddleware.annotateRequestLog("media_id", result.media.id)
        return yield* Idempotency.respond(GeneratedImage, 201)(yield* toGeneratedImage(result))
      }))))
