/**
 * `POST /posts/{post_id}/retry` and `POST /posts/retry-failed`: failed destinations back to `queued`,
 * due now; nothing is published synchronously (the dispatcher picks them up).
 *
 * The single-post path names its parameter `post_id`; `id`, the deprecated alias, is the same
 * positional segment, so both spellings of the documented path reach this endpoint.
 * Both endpoints accept a missing or empty body (`curl -X POST` with no data): for the single-post
 * retry that means every failed destination; for retry-failed it is 400 `no_filter`.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as OpenApi from "@effect/platform/OpenApi"
import type { Destination } from "@herald/core/domain/Destination"
import { DomainError } from "@herald/core/kernel/Errors"
import { AccountId, PostId } from "@herald/core/kernel/Ids"
import { Platform } from "@herald/core/domain/Platform"
import { unknownOutcomeMessage } from "@herald/core/publishing/Dispatcher"
import * as Retries from "@herald/core/publishing/Retries"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as ApiGroup from "../ApiGroup.js"
import * as Auth from "../Auth.js"
import * as Envelope from "../Envelope.js"
import * as RequestMiddleware from "../RequestMiddleware.js"

// ---------------------------------------------------------------------------------------------------
// Wire shapes
// ---------------------------------------------------------------------------------------------------

/** A destination as the post shows it: the spec's fields, its id, and its metrics inline. */
export const DestinationView = Schema.Struct({
  id: Schema.String,
  account_id: Schema.Int,
  account_name: Schema.String,
  platform: Platform,
  status: Schema.Literal("queued", "publishing", "published", "failed"),
  platform_post_id: Schema.NullOr(Schema.String),
  platform_post_url: Schema.NullOr(Schema.String),
  published_at: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String),
  error_code: Schema.NullOr(Schema.Literal("outcome_unknown")).annotations({
    description: "`outcome_unknown`: the process publishing this destination stopped before it could record the " +
      "outcome and the platform could not be asked whether the post arrived; null otherwise"
  }),
  retry_warning: Schema.NullOr(Schema.String).annotations({
    description: "What retrying this destination would do, when that is not simply publishing it again: for " +
      "`outcome_unknown`, that the post may appear twice"
  }),
  attempts: Schema.Int,
  views: Schema.Int,
  likes: Schema.Int,
  comments: Schema.Int,
  shares: Schema.Int,
  impressions: Schema.Int,
  saves: Schema.Int,
  clicks: Schema.Int,
  metrics_fetched_at: Schema.NullOr(Schema.String).annotations({
    description: "When the metrics were last fetched from the platform (ISO 8601); null until the first fetch, " +
      "about an hour after publishing"
  })
}).annotations({ identifier: "Destination" })
export type DestinationView = typeof DestinationView.Type

/** Said on a destination whose outcome is unknown, next to its error. */
export const outcomeUnknownRetryWarning =
  "The platform may already show this post: retrying publishes it again, so it would appear twice. Check the " +
  "account first and retry only if the post is missing."

const isOutcomeUnknown = (d: Destination): boolean =>
  d.status === "failed" && Option.getOrNull(d.error) === unknownOutcomeMessage

export const toDestinationView = (d: Destination): DestinationView => ({
  id: d.id,
  account_id: d.accountId,
  account_name: d.accountName,
  platform: d.platform,
  status: d.status,
  platform_post_id: Option.getOrNull(d.platformPostId),
  platform_post_url: Option.getOrNull(d.platformPostUrl),
  published_at: Option.match(d.publishedAt, { onNone: () => null, onSome: DateTime.formatIso }),
  error: Option.getOrNull(d.error),
  error_code: isOutcomeUnknown(d) ? "outcome_unknown" : null,
  retry_warning: isOutcomeUnknown(d) ? outcomeUnknownRetryWarning : null,
  attempts: d.attempts,
  views: d.metrics.views,
  likes: d.metrics.likes,
  comments: d.metrics.comments,
  shares: d.metrics.shares,
  impressions: d.metrics.impressions,
  saves: d.metrics.saves,
  clicks: d.metrics.clicks,
  metrics_fetched_at: Option.match(d.metricsFetchedAt, { onNone: () => null, onSome: DateTime.formatIso })
})

const PostIdPath = Schema.Struct({
  post_id: Schema.String.annotations({
    description: "The post's UUID. `id` is the deprecated name of this same path segment."
  })
})

export const RetryPayload = Schema.Struct({
  account_ids: Schema.optional(
    Schema.Array(Schema.Int).annotations({
      description: "Retry only the destinations of these accounts; omitted means every failed destination"
    })
  )
}).annotations({ identifier: "RetryRequest" })

export const RetryResult = Schema.Struct({
  post_id: Schema.String,
  account_ids: Schema.NullOr(Schema.Array(Schema.Int)).annotations({
    description: "The request's account_ids, as sent; null when omitted (every failed destination)"
  }),
  retried_count: Schema.Int,
  destinations: Schema.Array(DestinationView).annotations({ description: "The destinations re-queued" }),
  next_step: Schema.String
}).annotations({ identifier: "RetryResult" })
export type RetryResult = typeof RetryResult.Type

const Instant = Schema.String.annotations({ description: "ISO 8601 instant" })

export const RetryFailedPayload = Schema.Struct({
  post_ids: Schema.optional(Schema.Array(Schema.String).annotations({ description: "At most 200" })),
  account_id: Schema.optional(Schema.Int),
  platform: Schema.optional(Schema.String.annotations({ description: "A platform value; `twitter` means `x`" })),
  failed_after: Schema.optional(Instant),
  failed_before: Schema.optional(Instant),
  max_attempts: Schema.optional(Schema.Int.annotations({
    description: "Only destinations that used at most this many attempts; not a filter on its own"
  }))
}).annotations({ identifier: "RetryFailedRequest" })
type RetryFailedPayload = typeof RetryFailedPayload.Type

/** The request's filters, echoed under their names (each only when sent). */
const RetryFailedEcho = {
  post_ids: Schema.optional(Schema.Array(Schema.String)),
  account_id: Schema.optional(Schema.Int),
  platform: Schema.optional(Schema.String),
  failed_after: Schema.optional(Schema.String),
  failed_before: Schema.optional(Schema.String),
  max_attempts: Schema.optional(Schema.Int)
}

export const RetryFailedResult = Schema.Struct({
  ...RetryFailedEcho,
  retried_count: Schema.Int.annotations({ description: "Destinations re-queued, over every post" }),
  post_count: Schema.Int.annotations({ description: "Posts with at least one destination re-queued" }),
  posts: Schema.Array(Schema.Struct({
    post_id: Schema.String,
    retried_count: Schema.Int,
    destinations: Schema.Array(DestinationView)
  })),
  has_more: Schema.Boolean.annotations({
    description: `true when the cap of ${Retries.maxBulkRetried} destinations per call was reached: call again`
  }),
  next_step: Schema.String
}).annotations({ identifier: "RetryFailedResult" })
export type RetryFailedResult = typeof RetryFailedResult.Type

export const RetryGroup = HttpApiGroup.make("retry")
  .add(
    HttpApiEndpoint.post("retryFailed", "/posts/retry-failed")
      .setPayload(RetryFailedPayload)
      .addSuccess(Envelope.ok(RetryFailedResult))
      .annotate(OpenApi.Summary, "Re-queue every failed destination matching the filters (scope write)")
  )
  .add(
    HttpApiEndpoint.post("retry", "/posts/:post_id/retry")
      .setPath(PostIdPath)
      .setPayload(RetryPayload)
      .addSuccess(Envelope.ok(RetryResult))
      .annotate(OpenApi.Summary, "Re-queue a post's failed destinations (scope write); 409 when none failed")
  )
  .addError(ApiGroup.errors.notFound)
  .addError(ApiGroup.errors.conflict)
  .pipe(ApiGroup.authenticated)

// ---------------------------------------------------------------------------------------------------
// Handlers
// ---------------------------------------------------------------------------------------------------

/** The JSON body, `{}` when there is none. Malformed JSON is 400 `invalid_json`. */
const bodyOf = <A, I>(schema: Schema.Schema<A, I>) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const text = yield* request.text.pipe(
      Effect.mapError(() => DomainError.of("invalid_json", "The request body could not be read"))
    )
    let json: unknown = {}
    if (text.trim() !== "") {
      try {
        json = JSON.parse(text)
      } catch {
        return yield* DomainError.fail("invalid_json", "The request body is not valid JSON")
      }
    }
    return yield* Schema.decodeUnknown(schema)(json, { onExcessProperty: "ignore" }).pipe(
      Effect.catchIf(ParseResult.isParseError, HttpApiDecodeError.refailParseError)
    )
  })

const parsePostId = (raw: string): Option.Option<PostId> => Schema.decodeUnknownOption(PostId)(raw.toLowerCase())

const instant = (raw: string | undefined, field: string) =>
  Effect.gen(function*() {
    if (raw === undefined) return undefined
    const parsed = DateTime.make(raw)
    if (Option.isNone(parsed)) {
      return yield* DomainError.fail("invalid_datetime", `${field} must be an ISO 8601 instant`, { field })
    }
    return DateTime.toUtc(parsed.value)
  })

const accountIdsOf = (ids: ReadonlyArray<number>, field: string) =>
  Effect.forEach(ids, (id) =>
    Schema.is(AccountId)(id)
      ? Effect.succeed(id)
      : DomainError.fail("validation_error", `${field} must hold positive integers`, {
        validation_errors: [{ path: field, message: "Expected a positive integer" }]
      }))

const retryFailedInput = (organizationId: Retries.RetryFailedInput["organizationId"], body: RetryFailedPayload) =>
  Effect.gen(function*() {
    let platform: Platform | undefined
    if (body.platform !== undefined) {
      const lowered = body.platform.trim().toLowerCase()
      platform = lowered === "twitter" ? "x" : Schema.is(Platform)(lowered) ? lowered : undefined
      if (platform === undefined) {
        return yield* DomainError.fail("validation_error", `Unknown platform: ${body.platform}`, {
          validation_errors: [{ path: "platform", message: `Expected one of ${Platform.literals.join(", ")}` }]
        })
      }
    }
    const [accountId] = body.account_id === undefined
      ? [undefined]
      : yield* accountIdsOf([body.account_id], "account_id")
    if (body.max_attempts !== undefined && body.max_attempts < 0) {
      return yield* DomainError.fail("validation_error", "max_attempts must not be negative", {
        validation_errors: [{ path: "max_attempts", message: "Expected a non-negative integer" }]
      })
    }
    // Ids that are not UUIDs name no post: they are skipped like absent ones (after the count check).
    const postIds = body.post_ids === undefined
      ? undefined
      : body.post_ids.length > Retries.maxRetryPostIds
      ? body.post_ids as ReadonlyArray<PostId>
      : body.post_ids.flatMap((raw) => Option.toArray(parsePostId(raw)))
    const input: Retries.RetryFailedInput = {
      organizationId,
      postIds,
      accountId,
      platform,
      failedAfter: yield* instant(body.failed_after, "failed_after"),
      failedBefore: yield* instant(body.failed_before, "failed_before"),
      maxAttempts: body.max_attempts
    }
    return input
  })

export const RetryLive = HttpApiBuilder.group(ApiGroup.apiOf(RetryGroup), "retry", (handlers) =>
  handlers
    .handleRaw("retry", ({ path }) =>
      Effect.gen(function*() {
        const { organization } = yield* Auth.requireScope("write")
        const body = yield* bodyOf(RetryPayload)
        const postId = parsePostId(path.post_id)
        if (Option.isNone(postId)) return yield* DomainError.notFound("Post")
        const accountIds = body.account_ids === undefined
          ? undefined
          : yield* accountIdsOf(body.account_ids, "account_ids")
        const visible = yield* Auth.visibleAccountIds
        const result = yield* Retries.retryPost({
          organizationId: organization.id,
          postId: postId.value,
          accountIds,
          visibleAccountIds: Option.getOrUndefined(visible)
        }).pipe(Effect.catchTag("PersistenceError", Effect.die))
        yield* RequestMiddleware.annotateRequestLog("post_id", result.record.post.id)
        const out: RetryResult = {
          post_id: result.record.post.id,
          account_ids: body.account_ids ?? null,
          retried_count: result.retried.length,
          destinations: result.retried.map(toDestinationView),
          next_step: Retries.nextStep
        }
        return out
      }))
    .handleRaw("retryFailed", () =>
      Effect.gen(function*() {
        const { organization } = yield* Auth.requireScope("write")
        const body = yield* bodyOf(RetryFailedPayload)
        const input = yield* retryFailedInput(organization.id, body)
        const visible = yield* Auth.visibleAccountIds
        const result = yield* Retries.retryFailed({ ...input, visibleAccountIds: Option.getOrUndefined(visible) }).pipe(
          Effect.catchTag("PersistenceError", Effect.die)
        )
        const out: RetryFailedResult = {
          ...body,
          retried_count: result.retriedCount,
          post_count: result.posts.length,
          posts: result.posts.map((p) => ({
            post_id: p.record.post.id,
            retried_count: p.retried.length,
            destinations: p.retried.map(toDestinationView)
          })),
          has_more: result.hasMore,
          next_step: result.retriedCount === 0
            ? "Nothing matched the filters; nothing was re-queued."
            : Retries.nextStep
        }
        // Built in its wire shape (RetryFailedResult's encoded and decoded sides are one type; the
        // echoed filters are the decoded body, already in the schema's key order): answered without
        // HttpApi's encoding pass over up to 500 destinations.
        return yield* Envelope.respond(RetryFailedResult, out)
      })))
