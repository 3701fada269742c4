/**
 * Comments on a post between its author and its reviewers (owners and admins): plain text, oldest
 * first, kept with the post (they go when it is deleted).
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { PersistenceError } from "../kernel/Errors.js"
import { OrganizationId, PostId, UserId } from "../kernel/Ids.js"

export const CommentId = Schema.UUID.pipe(Schema.brand("CommentId"))
export type CommentId = typeof CommentId.Type

export const maxCommentLength = 2000

export class PostComment extends Schema.Class<PostComment>("PostComment")({
  id: CommentId,
  organizationId: OrganizationId,
  postId: PostId,
  authorId: UserId,
  body: Schema.String,
  createdAt: Schema.DateTimeUtc
}) {}

/** A comment with its author's name as it is now (the author may have been removed since). */
export interface CommentView {
  readonly comment: PostComment
  readonly authorName: string | null
}

export class CommentStore extends Context.Tag("@herald/core/workflow/CommentStore")<CommentStore, {
  readonly insert: (comment: PostComment) => Effect.Effect<void, PersistenceError>
  /** The post's comments, oldest first. */
  readonly listForPost: (
    organizationId: OrganizationId,
    postId: PostId
  ) => Effect.Effect<ReadonlyArray<CommentView>, PersistenceError>
}>() {}
