/**
 * The request bodies of the posts use cases (create, update, schedule), decoded from parsed JSON so
 * that every caller, HTTP or an embedding host, gets the same rules.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { decodeBody } from "../kernel/RequestBodies.js"
import { DomainError } from "../kernel/Errors.js"
import * as FieldCaps from "../kernel/FieldCaps.js"
import { CampaignId, MediaId } from "../kernel/Ids.js"
import { PlatformContent, ThreadPost } from "../domain/Post.js"
import { forbiddenMediaFields } from "./PostPorts.js"

const nullable = <A, I, R>(schema: Schema.Schema<A, I, R>) => Schema.optional(Schema.NullOr(schema))

/** `platform_content` with every override's text within `FieldCaps.maxContent`. */
const CappedPlatformContent = PlatformContent.pipe(Schema.filter((entries) =>
  FieldCaps.contentIssues(
    Object.entries(entries).flatMap((
      [key, entry]
    ) => (entry === undefined ? [] : [{ key, text: entry.content, field: "content" }]))
  )
))

/** `threadPosts`: at most `FieldCaps.maxThreadPosts` parts, each text within `FieldCaps.maxContent`. */
const CappedThreadPosts = Schema.Array(ThreadPost).pipe(
  Schema.maxItems(FieldCaps.maxThreadPosts, { message: () => `At most ${FieldCaps.maxThreadPosts} thread posts` }),
  Schema.filter((parts) =>
    FieldCaps.contentIssues(parts.map((part, key) => ({ key, text: part.content, field: "content" })))
  )
)

const Instant = FieldCaps.cappedString(FieldCaps.maxInstant)

/**
 * The body of POST /posts. Every field may also be null, which means absent (so a fetched post can be
 * sent back). Texts and labels are capped (`FieldCaps`) before any other work.
 */
export const CreateBody = Schema.Struct({
  content: nullable(FieldCaps.cappedString(FieldCaps.maxContent)),
  account_ids: nullable(Schema.Array(Schema.Int)),
  scheduled_for: nullable(Instant),
  scheduled_at: nullable(Instant.annotations({ description: "Deprecated alias of scheduled_for" })),
  timezone: nullable(Instant),
  platform_content: nullable(CappedPlatformContent),
  media_ids: nullable(Schema.Array(MediaId)),
  campaign_id: nullable(CampaignId),
  draft: nullable(Schema.Boolean),
  request_approval: nullable(Schema.Boolean),
  use_queue: nullable(Schema.Boolean),
  idempotency_key: nullable(FieldCaps.cappedString(FieldCaps.maxLabel)),
  threadPosts: nullable(CappedThreadPosts)
}).annotations({ identifier: "CreatePostRequest" })
export type CreateBody = typeof CreateBody.Type

/**
 * The body of PATCH /posts/{id}: any of the editable fields; `null` clears `timezone`, `campaign_id`
 * and (drafts only) `scheduled_for`. `draft`, `request_approval`, `use_queue` and `idempotency_key` are
 * accepted so a fetched post can be sent back, but cannot be changed here.
 */
export const UpdateBody = CreateBody.annotations({ identifier: "UpdatePostRequest" })
export type UpdateBody = CreateBody

export const ScheduleBody = Schema.Struct({
  scheduled_for: nullable(Instant),
  scheduled_at: nullable(Instant.annotations({ description: "Deprecated alias of scheduled_for" })),
  publish_now: nullable(Schema.Boolean),
  use_queue: nullable(Schema.Boolean.annotations({
    description: "true: the draft takes the queue's next free opening, as use_queue on POST /posts does"
  })),
  account_ids: nullable(Schema.Array(Schema.Int)),
  timezone: nullable(Instant)
}).annotations({ identifier: "SchedulePostRequest" })
export type ScheduleBody = typeof ScheduleBody.Type

export { decodeBody }

export const invalid = (path: string, message: string): DomainError =>
  DomainError.of("validation_error", path === "" ? message : `${path}: ${message}`, {
    validation_errors: [{ path, message }]
  })

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** 400 `invalid_field_name` for a media field other than `media_ids`, at the top or in a thread post. */
export const checkFieldNames = (raw: unknown): Effect.Effect<void, DomainError> => {
  if (!isObject(raw)) return Effect.void
  const found: Array<string> = forbiddenMediaFields.filter((f) => f in raw)
  if (Array.isArray(raw["threadPosts"])) {
    raw["threadPosts"].forEach((part, i) => {
      if (isObject(part)) {
        for (const f of forbiddenMediaFields) if (f in part) found.push(`threadPosts.${i}.${f}`)
      }
    })
  }
  if (found.length === 0) return Effect.void
  return DomainError.fail(
    "invalid_field_name",
    `Unsupported field ${found.map((f) => `'${f}'`).join(", ")}: attach media with media_ids, an array of ` +
      "media UUIDs from POST /media/upload",
    { fields: found, hint: "Use media_ids: [\"<media uuid>\", ...]" }
  )
}

export const objectBody = (raw: unknown): Effect.Effect<Record<string, unknown>, DomainError> =>
  isObject(raw) ? Effect.succeed(raw) : Effect.fail(invalid("", "The body must be a JSON object"))
