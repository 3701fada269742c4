/**
 * Settling abandoned attempts: a destination whose process died mid-publish is never re-sent blindly;
 * its platform is asked whether the attempt reached it (found: published, absent: queued again,
 * unknown: failed with an error saying so).
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import { AccountStore } from "../accounts/AccountStore.js"
import { type Claim, DispatchStore } from "./DispatchStore.js"
import { Platforms, type PublishedAnswer, PublishError } from "../platforms/Platforms.js"
import type { Post } from "../domain/Post.js"
import { PostStore } from "../posts/PostStore.js"
import * as Processes from "../kernel/Processes.js"
import { Resolved } from "./DispatchOptions.js"
import { absentOutcomeMessage, Outcome, unknownOutcomeMessage } from "./DispatchOutcome.js"
import { parseCredentials } from "./PublishRequests.js"
import { Loaded, preloadPosts } from "./PublishClaim.js"
import { Pending, record, recordAll } from "./RecordOutcome.js"
import { logAnnotations, logOutcome } from "./DispatchLogs.js"

/** Retries a recording a few times on storage errors; if it still fails, the lease runs out and the
 * destination is resolved as failed-with-unknown-outcome, never re-sent. */
export const recordWithRetry = (claim: Claim, outcome: Outcome, loaded: Loaded) =>
  record(claim, outcome, loaded).pipe(
    Effect.retry({ times: 3, schedule: Schedule.exponential("100 millis") })
  )

/**
 * Asks the platform whether an abandoned attempt reached it. Anything short of a clear answer (no
 * client, no lookup, the post or account gone, an error, a timeout) is `Unknown`.
 */
export const askPlatform = (claim: Claim, post: Option.Option<Post>, config: Resolved) =>
  Effect.gen(function*() {
    const d = claim.destination
    const unknown = (reason: string): PublishedAnswer => ({ _tag: "Unknown", reason })
    if (Option.isNone(post)) return unknown("the post was deleted")
    const client = (yield* Platforms).get(d.platform)
    const findPublished = Option.isSome(client) ? client.value.findPublished : undefined
    if (findPublished === undefined) return unknown(`${d.platform} offers no lookup`)
    const account = yield* (yield* AccountStore).findById(d.organizationId, d.accountId)
    if (Option.isNone(account)) return unknown("the account is gone")
    const until = yield* DateTime.now
    return yield* findPublished({
      account: account.value,
      credentials: parseCredentials(account.value),
      destinationId: d.id,
      attempt: d.attempts,
      content: post.value.platformContent[d.platform]?.content ?? post.value.content,
      since: claim.claimedAt ?? d.dueAt,
      until
    }).pipe(
      Effect.timeoutFail({
        duration: config.lookupTimeout,
        onTimeout: () => new PublishError({ kind: "transient", message: "the lookup timed out" })
      }),
      Effect.catchAll((e) => Effect.succeed(unknown(e.message)))
    )
  }).pipe(Effect.catchAll((e) => Effect.succeed<PublishedAnswer>({ _tag: "Unknown", reason: e.message })))

/** What an abandoned attempt is recorded as, from the platform's answer. */
export const abandonedOutcome = (answer: PublishedAnswer): Outcome => {
  switch (answer._tag) {
    case "Found":
      return {
        _tag: "Published",
        result: { platformPostId: answer.platformPostId, platformPostUrl: answer.platformPostUrl }
      }
    case "Absent":
      return { _tag: "Absent", message: absentOutcomeMessage }
    case "Unknown":
      return { _tag: "Unknown", message: unknownOutcomeMessage }
  }
}

/**
 * Abandoned claims taken over per sweep: with `settleConcurrency` lookups at once, each bounded by the
 * lookup timeout (10 s), a batch is settled within two lookup timeouts, inside the 30 s lease it is
 * taken over under. A dead process that held more is settled batch after batch, at once.
 */
export const settleBatch = 100

/** Platform lookups of one sweep in flight at once. */
const settleConcurrency = 50

/**
 * Takes over and resolves destinations whose process died while publishing (stale heartbeat or
 * expired lease), asking their platform first, up to `settleBatch` of them, and records their
 * outcomes together (one transaction, as a round's recorder does); then removes the dead processes'
 * rows.
 */
export const resolveAbandoned = (config: Resolved) =>
  Effect.gen(function*() {
    const dispatch = yield* DispatchStore
    const posts = yield* PostStore
    const now = yield* DateTime.now
    const deadBefore = DateTime.subtractDuration(now, config.deadAfter)
    const abandoned = yield* dispatch.takeOverAbandoned({
      now,
      deadBefore,
      limit: Math.min(settleBatch, config.batchSize),
      leaseFor: config.leaseFor,
      workerId: config.workerId
    })
    const tally = { takenOver: abandoned.length, resolved: 0, found: 0, absent: 0 }
    // The batch's posts in one read (one by one if that fails).
    const preloaded = abandoned.length === 0 ? undefined : yield* preloadPosts(abandoned)
    const settled = yield* Effect.forEach(abandoned, (claim) =>
      Effect.gen(function*() {
        const d = claim.destination
        const known = preloaded?.get(d.postId)
        const loaded: Loaded = known !== undefined && known.post.organizationId === d.organizationId
          ? { post: Option.some(known.post), destinationCount: known.destinationCount }
          : Option.match(yield* posts.findById(d.organizationId, d.postId), {
            onNone: () => ({ post: Option.none(), destinationCount: 1 }),
            onSome: (r) => ({ post: Option.some(r.post), destinationCount: r.destinations.length })
          })
        const answer = yield* askPlatform(claim, loaded.post, config)
        const pending: Pending = { claim, outcome: abandonedOutcome(answer), loaded }
        return { pending, answer }
      }), { concurrency: settleConcurrency })
    const results = settled.length === 0
      ? []
      : yield* recordAll(settled.map((s) => s.pending)).pipe(
        Effect.retry({ times: 3, schedule: Schedule.exponential("100 millis") })
      )
    yield* Effect.forEach(settled, ({ answer, pending }, i) =>
      Effect.gen(function*() {
        const result = results[i] ?? "lost"
        yield* Effect.logWarning(`Dispatcher: abandoned attempt settled (platform answer: ${answer._tag})`).pipe(
          Effect.annotateLogs(answer._tag === "Unknown" ? { reason: answer.reason } : {})
        )
        yield* logOutcome(result, pending.outcome)
        if (result === "lost") return
        tally.resolved += 1
        if (answer._tag === "Found") tally.found += 1
        if (answer._tag === "Absent") tally.absent += 1
      }).pipe(Effect.annotateLogs(logAnnotations(pending.claim.destination))), { discard: true })
    const processes = yield* Effect.serviceOption(Processes.ProcessStore)
    if (Option.isSome(processes)) {
      const removed = yield* processes.value.removeDead(deadBefore)
      if (removed.length > 0) {
        yield* Effect.logWarning(`Dispatcher: removed dead processes ${removed.join(", ")}`)
      }
    }
    return tally
  })
