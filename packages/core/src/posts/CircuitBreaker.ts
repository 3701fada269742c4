/**
 * The circuit breaker of POST /posts: the same request body whose posts failed 5 or more times within
 * 6 hours is refused with 422 `permanent_failure_circuit_breaker` (not retryable), so a client in a
 * retry loop stops hammering a platform with a post that cannot succeed.
 *
 * - The body's hash is the SHA-256 of its canonical JSON (`canonicalJson`: object keys sorted at every
 *   depth, no whitespace), so key order and spacing do not matter but any change of any field does
 *   (an `idempotency_key` included). The hash is kept on the post (`Post.requestHash`).
 * - The window slides: the breaker is open when `threshold` (5) failures of the body fall within the
 *   last 6 hours (`ttlSeconds`), measured to the millisecond from now; a failure exactly 6 hours old
 *   no longer counts. A failure is a post (one request) with a destination that failed permanently:
 *   the engine records it once per post (`recordPostFailure`), however many of the post's destinations
 *   fail, so one post to five accounts does not open the breaker alone.
 * - Only the times of the last `threshold` failures decide it, so that is all that is kept, per
 *   organization and hash, in `UsageCounters` (a ring): the counter `breaker:<org>:<hash>:seq` numbers
 *   the failures, and `breaker:<org>:<hash>:at:<n mod 5>` holds the epoch milliseconds of failure n.
 *   Five and one rows per failing body, whatever its number of failures; a check reads at most six.
 *   The numbering increment comes first in a recording's transaction, so two recordings of one body
 *   serialize on its row (Postgres holds the upsert's row lock until commit; SQLite has one writer)
 *   before either rewrites a slot. The ring's counters use one far window end and are never purged.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { DomainError, type PersistenceError } from "../kernel/Errors.js"
import type { OrganizationId, PostId } from "../kernel/Ids.js"
import { UsageCounters } from "../access/UsageCounters.js"
import { canonicalJson } from "../kernel/CanonicalJson.js"

export { canonicalJson }

export const threshold = 5

export const ttlSeconds = 21_600

/** The window, in milliseconds. */
const windowMillis = ttlSeconds * 1000

export const hint = "This exact request body failed to publish 5 or more times in the last 6 hours, so it is refused " +
  "rather than sent again. Fix the cause shown in the failed destinations' error (GET /posts/{id}), " +
  "change the content, or add an idempotency_key to send it anyway."

/** The window end of the ring's counters: never reached, so never purged. */
export const ringEnd: DateTime.Utc = DateTime.unsafeMake(Date.UTC(9999, 11, 31))

/** The counter numbering the failures of a body. */
export const sequenceKey = (organizationId: OrganizationId, hash: string): string =>
  `breaker:${organizationId}:${hash}:seq`

/** The ring slot holding the time of failure `n` (1-based). */
export const slotKey = (organizationId: OrganizationId, hash: string, n: number): string =>
  `breaker:${organizationId}:${hash}:at:${(n - 1) % threshold}`

/** Records one failed publish of a post created by the body with this hash, at now. */
export const recordFailure = (
  organizationId: OrganizationId,
  hash: string
): Effect.Effect<void, PersistenceError, UsageCounters> =>
  Effect.gen(function*() {
    const counters = yield* UsageCounters
    const at = DateTime.toEpochMillis(yield* DateTime.now)
    const n = yield* counters.increment(sequenceKey(organizationId, hash), ringEnd, 1)
    const key = slotKey(organizationId, hash, n)
    // Counters only add: the slot is set to `at` by adding the difference from what it held.
    const held = yield* counters.get(key, ringEnd)
    yield* counters.increment(key, ringEnd, at - held)
  })

/** The times (epoch milliseconds) of the body's last `threshold` failures, in no order. */
export const lastFailures = (
  organizationId: OrganizationId,
  hash: string
): Effect.Effect<ReadonlyArray<number>, PersistenceError, UsageCounters> =>
  Effect.gen(function*() {
    const counters = yield* UsageCounters
    const n = yield* counters.get(sequenceKey(organizationId, hash), ringEnd)
    const kept = Math.min(n, threshold)
    return yield* Effect.forEach(
      Array.from({ length: kept }, (_, i) => n - i),
      (k) => counters.get(slotKey(organizationId, hash, k), ringEnd)
    )
  })

/** How many of `times` (epoch milliseconds) fall within the window ending at `now`. */
export const withinWindow = (times: ReadonlyArray<number>, now: DateTime.Utc): number => {
  const start = DateTime.toEpochMillis(now) - windowMillis
  return times.filter((t) => t > start).length
}

/** Failures of the body with this hash within the last 6 hours (at most `threshold`: all that is kept). */
export const failureCount = (
  organizationId: OrganizationId,
  hash: string
): Effect.Effect<number, PersistenceError, UsageCounters> =>
  Effect.gen(function*() {
    const times = yield* lastFailures(organizationId, hash)
    return withinWindow(times, yield* DateTime.now)
  })

export const isOpen = (failures: number): boolean => failures >= threshold

export const openError = (hash: string, failures: number): DomainError =>
  DomainError.of(
    "permanent_failure_circuit_breaker",
    `This request body failed ${failures} times in the last 6 hours; it is refused until it changes or the failures age out`,
    {
      circuit_breaker_open: true,
      content_hash: hash,
      fail_count: failures,
      threshold,
      ttl_seconds: ttlSeconds,
      hint
    }
  )

/** Fails with the 422 when the breaker is open for this body. */
export const check = (
  organizationId: OrganizationId,
  hash: string
): Effect.Effect<void, DomainError | PersistenceError, UsageCounters> =>
  Effect.flatMap(
    failureCount(organizationId, hash),
    (failures) => isOpen(failures) ? Effect.fail(openError(hash, failures)) : Effect.void
  )

/** Records the failure of the post's request once, however many of its destinations fail. */
export const recordPostFailure = (post: {
  readonly id: PostId
  readonly organizationId: OrganizationId
  readonly requestHash: string
  readonly createdAt: DateTime.Utc
}): Effect.Effect<void, PersistenceError, UsageCounters> =>
  Effect.gen(function*() {
    const counters = yield* UsageCounters
    // One fixed window per post, so every later failure of it finds the first one's mark.
    const seen = yield* counters.increment(`breaker:counted:${post.id}`, DateTime.add(post.createdAt, { days: 7 }), 1)
    if (seen === 1) yield* recordFailure(post.organizationId, post.requestHash)
  })
