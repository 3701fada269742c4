import * as SqlClient from "@effect/sql/SqlClient"
import { OrganizationId, PostId, UserId } from "@herald/core/kernel/Ids"
import { CommentId, CommentStore, PostComment } from "@herald/core/workflow/Comment"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { Instant, orPersistence } from "./internal/Rows.js"

const CommentRow = Schema.Struct({
  id: CommentId,
  organization_id: OrganizationId,
  post_id: PostId,
  author_id: UserId,
  body: Schema.String,
  created_at: Instant,
  author_name: Schema.NullOr(Schema.String)
})

export const make = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const decode = Schema.decodeUnknown(Schema.Array(CommentRow))

  return CommentStore.of({
    insert: (comment) =>
      sql`INSERT INTO post_comments ${
        sql.insert({
          id: comment.id,
          organization_id: comment.organizationId,
          post_id: comment.postId,
          author_id: comment.authorId,
          body: comment.body,
          created_at: DateTime.toEpochMillis(comment.createdAt)
        })
      }`.pipe(Effect.asVoid, orPersistence("CommentStore.insert")),
    listForPost: (organizationId, postId) =>
      sql`SELECT c.id, c.organization_id, c.post_id, c.author_id, c.body, c.created_at, u.name AS author_name
        FROM post_comments c LEFT JOIN users u ON u.id = c.author_id
        WHERE c.organization_id = ${organizationId} AND c.post_id = ${postId}
        ORDER BY c.created_at, c.id`.pipe(
        Effect.flatMap(decode),
        Effect.map((rows) =>
          rows.map((row) => ({
            comment: new PostComment({
              id: row.id,
              organizationId: row.organization_id,
              postId: row.post_id,
              authorId: row.author_id,
              body: row.body,
              createdAt: row.created_at
            }),
            authorName: row.author_name
          }))
        ),
        orPersistence("CommentStore.listForPost")
      )
  })
})

export const layer: Layer.Layer<CommentStore, never, SqlClient.SqlClient> = Layer.effect(CommentStore, make)
