/**
 * Recording an outcome: the destination's new state written fenced by the claim, its events appended in
 * the same transaction only when the write took effect, the post's status and the usage counters; a
 * batch of outcomes in one transaction.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { SocialAccount } from "../domain/Account.js"
import { AccountStore, successPrecisionMillis } from "../accounts/AccountStore.js"
import * as CircuitBreaker from "../posts/CircuitBreaker.js"
import type { Destination } from "../domain/Destination.js"
import * as DestinationLifecycle from "../posts/DestinationLifecycle.js"
import { type Claim, type Completion, DispatchStore } from "./DispatchStore.js"
import * as EngineMetrics from "../kernel/EngineMetrics.js"
import type { PersistenceError } from "../kernel/Errors.js"
import { Event } from "../webhooks/Event.js"
import { EventStore } from "../webhooks/EventStore.js"
import { IdGenerator } from "../kernel/IdGenerator.js"
import { type PostId } from "../kernel/Ids.js"
import { type PublishErrorKind, type PublishResult } from "../platforms/Platforms.js"
import type { Post } from "../domain/Post.js"
import * as PostLifecycle from "../posts/PostLifecycle.js"
import { PostStore } from "../posts/PostStore.js"
import { Transactor } from "../kernel/Transactor.js"
import { UsageCounters } from "../access/UsageCounters.js"
import { Outcome, Recorded } from "./DispatchOutcome.js"
import { destinationData, eventsAt, makeEvent } from "./DispatchEvents.js"
import { Loaded } from "./PublishClaim.js"
import { lockPost } from "../posts/PostLock.js"

/** One outcome to record. */
export interface Pending {
  readonly claim: Claim
  readonly outcome: Outcome
  readonly loaded: Loaded
  /**
   * The `traceparent` its events carry (the publish's span); when absent, the post's (`Post.traceParent`).
   */
  readonly trace?: Option.Option<string>
}

/** The `traceparent` the events of an outcome carry, so that their deliveries join the post's trace. */
const traceOf = (p: Pending): Option.Option<string> =>
  p.trace ?? (Option.isSome(p.loaded.post) ? p.loaded.post.value.traceParent : Option.none())

type RecordServices = DispatchStore | EventStore | AccountStore | PostStore | Transactor | IdGenerator | UsageCounters

const needsLock = (p: Pending): Option.Option<PostId> =>
  Option.isSome(p.loaded.post) && p.loaded.destinationCount > 1 ? Option.some(p.loaded.post.value.id) : Option.none()

/**
 * Writes outcomes and their events in ONE transaction: the fenced completions, then one append of
 * every event. Post locks are taken first, in id order, and accounts are touched in id order, so
 * concurrent batches of other workers cannot deadlock on them. A completion whose claim was lost
 * writes nothing and adds no event.
 */
export const recordAll = (
  pending: ReadonlyArray<Pending>
): Effect.Effect<ReadonlyArray<Recorded>, PersistenceError, RecordServices> =>
  Effect.gen(function*() {
    const dispatch = yield* DispatchStore
    const eventStore = yield* EventStore
    const transactor = yield* Transactor
    const now = yield* DateTime.now
    const locks = [...new Set(pending.flatMap((p) => Option.toArray(needsLock(p))))].sort()
    const order = pending.map((p, i) => ({ p, i })).sort((a, b) =>
      a.p.claim.destination.accountId - b.p.claim.destination.accountId || a.i - b.i
    )
    const recorded = yield* transactor.withTransaction(Effect.gen(function*() {
      for (const postId of locks) yield* lockPost(postId)
      const results: Array<Recorded> = new Array(pending.length)
      const events: Array<Event> = []
      const completions = order.map(({ p }) => completionOf(p.outcome, p.claim.destination, now))
      // Every fenced write of the batch in one statement; a lost claim is refused alone.
      const written = yield* dispatch.completeAll(
        order.map(({ p }, k) => ({ claim: p.claim, completion: completions[k]! }))
      )
      // One event for each written completion that is not a re-queue.
      const event = yield* eventsAt(
        completions.filter((c, k) => written[k] === true && c._tag !== "Requeued").length,
        now
      )
      // Accounts as this transaction left them: a batch of one account's publishes writes it once.
      const accountsNow = new Map<string, SocialAccount>()
      // Accounts whose success this batch offered the store, written or not (fresh, or another's).
      const successOffered = new Set<string>()
      // Posts of several destinations that a member of this batch settled (finished, not re-queued).
      const settling = new Map<string, Destination>()
      for (const [k, { i, p }] of order.entries()) {
        const { claim, loaded, outcome } = p
        const d = claim.destination
        const completion: Completion = completions[k]!
        if (written[k] !== true) {
          results[i] = "lost"
          continue
        }
        const base = destinationData(d)
        switch (completion._tag) {
          case "Published": {
            events.push(
              event(d.organizationId, "post.published", {
                ...base,
                published_at: DateTime.formatIso(completion.publishedAt),
                platform_post_id: completion.platformPostId
              }, traceOf(p))
            )
            break
          }
          case "Failed": {
            events.push(
              event(d.organizationId, "post.failed", {
                ...base,
                error: completion.error,
                attempts: d.attempts,
                failed_at: DateTime.formatIso(completion.failedAt)
              }, traceOf(p))
            )
            break
          }
          case "Requeued":
            break
        }
        const accountKey = `${d.organizationId}:${d.accountId}`
        const before = accountsNow.get(accountKey) ?? loaded.account
        const success = isPlainSuccess(outcome)
        if (!(success && successOffered.has(accountKey)) && touchesAccount(outcome, now, before)) {
          const updated = yield* updateAccount(d, outcome, now)
          if (success) successOffered.add(accountKey)
          if (Option.isSome(updated.account)) accountsNow.set(accountKey, updated.account.value)
          events.push(...updated.events)
        }
        const counts = outcome._tag === "Failed" && outcome.local !== true && isPermanent(outcome.kind)
        if (counts && Option.isSome(loaded.post)) {
          yield* countForBreaker(loaded.post.value)
        }
        // A post with one destination cannot end mixed.
        if (completion._tag !== "Requeued" && loaded.destinationCount > 1) settling.set(d.postId, d)
        results[i] = completion._tag === "Published" ? "published" : completion._tag === "Requeued"
          ? "requeued"
          : "failed"
      }
      // Once per post, after every write of the batch: several of one post's destinations may settle in
      // this transaction, and only the state they leave together says whether the post ended mixed.
      for (const d of settling.values()) {
        const settled = yield* settledEvent(d)
        if (Option.isSome(settled)) events.push(settled.value)
      }
      if (events.length > 0) yield* eventStore.append(events)
      return results
    }))
    // Counted once committed: a batch that fails is recorded again, one outcome at a time.
    for (let i = 0; i < pending.length; i++) countOutcome(pending[i]!, recorded[i]!)
    return recorded
  })

/** The error kind a failed or re-queued outcome is counted under. */
const errorKindOf = (outcome: Outcome): string =>
  outcome._tag === "Failed" ? outcome.kind : outcome._tag === "Unknown" ? "outcome_unknown" : "absent"

/** `EngineMetrics`' count of one recorded outcome. */
const countOutcome = (p: Pending, recorded: Recorded): void => {
  const platform = p.claim.destination.platform
  switch (recorded) {
    case "published":
      return EngineMetrics.destinationsPublished.record({ platform }, 1)
    case "requeued":
      return EngineMetrics.destinationsRequeued.record({ platform, error_kind: errorKindOf(p.outcome) }, 1)
    case "failed":
      return EngineMetrics.destinationsFailed.record({ platform, error_kind: errorKindOf(p.outcome) }, 1)
    case "lost":
      return EngineMetrics.destinationsLost.record({ platform }, 1)
  }
}

/** Writes one outcome and its events in one transaction. */
export const record = (
  claim: Claim,
  outcome: Outcome,
  loaded: Loaded
): Effect.Effect<Recorded, PersistenceError, RecordServices> =>
  Effect.map(recordAll([{ claim, outcome, loaded }]), (results) => results[0]!)

const isPermanent = (kind: PublishErrorKind): boolean =>
  kind === "permanent" || kind === "duplicate" || kind === "too_long" || kind === "media"

const completionOf = (outcome: Outcome, d: Destination, now: DateTime.Utc): Completion => {
  switch (outcome._tag) {
    case "Published":
      return {
        _tag: "Published",
        platformPostId: outcome.result.platformPostId,
        platformPostUrl: outcome.result.platformPostUrl,
        publishedAt: now
      }
    case "Unknown":
      return { _tag: "Failed", error: outcome.message, failedAt: now }
    case "Absent":
      // The attempt counts: a post that keeps killing its worker stops after the usual attempts.
      return d.attempts < DestinationLifecycle.maxAttempts
        ? { _tag: "Requeued", error: outcome.message, dueAt: now }
        : { _tag: "Failed", error: `${outcome.message} (gave up after ${d.attempts} attempts)`, failedAt: now }
    case "Failed": {
      const decision = DestinationLifecycle.decideAfterFailure({
        attempts: d.attempts,
        retryable: outcome.kind === "transient" || outcome.kind === "rate_limit",
        ...(outcome.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: outcome.retryAfterSeconds })
      })
      if (decision._tag === "Retry") {
        return { _tag: "Requeued", error: outcome.message, dueAt: DateTime.addDuration(now, decision.delay) }
      }
      const error = outcome.kind === "transient" || outcome.kind === "rate_limit"
        ? `${outcome.message} (gave up after ${d.attempts} attempts)`
        : outcome.message
      return { _tag: "Failed", error, failedAt: now }
    }
  }
}

/**
 * A healthy account whose last success is under a minute old is not rewritten on every publish
 * (`successPrecisionMillis`); the store applies the same rule to the row itself (`recordSuccess`).
 */
const isFresh = (account: SocialAccount, now: DateTime.Utc, result: PublishResult): boolean =>
  result.renewedCredentials === undefined &&
  account.recentFailures === 0 &&
  !account.needsReconnection &&
  Option.isSome(account.lastSuccessAt) &&
  DateTime.toEpochMillis(now) - DateTime.toEpochMillis(account.lastSuccessAt.value) < successPrecisionMillis

/** A publish that brought no new credentials: on the account it writes only the success. */
const isPlainSuccess = (outcome: Outcome): boolean =>
  outcome._tag === "Published" && outcome.result.renewedCredentials === undefined

/** Whether this outcome changes the account's health (`updateAccount` then writes it). */
const touchesAccount = (outcome: Outcome, now: DateTime.Utc, before: SocialAccount | undefined): boolean => {
  if (outcome._tag === "Unknown" || outcome._tag === "Absent") return false
  if (outcome._tag === "Failed") return outcome.local !== true && (outcome.kind === "auth" || isPermanent(outcome.kind))
  return before === undefined || !isFresh(before, now, outcome.result)
}

/**
 * Account health follows publishes: last success, permanent failures, reconnection. Returns the events
 * and the account as this transaction leaves it (none when it was not found or the outcome is not
 * the account's).
 */
const updateAccount = (d: Destination, outcome: Outcome, now: DateTime.Utc) =>
  Effect.gen(function*() {
    const events: Array<Event> = []
    const unchanged = { events, account: Option.none<SocialAccount>() }
    if (outcome._tag === "Unknown" || outcome._tag === "Absent") return unchanged
    const accounts = yield* AccountStore
    // A success without new credentials touches three columns, decided on the row as it is then: rounds
    // in flight together read the account before any of them wrote it, and the first to record writes
    // it; the others find it fresh, or (Postgres) held by that first writer, and leave it alone.
    if (isPlainSuccess(outcome)) {
      return { events, account: yield* accounts.recordSuccess(d.organizationId, d.accountId, now) }
    }
    // Read inside the transaction, just before writing, so a concurrent reconnect is not overwritten
    // with stale credentials.
    const current = yield* accounts.findById(d.organizationId, d.accountId)
    if (Option.isNone(current)) return unchanged
    const account = current.value
    let next: SocialAccount | undefined
    if (outcome._tag === "Published") {
      const renewed = outcome.result.renewedCredentials
      next = new SocialAccount({
        ...account,
        lastSuccessAt: Option.some(now),
        recentFailures: 0,
        ...(renewed === undefined ? {} : { credentials: Option.some(Redacted.make(JSON.stringify(renewed))) }),
        updatedAt: now
      })
    } else if (outcome.kind === "auth") {
      if (!account.needsReconnection) {
        next = new SocialAccount({ ...account, needsReconnection: true, updatedAt: now })
        events.push(
          yield* makeEvent(d.organizationId, "account.reconnect_needed", {
            account_id: account.id,
            platform: account.platform,
            account_name: account.accountName,
            reason: outcome.message,
            post_id: d.postId,
            destination_id: d.id
          })
        )
      }
    } else {
      next = new SocialAccount({ ...account, recentFailures: account.recentFailures + 1, updatedAt: now })
    }
    if (next === undefined) return unchanged
    yield* accounts.update(next)
    return { events, account: Option.some(next) }
  })

/** The same body failing permanently counts towards the circuit breaker of POST /posts. */
const countForBreaker = (post: Post) =>
  Option.match(post.requestHash, {
    onNone: () => Effect.void,
    onSome: (requestHash) => CircuitBreaker.recordPostFailure({ ...post, requestHash })
  })

/**
 * `post.partially_failed` when this completion settled the post's last destination and the post ended
 * with some published and some failed. Runs inside the completion's transaction, after the write.
 */
const settledEvent = (d: Destination) =>
  Effect.gen(function*() {
    const posts = yield* PostStore
    const current = yield* posts.findById(d.organizationId, d.postId)
    if (Option.isNone(current)) return Option.none<Event>()
    const destinations = current.value.destinations
    const outcome = PostLifecycle.settledOutcome(destinations.map((x) => x.status))
    if (outcome !== "partially_failed") return Option.none<Event>()
    const published = destinations.filter((x) => x.status === "published")
    const failed = destinations.filter((x) => x.status === "failed")
    return Option.some(
      yield* makeEvent(d.organizationId, "post.partially_failed", {
        post_id: d.postId,
        published_count: published.length,
        failed_count: failed.length,
        destinations: destinations.map((x) => ({
          destination_id: x.id,
          platform: x.platform,
          account_id: x.accountId,
          account_name: x.accountName,
          status: x.status,
          error: Option.getOrNull(x.error),
          platform_post_id: Option.getOrNull(x.platformPostId)
        }))
      })
    )
  })
