/**
 * GET /platform-rules (scope read): what each platform takes, generated from the tables POST /posts
 * validates with (core `ComposerRules`), so a composer can check a post before sending it.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as ComposerRules from "@herald/core/posts/ComposerRules"
import { Platform } from "@herald/core/domain/Platform"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as ApiGroup from "../ApiGroup.js"
import * as Auth from "../Auth.js"
import * as Envelope from "../Envelope.js"

const Unit = Schema.Literal("characters", "weighted_characters", "graphemes", "bytes", "utf16_units").annotations({
  description: "What is counted: code points, X's weighted characters, grapheme clusters, UTF-8 bytes or UTF-16 units"
})

const TextLimit = Schema.Struct({
  limit: Schema.Int,
  unit: Unit,
  applies: Schema.Literal("always", "text_only", "with_media"),
  description: Schema.NullOr(Schema.String)
})

const Bytes = Schema.NullOr(Schema.Int)

const Setting = Schema.Struct({
  type: Schema.Literal("enum", "boolean", "string", "integer", "string_array", "url"),
  required: Schema.Boolean.annotations({ description: "Required when the platform is targeted, unless a draft" }),
  values: Schema.optional(Schema.Array(Schema.String)),
  max_length: Schema.optional(Schema.Int),
  forbidden_characters: Schema.optional(Schema.Array(Schema.String)),
  minimum: Schema.optional(Schema.Int),
  unit: Schema.optional(Schema.String),
  default: Schema.optional(Schema.Union(Schema.String, Schema.Number, Schema.Boolean)),
  description: Schema.optional(Schema.String)
})

export const PlatformRule = Schema.Struct({
  platform: Platform,
  caption: Schema.Struct({
    limit: Schema.Int,
    unit: Unit,
    description: Schema.NullOr(Schema.String),
    limits: Schema.Array(TextLimit).annotations({ description: "Every limit the text must meet, the main one first" })
  }),
  requires_text_or_media: Schema.Literal(true),
  media: Schema.Struct({
    required: Schema.NullOr(Schema.Struct({ media: Schema.Literal("any", "video"), description: Schema.String })),
    types: Schema.Array(Schema.String),
    kinds: Schema.Array(Schema.Literal("image", "video", "document")),
    max_items: Schema.NullOr(Schema.Int),
    max_images: Schema.NullOr(Schema.Int),
    alone: Schema.Array(Schema.Literal("video", "gif", "document")).annotations({
      description: "Kinds that must be the post's only medium"
    }),
    documents_apart: Schema.Boolean,
    max_bytes: Schema.Struct({ image: Bytes, gif: Bytes, video: Bytes, document: Bytes }),
    converted_types: Schema.Array(Schema.String).annotations({
      description: "Still image types the platform does not take that are sent as a JPEG rendition"
    }),
    aspect_ratio: Schema.NullOr(Schema.Struct({ min: Schema.String, max: Schema.String })).annotations({
      description: "Feed images outside the range are letterboxed (or cropped with settings.mediaFit \"crop\")"
    }),
    max_video_seconds: Schema.NullOr(Schema.Number).annotations({
      description: "Longer videos (when their duration is known) are refused at create time"
    })
  }),
  content_types: Schema.NullOr(Schema.Array(Schema.Struct({
    value: Schema.String,
    max_items: Schema.Int,
    video_only: Schema.Boolean
  }))),
  default_content_type: Schema.NullOr(Schema.String),
  settings: Schema.Record({ key: Schema.String, value: Setting }),
  threads: Schema.Boolean,
  first_comment: Schema.Boolean,
  first_comment_limits: Schema.Array(TextLimit).annotations({
    description: "Every limit settings.firstComment must meet (content_too_long otherwise); empty where none is posted"
  })
}).annotations({ identifier: "PlatformRule" })

export const PlatformRules = Schema.Struct({
  platforms: Schema.Record({ key: Platform, value: PlatformRule })
}).annotations({ identifier: "PlatformRules" })

export const PlatformRulesGroup = HttpApiGroup.make("platformRules")
  .add(
    HttpApiEndpoint.get("rules", "/platform-rules")
      .addSuccess(Envelope.ok(PlatformRules))
      .annotate(
        OpenApi.Summary,
        "Each platform's caption limits (and how they count), media types, sizes and counts, required media, " +
          "content types, settings with their allowed values, thread and first-comment support (scope read). " +
          "Generated from the rules POST /posts enforces"
      )
  )
  .pipe(ApiGroup.authenticated)

export const PlatformRulesLive = HttpApiBuilder.group(
  ApiGroup.apiOf(PlatformRulesGroup),
  "platformRules",
  (handlers) =>
    handlers.handle("rules", () =>
      Auth.requireScope("read").pipe(
        Effect.as({ platforms: ComposerRules.describeAll() } satisfies typeof PlatformRules.Type)
      ))
)
