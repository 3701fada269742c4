/**
 * The circuit breaker of POST /posts: the same request body whose posts failed 5 or more times within
 * 6 hours is refused with 422 `permanent_failure_circuit_breaker` (not retryable), so a client in a
 * retry loop stops hammering a platform with a post that cannot succeed.
 *
 * - The body's hash is the SHA-256 of its canonical JSON (`canonicalJson`: object keys sorted at every
 *   depth, no whitespace), so key order and spacing do not matter but any change of any field does
 *   (an `idempotency_key` included). The hash is kept on the post (`Post.requestHash`).
 * - Failures are counted per organization and hash in `UsageCounters`, in hourly buckets under the key
 *   `breaker:<organization id>:<hash>` (`window`). A failure is a post (one request) with a destination
 *   that failed permanently: the engine records it once per post (`recordPostFailure`), however many of
 *   the post's destinations fail, so one post to five accounts does not open the breaker alone.
 * - The breaker is open when the current hour's bucket and the 5 before it hold 5 or more failures:
 *   a failure counts for between 5 and 6 hours, so the breaker never stays open longer than the
 *   announced `ttl_seconds` (21600).
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { DomainError, type PersistenceError } from "../kernel/Errors.js"
import type { OrganizationId, PostId } from "../kernel/Ids.js"
import { UsageCounters } from "../access/UsageCounters.js"

export const threshold = 5

export const ttlSeconds = 21_600

const bucketMillis = 3_600_000

/** Buckets summed: the current one and the ones before it, within the TTL. */
export const bucketCount = ttlSeconds * 1000 / bucketMillis

export const hint =
  "This exact request body failed to publish 5 or more times in the last 6 hours, so it is refused " +
  "rather than sent again. Fix the cause shown in the failed destinations' error (GET /posts/{id}), " +
  "change the content, or add an idempotency_key to send it anyway."

type CanonicalTask = { readonly literal: string } | { readonly value: unknown }

/**
 * Canonical JSON: object keys sorted at every depth, `undefined` members dropped, no whitespace.
 * Iterative (an explicit stack of what is left to write), so no nesting depth overflows the call stack.
 */
export const canonicalJson = (value: unknown): string => {
  const out: Array<string> = []
  const stack: Array<CanonicalTask> = [{ value }]
  while (stack.length > 0) {
    const task = stack.pop()!
    if ("literal" in task) {
      out.push(task.literal)
      continue
    }
    const v = task.value
    if (v === null || typeof v !== "object") {
      out.push(v === undefined ? "null" : JSON.stringify(v))
    } else if (Array.isArray(v)) {
      // Pushed in reverse: popped as "[", v[0], ",", v[1], ..., "]".
      stack.push({ literal: "]" })
      for (let i = v.length - 1; i >= 0; i--) {
        stack.push({ value: v[i] })
        if (i > 0) stack.push({ literal: "," })
      }
      stack.push({ literal: "[" })
    } else {
      const entries = Object.entries(v as Record<string, unknown>)
        .filter(([, member]) => member !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      stack.push({ literal: "}" })
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, member] = entries[i]!
        stack.push({ value: member })
        stack.push({ literal: `${JSON.stringify(key)}:` })
        if (i > 0) stack.push({ literal: "," })
      }
      stack.push({ literal: "{" })
    }
  }
  return out.join("")
}

export const counterKey = (organizationId: OrganizationId, hash: string): string =>
  `breaker:${organizationId}:${hash}`

/** The end of the hourly bucket containing `now`. */
export const bucketEnd = (now: DateTime.Utc): DateTime.Utc =>
  DateTime.unsafeMake(Math.floor(DateTime.toEpochMillis(now) / bucketMillis) * bucketMillis + bucketMillis)

/** The counter a failure at `now` is recorded in. */
export const window = (
  organizationId: OrganizationId,
  hash: string,
  now: DateTime.Utc
): { readonly key: string; readonly windowEnd: DateTime.Utc } => ({
  key: counterKey(organizationId, hash),
  windowEnd: bucketEnd(now)
})

/** The bucket ends summed at `now`, newest first. */
export const bucketEnds = (now: DateTime.Utc): ReadonlyArray<DateTime.Utc> => {
  const current = DateTime.toEpochMillis(bucketEnd(now))
  return Array.from({ length: bucketCount }, (_, i) => DateTime.unsafeMake(current - i * bucketMillis))
}

/** Records one failed publish of a post created by the body with this hash. */
export const recordFailure = (
  organizationId: OrganizationId,
  hash: string
): Effect.Effect<void, PersistenceError, UsageCounters> =>
  Effect.gen(function*() {
    const counters = yield* UsageCounters
    const w = window(organizationId, hash, yield* DateTime.now)
    yield* counters.increment(w.key, w.windowEnd, 1)
  })

/** Failures of the body with this hash within the breaker's window. */
export const failureCount = (
  organizationId: OrganizationId,
  hash: string
): Effect.Effect<number, PersistenceError, UsageCounters> =>
  Effect.gen(function*() {
    const counters = yield* UsageCounters
    const key = counterKey(organizationId, hash)
    const counts = yield* Effect.forEach(bucketEnds(yield* DateTime.now), (end) => counters.get(key, end))
    return counts.reduce((a, b) => a + b, 0)
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
  Effect.flatMap(failureCount(organizationId, hash), (failures) =>
    isOpen(failures) ? Effect.fail(openError(hash, failures)) : Effect.void)

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
