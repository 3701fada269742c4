/**
 * Plain decoders for the rows the dispatcher reads on every publish (destinations, posts) and the
 * event rows it writes. Schema decoding of these rows was a fifth of the dispatcher's CPU profile.
 *
 * Each fast decoder checks every column the way its schema in `Rows.ts` does and builds the same
 * value; when a row holds anything it does not recognise (a nested JSON value, a driver's odd
 * number, a bad value) it answers `undefined` and the whole batch is decoded by the schema instead,
 * so the result, and every error, is the schema's. The schemas stay the single definition.
 */
import { ConnectionFlow, SocialAccount } from "@herald/core/domain/Account"
import { Destination, DestinationStatus, Metrics } from "@herald/core/domain/Destination"
import type { AccountId, DestinationId, EventId, MediaId, OrganizationId, PostId } from "@herald/core/kernel/Ids"
import { Approval, PlatformContent, Post, PostStatus, ThreadPost } from "@herald/core/domain/Post"
import { platforms } from "@herald/core/domain/Platform"
import type { Platform } from "@herald/core/domain/Platform"
import type { Event } from "@herald/core/webhooks/Event"
import { unchecked } from "@herald/core/kernel/Unchecked"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as ParseResult from "effect/ParseResult"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"

type Row = { readonly [column: string]: unknown }

/** `Schema.UUID`'s pattern. */
const uuidPattern = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/i

/** Thrown inside a fast decoder when a column is not what the fast path knows: the schema decides. */
const unknownShape: unique symbol = Symbol("FastRows.unknownShape")

const fail = (): never => {
  throw unknownShape
}

const uuid = <B extends string>(value: unknown): B =>
  typeof value === "string" && uuidPattern.test(value) ? (value as B) : fail()

const string = (value: unknown): string => (typeof value === "string" ? value : fail())

const optionalString = (value: unknown): Option.Option<string> =>
  value === null ? Option.none() : Option.some(string(value))

/** `DbNumber`: a number, or an integer as text (node-postgres' int8); other text goes to the schema. */
const dbNumber = (value: unknown): number =>
  typeof value === "number" ? value : typeof value === "string" && /^-?\d{1,15}$/.test(value) ? Number(value) : fail()

const nonNegativeInt = (value: unknown): number => {
  const n = dbNumber(value)
  return Number.isInteger(n) && n >= 0 ? n : fail()
}

const positiveInt = (value: unknown): number => {
  const n = dbNumber(value)
  return Number.isInteger(n) && n > 0 ? n : fail()
}

/** `Instant`: epoch milliseconds; only whole milliseconds in the usual range take the fast path. */
const instant = (value: unknown): DateTime.Utc => {
  const n = dbNumber(value)
  return Number.isSafeInteger(n) && Math.abs(n) < 8_000_000_000_000_000 ? DateTime.unsafeMake(n) : fail()
}

const optionalInstant = (value: unknown): Option.Option<DateTime.Utc> =>
  value === null ? Option.none() : Option.some(instant(value))

/** `Bool`: 0/1 stored as a number. */
const bool = (value: unknown): boolean => dbNumber(value) !== 0

const oneOf = <const L extends ReadonlyArray<string>>(literals: L) => {
  const set = new Set<string>(literals)
  return (value: unknown): L[number] => (typeof value === "string" && set.has(value) ? value : fail())
}

const platform: (value: unknown) => Platform = oneOf(platforms)
const destinationStatus = oneOf(DestinationStatus.literals)

const metricNames = ["views", "likes", "comments", "shares", "impressions", "saves", "clicks"] as const

/** The metrics column, parsed; the last text seen is remembered (every new destination has zeros). */
let lastMetrics: readonly [string, Metrics] | undefined
const metrics = (value: unknown): Metrics => {
  const text = string(value)
  if (lastMetrics !== undefined && lastMetrics[0] === text) return lastMetrics[1]
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return fail()
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return fail()
  const fields = parsed as Row
  const out: Record<string, number> = {}
  for (const name of metricNames) {
    const n = fields[name]
    out[name] = typeof n === "number" && Number.isInteger(n) && n >= 0 ? n : fail()
  }
  const decoded = new Metrics(out as unknown as Metrics, true)
  lastMetrics = [text, decoded]
  return decoded
}

const jsonArray = (value: unknown): ReadonlyArray<unknown> => {
  const text = string(value)
  if (text === "[]") return []
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return fail()
  }
  return Array.isArray(parsed) ? parsed : fail()
}

const tryFast = <A>(decode: (row: Row) => A) => (row: unknown): A | undefined => {
  if (typeof row !== "object" || row === null) return undefined
  try {
    return decode(row as Row)
  } catch (e) {
    if (e === unknownShape) return undefined
    throw e
  }
}

/** `DestinationRow`'s decoding, without the schema. */
export const destination = tryFast((r): Destination =>
  unchecked(Destination, {
    id: uuid<DestinationId>(r["id"]),
    postId: uuid<PostId>(r["post_id"]),
    organizationId: uuid<OrganizationId>(r["organization_id"]),
    accountId: positiveInt(r["account_id"]) as AccountId,
    platform: platform(r["platform"]),
    accountName: string(r["account_name"]),
    status: destinationStatus(r["status"]),
    dueAt: instant(r["due_at"]),
    attempts: nonNegativeInt(r["attempts"]),
    error: optionalString(r["error"]),
    platformPostId: optionalString(r["platform_post_id"]),
    platformPostUrl: optionalString(r["platform_post_url"]),
    publishedAt: optionalInstant(r["published_at"]),
    failedAt: optionalInstant(r["failed_at"]),
    metrics: metrics(r["metrics"]),
    metricsFetchedAt: optionalInstant(r["metrics_fetched_at"]),
    createdAt: instant(r["created_at"]),
    updatedAt: instant(r["updated_at"])
  })
)

const postStatus = oneOf(PostStatus.literals)

/**
 * A JSON column decoded by its own column schema (the one `PostRow` gives it), the rest of the row
 * staying on the fast path; a value the schema rejects sends the row to the whole-row schema.
 */
const byColumnSchema = <A>(schema: Schema.Schema<A, string>) => {
  const decode = Schema.decodeUnknownEither(schema)
  return (value: unknown): A => {
    const decoded = decode(value)
    return Either.isRight(decoded) ? decoded.right : fail()
  }
}

const platformContentJson = byColumnSchema(Schema.parseJson(PlatformContent))
const approvalJson = byColumnSchema(Schema.parseJson(Approval))
const threadPostsJson = byColumnSchema(Schema.parseJson(Schema.Array(ThreadPost)))

/**
 * `PostRow`'s decoding. The plain post the dispatcher reads most (no per-platform content, no
 * approval, no thread) is decoded without any schema; a post list also holds posts with those, whose
 * JSON columns are decoded by their column schemas alone (a page with one such post once went whole
 * through the row schema).
 */
export const post = tryFast((r): Post => {
  return unchecked(Post, {
    id: uuid<PostId>(r["id"]),
    organizationId: uuid<OrganizationId>(r["organization_id"]),
    createdByKey: r["created_by_key"] === null ? Option.none() : Option.some(uuid(r["created_by_key"])),
    createdBy: r["created_by"] === null || r["created_by"] === undefined
      ? Option.none()
      : Option.some(uuid(r["created_by"])),
    content: string(r["content"]),
    accountIds: jsonArray(r["account_ids"]).map((id) =>
      typeof id === "number" && Number.isInteger(id) && id > 0 ? (id as AccountId) : fail()
    ),
    platformContent: r["platform_content"] === "{}" ? {} : platformContentJson(r["platform_content"]),
    mediaIds: jsonArray(r["media_ids"]).map((id) => uuid<MediaId>(id)),
    scheduledFor: optionalInstant(r["scheduled_for"]),
    timezone: optionalString(r["timezone"]),
    campaignId: r["campaign_id"] === null ? Option.none() : Option.some(positiveInt(r["campaign_id"]) as never),
    isDraft: bool(r["is_draft"]),
    createdStatus: postStatus(r["created_status"]),
    approval: r["approval"] === null ? Option.none() : Option.some(approvalJson(r["approval"])),
    idempotencyKey: optionalString(r["idempotency_key"]),
    requestHash: optionalString(r["request_hash"]),
    threadPosts: r["thread_posts"] === "[]" ? [] : threadPostsJson(r["thread_posts"]),
    useQueue: bool(r["use_queue"]),
    createdAt: instant(r["created_at"]),
    updatedAt: instant(r["updated_at"]),
    traceParent: optionalString(r["trace_parent"] ?? null)
  })
})

const connectionFlow = oneOf(ConnectionFlow.literals)

/** `AccountRow`'s decoding, without the schema. */
export const account = tryFast((r): SocialAccount =>
  unchecked(SocialAccount, {
    id: positiveInt(r["id"]) as AccountId,
    organizationId: uuid<OrganizationId>(r["organization_id"]),
    platform: platform(r["platform"]),
    platformAccountId: string(r["platform_account_id"]),
    accountName: string(r["account_name"]),
    avatarUrl: string(r["avatar_url"]),
    isActive: bool(r["is_active"]),
    connectionFlow: connectionFlow(r["connection_flow"]),
    needsReconnection: bool(r["needs_reconnection"]),
    tokenExpiresAt: optionalInstant(r["token_expires_at"]),
    lastSuccessAt: optionalInstant(r["last_success_at"]),
    recentFailures: nonNegativeInt(r["recent_failures"]),
    credentials: r["credentials"] === null ? Option.none() : Option.some(Redacted.make(string(r["credentials"]))),
    createdAt: instant(r["created_at"]),
    updatedAt: instant(r["updated_at"])
  })
)

/**
 * Decodes rows with `fast`, or the whole batch with `schema` as soon as one row is not for the fast
 * path (so every failure is the schema's).
 */
export const decodeRows = <A, R>(
  fast: (row: unknown) => A | undefined,
  schema: (rows: ReadonlyArray<unknown>) => Effect.Effect<ReadonlyArray<A>, ParseResult.ParseError, R>
) =>
(rows: ReadonlyArray<unknown>): Effect.Effect<ReadonlyArray<A>, ParseResult.ParseError, R> => {
  const out: Array<A> = new Array(rows.length)
  for (let i = 0; i < rows.length; i++) {
    const decoded = fast(rows[i])
    if (decoded === undefined) return schema(rows)
    out[i] = decoded
  }
  return Effect.succeed(out)
}

/** `EventRow`'s encoding, plus the `post_id` column: an event is already valid, nothing to check. */
export const eventRow = (event: Event) => {
  const postId = event.data["post_id"]
  return {
    id: event.id as EventId,
    organization_id: event.organizationId as OrganizationId,
    type: event.type,
    data: JSON.stringify(event.data),
    created_at: DateTime.toEpochMillis(event.createdAt),
    post_id: typeof postId === "string" ? postId : null,
    trace_parent: Option.getOrNull(event.traceParent)
  }
}

const optionOrNull = <A, B>(option: Option.Option<A>, f: (a: A) => B): B | null =>
  Option.isSome(option) ? f(option.value) : null

/**
 * `encodePost`'s row (`PostRow`'s encoding plus `approval_status`) for the post a create writes
 * most: no per-platform content, no thread, no approval; anything else answers `undefined` and goes
 * to the schema. A `Post` is valid by construction, so there is nothing to check.
 */
export const postRow = (post: Post) => {
  if (Object.keys(post.platformContent).length > 0 || post.threadPosts.length > 0 || Option.isSome(post.approval)) {
    return undefined
  }
  return {
    id: post.id,
    organization_id: post.organizationId,
    created_by_key: Option.getOrNull(post.createdByKey),
    created_by: Option.getOrNull(post.createdBy),
    content: post.content,
    account_ids: JSON.stringify(post.accountIds),
    platform_content: "{}",
    media_ids: JSON.stringify(post.mediaIds),
    scheduled_for: optionOrNull(post.scheduledFor, DateTime.toEpochMillis),
    timezone: Option.getOrNull(post.timezone),
    campaign_id: Option.getOrNull(post.campaignId),
    is_draft: post.isDraft ? 1 : 0,
    created_status: post.createdStatus,
    approval: null,
    idempotency_key: Option.getOrNull(post.idempotencyKey),
    request_hash: Option.getOrNull(post.requestHash),
    thread_posts: "[]",
    use_queue: post.useQueue ? 1 : 0,
    created_at: DateTime.toEpochMillis(post.createdAt),
    updated_at: DateTime.toEpochMillis(post.updatedAt),
    trace_parent: Option.getOrNull(post.traceParent),
    approval_status: null
  }
}
