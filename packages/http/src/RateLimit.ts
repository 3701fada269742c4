/**
 * Per-key request limits in fixed windows (a minute and an hour), counted through the
 * `RequestCounters` port: in memory on the embedded SQLite default, an UNLOGGED table shared by every
 * process on Postgres. Counting a request is never a durable write.
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { DomainError } from "@herald/core/kernel/Errors"
import type { ApiKeyId } from "@herald/core/kernel/Ids"
import { RequestCounters } from "@herald/core/access/RequestCounters"

export interface Limits {
  readonly perMinute: number
  readonly perHour: number
}

/** The spec's API key rate: 60 per minute and 1,000 per hour, per key. */
export const defaults: Limits = { perMinute: 60, perHour: 1000 }

export class RateLimits extends Context.Tag("@herald/http/RateLimits")<RateLimits, Limits>() {}

export const layer = (limits: Limits = defaults): Layer.Layer<RateLimits> => Layer.succeed(RateLimits, limits)

const minuteMillis = 60_000
const hourMillis = 3_600_000
const purgeAfterMillis = 24 * hourMillis

/** The end of the fixed window of length `size` that contains `now`. */
export const windowEnd = (now: DateTime.Utc, size: number): DateTime.Utc => {
  const millis = DateTime.toEpochMillis(now)
  return DateTime.unsafeMake(Math.floor(millis / size) * size + size)
}

/** The 429 for a window: `details{limit, remaining, reset_at}`; the response adds the headers. */
export const exceeded = (limit: number, resetAt: DateTime.Utc, window: "minute" | "hour"): DomainError =>
  DomainError.of("rate_limit_exceeded", `Rate limit of ${limit} requests per ${window} exceeded for this API key`, {
    limit,
    remaining: 0,
    reset_at: DateTime.formatIso(resetAt)
  })

/**
 * Counts one request of the key at `now`. The minute window is checked first; a request refused by it
 * is not counted against the hour, so a client that waits out the minute keeps its hourly budget.
 */
export const consumeAt = (
  keyId: ApiKeyId,
  now: DateTime.Utc
): Effect.Effect<void, DomainError, RateLimits | RequestCounters> =>
  // Both services in one context read: this runs on every authenticated request.
  Effect.contextWithEffect((context: Context.Context<RateLimits | RequestCounters>) => {
    const limits = Context.get(context, RateLimits)
    const counters = Context.get(context, RequestCounters)
    const minuteEnd = windowEnd(now, minuteMillis)
    const hourEnd = windowEnd(now, hourMillis)
    // One step for both windows (one statement on Postgres): the hour counts the request only when
    // the minute's new total is within its limit.
    return Effect.flatMap(
      counters.incrementWithin(
        { key: `rate:key:${keyId}:minute`, windowEnd: minuteEnd },
        limits.perMinute,
        { key: `rate:key:${keyId}:hour`, windowEnd: hourEnd },
        1
      ),
      (totals) => {
        // A key's first request of a minute also clears windows that ended over a day ago (the port
        // allows purging ended windows), so the counter table does not grow without end.
        const purge = totals.firstTotal === 1
          ? Effect.forkDaemon(
            counters.purge(DateTime.unsafeMake(DateTime.toEpochMillis(now) - purgeAfterMillis)).pipe(Effect.ignore)
          )
          : Effect.void
        return Effect.zipRight(
          purge,
          totals.firstTotal > limits.perMinute || totals.thenTotal === undefined
            ? Effect.fail(exceeded(limits.perMinute, minuteEnd, "minute"))
            : totals.thenTotal > limits.perHour
            ? Effect.fail(exceeded(limits.perHour, hourEnd, "hour"))
            : Effect.void
        )
      }
    )
  }).pipe(Effect.catchTag("PersistenceError", Effect.die))

/** Counts one request of the key now (`consumeAt`). */
export const consume = (keyId: ApiKeyId): Effect.Effect<void, DomainError, RateLimits | RequestCounters> =>
  Effect.flatMap(DateTime.now, (now) => consumeAt(keyId, now))

/**
 * Charges `amount` more requests to the key's current windows, without refusing anything: the work
 * is done (bulk create charges once per created post after creating them); a key over its budget
 * gets 429 on its next request.
 */
export const charge = (keyId: ApiKeyId, amount: number): Effect.Effect<void, never, RequestCounters> =>
  amount <= 0 ? Effect.void : Effect.gen(function*() {
    const counters = yield* RequestCounters
    const now = yield* DateTime.now
    // The same step as `consume`, with no minute limit: the hour is charged all of it.
    yield* counters.incrementWithin(
      { key: `rate:key:${keyId}:minute`, windowEnd: windowEnd(now, minuteMillis) },
      Number.MAX_SAFE_INTEGER,
      { key: `rate:key:${keyId}:hour`, windowEnd: windowEnd(now, hourMillis) },
      amount
    )
  }).pipe(Effect.catchTag("PersistenceError", Effect.die))
