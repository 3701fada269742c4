/**
 * Posting allowances (spec, Limits): immediate publishes 20 per minute, 200 per hour and 1,000 per
 * day; scheduled posts 100 per minute and 1,000 per hour, with no daily cap. Counted per user: the
 * user who created the calling API key (every key of one user shares them). A key with no recorded
 * user counts against its organization: a key acts as an organization credential (spec,
 * Authentication), and `herald keys create` records the organization's owner as the creator.
 *
 * "Scheduled posts bypass the per-minute posting limit" is read as: a scheduled post counts only
 * against the scheduled allowance, never against the immediate one.
 *
 * Windows are fixed and aligned to the UTC minute, hour and day, and live in `UsageCounters`, so
 * every process on one database shares them. `consume` is meant to run inside the transaction that
 * creates the post: a refused (or rolled back) post does not use up the allowance.
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { ApiKey } from "./ApiKey.js"
import { DomainError, type PersistenceError } from "../kernel/Errors.js"
import { UsageCounters } from "./UsageCounters.js"

export type PublishMode = "immediate" | "scheduled"

export type Period = "minute" | "hour" | "day"

export const periodMillis: Record<Period, number> = {
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000
}

/** Allowances per mode and period; `undefined` means no cap. */
export type Allowances = Record<PublishMode, Readonly<Partial<Record<Period, number>>>>

export const defaults: Allowances = {
  immediate: { minute: 20, hour: 200, day: 1000 },
  scheduled: { minute: 100, hour: 1000 }
}

/** Optional: an operator's own allowances (otherwise the spec's `defaults`). */
export class PostingAllowances extends Context.Tag("@herald/core/PostingLimits/PostingAllowances")<
  PostingAllowances,
  Allowances
>() {}

/** Whose allowance a request uses: the key's creating user, else its organization. */
export const subjectOf = (key: ApiKey): string =>
  Option.match(key.createdBy, { onNone: () => `org:${key.organizationId}`, onSome: (user) => `user:${user}` })

export const counterKey = (subject: string, mode: PublishMode, period: Period): string =>
  `posting:${mode}:${subject}:${period}`

/** The end of the fixed window of `period` that contains `now`. */
export const windowEnd = (now: DateTime.Utc, period: Period): DateTime.Utc => {
  const size = periodMillis[period]
  return DateTime.unsafeMake(Math.floor(DateTime.toEpochMillis(now) / size) * size + size)
}

/** The periods checked for a mode, shortest first. */
export const periodsOf = (allowances: Allowances, mode: PublishMode): ReadonlyArray<readonly [Period, number]> =>
  (["minute", "hour", "day"] as const).flatMap((period) => {
    const limit = allowances[mode][period]
    return limit === undefined ? [] : [[period, limit] as const]
  })

/**
 * The 429 for an exhausted window: `daily_limit_reached` for the day, `post_limit_reached` otherwise,
 * with `details{limit, remaining: 0, reset_at, publish_mode, period}`.
 */
export const exceeded = (mode: PublishMode, period: Period, limit: number, resetAt: DateTime.Utc): DomainError =>
  DomainError.of(
    period === "day" ? "daily_limit_reached" : "post_limit_reached",
    `The ${mode === "immediate" ? "immediate publish" : "scheduled post"} allowance of ${limit} per ${period} ` +
      `is used up; try again after ${DateTime.formatIso(resetAt)}`,
    { limit, remaining: 0, reset_at: DateTime.formatIso(resetAt), publish_mode: mode, period }
  )

/**
 * Counts one post of `mode` for `subject` in every window of the mode, shortest first, and fails
 * with the first window that is over its allowance. Windows counted before the refusal keep their
 * count unless the caller's transaction rolls back (which is how `Posts` uses it).
 */
export const consume = (
  subject: string,
  mode: PublishMode
): Effect.Effect<void, DomainError | PersistenceError, UsageCounters> =>
  Effect.gen(function*() {
    const counters = yield* UsageCounters
    const allowances = Option.getOrElse(yield* Effect.serviceOption(PostingAllowances), () => defaults)
    const now = yield* DateTime.now
    for (const [period, limit] of periodsOf(allowances, mode)) {
      const end = windowEnd(now, period)
      const used = yield* counters.increment(counterKey(subject, mode, period), end, 1)
      if (used > limit) return yield* Effect.fail(exceeded(mode, period, limit, end))
    }
  })
