/**
 * The maintained columns and aggregates against the rows they summarize, after random sequences of
 * writes through the store's own operations: each post's `status` is the status rule over its
 * destinations, the day and month rollups equal the counts and metric sums grouped from the rows,
 * and the reads that answer from them (analytics for aligned and unaligned ranges, the post list's
 * total, `/me`'s per-status counts) give what the rows give. Housekeeping's folding of the change rows
 * a store appends beside its rollups (Postgres) empties them in small batches and changes no total.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { AnalyticsStore, metricNames } from "@herald/core/analytics/AnalyticsStore"
import { Destination, type DestinationStatus, Metrics } from "@herald/core/domain/Destination"
import type { OrganizationId } from "@herald/core/kernel/Ids"
import type { Platform } from "@herald/core/domain/Platform"
import { Post, PostStatus } from "@herald/core/domain/Post"
import { derivePostStatus } from "@herald/core/posts/PostLifecycle"
import { PostStore } from "@herald/core/posts/PostStore"
import * as Housekeeping from "@herald/core/publishing/Housekeeping"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import fc from "fast-check"
import * as RollupSql from "../../src/sql/internal/AnalyticsRollupSql.js"
import { accountValue, at, destination, givenOrganization, post, type StoresLayer } from "./Fixtures.js"

const dayMillis = 86_400_000
/** 2024-01-30T00:00Z: the posts' creation times straddle a month's end. */
const start = Date.UTC(2024, 0, 30)
const statuses: ReadonlyArray<DestinationStatus> = ["queued", "publishing", "published", "failed"]
const platforms: ReadonlyArray<Platform> = ["x", "bluesky", "linkedin"]

type Op =
  | {
    readonly _tag: "create"
    readonly offset: number
    readonly draft: boolean
    readonly immediate: boolean
    readonly targets: ReadonlyArray<
      { readonly account: number; readonly status: DestinationStatus; readonly views: number }
    >
  }
  | { readonly _tag: "setStatus"; readonly pick: number; readonly status: DestinationStatus }
  | { readonly _tag: "setMetrics"; readonly pick: number; readonly views: number; readonly likes: number }
  | { readonly _tag: "dropDestination"; readonly pick: number }
  | { readonly _tag: "deletePost"; readonly pick: number }
  | { readonly _tag: "toggleDraft"; readonly pick: number }

const status = fc.constantFrom(...statuses)
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    arbitrary: fc.record({
      _tag: fc.constant("create" as const),
      // Up to 4 days from the start, at any millisecond: every day and both months get posts.
      offset: fc.integer({ min: 0, max: 4 * dayMillis - 1 }),
      draft: fc.boolean(),
      immediate: fc.boolean(),
      targets: fc.array(
        fc.record({ account: fc.integer({ min: 1, max: 3 }), status, views: fc.integer({ min: 0, max: 50 }) }),
        { maxLength: 3 }
      )
    }),
    weight: 3
  },
  { arbitrary: fc.record({ _tag: fc.constant("setStatus" as const), pick: fc.nat(), status }), weight: 3 },
  {
    arbitrary: fc.record({
      _tag: fc.constant("setMetrics" as const),
      pick: fc.nat(),
      views: fc.integer({ min: 0, max: 1000 }),
      likes: fc.integer({ min: 0, max: 100 })
    }),
    weight: 2
  },
  { arbitrary: fc.record({ _tag: fc.constant("dropDestination" as const), pick: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ _tag: fc.constant("deletePost" as const), pick: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ _tag: fc.constant("toggleDraft" as const), pick: fc.nat() }), weight: 1 }
)

const key = (...parts: ReadonlyArray<unknown>) => parts.join("|")

const floorMonth = (t: number) => {
  const d = new Date(t)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)
}

/** Adds `n` to `map[k]`, dropping entries that return to 0 (rollups may keep zero rows). */
const add = (map: Map<string, number>, k: string, n: number) => map.set(k, (map.get(k) ?? 0) + n)
const nonZero = (map: Map<string, number>) => Object.fromEntries([...map].filter(([, n]) => n !== 0).sort())

const runOps = (organizationId: OrganizationId, ops: ReadonlyArray<Op>) =>
  Effect.gen(function*() {
    const store = yield* PostStore
    const posts = new Map<string, { post: Post; destinations: Array<Destination> }>()
    const pickPost = (pick: number) => [...posts.values()][pick % Math.max(1, posts.size)]
    const allDestinations = () => [...posts.values()].flatMap((p) => p.destinations)
    for (const o of ops) {
      switch (o._tag) {
        case "create": {
          const createdAt = start + o.offset
          const accounts = [...new Set(o.targets.map((t) => t.account))].map((id) =>
            accountValue(organizationId, id, { platform: platforms[(id - 1) % platforms.length]! })
          )
          const p = post(organizationId, {
            isDraft: o.draft,
            createdStatus: o.draft ? "draft" : "scheduled",
            accountIds: accounts.map((a) => a.id),
            scheduledFor: o.immediate ? Option.none() : Option.some(at(createdAt + dayMillis)),
            createdAt: at(createdAt),
            updatedAt: at(createdAt)
          })
          const destinations = o.draft ? [] : accounts.map((account, i) =>
            destination({ post: p, account }, {
              status: o.targets[i]!.status,
              metrics: new Metrics({ ...Metrics.zero, views: o.targets[i]!.views })
            })
          )
          yield* store.insert({ post: p, destinations })
          posts.set(p.id, { post: p, destinations })
          break
        }
        case "setStatus":
        case "setMetrics": {
          const all = allDestinations()
          if (all.length === 0) break
          const d = all[o.pick % all.length]!
          const next = new Destination({
            ...d,
            ...(o._tag === "setStatus"
              ? { status: o.status }
              : { metrics: new Metrics({ ...d.metrics, views: o.views, likes: o.likes }) })
          })
          yield* store.updateDestinations([next])
          const owner = posts.get(d.postId)!
          owner.destinations = owner.destinations.map((x) => (x.id === d.id ? next : x))
          break
        }
        case "dropDestination": {
          const all = allDestinations()
          if (all.length === 0) break
          const d = all[o.pick % all.length]!
          yield* store.deleteDestinations([d.id])
          const owner = posts.get(d.postId)!
          owner.destinations = owner.destinations.filter((x) => x.id !== d.id)
          break
        }
        case "deletePost": {
          const p = pickPost(o.pick)
          if (p === undefined) break
          yield* store.delete(organizationId, p.post.id)
          posts.delete(p.post.id)
          break
        }
        case "toggleDraft": {
          const p = pickPost(o.pick)
          if (p === undefined) break
          const next = new Post({ ...p.post, isDraft: !p.post.isDraft })
          yield* store.update(next)
          p.post = next
          break
        }
      }
    }
    return posts
  })

/** The change rows appended beside the rollups, of every organization (Postgres; SQLite has none). */
const changeRows = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql<{ n: unknown }>`SELECT (SELECT COUNT(*) FROM post_rollup_deltas)
    + (SELECT COUNT(*) FROM destination_rollup_deltas) AS n`
).pipe(Effect.map((rows) => Number(rows[0]!.n)))

const check = (organizationId: OrganizationId, ops: ReadonlyArray<Op>) =>
  Effect.gen(function*() {
    const posts = yield* runOps(organizationId, ops)
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()

    // The maintained status of every post is the status rule over its destinations.
    const expectedStatus = new Map<string, string>()
    for (const { post: p, destinations } of posts.values()) {
      expectedStatus.set(
        p.id,
        derivePostStatus({
          isDraft: p.isDraft,
          destinations: destinations.map((d) => d.status),
          immediate: Option.isNone(p.scheduledFor)
        })
      )
    }
    const stored = yield* sql<{ id: string; status: string }>`SELECT id, status FROM posts
      WHERE organization_id = ${organizationId}`
    expect(Object.fromEntries(stored.map((r) => [r.id, r.status]))).toEqual(Object.fromEntries(expectedStatus))

    // The rollups are the rows grouped by day and month of the post's creation.
    const postGroups = new Map<string, number>()
    const destinationGroups = new Map<string, number>()
    for (const { post: p, destinations } of posts.values()) {
      const created = DateTime.toEpochMillis(p.createdAt)
      const buckets = [["day", Math.floor(created / dayMillis) * dayMillis], ["month", floorMonth(created)]] as const
      for (const [grain, bucket] of buckets) {
        add(postGroups, key(grain, bucket, expectedStatus.get(p.id)), 1)
        for (const d of destinations) {
          const k = key(grain, bucket, d.platform, d.accountId, d.status)
          add(destinationGroups, `${k}|n`, 1)
          for (const m of metricNames) add(destinationGroups, `${k}|${m}`, d.metrics[m])
        }
      }
    }
    // On Postgres the writers append deltas, which the reads fold in: compared before and after.
    const compareRollups = Effect.gen(function*() {
      const postRollups = yield* sql<{ grain: string; bucket: unknown; status: string; posts: unknown }>`
        SELECT grain, bucket, status, posts FROM ${
        sql.literal(RollupSql.postRows)
      } x WHERE organization_id = ${organizationId}`
      const storedPosts = new Map<string, number>()
      for (const r of postRollups) add(storedPosts, key(r.grain, Number(r.bucket), r.status), Number(r.posts))
      expect(nonZero(storedPosts)).toEqual(nonZero(postGroups))
      const destinationRollups = yield* sql<Record<string, unknown>>`
        SELECT * FROM ${sql.literal(RollupSql.destinationRows)} x WHERE organization_id = ${organizationId}`
      const storedDestinations = new Map<string, number>()
      for (const r of destinationRollups) {
        const k = key(r.grain, Number(r.bucket), r.platform, Number(r.account_id), r.status)
        add(storedDestinations, `${k}|n`, Number(r.destinations))
        for (const m of metricNames) add(storedDestinations, `${k}|${m}`, Number(r[m]))
      }
      expect(nonZero(storedDestinations)).toEqual(nonZero(destinationGroups))
    })
    yield* compareRollups

    // Housekeeping folds the appended changes (every organization's), two rows per batch, before any
    // read folds them: none are left, and every total is what it was.
    const pending = yield* changeRows
    const folded = yield* Housekeeping.foldRollups({ batchSize: 2, maxBatches: 10_000 })
    expect({ folded: folded.folded, more: folded.more, left: yield* changeRows }).toEqual({
      folded: pending,
      more: false,
      left: 0
    })
    yield* compareRollups

    // Analytics over aligned and unaligned ranges, from rollups and edges, equals the rows' answer.
    const ranges: ReadonlyArray<readonly [number | undefined, number | undefined]> = [
      [undefined, undefined],
      [start, start + 2 * dayMillis],
      [Date.UTC(2024, 1, 1), Date.UTC(2024, 2, 1)],
      [start + 3_600_000, start + 3 * dayMillis + 7_200_000],
      [start + 5_000, start + 9_000_000]
    ]
    const analytics = yield* AnalyticsStore
    for (const [from, to] of ranges) {
      const inRange = [...posts.values()].filter(({ post: p }) => {
        const t = DateTime.toEpochMillis(p.createdAt)
        return (from === undefined || t >= from) && (to === undefined || t < to)
      })
      const expectedPosts = new Map<string, number>()
      const expectedDestinations = new Map<string, number>()
      for (const { post: p, destinations } of inRange) {
        add(expectedPosts, expectedStatus.get(p.id)!, 1)
        for (const d of destinations) {
          add(expectedDestinations, key(d.platform, d.status, "n"), 1)
          for (const m of metricNames) add(expectedDestinations, key(d.platform, d.status, m), d.metrics[m])
        }
      }
      const counts = yield* analytics.summarize({
        organizationId,
        ...(from === undefined ? {} : { from: at(from) }),
        ...(to === undefined ? {} : { to: at(to) })
      })
      const gotPosts = new Map<string, number>()
      for (const r of counts.posts) add(gotPosts, r.status, r.count)
      expect(nonZero(gotPosts)).toEqual(nonZero(expectedPosts))
      const gotDestinations = new Map<string, number>()
      for (const g of counts.destinations) {
        add(gotDestinations, key(g.platform, g.status, "n"), g.count)
        for (const m of metricNames) add(gotDestinations, key(g.platform, g.status, m), g.metrics[m])
      }
      expect(nonZero(gotDestinations)).toEqual(nonZero(expectedDestinations))
    }

    // The list's total (no filter, status filters) and the per-status counts, from the rollups.
    const store = yield* PostStore
    const byStatus = Object.fromEntries(PostStatus.literals.map((s) => [s, 0])) as Record<PostStatus, number>
    for (const s of expectedStatus.values()) byStatus[s as PostStatus] += 1
    const base = { organizationId, sort: "created_at", order: "desc", limit: 5, offset: 0 } as const
    expect(yield* store.countByStatus(base)).toEqual(byStatus)
    expect((yield* store.list(base)).total).toBe(posts.size)
    const failedOrDraft = yield* store.list({ ...base, statuses: ["failed", "draft", "failed"] })
    expect(failedOrDraft.total).toBe(byStatus.failed + byStatus.draft)
    yield* compareRollups
    return folded.folded
  })

/** Posts with destinations in every status, on two days: writes every kind of change. */
const fixedOps: ReadonlyArray<Op> = [
  {
    _tag: "create",
    offset: 1000,
    draft: false,
    immediate: false,
    targets: [{ account: 1, status: "queued", views: 0 }, { account: 2, status: "published", views: 7 }]
  },
  {
    _tag: "create",
    offset: dayMillis + 5,
    draft: false,
    immediate: true,
    targets: [{ account: 3, status: "failed", views: 0 }]
  },
  { _tag: "setStatus", pick: 0, status: "publishing" },
  { _tag: "setMetrics", pick: 1, views: 40, likes: 3 },
  { _tag: "setStatus", pick: 2, status: "published" }
]

export const rollupsContract = (layer: StoresLayer, options: { readonly numRuns: number }) =>
  describe("maintained status and rollups", () => {
    it.effect("housekeeping folds the appended rollup changes in small batches; the totals do not change", () =>
      Effect.gen(function*() {
        const org = yield* givenOrganization
        const dialect = yield* (yield* SqlClient.SqlClient).onDialectOrElse({
          pg: () => Effect.succeed("pg"),
          orElse: () => Effect.succeed("sqlite")
        })
        // `check` writes, folds the changes with housekeeping, then compares every total with the rows.
        const folded = yield* check(org.id, fixedOps)
        // Postgres's triggers appended changes (several batches' worth); SQLite's updated in place.
        if (dialect === "pg") expect(folded).toBeGreaterThan(4)
        else expect(folded).toBe(0)
      }).pipe(Effect.provide(layer)))

    it.effect(
      "equal the values recomputed from the rows after random sequences of writes",
      () =>
        Effect.gen(function*() {
          const runtime = yield* Effect.runtime<
            Effect.Effect.Context<ReturnType<typeof check>> | Effect.Effect.Context<typeof givenOrganization>
          >()
          yield* Effect.promise(() =>
            fc.assert(
              fc.asyncProperty(
                fc.array(op, { minLength: 1, maxLength: 25 }),
                (ops) =>
                  Runtime.runPromise(runtime)(
                    Effect.asVoid(Effect.flatMap(givenOrganization, (org) => check(org.id, ops)))
                  )
              ),
              { numRuns: options.numRuns }
            )
          )
        }).pipe(Effect.provide(layer)),
      120_000
    )
  })
