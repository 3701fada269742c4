/**
 * `POST /posts/bulk` (1 to 50 POST /posts bodies, each created on its own: 201 all created, 207
 * mixed; none created is an error whose details hold the 207's results, see `noneCreated`) and `POST /posts/bulk-schedule` (rows of date, time, content, platforms and media
 * in one timezone; 200, or 422 when batch errors block scheduling). The rules live in
 * `@herald/core/BulkPosts` and `@herald/core/BulkSchedule`.
 *
 * Bulk create charges the key's rate limit once for the request (the auth layer) and once more per
 * created post (spec, Limits); bulk schedule is one request.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import * as BulkPosts from "@herald/core/workflow/BulkPosts"
import * as BulkSchedule from "@herald/core/workflow/BulkSchedule"
import { DomainError, type PersistenceError } from "@herald/core/kernel/Errors"
import * as Posts from "@herald/core/posts/Posts"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberRef from "effect/FiberRef"
import * as Schema from "effect/Schema"
import * as ApiGroup from "../ApiGroup.js"
import * as Auth from "../Auth.js"
import * as Envelope from "../Envelope.js"
import * as Idempotency from "../Idempotency.js"
import * as RateLimit from "../RateLimit.js"
import { jsonBody, PostView, toPostView } from "./Posts.js"

// ---------------------------------------------------------------------------------------------------
// Wire shapes
// ---------------------------------------------------------------------------------------------------

export const BulkRequest = Schema.Struct({
  posts: Schema.Array(Posts.CreateBody).annotations({
    description: `1 to ${BulkPosts.maxItems} POST /posts bodies`
  })
}).annotations({ identifier: "BulkCreateRequest" })

export const BulkItem = Schema.Struct({
  index: Schema.Int.annotations({ description: "0-based position in the request" }),
  success: Schema.Boolean,
  status: Schema.Literal("created", "failed"),
  post: Schema.NullOr(PostView).annotations({ description: "The created post, as POST /posts answers it" }),
  error: Schema.NullOr(Envelope.ErrorObject).annotations({
    description: "The code, message and details a single POST /posts would give"
  })
}).annotations({ identifier: "BulkCreateItem" })
type BulkItem = typeof BulkItem.Type

export const BulkResult = Schema.Struct({
  posts: Schema.Array(Schema.NullOr(PostView)).annotations({
    description: "The request's posts, in request order: each as created, or null when it failed (see results)"
  }),
  results: Schema.Array(BulkItem),
  summary: Schema.Struct({ total: Schema.Int, created: Schema.Int, failed: Schema.Int })
}).annotations({ identifier: "BulkCreateResult" })
type BulkResult = typeof BulkResult.Type

export const BulkScheduleResult = Schema.Struct({
  dryRun: Schema.Boolean,
  scheduled: Schema.Int,
  failed: Schema.Int,
  results: Schema.Array(Schema.Struct({
    row: Schema.Int.annotations({ description: "0-based row index" }),
    status: Schema.Literal("scheduled", "valid", "error").annotations({
      description: "valid: passed every check but was not created (dryRun)"
    }),
    postId: Schema.NullOr(Schema.String),
    error: Schema.NullOr(Schema.String),
    code: Schema.NullOr(Schema.String).annotations({ description: "The error code a single create would give" }),
    scheduledFor: Schema.NullOr(Schema.String).annotations({ description: "The row's UTC instant" })
  })),
  batchErrors: Schema.Array(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  batchWarnings: Schema.Array(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  summary: Schema.Struct({
    totalRows: Schema.Int,
    validRows: Schema.Int,
    errorRows: Schema.Int,
    totalDestinations: Schema.Int,
    platformBreakdown: Schema.Record({ key: Schema.String, value: Schema.Int })
  }),
  posts: Schema.Array(BulkSchedule.Row).annotations({ description: "The rows as sent" }),
  timezone: Schema.String.annotations({ description: "As sent" }),
  accountMapping: Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.Int })).annotations({
    description: "As sent; null when not sent"
  })
}).annotations({ identifier: "BulkScheduleResult" })

export const BulkGroup = HttpApiGroup.make("bulk")
  .add(
    HttpApiEndpoint.post("create", "/posts/bulk")
      .setPayload(BulkRequest)
      .setHeaders(Idempotency.Headers)
      .addSuccess(Envelope.ok(BulkResult), { status: 201 })
      .addSuccess(
        Envelope.ok(BulkResult).annotations({ description: "Mixed outcomes: some created, some failed" }),
        { status: 207 }
      )
      .annotate(
        OpenApi.Summary,
        `Create up to ${BulkPosts.maxItems} posts, each on its own (scope write): 201 all created, 207 mixed, ` +
          "none created: the items' common error (their code and status), else 400 validation_error, with " +
          "details.results and details.summary shaped as a 207's data; 400 bulk_limit_exceeded above 50"
      )
  )
  .add(
    HttpApiEndpoint.post("schedule", "/posts/bulk-schedule")
      .setPayload(BulkSchedule.Body)
      .setHeaders(Idempotency.Headers)
      .addSuccess(Envelope.ok(BulkScheduleResult))
      .annotate(
        OpenApi.Summary,
        `Schedule up to ${BulkSchedule.maxRows} rows of date, time, content and platforms (scope write); ` +
          "422 when batch errors (the X daily limit) prevent scheduling"
      )
  )
  .addError(ApiGroup.errors.unprocessable)
  .addError(ApiGroup.errors.tooManyRequests)
  .pipe(ApiGroup.authenticated)

// ---------------------------------------------------------------------------------------------------
// Handlers
// ---------------------------------------------------------------------------------------------------

const dieOnStorage = <A, R>(
  self: Effect.Effect<A, DomainError | PersistenceError, R>
): Effect.Effect<A, DomainError, R> => Effect.catchTag(self, "PersistenceError", Effect.die)

const itemOf = (outcome: BulkPosts.ItemOutcome, index: number): BulkItem =>
  Either.match(outcome, {
    onRight: (created) => ({
      index,
      success: true,
      status: "created" as const,
      post: toPostView(created.record, {
        scheduledAtSent: created.scheduledAtSent,
        ...(created.record.post.isDraft ? { nextSteps: Posts.draftNextSteps } : {})
      }),
      error: null
    }),
    onLeft: (error) => ({
      index,
      success: false,
      status: "failed" as const,
      post: null,
      error: Envelope.errorObject(error)
    })
  })

/**
 * The answer when no item was created: an error envelope (`data` null) whose `details` holds
 * `results` and `summary` exactly as a 207's `data` does. Its code and status are the items' own when
 * every item failed with the same code (all `post_limit_reached`: a 429 the client may retry, with
 * the first item's `reset_at`; all `invalid_accounts`: that 400), else 400 `validation_error`: never a status the spec's error table
 * does not give the code.
 */
const noneCreated = (outcomes: ReadonlyArray<BulkPosts.ItemOutcome>, result: BulkResult): DomainError => {
  const errors = outcomes.flatMap((o) => (Either.isLeft(o) ? [o.left] : []))
  const first = errors[0]
  const shared = first !== undefined && errors.every((e) => e.code === first.code && e.status === first.status)
  const message = `None of the ${outcomes.length} posts was created; details.results gives each one's error`
  return shared
    ? DomainError.of(first.code, `${message} (every one: ${first.code})`, { ...first.details, ...result }, first.status)
    : DomainError.of("validation_error", message, { ...result })
}

/** A success envelope with a status of the handler's choosing (207). */
const respond = (data: unknown, status: number) =>
  Effect.map(
    FiberRef.get(Envelope.currentMeta),
    (meta) => HttpServerResponse.unsafeJson({ data, error: null, meta }, { status })
  )

export const BulkLive = HttpApiBuilder.group(ApiGroup.apiOf(BulkGroup), "bulk", (handlers) =>
  handlers
    .handleRaw("create", () =>
      Idempotency.idempotent(Effect.gen(function*() {
        const { key, session } = yield* Auth.requireScope("write")
        const body = yield* jsonBody("POST /posts/bulk")
        const outcomes = yield* BulkPosts.create({ key }, body).pipe(dieOnStorage)
        const created = outcomes.filter(Either.isRight).length
        // A browser session skips the API-key rate limits (spec Authentication rule 4).
        if (session === undefined) yield* RateLimit.charge(key.id, created)
        const items = outcomes.map(itemOf)
        const result: BulkResult = {
          posts: items.map((item) => item.post),
          results: items,
          summary: { total: outcomes.length, created, failed: outcomes.length - created }
        }
        if (created === 0) return yield* Effect.fail(noneCreated(outcomes, result))
        return yield* respond(result, created === outcomes.length ? 201 : 207)
      })))
    .handleRaw("schedule", () =>
      Idempotency.idempotent(Effect.gen(function*() {
        const { key, organization } = yield* Auth.requireScope("write")
        const body = yield* jsonBody("POST /posts/bulk-schedule")
        const result = yield* BulkSchedule.run({ key }, organization.plan, body).pipe(dieOnStorage)
        return yield* respond(result, 200)
      }))))
