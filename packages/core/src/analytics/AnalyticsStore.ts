/**
 * The aggregate reads behind GET /analytics/summary: counts computed by the store (grouped SQL), never
 * by loading posts.
 */
import * as Context from "effect/Context"
import type * as DateTime from "effect/DateTime"
import type * as Effect from "effect/Effect"
import type { DestinationStatus } from "../domain/Destination.js"
import type { PersistenceError } from "../kernel/Errors.js"
import type { AccountId, OrganizationId } from "../kernel/Ids.js"
import type { Platform } from "../domain/Platform.js"
import type { PostStatus } from "../domain/Post.js"

/** Posts of the organization created in `[from, to)` (an absent bound is open). */
export interface AnalyticsQuery {
  readonly organizationId: OrganizationId
  /** A key restricted to some accounts sees only posts whose every target is among them. */
  readonly visibleAccountIds?: ReadonlyArray<AccountId>
  readonly from?: DateTime.Utc
  readonly to?: DateTime.Utc
}

export const metricNames = ["views", "likes", "comments", "shares", "impressions", "saves", "clicks"] as const
export type MetricName = typeof metricNames[number]
export type MetricTotals = Readonly<Record<MetricName, number>>

/** The destinations of one platform in one status, with the sums of their synced metrics. */
export interface DestinationGroup {
  readonly platform: Platform
  readonly status: DestinationStatus
  readonly count: number
  readonly metrics: MetricTotals
}

export interface AnalyticsCounts {
  /** Posts by derived status (the rule of `PostLifecycle.derivePostStatus`); absent statuses count 0. */
  readonly posts: ReadonlyArray<{ readonly status: PostStatus; readonly count: number }>
  readonly destinations: ReadonlyArray<DestinationGroup>
}

export class AnalyticsStore extends Context.Tag("@herald/core/analytics/AnalyticsStore")<AnalyticsStore, {
  readonly summarize: (query: AnalyticsQuery) => Effect.Effect<AnalyticsCounts, PersistenceError>
}>() {}
