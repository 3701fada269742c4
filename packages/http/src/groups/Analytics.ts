/**
 * GET /analytics/summary (scope read): posts by derived status, destinations and synced metrics per
 * platform, metric totals and AI credits charged, over a period (core `Analytics`).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Analytics from "@herald/core/analytics/Analytics"
import { Platform } from "@herald/core/domain/Platform"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as ApiGroup from "../ApiGroup.js"
import * as Auth from "../Auth.js"
import * as Envelope from "../Envelope.js"

const QueryValue = Schema.optional(Schema.Union(Schema.String, Schema.Array(Schema.String)))

/** Read by `Analytics.resolvePeriod` (invalid_period, invalid_range); documented here. */
export const SummaryParams = Schema.Struct({
  period: QueryValue.annotations({
    description: "today (UTC day), week (ISO week from Monday 00:00 UTC), month (calendar month, UTC; the default), " +
      "all, or custom"
  }),
  from: QueryValue.annotations({ description: "custom only: ISO 8601 start, inclusive (no offset: UTC)" }),
  to: QueryValue.annotations({ description: "custom only: ISO 8601 end, exclusive; after from" })
})

const Count = Schema.NonNegativeInt

const metricFields = {
  views: Count,
  likes: Count,
  comments: Count,
  shares: Count,
  impressions: Count,
  saves: Count,
  clicks: Count
}

const PlatformSummary = Schema.Struct({
  destinations: Count,
  by_status: Schema.Struct({ queued: Count, publishing: Count, published: Count, failed: Count }),
  ...metricFields
})

export const Summary = Schema.Struct({
  period: Schema.Literal(...Analytics.periodNames),
  from: Schema.NullOr(Schema.String).annotations({ description: "Start of the period, inclusive; null for all" }),
  to: Schema.NullOr(Schema.String).annotations({ description: "End of the period, exclusive; null for all" }),
  posts: Schema.Struct({
    total: Count,
    by_status: Schema.Struct({
      draft: Count,
      scheduled: Count,
      publishing: Count,
      published: Count,
      partially_failed: Count,
      failed: Count
    })
  }).annotations({ description: "Posts created in the period that the key can see, by derived status" }),
  platforms: Schema.partial(Schema.Record({ key: Platform, value: PlatformSummary })).annotations({
    description: "The destinations of those posts per platform (platforms without any are absent)"
  }),
  totals: Schema.Struct({ destinations: Count, ...metricFields }).annotations({
    description: "Sums of the destinations' synced metrics"
  }),
  ai_credits_used: Count.annotations({ description: "AI credits charged to the organization in the period" })
}).annotations({ identifier: "AnalyticsSummary" })

export const AnalyticsGroup = HttpApiGroup.make("analytics")
  .add(
    HttpApiEndpoint.get("summary", "/analytics/summary")
      .setUrlParams(SummaryParams)
      .addSuccess(Envelope.ok(Summary))
      .annotate(
        OpenApi.Summary,
        "Posts by status, a per-platform breakdown, metric totals and AI credits used over a period (scope read). " +
          "400 invalid_period, invalid_range"
      )
  )
  .pipe(ApiGroup.authenticated)

const first = (value: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof value === "string" ? value : value?.[0]

export const AnalyticsLive = HttpApiBuilder.group(
  ApiGroup.apiOf(AnalyticsGroup),
  "analytics",
  (handlers) =>
    handlers.handle("summary", ({ urlParams }) =>
      Effect.gen(function*() {
        const { key } = yield* Auth.requireScope("read")
        return yield* Analytics.summary(
          { organizationId: key.organizationId, visibleAccountIds: key.accountIds },
          { period: first(urlParams.period), from: first(urlParams.from), to: first(urlParams.to) }
        )
      }).pipe(Effect.catchTag("PersistenceError", Effect.die)))
)
