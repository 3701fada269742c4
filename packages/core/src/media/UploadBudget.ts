/**
 * The upload budget (spec, Limits): 60 uploads per hour and 300 per day per organization, or the
 * operator's own; checked before any work, counted when an upload is finalized or imported.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { DomainError } from "../kernel/Errors.js"
import { OrganizationId } from "../kernel/Ids.js"
import * as PostingLimits from "../access/PostingLimits.js"
import { UsageCounters } from "../access/UsageCounters.js"
import { Budget, defaultBudget, MediaBudget } from "./MediaPorts.js"

type BudgetPeriod = "hour" | "day"

export const budgetKey = (organizationId: OrganizationId, period: BudgetPeriod): string =>
  `media_uploads:${organizationId}:${period}`

/**
 * The 429 of an exhausted upload budget: `rate_limit_exceeded` for the hour (the spec's code for a
 * per-hour limit), `daily_limit_reached` for the day; `details{limit, remaining: 0, reset_at, period,
 * budget: "media_uploads"}`. The HTTP layer adds `Retry-After`.
 */
export const budgetExceeded = (period: BudgetPeriod, limit: number, resetAt: DateTime.Utc): DomainError =>
  DomainError.of(
    period === "day" ? "daily_limit_reached" : "rate_limit_exceeded",
    `The organization's media upload budget of ${limit} per ${period} is used up; try again after ` +
      DateTime.formatIso(resetAt),
    { limit, remaining: 0, reset_at: DateTime.formatIso(resetAt), period, budget: "media_uploads" }
  )

const budgetOf = Effect.map(Effect.serviceOption(MediaBudget), Option.getOrElse(() => defaultBudget))

const periods = (
  budget: Budget
): ReadonlyArray<readonly [BudgetPeriod, number]> => [["hour", budget.hour], ["day", budget.day]]

/** Refuses early (before any work) when a window is already full; counts nothing. */
export const checkBudget = (organizationId: OrganizationId) =>
  Effect.gen(function*() {
    const counters = yield* UsageCounters
    const budget = yield* budgetOf
    const now = yield* DateTime.now
    for (const [period, limit] of periods(budget)) {
      const end = PostingLimits.windowEnd(now, period)
      const used = yield* counters.get(budgetKey(organizationId, period), end)
      if (used >= limit) return yield* Effect.fail(budgetExceeded(period, limit, end))
    }
  })

/** Counts one upload in both windows; meant to run inside the transaction that finalizes it. */
export const consumeBudget = (organizationId: OrganizationId) =>
  Effect.gen(function*() {
    const counters = yield* UsageCounters
    const budget = yield* budgetOf
    const now = yield* DateTime.now
    for (const [period, limit] of periods(budget)) {
      const end = PostingLimits.windowEnd(now, period)
      const used = yield* counters.increment(budgetKey(organizationId, period), end, 1)
      if (used > limit) return yield* Effect.fail(budgetExceeded(period, limit, end))
    }
  })
