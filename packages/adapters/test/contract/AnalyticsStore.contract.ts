import { describe, expect, it } from "@effect/vitest"
import { AnalyticsStore } from "@herald/core/analytics/AnalyticsStore"
import type { AnalyticsCounts, DestinationGroup } from "@herald/core/analytics/AnalyticsStore"
import { type DestinationStatus, Metrics } from "@herald/core/domain/Destination"
import type { OrganizationId } from "@herald/core/kernel/Ids"
import type { Platform } from "@herald/core/domain/Platform"
import type { PostStatus } from "@herald/core/domain/Post"
import { derivePostStatus } from "@herald/core/posts/PostLifecycle"
import { PostStore } from "@herald/core/posts/PostStore"
import * as Effect from "effect/Effect"
import { accountValue, at, destination, givenOrganization, post, type StoresLayer, T0 } from "./Fixtures.js"

const statuses: ReadonlyArray<DestinationStatus> = ["queued", "publishing", "published", "failed"]

/** Every multiset of up to `size` destination statuses. */
const mixes = (size: number): Array<Array<DestinationStatus>> => {
  const out: Array<Array<DestinationStatus>> = [[]]
  const grow = (prefix: Array<DestinationStatus>, from: number) => {
    if (prefix.length === size) return
    for (let i = from; i < statuses.length; i++) {
      const next = [...prefix, statuses[i]!]
      out.push(next)
      grow(next, i)
    }
  }
  grow([], 0)
  return out
}

const platformsOf: ReadonlyArray<Platform> = ["x", "bluesky", "linkedin"]

const byStatus = (counts: AnalyticsCounts): Partial<Record<PostStatus, number>> =>
  Object.fromEntries(counts.posts.map((r) => [r.status, r.count]))

const group = (counts: AnalyticsCounts, platform: Platform, status: DestinationStatus): DestinationGroup | undefined =>
  counts.destinations.find((g) => g.platform === platform && g.status === status)

/** Inserts a post created at `createdAt` with one destination per status (platforms in turn). */
const insertPost = (
  organizationId: OrganizationId,
  states: ReadonlyArray<DestinationStatus>,
  options: {
    readonly createdAt?: number
    readonly isDraft?: boolean
    readonly firstAccount?: number
    readonly metrics?: Metrics
  } = {}
) =>
  Effect.gen(function*() {
    const accounts = states.map((_, i) =>
      accountValue(organizationId, (options.firstAccount ?? 1) + i, { platform: platformsOf[i % platformsOf.length]! })
    )
    const p = post(organizationId, {
      isDraft: options.isDraft ?? false,
      createdStatus: options.isDraft === true ? "draft" : "scheduled",
      accountIds: accounts.map((a) => a.id),
      createdAt: at(options.createdAt ?? T0),
      updatedAt: at(options.createdAt ?? T0)
    })
    const destinations = states.map((status, i) =>
      destination({ post: p, account: accounts[i]! }, { status, metrics: options.metrics ?? Metrics.zero })
    )
    yield* (yield* PostStore).insert({ post: p, destinations })
    return p
  })

export const analyticsStoreContract = (layer: StoresLayer) =>
  describe("AnalyticsStore", () => {
    it.effect("counts posts by the derived status of every mix of destination statuses, as the post list does", () =>
      Effect.gen(function*() {
        const org = yield* givenOrganization
        const expected: Partial<Record<PostStatus, number>> = {}
        const add = (status: PostStatus) => (expected[status] = (expected[status] ?? 0) + 1)
        for (const mix of mixes(3)) {
          yield* insertPost(org.id, mix)
          // Fixture posts carry no scheduled_for: immediate publishes, as the status rule reads them.
          add(derivePostStatus({ isDraft: false, destinations: mix, immediate: true }))
        }
        yield* insertPost(org.id, [], { isDraft: true })
        add("draft")
        const counts = yield* (yield* AnalyticsStore).summarize({ organizationId: org.id })
        expect(byStatus(counts)).toEqual(expected)
        // The post list's status filter agrees, status by status.
        for (const [status, n] of Object.entries(expected)) {
          const page = yield* (yield* PostStore).list({
            organizationId: org.id,
            statuses: [status as PostStatus],
            sort: "created_at",
            order: "asc",
            limit: 1,
            offset: 0
          })
          expect(page.total, status).toBe(n)
        }
      }).pipe(Effect.provide(layer)))

    it.effect("groups destinations by platform and status with the sums of their metrics; other organizations apart", () =>
      Effect.gen(function*() {
        const org = yield* givenOrganization
        const other = yield* givenOrganization
        const m = (views: number, clicks: number) =>
          new Metrics({ ...Metrics.zero, views, likes: 2, comments: 3, shares: 4, impressions: 5, saves: 6, clicks })
        yield* insertPost(org.id, ["published", "published", "failed"], { metrics: m(10, 1) })
        yield* insertPost(org.id, ["published"], { metrics: m(1000, 7) })
        yield* insertPost(other.id, ["published"], { metrics: m(99999, 99) })
        const counts = yield* (yield* AnalyticsStore).summarize({ organizationId: org.id })
        expect(counts.destinations).toHaveLength(3)
        expect(group(counts, "x", "published")).toEqual({
          platform: "x",
          status: "published",
          count: 2,
          metrics: { views: 1010, likes: 4, comments: 6, shares: 8, impressions: 10, saves: 12, clicks: 8 }
        })
        expect(group(counts, "bluesky", "published")?.count).toBe(1)
        expect(group(counts, "linkedin", "failed")).toMatchObject({ count: 1, metrics: { views: 10, clicks: 1 } })
        expect(byStatus(counts)).toEqual({ published: 1, partially_failed: 1 })
      }).pipe(Effect.provide(layer)))

    it.effect("takes the posts created in [from, to), and only those a restricted viewer sees", () =>
      Effect.gen(function*() {
        const org = yield* givenOrganization
        const store = yield* AnalyticsStore
        yield* insertPost(org.id, ["published"], { createdAt: T0 - 1, firstAccount: 1 })
        yield* insertPost(org.id, ["published"], { createdAt: T0, firstAccount: 1 })
        yield* insertPost(org.id, ["failed"], { createdAt: T0 + 999, firstAccount: 2 })
        yield* insertPost(org.id, ["queued"], { createdAt: T0 + 1000, firstAccount: 2 })
        const range = yield* store.summarize({ organizationId: org.id, from: at(T0), to: at(T0 + 1000) })
        expect(byStatus(range)).toEqual({ published: 1, failed: 1 })
        expect(range.destinations.map((g) => [g.status, g.count]).sort()).toEqual([["failed", 1], ["published", 1]])
        const open = yield* store.summarize({ organizationId: org.id, from: at(T0) })
        expect(byStatus(open)).toEqual({ published: 1, failed: 1, publishing: 1 })
        const restricted = yield* store.summarize({
          organizationId: org.id,
          visibleAccountIds: [accountValue(org.id, 2).id]
        })
        expect(byStatus(restricted)).toEqual({ failed: 1, publishing: 1 })
        const none = yield* store.summarize({ organizationId: org.id, visibleAccountIds: [] })
        expect(none).toEqual({ posts: [], destinations: [] })
      }).pipe(Effect.provide(layer)))
  })
