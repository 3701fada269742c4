import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { Platform } from "./Platform.js"

export class CaptionGenerationError extends Schema.TaggedError<CaptionGenerationError>()("CaptionGenerationError", {
  reason: Schema.Literal("rejected", "failed"),
  message: Schema.String
}) {}

export class CaptionGenerator extends Context.Tag("@herald/core/CaptionGenerator")<CaptionGenerator, {
  /** 1 to `count` captions, each within `maxLength` characters. */
  readonly generate: (request: {
    readonly topic: string
    readonly tone: string
    readonly platform: Platform
    readonly count: number
    readonly maxLength: number
  }) => Effect.Effect<ReadonlyArray<string>, CaptionGenerationError>
}>() {}
