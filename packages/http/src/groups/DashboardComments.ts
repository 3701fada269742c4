/**
 * Comments on a post between its author and its reviewers (/dashboard/api/posts/{id}/comments,
 * outside the spec): listed oldest first, added one at a time (`Comments` holds who may).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import type { CommentView as StoredComment } from "@herald/core/workflow/Comment"
import * as Comments from "@herald/core/workflow/Comments"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as ApiGroup from "../ApiGroup.js"
import * as Envelope from "../Envelope.js"
import * as SessionAuth from "../SessionAuth.js"
import { basePath } from "./DashboardSession.js"

export const CommentView = Schema.Struct({
  id: Schema.String,
  post_id: Schema.String,
  author_id: Schema.String,
  /** Null when the author has been removed from the organization. */
  author_name: Schema.NullOr(Schema.String),
  body: Schema.String,
  created_at: Schema.String
}).annotations({ identifier: "DashboardComment" })

const commentView = ({ authorName, comment }: StoredComment): typeof CommentView.Type => ({
  id: comment.id,
  post_id: comment.postId,
  author_id: comment.authorId,
  author_name: authorName,
  body: comment.body,
  created_at: DateTime.formatIso(comment.createdAt)
})

const PostPath = Schema.Struct({ id: Schema.String })
const CommentBody = Schema.Struct({ body: Schema.String })

export const DashboardCommentsGroup = HttpApiGroup.make("dashboardComments")
  .add(
    HttpApiEndpoint.get("list", "/posts/:id/comments")
      .setPath(PostPath)
      .addSuccess(Schema.Struct({ data: Schema.Array(CommentView) }))
  )
  .add(
    HttpApiEndpoint.post("add", "/posts/:id/comments")
      .setPath(PostPath)
      .setPayload(ApiGroup.payload(CommentBody))
      .addSuccess(CommentView, { status: 201 })
  )
  .addError(ApiGroup.errors.badRequest)
  .addError(ApiGroup.errors.notFound)
  .addError(ApiGroup.errors.internal)
  .addError(Envelope.errorResponse(403))
  .middleware(SessionAuth.SessionAuthentication)
  .prefix(basePath)
  .annotate(OpenApi.Exclude, true)

const actorOf = (caller: SessionAuth.Caller) => ({
  id: caller.user.id,
  organizationId: caller.organization.id,
  role: caller.user.role
})

export const DashboardCommentsLive = HttpApiBuilder.group(
  ApiGroup.apiOf(DashboardCommentsGroup),
  "dashboardComments",
  (handlers) =>
    handlers
      .handle("list", ({ path }) =>
        Effect.gen(function*() {
          const caller = yield* SessionAuth.CurrentSession
          return { data: (yield* Comments.list(actorOf(caller), path.id)).map(commentView) }
        }).pipe(Effect.catchTag("PersistenceError", Effect.die)))
      .handle("add", ({ path, payload }) =>
        Effect.gen(function*() {
          const caller = yield* SessionAuth.CurrentSession
          return commentView(yield* Comments.add(actorOf(caller), path.id, payload.body))
        }).pipe(Effect.catchTag("PersistenceError", Effect.die)))
)
