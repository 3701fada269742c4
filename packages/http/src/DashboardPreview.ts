/**
 * `POST /dashboard/api/text-counts`: the composer's preview asks how each text will count on each
 * platform, and gets the answer from the same code POST /posts validates with (core `TextPreview`,
 * over `TextLimits`), so the dashboard keeps no copy of any platform's counting rules. For each text:
 * every limit with the text's length in its unit, where the part that fits ends, and the link a
 * platform shows as a card (the text's link found as the adapters find it).
 *
 * The answer is a pure function of the request (no stored data is read), so it needs no session; the
 * input is capped (50 texts, each at most the API's longest post text) and each count stops at ten
 * times its limit.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Links from "@herald/adapters/platforms/internal/Links"
import { DomainError } from "@herald/core/kernel/Errors"
import * as FieldCaps from "@herald/core/kernel/FieldCaps"
import { Platform } from "@herald/core/domain/Platform"
import * as TextPreview from "@herald/core/platforms/TextPreview"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Envelope from "./Envelope.js"

export const path = "/dashboard/api/text-counts"

/** The most texts one request measures (a post's platforms times its thread parts, with room). */
export const maxTexts = 50

export const TextCountsBody = Schema.Struct({
  texts: Schema.Array(Schema.Struct({
    platform: Platform,
    text: FieldCaps.cappedString(FieldCaps.maxContent),
    has_media: Schema.optional(Schema.Boolean)
  })).pipe(Schema.maxItems(maxTexts, { message: () => `At most ${maxTexts} texts` }))
})

/**
 * Where a platform shows the text's link as a preview card, for a post without media: Bluesky
 * (`app.bsky.embed.external`), LinkedIn (`content.article`) and Threads (`link_attachment`) take the
 * text's first link, as Herald's adapters send it; X builds its card itself from the text's last link.
 * Facebook's card comes from `settings.link`, which the composer knows; the others show none.
 */
export const linkCard = (platform: Platform, text: string, hasMedia: boolean): string | null => {
  if (hasMedia) return null
  switch (platform) {
    case "bluesky":
    case "linkedin":
    case "threads":
      return Links.first(text) ?? null
    case "x":
      return Links.find(text).at(-1)?.uri ?? null
    default:
      return null
  }
}

const reply = (body: unknown, status: number) =>
  Effect.map(FiberRef.get(Envelope.currentMeta), (meta) =>
    HttpServerResponse.unsafeJson(
      status === 200 ? { data: body, error: null, meta } : Envelope.errorBody(body as DomainError, meta),
      { status, headers: { "cache-control": "no-store" } }
    ))

export const handler = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const raw = yield* Effect.either(request.json)
  if (raw._tag === "Left") {
    return yield* reply(DomainError.of("invalid_json", "The body is not JSON"), 400)
  }
  const decoded = Schema.decodeUnknownEither(TextCountsBody)(raw.right)
  if (decoded._tag === "Left") {
    const issues = ParseResult.ArrayFormatter.formatErrorSync(decoded.left).map((issue) => ({
      path: issue.path.join("."),
      message: issue.message
    }))
    const first = issues[0]
    return yield* reply(
      DomainError.of(
        "validation_error",
        first === undefined ? "The body is invalid" : `${first.path === "" ? "body" : first.path}: ${first.message}`,
        { validation_errors: issues }
      ),
      400
    )
  }
  const counts = decoded.right.texts.map((t) => {
    const hasMedia = t.has_media === true
    const measured = TextPreview.measure(t.platform, t.text, hasMedia)
    return { platform: t.platform, ...measured, link_card: linkCard(t.platform, t.text, hasMedia) }
  })
  return yield* reply({ counts }, 200)
})
