/**
 * GET /analytics/summary: the period a request names (UTC calendar periods, or a custom range) and
 * the summary over it: posts by derived status, destinations and synced metrics per platform, metric
 * totals, and AI credits charged. Posts belong to a period by their creation time; the counts come
 * from `AnalyticsStore` aggregates, the credits from `AiCreditLedger` (0 without one).
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { AiCreditLedger } from "../ai/AiCredits.js"
import type { AnalyticsQuery, MetricTotals } from "./AnalyticsStore.js"
import { AnalyticsStore, metricNames } from "./AnalyticsStore.js"
import type { DestinationStatus } from "../domain/Destination.js"
import { DomainError } from "../kernel/Errors.js"
import type { PersistenceError } from "../kernel/Errors.js"
import type { AccountId, OrganizationId } from "../kernel/Ids.js"
import type { Platform } from "../domain/Platform.js"
import type { PostStatus } from "../domain/Post.js"
import { parseInstant } from "../posts/Posts.js"

export const periodNames = ["today", "week", "month", "all", "custom"] as const
export type PeriodName = typeof periodNames[number]

export const defaultPeriod: PeriodName = "month"

/** A half-open range `[from, to)`; `all` has neither bound. */
export interface Period {
  readonly name: PeriodName
  readonly from: Option.Option<DateTime.Utc>
  readonly to: Option.Option<DateTime.Utc>
}

export interface PeriodParams {
  readonly period?: string | undefined
  readonly from?: string | undefined
  readonly to?: string | undefined
}

const dayMillis = 86_400_000

const isPeriodName = (value: string): value is PeriodName => (periodNames as ReadonlyArray<string>).includes(value)

const bounded = (name: PeriodName, from: number, to: number): Period => ({
  name,
  from: Option.some(DateTime.unsafeMake(from)),
  to: Option.some(DateTime.unsafeMake(to))
})

/**
 * The period of a request, in UTC: `today` is the current day, `week` the current ISO week (from
 * Monday 00:00), `month` the current calendar month (the AI-credit month of /me), `all` everything,
 * `custom` the given `[from, to)` (ISO 8601; without an offset read as UTC). Absent `period` is
 * `month`. `from`/`to` are read only for `custom`.
 */
export const resolvePeriod = (params: PeriodParams, now: DateTime.Utc): Either.Either<Period, DomainError> => {
  const name = params.period ?? defaultPeriod
  if (!isPeriodName(name)) {
    return Either.left(DomainError.of(
      "invalid_period",
      `period must be one of ${periodNames.join(", ")} (got '${name}')`,
      { period: name, valid_periods: periodNames }
    ))
  }
  const date = DateTime.toDateUtc(now)
  const today = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate())
  switch (name) {
    case "today":
      return Either.right(bounded(name, today, today + dayMillis))
    case "week": {
      const monday = today - ((date.getUTCDay() + 6) % 7) * dayMillis
      return Either.right(bounded(name, monday, monday + 7 * dayMillis))
    }
    case "month":
      return Either.right(bounded(
        name,
        Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1),
        Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1)
      ))
    case "all":
      return Either.right({ name, from: Option.none(), to: Option.none() })
    case "custom": {
      const invalid = (message: string) =>
        Either.left(DomainError.of("invalid_range", message, { from: params.from ?? null, to: params.to ?? null }))
      if (params.from === undefined || params.to === undefined) {
        return invalid("period=custom requires from and to (ISO 8601 timestamps, e.g. 2026-07-01T00:00:00Z)")
      }
      const from = parseInstant(params.from)
      const to = parseInstant(params.to)
      if (Option.isNone(from)) return invalid(`from is not an ISO 8601 timestamp: '${params.from}'`)
      if (Option.isNone(to)) return invalid(`to is not an ISO 8601 timestamp: '${params.to}'`)
      if (!DateTime.lessThan(from.value, to.value)) return invalid("from must be before to")
      return Either.right({ name, from, to })
    }
  }
}

export type StatusCounts<S extends string> = Readonly<Record<S, number>>

export interface PlatformSummary extends MetricTotals {
  readonly destinations: number
  readonly by_status: StatusCounts<DestinationStatus>
}

/** The response `data` of GET /analytics/summary. */
export interface Summary {
  readonly period: PeriodName
  readonly from: string | null
  readonly to: string | null
  readonly posts: { readonly total: number; readonly by_status: StatusCounts<PostStatus> }
  readonly platforms: Readonly<Partial<Record<Platform, PlatformSummary>>>
  readonly totals: MetricTotals & { readonly destinations: number }
  readonly ai_credits_used: number
}

const zeroMetrics = (): Record<keyof MetricTotals, number> =>
  Object.fromEntries(metricNames.map((m) => [m, 0])) as Record<keyof MetricTotals, number>

const iso = (t: Option.Option<DateTime.Utc>): string | null => Option.getOrNull(Option.map(t, DateTime.formatIso))

export interface Viewer {
  readonly organizationId: OrganizationId
  /** None for a key that sees every account. */
  readonly visibleAccountIds: Option.Option<ReadonlyArray<AccountId>>
}

/** The bounds an open period stands for when the credit ledger is asked (it takes closed ranges). */
const openStart = DateTime.unsafeMake(0)
const openEnd = DateTime.unsafeMake(Date.UTC(9999, 0, 1))

export const summary = (
  viewer: Viewer,
  params: PeriodParams
): Effect.Effect<Summary, DomainError | PersistenceError, AnalyticsStore> =>
  Effect.gen(function*() {
    const period = yield* resolvePeriod(params, yield* DateTime.now)
    const query: AnalyticsQuery = {
      organizationId: viewer.organizationId,
      ...(Option.isSome(viewer.visibleAccountIds) ? { visibleAccountIds: viewer.visibleAccountIds.value } : {}),
      ...(Option.isSome(period.from) ? { from: period.from.value } : {}),
      ...(Option.isSome(period.to) ? { to: period.to.value } : {})
    }
    const counts = yield* (yield* AnalyticsStore).summarize(query)
    const ledger = yield* Effect.serviceOption(AiCreditLedger)
    const credits = Option.isSome(ledger)
      ? yield* ledger.value.usedBetween(
        viewer.organizationId,
        Option.getOrElse(period.from, () => openStart),
        Option.getOrElse(period.to, () => openEnd)
      )
      : 0

    const byStatus: Record<PostStatus, number> = {
      draft: 0,
      scheduled: 0,
      publishing: 0,
      published: 0,
      partially_failed: 0,
      failed: 0
    }
    for (const row of counts.posts) byStatus[row.status] += row.count

    const platforms: Partial<
      Record<
        Platform,
        { destinations: number; by_status: Record<DestinationStatus, number> } & Record<keyof MetricTotals, number>
      >
    > = {}
    const totals = { destinations: 0, ...zeroMetrics() }
    for (const group of counts.destinations) {
      const entry = platforms[group.platform] ??= {
        destinations: 0,
        by_status: { queued: 0, publishing: 0, published: 0, failed: 0 },
        ...zeroMetrics()
      }
      entry.destinations += group.count
      entry.by_status[group.status] += group.count
      totals.destinations += group.count
      for (const m of metricNames) {
        entry[m] += group.metrics[m]
        totals[m] += group.metrics[m]
      }
    }
    return {
      period: period.name,
      from: iso(period.from),
      to: iso(period.to),
      posts: { total: Object.values(byStatus).reduce((a, b) => a + b, 0), by_status: byStatus },
      platforms,
      totals,
      ai_credits_used: credits
    }
  })
