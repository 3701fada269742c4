/**
 * POST /posts/{id}/schedule: a draft (approved, where approval is required) scheduled for a time, now,
 * or the queue's next opening.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { AccountStore } from "../accounts/AccountStore.js"
import * as ApprovalLifecycle from "./ApprovalLifecycle.js"
import { poke } from "../kernel/DispatchSignal.js"
import { DomainError, type PersistenceError } from "../kernel/Errors.js"
import { EventStore } from "../webhooks/EventStore.js"
import { IdGenerator } from "../kernel/IdGenerator.js"
import * as PlatformRules from "../platforms/PlatformRules.js"
import { Post } from "../domain/Post.js"
import * as PostingLimits from "../access/PostingLimits.js"
import { type PostRecord, PostStore } from "./PostStore.js"
import { Transactor } from "../kernel/Transactor.js"
import { UsageCounters } from "../access/UsageCounters.js"
import * as Spans from "../kernel/Spans.js"
import { Caller, QueueAllocation, QueueAllocator, queueMessages, scheduleLeadSeconds } from "./PostPorts.js"
import { decodeBody, invalid, objectBody, ScheduleBody } from "./PostBodies.js"
import {
  checkMedia,
  checkTimezone,
  mustBeAfter,
  parseScheduled,
  requireAccounts,
  resolveAccounts,
  scheduledValue
} from "./PostFieldRules.js"
import { eventData, makeEvent, newDestinations, statusOf } from "./PostEvents.js"
import { get } from "./PostViews.js"
import { lockAndLoad } from "./UpdatePost.js"

export type ScheduleRequirements = PostStore | AccountStore | EventStore | Transactor | IdGenerator | UsageCounters

/**
 * POST /posts/{id}/schedule: a draft gets its destinations, due at `scheduled_for` (at least 1 minute
 * ahead; the draft's own `scheduled_for` when none is sent) or now with `publish_now`. Not a draft:
 * 409 `invalid_post_status`. A draft that requested approval must be approved, and scheduling
 * consumes the approval.
 */
export const schedule = (
  caller: Caller,
  rawId: string,
  raw: unknown
): Effect.Effect<PostRecord, DomainError | PersistenceError, ScheduleRequirements> =>
  Effect.gen(function*() {
    const existing = yield* get(caller, rawId)
    const body = yield* decodeBody(ScheduleBody, raw === undefined || raw === null ? {} : yield* objectBody(raw))
    const now = yield* DateTime.now
    const notDraft = (record: PostRecord) =>
      DomainError.fail(
        "invalid_post_status",
        `Only drafts can be scheduled; this post is ${statusOf(record)}. Reschedule it with PATCH /posts/{id}`,
        { status: statusOf(record) },
        409
      )
    if (!existing.post.isDraft) return yield* notDraft(existing)

    const scheduled = yield* scheduledValue(body)
    const publishNow = body.publish_now === true
    const useQueue = body.use_queue === true
    const sent = scheduled.raw !== undefined && scheduled.raw !== null
    if (publishNow && sent) {
      return yield* Effect.fail(invalid("publish_now", "Send either scheduled_for or publish_now: true, not both"))
    }
    if (useQueue && (publishNow || sent)) {
      return yield* Effect.fail(
        invalid("use_queue", "use_queue is exclusive with scheduled_for and publish_now: the queue chooses the time")
      )
    }
    let dueAt = now
    let scheduledFor = Option.none<DateTime.Utc>()
    if (!publishNow && !useQueue) {
      const field = sent ? scheduled.field : "scheduled_for"
      const at = sent
        ? yield* parseScheduled(scheduled.raw as string, field)
        : Option.getOrUndefined(existing.post.scheduledFor)
      if (at === undefined) {
        return yield* Effect.fail(
          invalid("scheduled_for", "Send scheduled_for (at least 1 minute ahead) or publish_now: true")
        )
      }
      yield* mustBeAfter(
        at,
        DateTime.add(now, { seconds: scheduleLeadSeconds - 1 / 1000 }),
        field,
        "at least 1 minute in the future"
      )
      dueAt = at
      scheduledFor = Option.some(at)
    }
    const timezone = body.timezone === undefined ? existing.post.timezone : yield* checkTimezone(body.timezone)
    const ids = yield* requireAccounts(
      body.account_ids === undefined || body.account_ids === null ? existing.post.accountIds : body.account_ids
    )
    const accounts = yield* resolveAccounts(caller, ids)
    const platforms = accounts.map((a) => a.platform)
    const post0 = existing.post
    yield* PlatformRules.check({
      platforms,
      content: post0.content,
      platformContent: post0.platformContent,
      threadPosts: post0.threadPosts,
      hasMedia: post0.mediaIds.length > 0,
      mode: "publish"
    })
    yield* checkMedia(caller, post0, platforms, post0.platformContent, "publish")
    const mode: PostingLimits.PublishMode = publishNow ? "immediate" : "scheduled"
    const allocator = useQueue ? yield* Effect.serviceOption(QueueAllocator) : Option.none()

    const transactor = yield* Transactor
    const record = yield* transactor.withTransaction(Effect.gen(function*() {
      const locked = yield* lockAndLoad(caller, existing.post.id)
      if (!locked.post.isDraft) return yield* notDraft(locked)
      // The queue's opening is claimed in this transaction, as a use_queue create claims it.
      if (useQueue) {
        const allocation: QueueAllocation = Option.isNone(allocator)
          ? { _tag: "Missing" }
          : yield* allocator.value.allocate(locked.post.organizationId, now, locked.post.id)
        if (allocation._tag !== "Slot") {
          return yield* DomainError.fail("validation_error", queueMessages[allocation._tag], {
            validation_errors: [{ path: "use_queue", message: queueMessages[allocation._tag] }],
            queue: allocation._tag.toLowerCase()
          })
        }
        dueAt = allocation.at
        scheduledFor = Option.some(allocation.at)
      }
      const approval = locked.post.approval
      const spent = ApprovalLifecycle.consumeForPublish(approval)
      if (Either.isLeft(spent) && Option.isSome(approval)) {
        return yield* DomainError.fail(
          "invalid_post_status",
          `This draft needs an approval before it can be scheduled: ${spent.left.message}`,
          { status: "draft", approval_status: approval.value.status, approval_consumed: approval.value.consumed },
          409
        )
      }
      yield* PostingLimits.consume(PostingLimits.subjectOf(caller.key), mode)
      const post = new Post({
        ...locked.post,
        isDraft: false,
        accountIds: accounts.map((a) => a.id),
        scheduledFor,
        timezone,
        useQueue: locked.post.useQueue || useQueue,
        approval: Either.getOrElse(spent, () => approval),
        updatedAt: now
      })
      const destinations = yield* newDestinations(post, accounts, dueAt, now)
      const posts = yield* PostStore
      yield* posts.update(post)
      yield* posts.insertDestinations(destinations)
      const next: PostRecord = { post, destinations }
      yield* (yield* EventStore).append([
        yield* makeEvent(post.organizationId, "post.scheduled", eventData(next, { publish_mode: mode }))
      ])
      return next
    }))
    if (publishNow) yield* poke
    return record
  }).pipe(Spans.withSpan("Posts.schedule"))
