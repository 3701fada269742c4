import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { GenerationFailure } from "./CaptionGenerator.js"

/** The aspect ratios `POST /ai/generate-image` accepts. */
export const AspectRatio = Schema.Literal("1:1", "16:9", "9:16", "4:3", "3:4", "4:5", "5:4")
export type AspectRatio = typeof AspectRatio.Type

/**
 * Herald's image models: tiers the operator maps to provider models (`standard` is the default).
 * Their prices in credits are in `AiCredits.imageCredits`.
 */
export const ImageModel = Schema.Literal("standard", "hd")
export type ImageModel = typeof ImageModel.Type

export class ImageGenerationError extends Schema.TaggedError<ImageGenerationError>()("ImageGenerationError", {
  reason: GenerationFailure,
  message: Schema.String
}) {}

export interface ImageRequest {
  readonly prompt: string
  readonly aspectRatio: AspectRatio
  readonly model: ImageModel
}

export interface GeneratedImage {
  /** The encoded image (PNG, JPEG or WebP); its type is read from the bytes. */
  readonly bytes: Uint8Array
  readonly provider: string
  /** The provider's model name. */
  readonly model: string
}

export class ImageGenerator extends Context.Tag("@herald/core/ai/ImageGenerator")<ImageGenerator, {
  /** False for the stand-in used when no provider is set up: requests are answered 400 misconfig. */
  readonly configured: boolean
  readonly generate: (request: ImageRequest) => Effect.Effect<GeneratedImage, ImageGenerationError>
}>() {}

/** [width, height] of a ratio. */
export const ratioOf = (aspectRatio: AspectRatio): readonly [number, number] => {
  const [w, h] = aspectRatio.split(":").map(Number) as [number, number]
  return [w, h]
}

/**
 * The size asked of a provider: the long side 1024 pixels, the short side rounded to a multiple of 64
 * (what image models accept): 1:1 1024x1024, 16:9 1024x576, 4:3 1024x768, 4:5 832x1024...
 */
export const providerSize = (aspectRatio: AspectRatio): { readonly width: number; readonly height: number } => {
  const [w, h] = ratioOf(aspectRatio)
  const short = (n: number, d: number) => Math.round((1024 * n) / d / 64) * 64
  return w >= h ? { width: 1024, height: short(h, w) } : { width: short(w, h), height: 1024 }
}
