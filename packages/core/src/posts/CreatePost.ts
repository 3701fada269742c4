/**
 * POST /posts: a draft, a scheduled post, an immediate one or one added to the queue, with its
 * destinations and events in one transaction.
 */
import * as Data from "effect/Data"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { AccountStore } from "../accounts/AccountStore.js"
import { CampaignStore, requireCampaign } from "../campaigns/CampaignStore.js"
import * as CircuitBreaker from "./CircuitBreaker.js"
import { Crypto } from "../kernel/Crypto.js"
import { poke } from "../kernel/DispatchSignal.js"
import { DomainError, type PersistenceError } from "../kernel/Errors.js"
import { Event } from "../webhooks/Event.js"
import { EventStore } from "../webhooks/EventStore.js"
import { IdGenerator } from "../kernel/IdGenerator.js"
import { PostId } from "../kernel/Ids.js"
import * as PlatformRules from "../platforms/PlatformRules.js"
import { Approval, PlatformContent, Post } from "../domain/Post.js"
import * as PostingLimits from "../access/PostingLimits.js"
import { type PostRecord, PostStore } from "./PostStore.js"
import { Transactor } from "../kernel/Transactor.js"
import { UsageCounters } from "../access/UsageCounters.js"
import * as Spans from "../kernel/Spans.js"
import * as TraceContext from "../kernel/TraceContext.js"
import { Caller, QueueAllocation, QueueAllocator, queueMessages } from "./PostPorts.js"
import { checkFieldNames, CreateBody, decodeBody, invalid, objectBody } from "./PostBodies.js"
import {
  checkMedia,
  checkTimezone,
  dedupe,
  mustBeAfter,
  parseScheduled,
  requireAccounts,
  resolveAccountsFrom,
  scheduledValue,
  trusted
} from "./PostFieldRules.js"
import { eventData, makeEvent, newDestinations, requestedBy } from "./PostEvents.js"

export interface Created {
  readonly record: PostRecord
  /** Whether the request used the deprecated `scheduled_at` (the response then echoes it). */
  readonly scheduledAtSent: boolean
}

export type CreateRequirements =
  | PostStore
  | AccountStore
  | EventStore
  | Transactor
  | IdGenerator
  | UsageCounters
  | Crypto
  | CampaignStore

/**
 * POST /posts. `raw` is the parsed JSON body: media field names are checked on it before decoding,
 * and its canonical hash is the circuit breaker's key.
 */
export const create = (
  caller: Caller,
  raw: unknown
): Effect.Effect<Created, DomainError | PersistenceError, CreateRequirements> =>
  Effect.suspend(() => {
    // A create that checked its accounts on a list possibly stale (`AccountStore.listForWrite`) runs
    // again from a fresh read when anything after that read fails, or when the insert's own check of
    // the accounts misses: every error answer, and every post stored, rests on accounts as they are.
    const attempt = { stale: false }
    return createOnce(caller, raw, attempt).pipe(
      Effect.catchIf(
        (e): e is DomainError | StaleAccounts =>
          e instanceof StaleAccounts || (attempt.stale && e instanceof DomainError),
        (e) =>
          Effect.zipRight(
            e instanceof StaleAccounts
              ? Effect.flatMap(AccountStore, (store) => store.forgetListsForWrite)
              : Effect.void,
            createOnce(caller, raw, undefined)
          )
      ),
      // The fresh run never checks on a stale list, so it never fails with StaleAccounts.
      Effect.catchIf((e): e is StaleAccounts => e instanceof StaleAccounts, (e) => Effect.die(e))
    )
  }).pipe(Spans.withSpan("Posts.create"))

/** A create's insert found an account it checked on a possibly stale list changed: run it again fresh. */
class StaleAccounts extends Data.TaggedError("StaleAccounts")<{ readonly reason: "insert-check-missed" }> {}

/**
 * One run of `create`. With `attempt` (a draft that is only an insert), its accounts come from
 * `AccountStore.listForWrite`; `attempt.stale` says when that list may be stale, and the insert then
 * re-validates them (`PostStore.insertChecked`). Without it, today's fresh read and plain insert.
 */
const createOnce = (
  caller: Caller,
  raw: unknown,
  attempt: { stale: boolean } | undefined
): Effect.Effect<Created, DomainError | PersistenceError | StaleAccounts, CreateRequirements> =>
  Effect.gen(function*() {
    const rawBody = yield* objectBody(raw)
    yield* checkFieldNames(rawBody)
    const body = yield* decodeBody(CreateBody, rawBody)
    const organizationId = caller.key.organizationId
    const isDraft = body.draft === true
    const useQueue = body.use_queue === true
    const now = yield* DateTime.now

    if (body.request_approval === true && !isDraft) {
      return yield* Effect.fail(
        invalid("request_approval", "request_approval needs draft: true (a draft is submitted for approval)")
      )
    }
    const scheduled = yield* scheduledValue(body)
    const hasSchedule = scheduled.raw !== undefined && scheduled.raw !== null
    if (useQueue && hasSchedule) {
      return yield* Effect.fail(
        invalid("use_queue", "use_queue and scheduled_for are exclusive: the queue chooses the time")
      )
    }
    if (useQueue && isDraft) {
      return yield* Effect.fail(
        invalid("use_queue", "use_queue allocates an opening at create time and cannot be used with draft: true")
      )
    }
    let scheduledFor = Option.none<DateTime.Utc>()
    if (hasSchedule) {
      const at = yield* parseScheduled(scheduled.raw as string, scheduled.field)
      yield* mustBeAfter(at, now, scheduled.field, "in the future")
      scheduledFor = Option.some(at)
    }
    const timezone = yield* checkTimezone(body.timezone)
    const accountIds = isDraft ? (body.account_ids ?? []) : yield* requireAccounts(body.account_ids)
    // A draft with no approval request and no campaign is only an insert (`onlyInsert` below): its
    // accounts may come from a list kept in memory, the insert checking them again.
    const insertOnly = isDraft && body.request_approval !== true &&
      (body.campaign_id === undefined || body.campaign_id === null)
    const resolved = yield* resolveAccountsFrom(
      caller,
      accountIds,
      attempt !== undefined && insertOnly ? "for write" : "fresh"
    )
    if (attempt !== undefined && !resolved.fresh) attempt.stale = true
    const accounts = resolved.accounts
    if (body.campaign_id !== undefined && body.campaign_id !== null) {
      yield* requireCampaign(organizationId, body.campaign_id)
    }

    const content = body.content ?? ""
    const platformContent: PlatformContent = body.platform_content ?? {}
    const mediaIds = dedupe(body.media_ids ?? [])
    const threadPosts = body.threadPosts ?? []
    const platforms = accounts.map((a) => a.platform)
    yield* PlatformRules.check({
      platforms,
      content,
      platformContent,
      threadPosts,
      hasMedia: mediaIds.length > 0,
      mode: isDraft ? "draft" : "publish"
    })
    yield* checkMedia(caller, { mediaIds, threadPosts }, platforms, platformContent, isDraft ? "draft" : "publish")

    const crypto = yield* Crypto
    const hash = yield* crypto.sha256Hex(CircuitBreaker.canonicalJson(rawBody))
    if (!isDraft) yield* CircuitBreaker.check(organizationId, hash)

    const mode: PostingLimits.PublishMode = Option.isSome(scheduledFor) || useQueue ? "scheduled" : "immediate"

    const id = PostId.make(yield* (yield* IdGenerator).uuid)
    // Every field is already decoded (the body) or typed (ids, instants): the class constructor's
    // own validation, a second decode of all of it per create, is skipped (it showed in the profile).
    const post = new Post({
      id,
      organizationId,
      createdByKey: Option.some(caller.key.id),
      createdBy: caller.key.createdBy,
      content,
      accountIds: accounts.map((a) => a.id),
      platformContent,
      mediaIds,
      scheduledFor,
      timezone,
      campaignId: Option.fromNullable(body.campaign_id),
      isDraft,
      createdStatus: isDraft ? "draft" : mode === "scheduled" ? "scheduled" : "publishing",
      approval: body.request_approval === true
        ? Option.some(new Approval({ status: "pending", note: Option.none(), consumed: false }))
        : Option.none(),
      idempotencyKey: Option.fromNullable(body.idempotency_key),
      requestHash: Option.some(hash),
      threadPosts,
      useQueue,
      createdAt: now,
      updatedAt: now,
      traceParent: yield* TraceContext.current
    }, trusted)
    const transactor = yield* Transactor
    const posts = yield* PostStore
    const eventStore = yield* EventStore
    const allocator = useQueue ? yield* Effect.serviceOption(QueueAllocator) : Option.none()
    // A draft with no approval request and no campaign writes the post alone: no event, no posting
    // limit, no queue opening, no campaign hold. That one `PostStore.insert` is atomic by itself, and
    // the store may then skip BEGIN/COMMIT (Postgres); every other create is a full transaction.
    const onlyInsert = isDraft && !useQueue && Option.isNone(post.approval) && Option.isNone(post.campaignId)
    const atomically = onlyInsert ? transactor.withAtomicWrite : transactor.withTransaction
    const record = yield* atomically(Effect.gen(function*() {
      if (Option.isSome(post.campaignId)) yield* requireCampaign(organizationId, post.campaignId.value)
      // The queue's opening is claimed in the transaction that inserts the post (Queues.allocate).
      let queued = post
      if (useQueue) {
        const allocation: QueueAllocation = Option.isNone(allocator)
          ? { _tag: "Missing" }
          : yield* allocator.value.allocate(organizationId, now, id)
        if (allocation._tag !== "Slot") {
          return yield* DomainError.fail("validation_error", queueMessages[allocation._tag], {
            validation_errors: [{ path: "use_queue", message: queueMessages[allocation._tag] }],
            queue: allocation._tag.toLowerCase()
          })
        }
        queued = new Post({ ...post, scheduledFor: Option.some(allocation.at) }, trusted)
      }
      const destinations = isDraft
        ? []
        : yield* newDestinations(queued, accounts, Option.getOrElse(queued.scheduledFor, () => now), now)
      const record: PostRecord = { post: queued, destinations }
      const events: Array<Event> = []
      if (!isDraft) {
        events.push(yield* makeEvent(organizationId, "post.scheduled", eventData(record, { publish_mode: mode })))
      }
      if (Option.isSome(queued.approval)) {
        events.push(
          yield* makeEvent(organizationId, "post.approval_requested", {
            post_id: id,
            account_ids: queued.accountIds,
            requested_by: requestedBy(caller)
          })
        )
      }
      if (!isDraft) yield* PostingLimits.consume(PostingLimits.subjectOf(caller.key), mode)
      if (!resolved.fresh) {
        const stored = yield* posts.insertChecked(record, accounts.map((a) => ({ id: a.id, platform: a.platform })))
        if (!stored) return yield* Effect.fail(new StaleAccounts({ reason: "insert-check-missed" }))
      } else {
        yield* posts.insert(record)
      }
      if (events.length > 0) yield* eventStore.append(events)
      return record
    }))
    if (mode === "immediate" && !isDraft) yield* poke
    return { record, scheduledAtSent: body.scheduled_at !== undefined && body.scheduled_at !== null }
  })
