/**
 * The post columns the list, `/me` and analytics read (status, latest publish) are maintained by the
 * store on every write: after any sequence of writes through the stores (creates, destination
 * changes, retries, edits, deletes, dispatch claims and outcomes) they equal the values recomputed
 * from the rows by core's rule (property test). And the set-based re-queue of failed destinations.
 */
import { describe, expect, it } from "@effect/vitest"
import { AnalyticsStore } from "@herald/core/analytics/AnalyticsStore"
import type { DestinationStatus } from "@herald/core/domain/Destination"
import type { OrganizationId } from "@herald/core/kernel/Ids"
import { type Post, PostStatus } from "@herald/core/domain/Post"
import { derivePostStatus } from "@herald/core/posts/PostLifecycle"
import { type PostRecord, PostStore } from "@herald/core/posts/PostStore"
import { DispatchStore } from "@herald/core/publishing/DispatchStore"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import type { Stores } from "../../src/sql/SqlStores.js"
import { accountValue, at, destination, givenOrganization, post, type StoresLayer, T0 } from "./Fixtures.js"

const destinationStatus = FastCheck.constantFrom<DestinationStatus>("queued", "publishing", "published", "failed")

type Op =
  | {
    readonly _tag: "create"
    readonly draft: boolean
    readonly scheduled: boolean
    readonly states: ReadonlyArray<DestinationStatus>
  }
  | {
    readonly _tag: "setStatus"
    readonly post: number
    readonly destination: number
    readonly status: DestinationStatus
    readonly at: number
  }
  | { readonly _tag: "addDestination"; readonly post: number }
  | { readonly _tag: "deleteDestination"; readonly post: number; readonly destination: number }
  | { readonly _tag: "edit"; readonly post: number; readonly draft: boolean; readonly scheduled: boolean }
  | { readonly _tag: "deletePost"; readonly post: number }
  | { readonly _tag: "dispatch"; readonly outcomes: ReadonlyArray<"published" | "failed" | "requeued"> }
  | { readonly _tag: "retryFailed"; readonly limit: number }

const index = FastCheck.nat({ max: 7 })

const op: FastCheck.Arbitrary<Op> = FastCheck.oneof(
  FastCheck.record({
    _tag: FastCheck.constant("create" as const),
    draft: FastCheck.boolean(),
    scheduled: FastCheck.boolean(),
    states: FastCheck.array(destinationStatus, { maxLength: 3 })
  }),
  FastCheck.record({
    _tag: FastCheck.constant("setStatus" as const),
    post: index,
    destination: index,
    status: destinationStatus,
    at: FastCheck.nat({ max: 1000 })
  }),
  FastCheck.record({ _tag: FastCheck.constant("addDestination" as const), post: index }),
  FastCheck.record({ _tag: FastCheck.constant("deleteDestination" as const), post: index, destination: index }),
  FastCheck.record({
    _tag: FastCheck.constant("edit" as const),
    post: index,
    draft: FastCheck.boolean(),
    scheduled: FastCheck.boolean()
  }),
  FastCheck.record({ _tag: FastCheck.constant("deletePost" as const), post: index }),
  FastCheck.record({
    _tag: FastCheck.constant("dispatch" as const),
    outcomes: FastCheck.array(FastCheck.constantFrom("published" as const, "failed" as const, "requeued" as const), {
      minLength: 1,
      maxLength: 4
    })
  })
)

const opRetry: FastCheck.Arbitrary<Op> = FastCheck.record({
  _tag: FastCheck.constant("retryFailed" as const),
  limit: FastCheck.integer({ min: 1, max: 4 })
})

const ops = FastCheck.oneof(op, opRetry)

const recompute = (record: PostRecord): PostStatus =>
  derivePostStatus({
    isDraft: record.post.isDraft,
    destinations: record.destinations.map((d) => d.status),
    immediate: Option.isNone(record.post.scheduledFor)
  })

const latestPublish = (record: PostRecord): number | undefined => {
  const times = record.destinations.flatMap((d) => Option.toArray(d.publishedAt).map(DateTime.toEpochMillis))
  return times.length === 0 ? undefined : Math.max(...times)
}

const apply = (organizationId: OrganizationId, posts: Array<Post>, o: Op) =>
  Effect.gen(function*() {
    const store = yield* PostStore
    const pick = (i: number) => (posts.length === 0 ? undefined : posts[i % posts.length])
    const current = (p: Post) => store.findById(organizationId, p.id).pipe(Effect.map(Option.getOrThrow))
    switch (o._tag) {
      case "create": {
        const accounts = o.states.map((_, i) => accountValue(organizationId, 1 + i))
        const p = post(organizationId, {
          isDraft: o.draft,
          createdStatus: o.draft ? "draft" : "scheduled",
          scheduledFor: o.scheduled ? Option.some(at(T0 + 60_000)) : Option.none(),
          accountIds: accounts.map((a) => a.id),
          createdAt: at(T0 + posts.length)
        })
        const destinations = o.draft ? [] : o.states.map((status, i) =>
          destination({ post: p, account: accounts[i]! }, {
            status,
            ...(status === "published" ? { publishedAt: Option.some(at(T0 + 1000 * i)) } : {})
          })
        )
        yield* store.insert({ post: p, destinations })
        posts.push(p)
        return
      }
      case "setStatus": {
        const p = pick(o.post)
        if (p === undefined) return
        const record = yield* current(p)
        const d = record.destinations[o.destination % Math.max(1, record.destinations.length)]
        if (d === undefined) return
        yield* store.updateDestinations([
          destination({ post: p, account: accountValue(organizationId, d.accountId) }, {
            ...d,
            status: o.status,
            publishedAt: o.status === "published" ? Option.some(at(T0 + o.at)) : d.publishedAt
          })
        ])
        return
      }
      case "addDestination": {
        const p = pick(o.post)
        if (p === undefined) return
        yield* store.insertDestinations([destination({ post: p, account: accountValue(organizationId, 9) })])
        return
      }
      case "deleteDestination": {
        const p = pick(o.post)
        if (p === undefined) return
        const record = yield* current(p)
        const d = record.destinations[o.destination % Math.max(1, record.destinations.length)]
        if (d !== undefined) yield* store.deleteDestinations([d.id])
        return
      }
      case "edit": {
        const p = pick(o.post)
        if (p === undefined) return
        const record = yield* current(p)
        yield* store.update(
          post(organizationId, {
            ...record.post,
            isDraft: o.draft,
            scheduledFor: o.scheduled ? Option.some(at(T0 + 120_000)) : Option.none(),
            content: `edited ${o.draft} ${o.scheduled}`
          })
        )
        return
      }
      case "deletePost": {
        const p = pick(o.post)
        if (p === undefined) return
        yield* store.delete(organizationId, p.id)
        posts.splice(posts.indexOf(p), 1)
        return
      }
      case "retryFailed": {
        yield* store.requeueFailed({ organizationId, platform: "x", now: at(T0 + 7000), limit: o.limit })
        return
      }
      case "dispatch": {
        const dispatch = yield* DispatchStore
        const claims = yield* dispatch.claimDue({
          leaseFor: "1 minute",
          limit: o.outcomes.length,
          now: at(T0 + 10_000_000),
          workerId: "property"
        })
        yield* dispatch.completeAll(claims.map((claim, i) => ({
          claim,
          completion: o.outcomes[i] === "published"
            ? {
              _tag: "Published" as const,
              platformPostId: "p",
              platformPostUrl: "https://example.com/p",
              publishedAt: at(T0 + 5000 + i)
            }
            : o.outcomes[i] === "failed"
            ? { _tag: "Failed" as const, error: "refused", failedAt: at(T0 + 5000) }
            : { _tag: "Requeued" as const, error: "later", dueAt: at(T0 + 6000) }
        })))
        return
      }
    }
  })

/** The maintained values, read back through the store, against the values recomputed from the rows. */
const check = (organizationId: OrganizationId, posts: ReadonlyArray<Post>) =>
  Effect.gen(function*() {
    const store = yield* PostStore
    const records = yield* Effect.forEach(posts, (p) =>
      store.findById(organizationId, p.id).pipe(Effect.map(Option.getOrThrow)))
    const expected = Object.fromEntries(PostStatus.literals.map((s) => [s, [] as Array<string>])) as Record<
      PostStatus,
      Array<string>
    >
    for (const r of records) {
      expected[recompute(r)].push(r.post.id)
    }
    const base = { organizationId, sort: "created_at" as const, order: "asc" as const, limit: 100, offset: 0 }
    for (const status of PostStatus.literals) {
      const page = yield* store.list({ ...base, statuses: [status] })
      expect(
        [...page.items.map((i) =>
          i.post.id
        )].sort(),
        status
      ).toEqual([...expected[status]].sort())
      expect(page.total).toBe(expected[status].length)
    }
    const counts = yield* store.countByStatus(base)
    expect(counts).toEqual(Object.fromEntries(PostStatus.literals.map((s) => [s, expected[s].length])))
    const summary = yield* (yield* AnalyticsStore).summarize({ organizationId })
    expect(Object.fromEntries(summary.posts.filter((r) => r.count > 0).map((r) => [r.status, r.count]))).toEqual(
      Object.fromEntries(PostStatus.literals.filter((s) => expected[s].length > 0).map((s) => [s, expected[s].length]))
    )
    // The latest publish: the published_at order (newest first, never-published last, ties by id).
    const byPublish = yield* store.list({ ...base, sort: "published_at", order: "desc" })
    const key = (r: PostRecord) => latestPublish(r) ?? -Infinity
    const want = [...records].sort((a, b) => key(b) - key(a) || (a.post.id < b.post.id ? 1 : -1)).map((r) => r.post.id)
    expect(byPublish.items.map((i) => i.post.id)).toEqual(want)
  })

export const postListingContract = (layer: StoresLayer) =>
  describe("maintained post status and publish time (property)", () => {
    it.effect(
      "after random write sequences the list, counts and analytics equal the values recomputed from the rows",
      () =>
        Effect.gen(function*() {
          const context = yield* Effect.context<Stores>()
          yield* Effect.promise(() =>
            FastCheck.assert(
              FastCheck.asyncProperty(FastCheck.array(ops, { minLength: 1, maxLength: 25 }), (ops) =>
                Effect.runPromise(
                  Effect.gen(function*() {
                    const org = yield* givenOrganization
                    const posts: Array<Post> = []
                    for (const o of ops) yield* apply(org.id, posts, o)
                    yield* check(org.id, posts)
                  }).pipe(Effect.provide(context))
                )),
              { numRuns: 40 }
            )
          )
        }).pipe(Effect.provide(layer)),
      { timeout: 240_000 }
    )
  })

export const requeueFailedContract = (layer: StoresLayer) =>
  describe("PostStore.requeueFailed", () => {
    it.effect("re-queues matching failed destinations, oldest posts first, whole posts within the limit; others untouched", () =>
      Effect.gen(function*() {
        const org = yield* givenOrganization
        const other = yield* givenOrganization
        const store = yield* PostStore
        const x1 = accountValue(org.id, 1, { platform: "x" })
        const x2 = accountValue(org.id, 2, { platform: "x" })
        const bsky = accountValue(org.id, 3, { platform: "bluesky" })
        const failed = {
          status: "failed" as const,
          attempts: 3,
          error: Option.some("refused"),
          failedAt: Option.some(at(T0))
        }
        const make = (organizationId: OrganizationId, createdAt: number, accounts: ReadonlyArray<typeof x1>) =>
          Effect.gen(function*() {
            const p = post(organizationId, { accountIds: accounts.map((a) => a.id), createdAt: at(createdAt) })
            const destinations = accounts.map((account) => destination({ post: p, account }, failed))
            yield* store.insert({ post: p, destinations })
            return p
          })
        // Oldest first: a (x1, x2 failed: 2), b (x1 + bluesky: 1 on x), c (x2: 1); and another organization's.
        const c = yield* make(org.id, T0 + 3, [x2])
        const a = yield* make(org.id, T0 + 1, [x1, x2])
        const b = yield* make(org.id, T0 + 2, [x1, bsky])
        const foreign = yield* make(other.id, T0, [accountValue(other.id, 4, { platform: "x" })])
        const now = at(T0 + 50_000)

        // A limit of 2 takes a whole (2), then b would pass it: stop, more remain.
        const first = yield* store.requeueFailed({ organizationId: org.id, platform: "x", now, limit: 2 })
        expect(first.posts.map((r) => r.record.post.id)).toEqual([a.id])
        expect(first.posts[0]!.retried.length).toBe(2)
        expect(first.posts[0]!.record.destinations.map((d) => d.status)).toEqual(["queued", "queued"])
        expect(first.posts[0]!.record.destinations.every((d) => d.attempts === 0 && Option.isNone(d.error))).toBe(true)
        expect(first.hasMore).toBe(true)

        const rest = yield* store.requeueFailed({ organizationId: org.id, platform: "x", now, limit: 500 })
        expect(rest.posts.map((r) => r.record.post.id)).toEqual([b.id, c.id])
        expect(rest.hasMore).toBe(false)
        // b's bluesky destination was not selected; the other organization's is untouched.
        const bNow = Option.getOrThrow(yield* store.findById(org.id, b.id))
        expect(bNow.destinations.map((d) => [d.platform, d.status])).toEqual([["x", "queued"], ["bluesky", "failed"]])
        const foreignNow = Option.getOrThrow(yield* store.findById(other.id, foreign.id))
        expect(foreignNow.destinations.map((d) => d.status)).toEqual(["failed"])
        const again = yield* store.requeueFailed({ organizationId: org.id, platform: "x", now, limit: 500 })
        expect(again).toEqual({ posts: [], hasMore: false })
      }).pipe(Effect.provide(layer)))

    it.effect("filters by account, attempts, failure time and the key's visible accounts", () =>
      Effect.gen(function*() {
        const org = yield* givenOrganization
        const store = yield* PostStore
        const x1 = accountValue(org.id, 1, { platform: "x" })
        const x2 = accountValue(org.id, 2, { platform: "x" })
        const p = post(org.id, { accountIds: [x1.id, x2.id] })
        const d1 = destination({ post: p, account: x1 }, {
          status: "failed",
          attempts: 1,
          failedAt: Option.some(at(T0 + 10))
        })
        const d2 = destination({ post: p, account: x2 }, {
          status: "failed",
          attempts: 5,
          failedAt: Option.some(at(T0 + 20))
        })
        yield* store.insert({ post: p, destinations: [d1, d2] })
        const now = at(T0 + 50_000)
        const ids = (r: { readonly posts: ReadonlyArray<{ readonly retried: ReadonlyArray<string> }> }) =>
          r.posts.flatMap((x) => x.retried)
        const none = { organizationId: org.id, now, limit: 500 }
        // Visible through x1 only: the post also targets x2, so it is not the key's.
        expect(ids(yield* store.requeueFailed({ ...none, visibleAccountIds: [x1.id] }))).toEqual([])
        expect(ids(yield* store.requeueFailed({ ...none, maxAttempts: 0 }))).toEqual([])
        expect(ids(yield* store.requeueFailed({ ...none, failedAfter: at(T0 + 20) }))).toEqual([])
        expect(ids(yield* store.requeueFailed({ ...none, failedBefore: at(T0 + 10) }))).toEqual([])
        expect(ids(yield* store.requeueFailed({ ...none, accountId: x2.id, failedAfter: at(T0 + 10) }))).toEqual([
          d2.id
        ])
        expect(ids(yield* store.requeueFailed({ ...none, maxAttempts: 1, failedBefore: at(T0 + 20) }))).toEqual([d1.id])
      }).pipe(Effect.provide(layer)))
  })
