/**
 * The review of drafts submitted for approval: `POST /posts/{id}/approve` (optional note) and
 * `POST /posts/{id}/request-changes` (note required). Only a pending draft may be reviewed; anything
 * else is 400 `invalid_post_status`
 * (the spec's error table lists the code under 400; its 409 is only for scheduling a non-draft and a
 * retry with nothing failed). Each state change and its event (`post.approved`,
 * `post.changes_requested`) are written in one transaction, under the post's lock, like every other
 * post change. The rules of the approval axis are `ApprovalLifecycle`'s.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as ApprovalLifecycle from "../posts/ApprovalLifecycle.js"
import { lockPost } from "../posts/PostLock.js"
import { DomainError, type PersistenceError } from "../kernel/Errors.js"
import { Event, type EventData, type EventType } from "../webhooks/Event.js"
import { EventStore } from "../webhooks/EventStore.js"
import { IdGenerator } from "../kernel/IdGenerator.js"
import { EventId } from "../kernel/Ids.js"
import { type Approval, Post } from "../domain/Post.js"
import type { PostRecord } from "../posts/PostStore.js"
import { PostStore } from "../posts/PostStore.js"
import * as Posts from "../posts/Posts.js"
import { Transactor } from "../kernel/Transactor.js"
import type { UsageCounters } from "../access/UsageCounters.js"

/** The longest review note accepted. */
export const maxNoteLength = 2000

const Note = Schema.String.pipe(
  Schema.filter((s) => [...s].length <= maxNoteLength || `note must be at most ${maxNoteLength} characters`)
)

export const ApproveBody = Schema.Struct({
  note: Schema.optional(Schema.NullOr(Note))
}).annotations({ identifier: "ApprovePostRequest" })

export const RequestChangesBody = Schema.Struct({
  note: Note.annotations({ description: "Required: what the author should change" })
}).annotations({ identifier: "RequestChangesRequest" })

export type ReviewRequirements = PostStore | EventStore | Transactor | IdGenerator | UsageCounters

type Decision =
  | { readonly _tag: "approve"; readonly note: Option.Option<string> }
  | { readonly _tag: "request_changes"; readonly note: string }

/** Who reviewed: the calling key and the user who created it (the same shape as `requested_by`). */
export const reviewedBy = (caller: Posts.Caller) => ({
  api_key_id: caller.key.id,
  user_id: Option.getOrNull(caller.key.createdBy)
})

const makeEvent = (post: Post, type: EventType, data: EventData) =>
  Effect.gen(function*() {
    const id = yield* (yield* IdGenerator).uuid
    return new Event({
      id: EventId.make(id),
      organizationId: post.organizationId,
      type,
      data,
      createdAt: yield* DateTime.now
    })
  })

const notPending = (record: PostRecord, approval: Option.Option<Approval>) => {
  const status = Posts.statusOf(record)
  const approvalStatus = Option.match(approval, { onNone: () => null, onSome: (a) => a.status })
  const why = !record.post.isDraft
    ? `this post is ${status}, not a draft`
    : approvalStatus === null
    ? "this draft was not submitted for approval (create it with draft: true and request_approval: true)"
    : `its approval is ${approvalStatus}, not pending`
  return DomainError.fail(
    "invalid_post_status",
    `Only a draft pending approval can be reviewed; ${why}`,
    { status, approval_status: approvalStatus }
  )
}

const review = (caller: Posts.Caller, existing: PostRecord, decision: Decision) =>
  Effect.gen(function*() {
    const now = yield* DateTime.now
    return yield* (yield* Transactor).withTransaction(Effect.gen(function*() {
      yield* lockPost(existing.post.id)
      const locked = yield* Posts.get(caller, existing.post.id)
      const current = locked.post.approval
      if (!locked.post.isDraft || Option.isNone(current)) return yield* notPending(locked, current)
      const next = decision._tag === "approve"
        ? ApprovalLifecycle.approve(current.value, decision.note)
        : ApprovalLifecycle.requestChanges(current.value, decision.note)
      if (Either.isLeft(next)) return yield* notPending(locked, current)
      const post = new Post({ ...locked.post, approval: Option.some(next.right), updatedAt: now })
      yield* (yield* PostStore).update(post)
      const event = decision._tag === "approve"
        ? yield* makeEvent(post, "post.approved", {
          post_id: post.id,
          account_ids: post.accountIds,
          reviewed_by: reviewedBy(caller),
          note: Option.getOrNull(decision.note)
        })
        : yield* makeEvent(post, "post.changes_requested", {
          post_id: post.id,
          account_ids: post.accountIds,
          reviewed_by: reviewedBy(caller),
          note: decision.note
        })
      yield* (yield* EventStore).append([event])
      const record: PostRecord = { post, destinations: locked.destinations }
      return record
    }))
  })

const objectOrEmpty = (raw: unknown): unknown => (raw === undefined || raw === null ? {} : raw)

/** POST /posts/{id}/approve: a pending draft becomes approved; a blank note counts as none. */
export const approve = (
  caller: Posts.Caller,
  rawId: string,
  raw: unknown
): Effect.Effect<PostRecord, DomainError | PersistenceError, ReviewRequirements> =>
  Effect.gen(function*() {
    const existing = yield* Posts.get(caller, rawId)
    const body = yield* Posts.decodeBody(ApproveBody, objectOrEmpty(raw))
    const note = Option.filter(Option.fromNullable(body.note), (n) => n.trim() !== "")
    return yield* review(caller, existing, { _tag: "approve", note })
  }).pipe(Effect.withSpan("Approvals.approve"))

/** POST /posts/{id}/request-changes: a pending draft is sent back with a (non-blank) note. */
export const requestChanges = (
  caller: Posts.Caller,
  rawId: string,
  raw: unknown
): Effect.Effect<PostRecord, DomainError | PersistenceError, ReviewRequirements> =>
  Effect.gen(function*() {
    const existing = yield* Posts.get(caller, rawId)
    const body = yield* Posts.decodeBody(RequestChangesBody, objectOrEmpty(raw))
    if (body.note.trim() === "") {
      const message = "note is required: say what should change"
      return yield* DomainError.fail("validation_error", message, {
        validation_errors: [{ path: "note", message }]
      })
    }
    return yield* review(caller, existing, { _tag: "request_changes", note: body.note })
  }).pipe(Effect.withSpan("Approvals.requestChanges"))
