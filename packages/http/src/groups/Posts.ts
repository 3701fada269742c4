/**
 * The posts endpoints: `GET/POST /posts`, `GET/PATCH/DELETE /posts/{id}`, `GET /posts/{id}/results`
 * and `POST /posts/{id}/schedule`. The rules live in `@herald/core/Posts`; this module reads bodies
 * (POST and PATCH raw, so that media field names are checked before any schema, and multipart bodies
 * get guidance) and shapes posts for the wire.
 *
 * A post on the wire carries every top-level request field under its request name, so a fetched post
 * sent back to POST /posts creates a clone.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as OpenApi from "@effect/platform/OpenApi"
import { DomainError, type PersistenceError } from "@herald/core/kernel/Errors"
import { ApprovalStatus, PostStatus } from "@herald/core/domain/Post"
import type { PostRecord } from "@herald/core/posts/PostStore"
import * as Posts from "@herald/core/posts/Posts"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as ApiGroup from "../ApiGroup.js"
import * as Auth from "../Auth.js"
import * as Envelope from "../Envelope.js"
import * as Idempotency from "../Idempotency.js"
import * as RequestMiddleware from "../RequestMiddleware.js"
import { DestinationView, toDestinationView } from "./Retry.js"

// ---------------------------------------------------------------------------------------------------
// Wire shapes
// ---------------------------------------------------------------------------------------------------

const PlatformContentView = Schema.Record({
  key: Schema.String,
  value: Schema.Struct({
    content: Schema.String,
    contentType: Schema.optional(Schema.String),
    settings: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
  })
}).annotations({ description: "Per-platform overrides, keyed by platform value" })

export const PostView = Schema.Struct({
  id: Schema.String,
  post_id: Schema.String.annotations({ description: "The same as id" }),
  content: Schema.String,
  account_ids: Schema.Array(Schema.Int),
  platform_content: PlatformContentView,
  media_ids: Schema.Array(Schema.String),
  scheduled_for: Schema.NullOr(Schema.String),
  scheduled_at: Schema.optional(
    Schema.String.annotations({ description: "Only when the request used this deprecated alias of scheduled_for" })
  ),
  timezone: Schema.NullOr(Schema.String),
  campaign_id: Schema.NullOr(Schema.Int),
  status: PostStatus,
  approval_status: Schema.NullOr(ApprovalStatus),
  approval_note: Schema.NullOr(Schema.String).annotations({
    description: "The reviewer's note: what to change (changes_requested) or the approver's remark; null otherwise"
  }),
  draft: Schema.Boolean,
  request_approval: Schema.Boolean,
  use_queue: Schema.Boolean,
  idempotency_key: Schema.NullOr(Schema.String),
  threadPosts: Schema.Array(
    Schema.Struct({ content: Schema.String, media_ids: Schema.optional(Schema.Array(Schema.String)) })
  ),
  destinations: Schema.Array(DestinationView),
  created_at: Schema.String,
  updated_at: Schema.String,
  next_steps: Schema.optional(Schema.String.annotations({ description: "On a draft just created" })),
  publish_now: Schema.optional(Schema.Boolean.annotations({
    description: "Only in the answer to POST /posts/{id}/schedule, when the request sent it (echoed as sent)"
  })),
  note: Schema.optional(
    Schema.NullOr(Schema.String).annotations({
      description: "Only in the answer to approve and request-changes: the review note as stored (the same as " +
        "approval_note), so the request's field comes back under its own name"
    })
  )
}).annotations({ identifier: "Post" })
export type PostView = typeof PostView.Type

const iso = (t: Option.Option<DateTime.Utc>): string | null =>
  Option.match(t, { onNone: () => null, onSome: DateTime.formatIso })

export const toPostView = (
  record: PostRecord,
  extra: {
    readonly scheduledAtSent?: boolean
    readonly nextSteps?: string
    readonly publishNow?: boolean
    readonly reviewNote?: boolean
  } = {}
): PostView => {
  const post = record.post
  const scheduledFor = iso(post.scheduledFor)
  const platformContent: Record<string, PostView["platform_content"][string]> = {}
  for (const [platform, entry] of Object.entries(post.platformContent)) {
    if (entry === undefined) continue
    platformContent[platform] = {
      content: entry.content,
      ...(entry.contentType === undefined ? {} : { contentType: entry.contentType }),
      ...(entry.settings === undefined ? {} : { settings: entry.settings })
    }
  }
  return {
    id: post.id,
    post_id: post.id,
    content: post.content,
    account_ids: post.accountIds,
    platform_content: platformContent,
    media_ids: post.mediaIds,
    scheduled_for: scheduledFor,
    ...(extra.scheduledAtSent === true && scheduledFor !== null ? { scheduled_at: scheduledFor } : {}),
    timezone: Option.getOrNull(post.timezone),
    campaign_id: Option.getOrNull(post.campaignId),
    status: Posts.statusOf(record),
    approval_status: Option.match(post.approval, { onNone: () => null, onSome: (a) => a.status }),
    approval_note: Option.match(post.approval, { onNone: () => null, onSome: (a) => Option.getOrNull(a.note) }),
    draft: post.isDraft,
    request_approval: Option.isSome(post.approval),
    use_queue: post.useQueue,
    idempotency_key: Option.getOrNull(post.idempotencyKey),
    threadPosts: post.threadPosts.map((p) => ({
      content: p.content,
      ...(p.media_ids === undefined ? {} : { media_ids: p.media_ids })
    })),
    destinations: record.destinations.map(toDestinationView),
    created_at: DateTime.formatIso(post.createdAt),
    updated_at: DateTime.formatIso(post.updatedAt),
    ...(extra.nextSteps === undefined ? {} : { next_steps: extra.nextSteps }),
    ...(extra.publishNow === undefined ? {} : { publish_now: extra.publishNow }),
    ...(extra.reviewNote === true
      ? { note: Option.match(post.approval, { onNone: () => null, onSome: (a) => Option.getOrNull(a.note) }) }
      : {})
  }
}

export const PostList = Schema.Struct({
  posts: Schema.Array(PostView),
  pagination: Schema.Struct({
    limit: Schema.Int,
    offset: Schema.Int,
    total: Schema.Int,
    has_more: Schema.Boolean,
    next_cursor: Schema.NullOr(Schema.String).annotations({
      description: "When has_more: pass as `cursor` for the next page (keyset: no post skipped or repeated " +
        "as posts are created or deleted meanwhile); null on the last page"
    })
  })
}).annotations({ identifier: "PostList" })

export const PostResults = Schema.Struct({
  post_id: Schema.String,
  status: PostStatus,
  destinations: Schema.Array(DestinationView),
  summary: Schema.Struct({
    total: Schema.Int,
    queued: Schema.Int,
    publishing: Schema.Int,
    published: Schema.Int,
    failed: Schema.Int
  })
}).annotations({ identifier: "PostResults" })
type PostResults = typeof PostResults.Type

export const Deleted = Schema.Struct({
  id: Schema.String,
  post_id: Schema.String,
  deleted: Schema.Literal(true)
}).annotations({ identifier: "PostDeleted" })

const IdPath = Schema.Struct({ id: Schema.String.annotations({ description: "The post's UUID" }) })

const QueryValue = Schema.optional(Schema.Union(Schema.String, Schema.Array(Schema.String)))

/** Documented only: every value is read leniently by `Posts.parseListQuery` (invalid ones are dropped). */
export const ListParams = Schema.Struct({
  status: QueryValue.annotations({ description: "Comma-separated post statuses" }),
  platform: QueryValue.annotations({ description: "Comma-separated platform values; twitter means x" }),
  account_id: QueryValue,
  campaign_id: QueryValue,
  created_after: QueryValue,
  created_before: QueryValue,
  scheduled_after: QueryValue,
  scheduled_before: QueryValue,
  published_after: QueryValue,
  published_before: QueryValue,
  updated_after: QueryValue,
  search: QueryValue.annotations({ description: "Case-insensitive substring of the content" }),
  sort: QueryValue.annotations({ description: "created_at (default), scheduled_for, updated_at, published_at" }),
  order: QueryValue.annotations({ description: "asc or desc (default)" }),
  limit: QueryValue.annotations({ description: "1 to 100, default 20; larger values are clamped to 100" }),
  offset: QueryValue.annotations({ description: "0 or more, default 0" }),
  cursor: QueryValue.annotations({
    description: "pagination.next_cursor of the previous page: the page after it, in its sort and order " +
      "(not with offset; an unknown cursor is 400 validation_error)"
  }),
  approval: QueryValue.annotations({ description: "Comma-separated: pending, approved, changes_requested" })
})

// ---------------------------------------------------------------------------------------------------
// Group
// ---------------------------------------------------------------------------------------------------

export const PostsGroup = HttpApiGroup.make("posts")
  .add(
    HttpApiEndpoint.get("list", "/posts")
      .setUrlParams(ListParams)
      .addSuccess(Envelope.ok(PostList))
      .annotate(OpenApi.Summary, "List posts, newest first, with filters (scope read)")
  )
  .add(
    HttpApiEndpoint.post("create", "/posts")
      .setPayload(Posts.CreateBody)
      .setHeaders(Idempotency.Headers)
      .addSuccess(Envelope.ok(PostView), { status: 201 })
      .annotate(OpenApi.Summary, "Create a draft, a scheduled post or an immediate publish (scope write)")
  )
  .add(
    HttpApiEndpoint.get("get", "/posts/:id")
      .setPath(IdPath)
      .addSuccess(Envelope.ok(PostView))
      .annotate(OpenApi.Summary, "One post with its destinations and their metrics (scope read)")
  )
  .add(
    HttpApiEndpoint.get("results", "/posts/:id/results")
      .setPath(IdPath)
      .addSuccess(Envelope.ok(PostResults))
      .annotate(OpenApi.Summary, "Per-destination results of a post (scope read)")
  )
  .add(
    HttpApiEndpoint.patch("update", "/posts/:id")
      .setPath(IdPath)
      .setPayload(Posts.UpdateBody)
      .addSuccess(Envelope.ok(PostView))
      .annotate(
        OpenApi.Summary,
        "Edit a post in any state (scope write): campaign_id and timezone always; content, platform_content, " +
          "media_ids and threadPosts while a destination is still to be sent (the next retry uses them); " +
          "scheduled_for moves the queued destinations; a published destination is never sent again. " +
          "400 invalid_post_status when the post's state does not allow the change (details.fields)"
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/posts/:id")
      .setPath(IdPath)
      .addSuccess(Envelope.ok(Deleted))
      .annotate(OpenApi.Summary, "Delete a post (not while a destination is publishing) (scope write)")
  )
  .add(
    HttpApiEndpoint.post("schedule", "/posts/:id/schedule")
      .setPath(IdPath)
      .setPayload(Posts.ScheduleBody)
      .addSuccess(Envelope.ok(PostView))
      .annotate(OpenApi.Summary, "Schedule or publish a draft (scope write); 409 when the post is not a draft")
  )
  .addError(ApiGroup.errors.notFound)
  .addError(ApiGroup.errors.conflict)
  .addError(ApiGroup.errors.unprocessable)
  .addError(ApiGroup.errors.tooManyRequests)
  .pipe(ApiGroup.authenticated)

// ---------------------------------------------------------------------------------------------------
// Handlers
// ---------------------------------------------------------------------------------------------------

const formContentTypes = ["multipart/form-data", "application/x-www-form-urlencoded"]

/**
 * The parsed JSON body (undefined when there is none). Form bodies get 400 `validation_error` with the
 * JSON shape and the upload-then-media_ids flow; malformed JSON gets 400 `invalid_json`.
 */
export const jsonBody = (endpoint: string) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const contentType = (request.headers["content-type"] ?? "").toLowerCase()
    if (formContentTypes.some((t) => contentType.includes(t))) {
      const mediaType = contentType.split(";")[0]?.trim() ?? contentType
      return yield* DomainError.fail("validation_error", Posts.formBodyMessage(endpoint, mediaType), {
        content_type: mediaType,
        expected_content_type: "application/json",
        example: { content: "Hello", account_ids: [1], media_ids: ["<media uuid>"] },
        media_flow: "Upload with POST /media/upload (or /media/upload-from-url), then list the ids in media_ids"
      })
    }
    const text = yield* request.text.pipe(
      Effect.mapError(() => DomainError.of("invalid_json", "The request body could not be read"))
    )
    if (text.trim() === "") return undefined
    try {
      return JSON.parse(text) as unknown
    } catch {
      return yield* DomainError.fail("invalid_json", "The request body is not valid JSON")
    }
  })

/** The post id on the request's log line. */
const logPost = (record: PostRecord) => RequestMiddleware.annotateRequestLog("post_id", record.post.id)

/** The value of a top-level field of a JSON object body, when there is one. */
const fieldOf = (body: unknown, field: string): unknown =>
  typeof body === "object" && body !== null && !Array.isArray(body)
    ? (body as Record<string, unknown>)[field]
    : undefined

const callerOf = (scope: "read" | "write") => Effect.map(Auth.requireScope(scope), ({ key }) => ({ key }))

/** Storage failures are defects here: the request middleware answers them with 500 internal_error. */
const dieOnStorage = <A, R>(
  self: Effect.Effect<A, DomainError | PersistenceError, R>
): Effect.Effect<A, DomainError, R> => Effect.catchTag(self, "PersistenceError", Effect.die)

const resultsOf = (record: PostRecord): PostResults => {
  const count = (s: string) => record.destinations.filter((d) => d.status === s).length
  return {
    post_id: record.post.id,
    status: Posts.statusOf(record),
    destinations: record.destinations.map(toDestinationView),
    summary: {
      total: record.destinations.length,
      queued: count("queued"),
      publishing: count("publishing"),
      published: count("published"),
      failed: count("failed")
    }
  }
}

/**
 * `POST /posts` (also answered by the fast path, `FastPath.ts`), honouring `Idempotency-Key`. The
 * body's `idempotency_key` field is only a field of the post (it changes the circuit breaker's hash).
 */
export const create = Idempotency.idempotent(Effect.gen(function*() {
  const caller = yield* callerOf("write")
  const body = yield* jsonBody("POST /posts")
  const created = yield* Posts.create(caller, body).pipe(dieOnStorage)
  yield* logPost(created.record)
  // Built in its wire shape (PostView's encoded and decoded sides are one type): answered
  // without a second, per-field pass through the schema.
  return yield* Envelope.respond(
    PostView,
    toPostView(created.record, {
      scheduledAtSent: created.scheduledAtSent,
      ...(created.record.post.isDraft ? { nextSteps: Posts.draftNextSteps } : {})
    }),
    201
  )
}))

export const PostsLive = HttpApiBuilder.group(ApiGroup.apiOf(PostsGroup), "posts", (handlers) =>
  handlers
    // Built in its wire shape (PostList's encoded and decoded sides are one type) and answered
    // without HttpApi's encoding pass over every post and destination of the page.
    .handleRaw("list", ({ urlParams }) =>
      Effect.gen(function*() {
        const caller = yield* callerOf("read")
        const listed = yield* Posts.list(caller, urlParams).pipe(dieOnStorage)
        return yield* Envelope.respond(PostList, {
          posts: listed.page.items.map((record) => toPostView(record)),
          pagination: {
            limit: listed.limit,
            offset: listed.offset,
            total: listed.page.total,
            has_more: listed.hasMore,
            next_cursor: listed.nextCursor
          }
        })
      }))
    .handleRaw("create", () => create)
    .handle("get", ({ path }) =>
      Effect.gen(function*() {
        const caller = yield* callerOf("read")
        const record = yield* Posts.get(caller, path.id).pipe(dieOnStorage)
        yield* logPost(record)
        return toPostView(record)
      }))
    .handle("results", ({ path }) =>
      Effect.gen(function*() {
        const caller = yield* callerOf("read")
        const record = yield* Posts.get(caller, path.id).pipe(dieOnStorage)
        yield* logPost(record)
        return resultsOf(record)
      }))
    .handleRaw("update", ({ path }) =>
      Effect.gen(function*() {
        const caller = yield* callerOf("write")
        const body = yield* jsonBody("PATCH /posts/{id}")
        const updated = yield* Posts.update(caller, path.id, body ?? {}).pipe(dieOnStorage)
        yield* logPost(updated.record)
        return toPostView(updated.record, { scheduledAtSent: updated.scheduledAtSent })
      }))
    .handle("delete", ({ path }) =>
      Effect.gen(function*() {
        const caller = yield* callerOf("write")
        const removed = yield* Posts.remove(caller, path.id).pipe(dieOnStorage)
        yield* logPost(removed)
        return { id: removed.post.id, post_id: removed.post.id, deleted: true as const }
      }))
    .handleRaw("schedule", ({ path }) =>
      Effect.gen(function*() {
        const caller = yield* callerOf("write")
        const body = yield* jsonBody("POST /posts/{id}/schedule")
        const record = yield* Posts.schedule(caller, path.id, body).pipe(dieOnStorage)
        yield* logPost(record)
        // Round trip: the request's fields come back under their names (the alias and publish_now too).
        const scheduledAt = fieldOf(body, "scheduled_at")
        const publishNow = fieldOf(body, "publish_now")
        return toPostView(record, {
          scheduledAtSent: scheduledAt !== undefined && scheduledAt !== null,
          ...(typeof publishNow === "boolean" ? { publishNow } : {})
        })
      })))
