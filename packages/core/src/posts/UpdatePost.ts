/**
 * PATCH /posts/{id}: what may change in each state, the destinations re-made when the targets change,
 * and the events, in one transaction.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { SocialAccount } from "../domain/Account.js"
import { AccountStore } from "../accounts/AccountStore.js"
import * as ApprovalLifecycle from "./ApprovalLifecycle.js"
import { CampaignStore, requireCampaign } from "../campaigns/CampaignStore.js"
import * as CircuitBreaker from "./CircuitBreaker.js"
import { Destination } from "../domain/Destination.js"
import { lockPost } from "./PostLock.js"
import { DomainError, type PersistenceError } from "../kernel/Errors.js"
import { EventStore } from "../webhooks/EventStore.js"
import { IdGenerator } from "../kernel/IdGenerator.js"
import { AccountId, PostId } from "../kernel/Ids.js"
import { type Platform } from "../domain/Platform.js"
import * as PlatformRules from "../platforms/PlatformRules.js"
import { Approval, Post, PostStatus } from "../domain/Post.js"
import { type PostRecord, PostStore } from "./PostStore.js"
import { Transactor } from "../kernel/Transactor.js"
import { UsageCounters } from "../access/UsageCounters.js"
import * as Spans from "../kernel/Spans.js"
import { Caller, editGuardSeconds, isVisible } from "./PostPorts.js"
import { checkFieldNames, decodeBody, invalid, objectBody, UpdateBody } from "./PostBodies.js"
import {
  checkMedia,
  checkTimezone,
  dedupe,
  mustBeAfter,
  parseScheduled,
  requireAccounts,
  resolveAccounts,
  scheduledValue
} from "./PostFieldRules.js"
import { eventData, isoOrNull, makeEvent, newDestinations, requestedBy, statusOf } from "./PostEvents.js"
import { get } from "./PostViews.js"

export interface Updated {
  readonly record: PostRecord
  readonly scheduledAtSent: boolean
  /** Request field names that changed something. */
  readonly changed: ReadonlyArray<string>
}

export const notEditable = (message: string, status: PostStatus, details: Record<string, unknown> = {}) =>
  DomainError.fail("invalid_post_status", message, { status, ...details })

/** The fields whose new value is what the next send of a destination uses. */
const sendFields: ReadonlyArray<string> = ["content", "platform_content", "media_ids", "threadPosts"]

/**
 * What a PATCH may change, given the post as it is and the fields whose value changes (a draft: all of
 * them). In every state: `campaign_id`, `timezone`. Content fields (`content`, `platform_content`,
 * `media_ids`, `threadPosts`): while some destination may still be sent (queued, failed: the next retry
 * uses them; publishing: a re-queue after a transient failure does), not once every destination is
 * published. `scheduled_for`: it moves the queued destinations, so there must be one, and each due later
 * than the edit guard. `account_ids`: a removed account's destination must be queued (due later than
 * the guard) or failed, never published or publishing. Fails with 400 `invalid_post_status` otherwise.
 */
export const ensureEditable = (
  record: PostRecord,
  changed: ReadonlyArray<string>,
  removedAccounts: ReadonlyArray<AccountId>,
  now: DateTime.Utc
): Effect.Effect<void, DomainError> => {
  if (record.post.isDraft) return Effect.void
  const status = statusOf(record)
  const destinations = record.destinations
  const guard = DateTime.add(now, { seconds: editGuardSeconds })
  const dueSoon = (d: Destination) => d.status === "queued" && DateTime.lessThanOrEqualTo(d.dueAt, guard)
  const contentChanged = changed.filter((f) => sendFields.includes(f))
  if (contentChanged.length > 0 && destinations.length > 0 && destinations.every((d) => d.status === "published")) {
    return notEditable(
      `Every destination of this post is published, so a change of ${contentChanged.join(", ")} would reach no ` +
        "one (published copies are not edited on the platforms); create a new post instead",
      status,
      { fields: contentChanged }
    )
  }
  if (changed.includes("scheduled_for")) {
    const queued = destinations.filter((d) => d.status === "queued")
    if (queued.length === 0) {
      return notEditable(
        "No destination of this post is waiting to publish, so there is nothing to reschedule; retry failed " +
          "destinations with POST /posts/{id}/retry",
        status,
        { fields: ["scheduled_for"] }
      )
    }
    if (queued.some(dueSoon)) {
      return notEditable(
        `This post is due to publish within ${editGuardSeconds} seconds and can no longer be rescheduled`,
        status,
        { fields: ["scheduled_for"] }
      )
    }
  }
  const removed = destinations.filter((d) => removedAccounts.includes(d.accountId))
  const kept = removed.filter((d) => d.status === "published" || d.status === "publishing" || dueSoon(d))
  if (kept.length > 0) {
    return notEditable(
      "These accounts cannot be removed from the post: their destination is published, publishing or due " +
        `within ${editGuardSeconds} seconds: ${kept.map((d) => d.accountId).join(", ")}`,
      status,
      { fields: ["account_ids"], account_ids: kept.map((d) => d.accountId) }
    )
  }
  return Effect.void
}

/** Loads the post inside a transaction, holding its lock, or 404. */
export const lockAndLoad = (caller: Caller, id: PostId) =>
  Effect.gen(function*() {
    yield* lockPost(id)
    const found = yield* (yield* PostStore).findById(caller.key.organizationId, id)
    if (Option.isNone(found) || !isVisible(found.value, caller)) return yield* DomainError.notFound("Post")
    return found.value
  })

/** A changes_requested draft that is edited goes back to pending review (`ApprovalLifecycle`). */
const resubmitted = (approval: Option.Option<Approval>): Option.Option<Approval> =>
  Option.map(approval, ApprovalLifecycle.resubmitOnEdit)

export type UpdateRequirements =
  | PostStore
  | AccountStore
  | EventStore
  | Transactor
  | IdGenerator
  | UsageCounters
  | CampaignStore

export const update = (
  caller: Caller,
  rawId: string,
  raw: unknown
): Effect.Effect<Updated, DomainError | PersistenceError, UpdateRequirements> =>
  Effect.gen(function*() {
    const existing = yield* get(caller, rawId)
    const rawBody = yield* objectBody(raw)
    yield* checkFieldNames(rawBody)
    const body = yield* decodeBody(UpdateBody, rawBody)
    const now = yield* DateTime.now
    const current = existing.post

    if (body.draft !== undefined && body.draft !== null && body.draft !== current.isDraft) {
      return yield* Effect.fail(
        invalid(
          "draft",
          current.isDraft
            ? "A draft is published with POST /posts/{id}/schedule, not PATCH"
            : "A scheduled post cannot become a draft again; delete it instead"
        )
      )
    }
    const changed: Array<string> = []
    const has = (field: keyof UpdateBody) => body[field] !== undefined

    // Schedule
    const scheduled = yield* scheduledValue(body)
    let scheduledFor = current.scheduledFor
    if (scheduled.raw !== undefined) {
      if (scheduled.raw === null) {
        if (!current.isDraft && Option.isSome(current.scheduledFor)) {
          return yield* Effect.fail(
            invalid(
              "scheduled_for",
              "A scheduled post keeps a scheduled_for: send a new future time, or delete the post"
            )
          )
        }
        scheduledFor = Option.none()
      } else {
        const at = yield* parseScheduled(scheduled.raw, scheduled.field)
        if (!(Option.isSome(current.scheduledFor) && DateTime.Equivalence(current.scheduledFor.value, at))) {
          yield* mustBeAfter(at, now, scheduled.field, "in the future")
        }
        scheduledFor = Option.some(at)
      }
    }
    const timezone = has("timezone") ? yield* checkTimezone(body.timezone) : current.timezone

    let accounts: ReadonlyArray<SocialAccount> | undefined
    let accountIds = current.accountIds
    if (has("account_ids")) {
      const ids = current.isDraft ? (body.account_ids ?? []) : yield* requireAccounts(body.account_ids)
      accounts = yield* resolveAccounts(caller, ids)
      accountIds = accounts.map((a) => a.id)
    }
    const content = has("content") ? body.content ?? "" : current.content
    const platformContent = has("platform_content") ? body.platform_content ?? {} : current.platformContent
    const mediaIds = has("media_ids") ? dedupe(body.media_ids ?? []) : current.mediaIds
    const threadPosts = has("threadPosts") ? body.threadPosts ?? [] : current.threadPosts
    const campaignId = has("campaign_id") ? Option.fromNullable(body.campaign_id) : current.campaignId
    if (Option.isSome(campaignId) && Option.getOrNull(campaignId) !== Option.getOrNull(current.campaignId)) {
      yield* requireCampaign(current.organizationId, campaignId.value)
    }
    const same = (a: unknown, b: unknown) => CircuitBreaker.canonicalJson(a) === CircuitBreaker.canonicalJson(b)
    const optionIso = (t: Option.Option<DateTime.Utc>) => isoOrNull(t)
    const comparisons: ReadonlyArray<readonly [string, boolean]> = [
      ["content", content !== current.content],
      ["account_ids", !same(accountIds, current.accountIds)],
      ["scheduled_for", optionIso(scheduledFor) !== optionIso(current.scheduledFor)],
      ["timezone", Option.getOrNull(timezone) !== Option.getOrNull(current.timezone)],
      ["platform_content", !same(platformContent, current.platformContent)],
      ["media_ids", !same(mediaIds, current.mediaIds)],
      ["threadPosts", !same(threadPosts, current.threadPosts)],
      ["campaign_id", Option.getOrNull(campaignId) !== Option.getOrNull(current.campaignId)]
    ]
    for (const [field, differs] of comparisons) if (differs) changed.push(field)
    const removedAccounts = (record: PostRecord) => record.post.accountIds.filter((id) => !accountIds.includes(id))
    yield* ensureEditable(existing, changed, removedAccounts(existing), now)

    // The platform and media rules, when what will be sent, or to whom, changes (or the post is a draft):
    // an edit of a campaign or time zone alone never fails on media deleted since the post was published.
    if (current.isDraft || changed.some((f) => f === "account_ids" || sendFields.includes(f))) {
      // Platforms of the targets: accounts just resolved, or those of the current targets.
      const platforms = accounts !== undefined
        ? accounts.map((a) => a.platform)
        : yield* platformsOf(caller, current.accountIds, existing.destinations)
      yield* PlatformRules.check({
        platforms,
        content,
        platformContent,
        threadPosts,
        hasMedia: mediaIds.length > 0,
        mode: current.isDraft ? "draft" : "publish"
      })
      yield* checkMedia(
        caller,
        { mediaIds, threadPosts },
        platforms,
        platformContent,
        current.isDraft ? "draft" : "publish"
      )
    }

    const transactor = yield* Transactor
    const posts = yield* PostStore
    const eventStore = yield* EventStore
    const record = yield* transactor.withTransaction(Effect.gen(function*() {
      const locked = yield* lockAndLoad(caller, current.id)
      yield* ensureEditable(locked, changed, removedAccounts(locked), now)
      if (Option.isSome(campaignId) && Option.getOrNull(campaignId) !== Option.getOrNull(locked.post.campaignId)) {
        yield* requireCampaign(current.organizationId, campaignId.value)
      }
      const post = new Post({
        ...locked.post,
        content,
        accountIds,
        platformContent,
        mediaIds,
        scheduledFor,
        timezone,
        campaignId,
        threadPosts,
        approval: changed.length > 0 ? resubmitted(locked.post.approval) : locked.post.approval,
        updatedAt: now
      })
      let destinations = locked.destinations
      if (!post.isDraft) {
        // Only queued destinations move, and only with a new scheduled_for; failed, publishing and
        // published ones keep their row as it is (a published one is never sent again by an edit).
        const scheduledAt = Option.getOrElse(scheduledFor, () => now)
        const dueAt = DateTime.greaterThan(scheduledAt, now) ? scheduledAt : now
        const reschedule = changed.includes("scheduled_for")
        const keep = destinations.filter((d) => accountIds.includes(d.accountId))
        const removed = destinations.filter((d) => !accountIds.includes(d.accountId))
        const moved = reschedule
          ? keep.filter((d) => d.status === "queued").map((d) => new Destination({ ...d, dueAt, updatedAt: now }))
          : []
        const addedAccounts = (accounts ?? []).filter((a) => !keep.some((d) => d.accountId === a.id))
        const added = yield* newDestinations(post, addedAccounts, dueAt, now)
        yield* posts.deleteDestinations(removed.map((d) => d.id))
        yield* posts.updateDestinations(moved)
        yield* posts.insertDestinations(added)
        const byId = new Map(moved.map((d) => [d.id as string, d]))
        destinations = [...keep.map((d) => byId.get(d.id) ?? d), ...added]
      }
      yield* posts.update(post)
      const next: PostRecord = { post, destinations }
      const events = [yield* makeEvent(post.organizationId, "post.updated", eventData(next, { changed }))]
      const wasReview = Option.isSome(locked.post.approval) && locked.post.approval.value.status !== "pending"
      if (wasReview && Option.isSome(post.approval) && post.approval.value.status === "pending") {
        events.push(
          yield* makeEvent(post.organizationId, "post.approval_requested", {
            post_id: post.id,
            account_ids: post.accountIds,
            requested_by: requestedBy(caller),
            resubmitted: true
          })
        )
      }
      yield* eventStore.append(events)
      return yield* Effect.map((yield* PostStore).findById(post.organizationId, post.id), Option.getOrElse(() => next))
    }))
    return { record, scheduledAtSent: body.scheduled_at !== undefined && body.scheduled_at !== null, changed }
  }).pipe(Spans.withSpan("Posts.update"))

/** The platforms of a post's targets: its destinations', else its accounts' (a draft). */
const platformsOf = (
  caller: Caller,
  accountIds: ReadonlyArray<AccountId>,
  destinations: ReadonlyArray<Destination>
): Effect.Effect<ReadonlyArray<Platform>, PersistenceError, AccountStore> =>
  destinations.length > 0
    ? Effect.succeed(destinations.map((d) => d.platform))
    : accountIds.length === 0
    ? Effect.succeed([])
    : Effect.map(
      Effect.flatMap(AccountStore, (store) => store.list(caller.key.organizationId)),
      (all) => all.filter((a) => accountIds.includes(a.id)).map((a) => a.platform)
    )
