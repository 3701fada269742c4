/**
 * Comments on a post between its author and the reviewers. Who may read and write them: owners and
 * admins on every post of the organization, a member on the posts they created (the same people who
 * may change the post). A comment notifies the other side, in the comment's transaction: the author
 * when a reviewer writes, the owners and admins when the author writes (never the writer).
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { Actor } from "../access/Team.js"
import { UserStore } from "../access/UserStore.js"
import { canChangePost, isOwnerOrAdmin } from "../access/Roles.js"
import { DomainError } from "../kernel/Errors.js"
import { IdGenerator } from "../kernel/IdGenerator.js"
import { EventId, PostId } from "../kernel/Ids.js"
import { Transactor } from "../kernel/Transactor.js"
import { PostStore } from "../posts/PostStore.js"
import { CommentId, CommentStore, maxCommentLength, PostComment } from "./Comment.js"
import { Notification, NotificationId, NotificationStore } from "./Notification.js"

const isPostId = Schema.is(PostId)

/** The post, when the actor may see its comments; 404 otherwise (as for a post of another organization). */
const postFor = (actor: Actor, postId: string) =>
  Effect.gen(function*() {
    if (!isPostId(postId)) return yield* DomainError.notFound("Post")
    const found = yield* (yield* PostStore).findById(actor.organizationId, postId)
    if (Option.isNone(found)) return yield* DomainError.notFound("Post")
    const post = found.value.post
    if (!canChangePost(actor, post.createdBy)) {
      return yield* DomainError.fail(
        "insufficient_scope",
        "Only the post's author, owners and admins may read and write its comments",
        { required_role: "owner, admin, or the member who created the post", role: actor.role }
      )
    }
    return post
  })

export const list = (actor: Actor, postId: string) =>
  Effect.gen(function*() {
    const post = yield* postFor(actor, postId)
    return yield* (yield* CommentStore).listForPost(actor.organizationId, post.id)
  })

const excerpt = (text: string) => {
  const line = text.replace(/\s+/g, " ").trim()
  return line.length > 60 ? `${line.slice(0, 59)}…` : line || "(no text)"
}

export const add = (actor: Actor, postId: string, body: string) =>
  Effect.gen(function*() {
    const text = body.trim()
    if (text.length === 0 || text.length > maxCommentLength) {
      return yield* DomainError.fail("validation_error", `A comment must be 1 to ${maxCommentLength} characters long`, {
        field: "body"
      })
    }
    const post = yield* postFor(actor, postId)
    const ids = yield* IdGenerator
    const now = yield* DateTime.now
    const comment = new PostComment({
      id: CommentId.make(yield* ids.uuid),
      organizationId: actor.organizationId,
      postId: post.id,
      authorId: actor.id,
      body: text,
      createdAt: now
    })
    const people = yield* (yield* UserStore).list(Option.some(actor.organizationId))
    const writer = people.find((u) => u.id === actor.id)
    const fromAuthor = Option.isSome(post.createdBy) && post.createdBy.value === actor.id
    const recipients = fromAuthor
      ? people.filter((u) => isOwnerOrAdmin(u.role) && u.id !== actor.id)
      : people.filter((u) => Option.isSome(post.createdBy) && u.id === post.createdBy.value && u.id !== actor.id)
    const about = `“${excerpt(post.content)}”`
    const notifications: Array<Notification> = []
    for (const recipient of recipients) {
      notifications.push(
        new Notification({
          id: NotificationId.make(yield* ids.uuid),
          organizationId: actor.organizationId,
          userId: recipient.id,
          kind: "comment",
          // A comment is not a lifecycle event: the comment's id stands for the event that caused it.
          eventId: EventId.make(comment.id),
          postId: Option.some(post.id),
          accountId: Option.none(),
          title: `${writer?.name ?? "Someone"} commented on ${about}`,
          body: `${writer?.name ?? "Someone"} wrote: ${text}`,
          createdAt: now,
          readAt: Option.none()
        })
      )
    }
    yield* (yield* Transactor).withTransaction(
      Effect.gen(function*() {
        yield* (yield* CommentStore).insert(comment)
        yield* (yield* NotificationStore).insert(notifications)
      })
    )
    return { comment, authorName: writer?.name ?? null }
  }).pipe(Effect.withSpan("Comments.add"))
