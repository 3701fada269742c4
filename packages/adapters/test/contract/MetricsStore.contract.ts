import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { type Destination, Metrics } from "@herald/core/domain/Destination"
import type { OrganizationId } from "@herald/core/kernel/Ids"
import { type DueQuery, MetricsStore } from "@herald/core/analytics/MetricsStore"
import { PostStore } from "@herald/core/posts/PostStore"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { accountValue, at, destination, givenOrganization, post, type StoresLayer, T0 } from "./Fixtures.js"

const hour = 3_600_000

/** Published destinations of `platform`, each on its own post, published at the given instants. */
const givenPublished = (
  organizationId: OrganizationId,
  publishedAt: ReadonlyArray<number>,
  platform: "x" | "telegram" = "x"
) =>
  Effect.gen(function*() {
    const posts = yield* PostStore
    const out: Array<Destination> = []
    for (const instant of publishedAt) {
      const p = post(organizationId)
      const d = destination({ post: p, account: accountValue(organizationId, 1, { platform }) }, {
        status: "published",
        platformPostId: Option.some(`pp-${instant}`),
        publishedAt: Option.some(at(instant))
      })
      yield* posts.insert({ post: p, destinations: [d] })
      out.push(d)
    }
    return out
  })

const reload = (d: Destination) =>
  Effect.gen(function*() {
    const found = yield* (yield* PostStore).findById(d.organizationId, d.postId)
    return Option.getOrThrow(found).destinations.find((x) => x.id === d.id)!
  })

const query = (now: number, overrides: Partial<DueQuery> = {}): DueQuery => ({
  platform: "x",
  now: at(now),
  limit: 10,
  steps: 5,
  firstAfter: "1 hour",
  leaseFor: "2 minutes",
  ...overrides
})

const claim = (now: number, overrides: Partial<DueQuery> = {}) =>
  Effect.flatMap(MetricsStore, (store) => store.claimDue(query(now, overrides)))

const some = new Metrics({ views: 10, likes: 2, comments: 1, shares: 0, impressions: 12, saves: 0, clicks: 3 })

export const metricsStoreContract = (layer: StoresLayer, concurrentLayer: StoresLayer) =>
  describe("MetricsStore", () => {
    it.effect("claims published destinations of the platform whose first fetch is due, earliest first; leased", () =>
      Effect.gen(function*() {
        const org = yield* givenOrganization
        const [older, newer, recent] = yield* givenPublished(org.id, [T0 - 2 * hour, T0 - hour, T0 - hour + 90_000])
        yield* givenPublished(org.id, [T0 - 5 * hour], "telegram")
        // A queued and a failed destination are never claimed.
        const p = post(org.id)
        yield* (yield* PostStore).insert({
          post: p,
          destinations: [
            destination({ post: p, account: accountValue(org.id, 1) }, { status: "failed" }),
            destination({ post: p, account: accountValue(org.id, 2) })
          ]
        })
        // Earliest first: with room for one, the older one.
        const [oldest] = yield* claim(T0, { limit: 1 })
        expect(oldest!.destination.id).toBe(older!.id)
        const [second] = yield* claim(T0)
        const first = [oldest!, second!]
        expect(first.map((c) => c.destination.id)).toEqual([older!.id, newer!.id])
        expect(first.map((c) => c.step)).toEqual([0, 0])
        expect(first[0]!.leaseToken).not.toBe(first[1]!.leaseToken)
        // Held: not due again within the lease; due again after it (the holder died).
        expect(yield* claim(T0 + 60_000)).toEqual([])
        const again = yield* claim(T0 + 121_000)
        expect(again.map((c) => c.destination.id).sort()).toEqual([older!.id, newer!.id, recent!.id].sort())
        expect(yield* claim(T0, { limit: 0 })).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.effect("complete: Fetched writes metrics and the step; fenced by the token; status untouched", () =>
      Effect.gen(function*() {
        const store = yield* MetricsStore
        const org = yield* givenOrganization
        const [d] = yield* givenPublished(org.id, [T0 - hour])
        const [c] = yield* claim(T0)
        const fetched = {
          _tag: "Fetched",
          metrics: some,
          fetchedAt: at(T0),
          step: 1,
          nextAt: Option.some(at(T0 + 5 * hour))
        } as const
        expect(yield* store.complete({ ...c!, leaseToken: "stolen" }, fetched)).toBe(false)
        expect(yield* store.complete(c!, fetched)).toBe(true)
        // A claim is used once.
        expect(yield* store.complete(c!, fetched)).toBe(false)
        const after = yield* reload(d!)
        expect(after.status).toBe("published")
        expect(after.metrics).toEqual(some)
        expect(after.metricsFetchedAt).toEqual(Option.some(at(T0)))
        // Not due before the next step; due at it, as step 1.
        expect(yield* claim(T0 + 5 * hour - 1)).toEqual([])
        const [next] = yield* claim(T0 + 5 * hour)
        expect(next!.step).toBe(1)
        expect(next!.destination.metrics).toEqual(some)
        // The last step: never claimed again.
        expect(yield* store.complete(next!, { _tag: "Skipped", step: 5, nextAt: Option.none() })).toBe(true)
        expect(yield* claim(T0 + 100 * hour)).toEqual([])
        const last = yield* reload(d!)
        expect(last.metrics).toEqual(some)
        expect(last.status).toBe("published")
      }).pipe(Effect.provide(layer)))

    it.effect("complete with platformPost: the destination's final id and URL are stored (Fetched and Skipped)", () =>
      Effect.gen(function*() {
        const store = yield* MetricsStore
        const org = yield* givenOrganization
        const [d] = yield* givenPublished(org.id, [T0 - hour])
        const [c] = yield* claim(T0)
        const platformPost = {
          platformPostId: "7441234567890123456",
          platformPostUrl: "https://www.tiktok.com/@a/video/7441234567890123456"
        }
        const fetched = {
          _tag: "Fetched",
          metrics: some,
          fetchedAt: at(T0),
          step: 1,
          nextAt: Option.some(at(T0 + 5 * hour))
        } as const
        expect(yield* store.complete(c!, { ...fetched, platformPost })).toBe(true)
        const after = yield* reload(d!)
        expect(after.platformPostId).toEqual(Option.some(platformPost.platformPostId))
        expect(after.platformPostUrl).toEqual(Option.some(platformPost.platformPostUrl))
        expect(after.metrics).toEqual(some)
        const [next] = yield* claim(T0 + 5 * hour)
        const moved = {
          platformPostId: "7441234567890123457",
          platformPostUrl: "https://www.tiktok.com/@a/video/7441234567890123457"
        }
        expect(yield* store.complete(next!, { _tag: "Skipped", step: 2, nextAt: Option.none(), platformPost: moved }))
          .toBe(true)
        expect((yield* reload(d!)).platformPostId).toEqual(Option.some(moved.platformPostId))
      }).pipe(Effect.provide(layer)))

    it.effect("Deferred keeps the step; deferPlatform pushes the platform's due destinations back", () =>
      Effect.gen(function*() {
        const store = yield* MetricsStore
        const org = yield* givenOrganization
        const [a, b, c, later] = yield* givenPublished(org.id, [T0 - 3 * hour, T0 - 2 * hour, T0 - hour, T0 + 5 * hour])
        const [tg] = yield* givenPublished(org.id, [T0 - hour], "telegram")
        const [held] = yield* claim(T0, { limit: 1 })
        expect(held!.destination.id).toBe(a!.id)
        expect(yield* store.complete(held!, { _tag: "Deferred", nextAt: at(T0 + 600_000) })).toBe(true)
        const moved = yield* store.deferPlatform({
          platform: "x",
          until: at(T0 + 600_000),
          steps: 5,
          firstAfter: "1 hour"
        })
        expect(moved).toBe(2)
        expect(yield* claim(T0 + 599_999)).toEqual([])
        const due = yield* claim(T0 + 600_000)
        expect(due.map((x) => x.destination.id).sort()).toEqual([a!.id, b!.id, c!.id].sort())
        expect(due.map((x) => x.step)).toEqual([0, 0, 0])
        expect(due.map((x) => x.destination.id)).not.toContain(later!.id)
        // Another platform is not pushed back.
        expect((yield* claim(T0, { platform: "telegram" })).map((x) => x.destination.id)).toEqual([tg!.id])
      }).pipe(Effect.provide(layer)))

    it.live("4 concurrent claimers take each of 400 due destinations exactly once", () =>
      Effect.gen(function*() {
        const posts = yield* PostStore
        const store = yield* MetricsStore
        const org = yield* givenOrganization
        const account = accountValue(org.id, 1)
        for (let i = 0; i < 4; i++) {
          const p = post(org.id)
          yield* posts.insert({
            post: p,
            destinations: Array.from({ length: 100 }, (_, j) =>
              destination({ post: p, account }, {
                status: "published",
                platformPostId: Option.some(`pp-${i}-${j}`),
                publishedAt: Option.some(at(T0 - hour - ((i * 100 + j) % 37)))
              }))
          })
        }
        const claimer = Effect.gen(function*() {
          const mine: Array<string> = []
          while (true) {
            const batch = yield* store.claimDue(query(T0, { limit: 20 }))
            if (batch.length === 0) return mine
            for (const c of batch) mine.push(c.destination.id)
          }
        })
        const perWorker = yield* Effect.all([claimer, claimer, claimer, claimer], { concurrency: "unbounded" })
        const claimed = perWorker.flat()
        expect(claimed.length).toBe(400)
        expect(new Set(claimed).size).toBe(400)
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<
          { n: number | string }
        >`SELECT COUNT(*) AS n FROM destinations WHERE metrics_lease IS NOT NULL`
        expect(Number(rows[0]!.n)).toBe(400)
      }).pipe(Effect.provide(concurrentLayer)), 60_000)
  })
