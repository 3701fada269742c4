import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { Platform } from "../domain/Platform.js"

/** The tones `POST /ai/generate-caption` accepts. */
export const Tone = Schema.Literal("professional", "casual", "witty", "enthusiastic", "urgent", "inspirational")
export type Tone = typeof Tone.Type

/** How long a caption should be: a guide for the generator; the platform's limit is the hard cap. */
export const CaptionLength = Schema.Literal("short", "medium", "long")
export type CaptionLength = typeof CaptionLength.Type

/**
 * `rejected`: the provider's safety filter refused the request. `failed`: the provider could not
 * answer (network, 5xx, 429, an answer that does not parse). `unconfigured`: no provider is set up.
 */
export const GenerationFailure = Schema.Literal("rejected", "failed", "unconfigured")
export type GenerationFailure = typeof GenerationFailure.Type

export class CaptionGenerationError extends Schema.TaggedError<CaptionGenerationError>()("CaptionGenerationError", {
  reason: GenerationFailure,
  message: Schema.String
}) {}

export interface CaptionRequest {
  readonly topic: string
  readonly tone: Tone
  readonly length: CaptionLength
  /** Absent: a caption for no platform in particular. */
  readonly platform?: Platform
  readonly includeHashtags: boolean
  readonly includeEmojis: boolean
  readonly count: number
  /** The platform's limit, as a hint to the generator; the caller enforces it with the real counting. */
  readonly maxLength: number
}

export interface GeneratedCaptions {
  readonly captions: ReadonlyArray<string>
  /** Who generated them: `sandbox`, or `openai-compatible`. */
  readonly provider: string
  readonly model: string
}

export class CaptionGenerator extends Context.Tag("@herald/core/ai/CaptionGenerator")<CaptionGenerator, {
  /** False for the stand-in used when no provider is set up: requests are answered 400 misconfig. */
  readonly configured: boolean
  /** Up to `count` captions (possibly fewer, possibly over the limit: the caller checks). */
  readonly generate: (request: CaptionRequest) => Effect.Effect<GeneratedCaptions, CaptionGenerationError>
}>() {}
