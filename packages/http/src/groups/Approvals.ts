/**
 * The review of drafts submitted for approval: `POST /posts/{id}/approve` and
 * `POST /posts/{id}/request-changes` (scope write). The rules live in `@herald/core/Approvals`; both
 * answer the reviewed post as `GET /posts/{id}` shows it, plus the request's `note` under its own name.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Approvals from "@herald/core/workflow/Approvals"
import { DomainError, type PersistenceError } from "@herald/core/kernel/Errors"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as ApiGroup from "../ApiGroup.js"
import * as Auth from "../Auth.js"
import * as Envelope from "../Envelope.js"
import * as RequestMiddleware from "../RequestMiddleware.js"
import { PostView, toPostView } from "./Posts.js"

const IdPath = Schema.Struct({ id: Schema.String.annotations({ description: "The post's UUID" }) })

export const ApprovalsGroup = HttpApiGroup.make("approvals")
  .add(
    HttpApiEndpoint.post("approve", "/posts/:id/approve")
      .setPath(IdPath)
      .setPayload(Approvals.ApproveBody)
      .addSuccess(Envelope.ok(PostView))
      .annotate(
        OpenApi.Summary,
        "Approve a draft pending approval (scope write); it can then be scheduled once. 400 invalid_post_status " +
          "unless the post is a pending draft"
      )
  )
  .add(
    HttpApiEndpoint.post("requestChanges", "/posts/:id/request-changes")
      .setPath(IdPath)
      .setPayload(Approvals.RequestChangesBody)
      .addSuccess(Envelope.ok(PostView))
      .annotate(
        OpenApi.Summary,
        "Send a draft pending approval back with a required note (scope write); an edit resubmits it. " +
          "400 invalid_post_status unless the post is a pending draft"
      )
  )
  .addError(ApiGroup.errors.notFound)
  .pipe(ApiGroup.authenticated)

/** The parsed JSON body; undefined when there is none. Malformed JSON is 400 `invalid_json`. */
const jsonBody = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
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

const dieOnStorage = <A, R>(
  self: Effect.Effect<A, DomainError | PersistenceError, R>
): Effect.Effect<A, DomainError, R> => Effect.catchTag(self, "PersistenceError", Effect.die)

/** Scope write; through the browser, also the owner or admin role (`Permissions`: `review_posts`). */
const callerOf = Effect.gen(function*() {
  const principal = yield* Auth.requireScope("write")
  return { key: principal.key }
})

export const ApprovalsLive = HttpApiBuilder.group(ApiGroup.apiOf(ApprovalsGroup), "approvals", (handlers) =>
  handlers
    .handleRaw("approve", ({ path }) =>
      Effect.gen(function*() {
        const caller = yield* callerOf
        const body = yield* jsonBody
        const record = yield* Approvals.approve(caller, path.id, body).pipe(dieOnStorage)
        yield* RequestMiddleware.annotateRequestLog("post_id", record.post.id)
        return toPostView(record, { reviewNote: true })
      }))
    .handleRaw("requestChanges", ({ path }) =>
      Effect.gen(function*() {
        const caller = yield* callerOf
        const body = yield* jsonBody
        const record = yield* Approvals.requestChanges(caller, path.id, body).pipe(dieOnStorage)
        yield* RequestMiddleware.annotateRequestLog("post_id", record.post.id)
        return toPostView(record, { reviewNote: true })
      })))
