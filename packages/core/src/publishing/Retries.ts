/**
 * User retries of failed destinations: `POST /posts/{post_id}/retry` and `POST /posts/retry-failed`.
 * A retried destination goes back to `queued`, due now, with a fresh attempt budget (`attempts` 0,
 * `error` cleared); nothing is published synchronously: the dispatcher picks it up.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { Destination } from "../domain/Destination.js"
import * as DestinationLifecycle from "../posts/DestinationLifecycle.js"
import * as Dispatcher from "./Dispatcher.js"
import { DomainError, type PersistenceError } from "../kernel/Errors.js"
import type { AccountId, OrganizationId, PostId } from "../kernel/Ids.js"
import type { Platform } from "../domain/Platform.js"
import { type PostRecord, PostStore } from "../posts/PostStore.js"
import { Transactor } from "../kernel/Transactor.js"
import type { UsageCounters } from "../access/UsageCounters.js"

/** The spec's cap on `post_ids` of `POST /posts/retry-failed`. */
export const maxRetryPostIds = 200

/** At most this many destinations are re-queued by one bulk retry; `has_more` tells the caller to call again. */
export const maxBulkRetried = 500

export const nextStep =
  "The destinations are queued and will be published shortly. Follow them with GET /posts/{post_id}, " +
  "or subscribe to the post.published and post.failed webhooks."

export interface RetryResult {
  /** The post after the retry, with every destination. */
  readonly record: PostRecord
  /** The destinations re-queued, as they are now. */
  readonly retried: ReadonlyArray<Destination>
}

/** Which failed destinations of a post to re-queue. */
interface Selection {
  readonly accountIds?: ReadonlyArray<AccountId> | undefined
  readonly platform?: Platform | undefined
  readonly failedAfter?: DateTime.Utc | undefined
  readonly failedBefore?: DateTime.Utc | undefined
  readonly maxAttempts?: number | undefined
}

const selects = (selection: Selection) => (d: Destination): boolean => {
  if (Either.isLeft(DestinationLifecycle.transition(d.status, DestinationLifecycle.DestinationEvent.Retry()))) {
    return false
  }
  if (selection.accountIds !== undefined && !selection.accountIds.includes(d.accountId)) return false
  if (selection.platform !== undefined && d.platform !== selection.platform) return false
  if (selection.maxAttempts !== undefined && d.attempts > selection.maxAttempts) return false
  if (selection.failedAfter !== undefined || selection.failedBefore !== undefined) {
    if (Option.isNone(d.failedAt)) return false
    const at = d.failedAt.value
    if (selection.failedAfter !== undefined && DateTime.lessThanOrEqualTo(at, selection.failedAfter)) return false
    if (selection.failedBefore !== undefined && DateTime.greaterThanOrEqualTo(at, selection.failedBefore)) return false
  }
  return true
}

const visible = (record: PostRecord, visibleAccountIds: ReadonlyArray<AccountId> | undefined): boolean =>
  visibleAccountIds === undefined ||
  (record.post.accountIds.every((id) => visibleAccountIds.includes(id)) &&
    record.destinations.every((d) => visibleAccountIds.includes(d.accountId)))

/**
 * Re-queues the selected failed destinations of one post, in one transaction. The post's settlement
 * lock is held so that two concurrent retries cannot both re-queue (one sees the other's result).
 */
const requeue = (organizationId: OrganizationId, postId: PostId, selection: Selection) =>
  Effect.gen(function*() {
    const posts = yield* PostStore
    const transactor = yield* Transactor
    return yield* transactor.withTransaction(Effect.gen(function*() {
      yield* Dispatcher.lockPost(postId)
      const found = yield* posts.findById(organizationId, postId)
      if (Option.isNone(found)) return Option.none<RetryResult>()
      const now = yield* DateTime.now
      const retried = found.value.destinations.filter(selects(selection)).map((d) =>
        new Destination({
          ...d,
          status: "queued",
          dueAt: now,
          attempts: 0,
          error: Option.none(),
          failedAt: Option.none(),
          updatedAt: now
        })
      )
      if (retried.length > 0) yield* posts.updateDestinations(retried)
      const byId = new Map(retried.map((d) => [d.id, d]))
      const record: PostRecord = {
        post: found.value.post,
        destinations: found.value.destinations.map((d) => byId.get(d.id) ?? d)
      }
      return Option.some<RetryResult>({ record, retried })
    }))
  })

export interface RetryPostInput {
  readonly organizationId: OrganizationId
  readonly postId: PostId
  /** Retry only the destinations of these accounts; absent means every failed destination. */
  readonly accountIds?: ReadonlyArray<AccountId> | undefined
  /** A key restricted to some accounts sees only posts whose every target is among them. */
  readonly visibleAccountIds?: ReadonlyArray<AccountId> | undefined
}

/**
 * `POST /posts/{post_id}/retry`: 404 when the post is absent (or not visible to the key), 409
 * `no_failed_destinations` when nothing selected has failed.
 */
export const retryPost = (
  input: RetryPostInput
): Effect.Effect<RetryResult, DomainError | PersistenceError, PostStore | Transactor | UsageCounters> =>
  Effect.gen(function*() {
    const posts = yield* PostStore
    const found = yield* posts.findById(input.organizationId, input.postId)
    if (Option.isNone(found) || !visible(found.value, input.visibleAccountIds)) {
      return yield* DomainError.notFound("Post")
    }
    const result = yield* requeue(input.organizationId, input.postId, { accountIds: input.accountIds })
    if (Option.isNone(result)) return yield* DomainError.notFound("Post")
    if (result.value.retried.length === 0) {
      return yield* DomainError.fail(
        "no_failed_destinations",
        input.accountIds === undefined
          ? "The post has no failed destinations to retry"
          : "The post has no failed destinations for the given account_ids",
        undefined,
        409
      )
    }
    yield* Dispatcher.poke
    return result.value
  }).pipe(Effect.withSpan("Retries.retryPost"))

export interface RetryFailedInput {
  readonly organizationId: OrganizationId
  readonly visibleAccountIds?: ReadonlyArray<AccountId> | undefined
  readonly postIds?: ReadonlyArray<PostId> | undefined
  readonly accountId?: AccountId | undefined
  readonly platform?: Platform | undefined
  readonly failedAfter?: DateTime.Utc | undefined
  readonly failedBefore?: DateTime.Utc | undefined
  /** Only destinations that used at most this many attempts. Not a filter on its own. */
  readonly maxAttempts?: number | undefined
}

export interface RetryFailedResult {
  readonly retriedCount: number
  /** Per post with something re-queued, in the order posts were examined. */
  readonly posts: ReadonlyArray<RetryResult>
  /** The cap `maxBulkRetried` was reached: call again for the rest. */
  readonly hasMore: boolean
}

/** 400 `bulk_limit_exceeded` for `received` post ids (more than `maxRetryPostIds`). */
export const postIdsLimitExceeded = (received: number): DomainError =>
  DomainError.of(
    "bulk_limit_exceeded",
    `At most ${maxRetryPostIds} post_ids per call; ${received} were given`,
    { limit: maxRetryPostIds, received }
  )

/**
 * `POST /posts/retry-failed`: re-queues every failed destination matching the filters: by `post_ids`
 * one transaction per post; otherwise one set-based statement of the store (`requeueFailed`). 400 `no_filter` without a filter; 400 `bulk_limit_exceeded` above 200 post ids. Nothing
 * matching is not an error: the result says 0.
 */
export const retryFailed = (
  input: RetryFailedInput
): Effect.Effect<RetryFailedResult, DomainError | PersistenceError, PostStore | Transactor | UsageCounters> =>
  Effect.gen(function*() {
    const hasFilter = input.postIds !== undefined || input.accountId !== undefined ||
      input.platform !== undefined || input.failedAfter !== undefined || input.failedBefore !== undefined
    if (!hasFilter) {
      return yield* DomainError.fail(
        "no_filter",
        "Give at least one filter: post_ids, account_id, platform, failed_after or failed_before"
      )
    }
    if (input.postIds !== undefined && input.postIds.length > maxRetryPostIds) {
      return yield* Effect.fail(postIdsLimitExceeded(input.postIds.length))
    }
    const selection: Selection = {
      accountIds: input.accountId === undefined ? undefined : [input.accountId],
      platform: input.platform,
      failedAfter: input.failedAfter,
      failedBefore: input.failedBefore,
      maxAttempts: input.maxAttempts
    }
    const posts = yield* PostStore
    const results: Array<RetryResult> = []
    let total = 0
    let hasMore = false

    const consider = (record: PostRecord) =>
      Effect.gen(function*() {
        if (!visible(record, input.visibleAccountIds)) return
        const wanted = record.destinations.filter(selects(selection))
        if (wanted.length === 0) return
        if (total + wanted.length > maxBulkRetried) {
          hasMore = true
          return
        }
        const result = yield* requeue(input.organizationId, record.post.id, selection)
        if (Option.isSome(result) && result.value.retried.length > 0) {
          results.push(result.value)
          total += result.value.retried.length
        }
      })

    if (input.postIds !== undefined) {
      for (const postId of new Set(input.postIds)) {
        if (hasMore) break
        const found = yield* posts.findById(input.organizationId, postId)
        if (Option.isSome(found)) yield* consider(found.value)
      }
    } else {
      // One set-based statement in the store: the filters, the cap and the re-queue together.
      const requeued = yield* posts.requeueFailed({
        organizationId: input.organizationId,
        visibleAccountIds: input.visibleAccountIds,
        accountId: input.accountId,
        platform: input.platform,
        failedAfter: input.failedAfter,
        failedBefore: input.failedBefore,
        maxAttempts: input.maxAttempts,
        now: yield* DateTime.now,
        limit: maxBulkRetried
      })
      for (const { record, retried } of requeued.posts) {
        const ids = new Set<string>(retried)
        results.push({ record, retried: record.destinations.filter((d) => ids.has(d.id)) })
        total += retried.length
      }
      hasMore = requeued.hasMore
    }
    if (total > 0) yield* Dispatcher.poke
    return { retriedCount: total, posts: results, hasMore }
  }).pipe(Effect.withSpan("Retries.retryFailed"))
