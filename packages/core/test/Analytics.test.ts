import { describe, expect, it } from "@effect/vitest"
import { AiCreditLedger } from "@herald/core/ai/AiCredits"
import * as Analytics from "@herald/core/analytics/Analytics"
import { AnalyticsStore } from "@herald/core/analytics/AnalyticsStore"
import type { AnalyticsQuery } from "@herald/core/analytics/AnalyticsStore"
import { OrganizationId } from "@herald/core/kernel/Ids"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"

const at = (iso: string) => DateTime.unsafeMake(iso)
const bounds = (
  period: Analytics.Period
) => [
  Option.getOrNull(Option.map(period.from, DateTime.formatIso)),
  Option.getOrNull(Option.map(period.to, DateTime.formatIso))
]
const resolve = (params: Analytics.PeriodParams, now: string) => Analytics.resolvePeriod(params, at(now))
const right = (result: Either.Either<Analytics.Period, unknown>) => {
  if (Either.isLeft(result)) throw new Error("expected a period")
  return result.right
}
const code = (result: Either.Either<Analytics.Period, { readonly code: string }>) =>
  Either.isLeft(result) ? result.left.code : "ok"

describe("resolvePeriod", () => {
  it("today, week (ISO, from Monday) and month are UTC calendar periods; month is the default", () => {
    // 2026-03-01 is a Sunday.
    const now = "2026-03-01T23:59:59.999Z"
    expect(bounds(right(resolve({ period: "today" }, now)))).toEqual([
      "2026-03-01T00:00:00.000Z",
      "2026-03-02T00:00:00.000Z"
    ])
    expect(bounds(right(resolve({ period: "week" }, now)))).toEqual([
      "2026-02-23T00:00:00.000Z",
      "2026-03-02T00:00:00.000Z"
    ])
    expect(bounds(right(resolve({ period: "week" }, "2026-03-02T00:00:00Z")))).toEqual([
      "2026-03-02T00:00:00.000Z",
      "2026-03-09T00:00:00.000Z"
    ])
    expect(bounds(right(resolve({}, "2026-12-31T12:00:00Z")))).toEqual([
      "2026-12-01T00:00:00.000Z",
      "2027-01-01T00:00:00.000Z"
    ])
    expect(right(resolve({}, now)).name).toBe("month")
    expect(bounds(right(resolve({ period: "all", from: "x" }, now)))).toEqual([null, null])
  })

  it("custom: from and to, ordered, ISO 8601 (UTC without an offset)", () => {
    const now = "2026-03-01T00:00:00Z"
    expect(
      bounds(right(resolve({ period: "custom", from: "2026-01-01T01:00:00+01:00", to: "2026-01-02T00:00:00" }, now)))
    )
      .toEqual(["2026-01-01T00:00:00.000Z", "2026-01-02T00:00:00.000Z"])
    expect(code(resolve({ period: "custom", from: "2026-01-01T00:00:00Z" }, now))).toBe("invalid_range")
    expect(code(resolve({ period: "custom", to: "2026-01-01T00:00:00Z" }, now))).toBe("invalid_range")
    expect(code(resolve({ period: "custom", from: "2026-01-02T00:00:00Z", to: "2026-01-02T00:00:00Z" }, now)))
      .toBe("invalid_range")
    expect(code(resolve({ period: "custom", from: "soon", to: "2026-01-02T00:00:00Z" }, now))).toBe("invalid_range")
    expect(code(resolve({ period: "weekly" }, now))).toBe("invalid_period")
    expect(code(resolve({ period: "" }, now))).toBe("invalid_period")
  })
})

describe("summary", () => {
  it.effect("asks the AI credit ledger for the period's range (the plug-in point of AI credit accounting)", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(DateTime.toEpochMillis(at("2026-05-20T10:00:00Z")))
      const queries: Array<AnalyticsQuery> = []
      const ranges: Array<{ readonly from: DateTime.Utc; readonly to: DateTime.Utc }> = []
      const store = Layer.succeed(
        AnalyticsStore,
        AnalyticsStore.of({
          summarize: (q) => {
            queries.push(q)
            return Effect.succeed({
              posts: [{ status: "published", count: 2 }],
              destinations: [
                {
                  platform: "x",
                  status: "published",
                  count: 2,
                  metrics: { views: 5, likes: 1, comments: 0, shares: 0, impressions: 9, saves: 0, clicks: 3 }
                }
              ]
            })
          }
        })
      )
      const ledger = Layer.succeed(
        AiCreditLedger,
        AiCreditLedger.of({
          reserve: () => Effect.die("not used by analytics"),
          settle: () => Effect.die("not used by analytics"),
          usedBetween: (_, from, to) => {
            ranges.push({ from, to })
            return Effect.succeed(7)
          }
        })
      )
      const viewer = {
        organizationId: OrganizationId.make("7d0c7f4e-3b1f-4c51-9d7a-3f0e2b6a9c11"),
        visibleAccountIds: Option.none()
      }
      const result = yield* Analytics.summary(viewer, { period: "today" }).pipe(
        Effect.provide(Layer.merge(store, ledger))
      )
      expect(result.ai_credits_used).toBe(7)
      expect(ranges.map((r) => [DateTime.formatIso(r.from), DateTime.formatIso(r.to)])).toEqual([
        ["2026-05-20T00:00:00.000Z", "2026-05-21T00:00:00.000Z"]
      ])
      expect(queries[0]).toEqual({
        organizationId: "7d0c7f4e-3b1f-4c51-9d7a-3f0e2b6a9c11",
        from: at("2026-05-20T00:00:00Z"),
        to: at("2026-05-21T00:00:00Z")
      })
      expect(result.posts).toEqual({
        total: 2,
        by_status: { draft: 0, scheduled: 0, publishing: 0, published: 2, partially_failed: 0, failed: 0 }
      })
      expect(result.platforms.x).toMatchObject({ destinations: 2, by_status: { published: 2 }, views: 5, clicks: 3 })
      expect(result.totals).toMatchObject({ destinations: 2, impressions: 9 })

      const without = yield* Analytics.summary(viewer, { period: "all" }).pipe(Effect.provide(store))
      expect(without.ai_credits_used).toBe(0)
      expect(queries[1]).toEqual({ organizationId: "7d0c7f4e-3b1f-4c51-9d7a-3f0e2b6a9c11" })
    }))
})
