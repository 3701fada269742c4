import { describe, expect, it } from "@effect/vitest"
import { IdGenerator } from "@herald/core/kernel/IdGenerator"
import { OrganizationStore } from "@herald/core/access/OrganizationStore"
import { PostStore } from "@herald/core/posts/PostStore"
import { QueueId } from "@herald/core/kernel/Ids"
import { Queue, QueueOpening } from "@herald/core/workflow/Queue"
import * as Queues from "@herald/core/workflow/Queues"
import { QueueStore } from "@herald/core/workflow/QueueStore"
import { Transactor } from "@herald/core/kernel/Transactor"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import { at, organization, post, type StoresLayer, T0 } from "./Fixtures.js"

export const queueStoreContract = (layer: StoresLayer, concurrent: StoresLayer = layer) =>
  describe("QueueStore", () => {
    const givenOrg = Effect.gen(function*() {
      const org = organization()
      yield* (yield* OrganizationStore).insert(org)
      return org
    })

    it.effect("saves one queue per organization and replaces it", () =>
      Effect.gen(function*() {
        const store = yield* QueueStore
        const org = yield* givenOrg
        expect(Option.isNone(yield* store.find(org.id))).toBe(true)
        const queue = new Queue({
          id: QueueId.make(randomUUID()),
          organizationId: org.id,
          timezone: "Europe/Paris",
          openings: [new QueueOpening({ weekday: 1, time: "09:00" })],
          createdAt: at(T0)
        })
        yield* store.save(queue)
        yield* store.save(
          new Queue({ ...queue, id: QueueId.make(randomUUID()), timezone: "Asia/Kolkata", openings: [] })
        )
        const found = Option.getOrThrow(yield* store.find(org.id))
        expect(found.id).toBe(queue.id)
        expect(found.timezone).toBe("Asia/Kolkata")
        expect(found.openings).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.effect("a claim holds its opening while its post is scheduled there; deleted or moved posts free it", () =>
      Effect.gen(function*() {
        const store = yield* QueueStore
        const posts = yield* PostStore
        const org = yield* givenOrg
        const slot = at(T0 + 3_600_000)
        const first = post(org.id, { scheduledFor: Option.some(slot) })
        expect(yield* store.claim(org.id, slot, first.id)).toBe(true)
        yield* posts.insert({ post: first, destinations: [] })
        expect(yield* store.taken(org.id, at(T0), at(T0 + 7_200_000))).toEqual([T0 + 3_600_000])
        expect(yield* store.taken(org.id, slot, at(T0 + 7_200_000))).toEqual([])
        const second = post(org.id, { scheduledFor: Option.some(slot) })
        expect(yield* store.claim(org.id, slot, second.id)).toBe(false)
        // Rescheduled elsewhere: the opening is free again.
        yield* posts.update(post(org.id, { ...first, scheduledFor: Option.some(at(T0)) }))
        expect(yield* store.taken(org.id, at(T0), at(T0 + 7_200_000))).toEqual([])
        expect(yield* store.claim(org.id, slot, second.id)).toBe(true)
        yield* posts.insert({ post: second, destinations: [] })
        // Deleted: free again.
        yield* posts.delete(org.id, second.id)
        const third = post(org.id, { scheduledFor: Option.some(slot) })
        expect(yield* store.claim(org.id, slot, third.id)).toBe(true)
      }).pipe(Effect.provide(layer)))

    it.effect("prunes claims of past instants only, at most `limit` at a time", () =>
      Effect.gen(function*() {
        const store = yield* QueueStore
        const org = yield* givenOrg
        const other = yield* givenOrg
        for (const [o, offset] of [[org, 1], [org, 2], [org, 3], [other, 1], [org, 10]] as const) {
          const p = post(o.id, { scheduledFor: Option.some(at(T0 + offset * 3_600_000)) })
          expect(yield* store.claim(o.id, at(T0 + offset * 3_600_000), p.id)).toBe(true)
          yield* (yield* PostStore).insert({ post: p, destinations: [] })
        }
        const before = at(T0 + 5 * 3_600_000)
        expect(yield* store.pruneClaims(before, 2)).toBe(2)
        expect(yield* store.pruneClaims(before, 10)).toBe(2)
        expect(yield* store.pruneClaims(before, 10)).toBe(0)
        expect(yield* store.taken(org.id, at(T0), at(T0 + 24 * 3_600_000))).toEqual([T0 + 10 * 3_600_000])
        expect(yield* store.taken(other.id, at(T0), at(T0 + 24 * 3_600_000))).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.live("20 concurrent allocations in their own transactions take 20 distinct openings", () =>
      Effect.gen(function*() {
        const org = yield* givenOrg
        yield* Queues.setQueue({ organizationId: org.id, timezone: "America/New_York", openings: "daily 09:00,13:00" })
          .pipe(
            Effect.provideService(IdGenerator, IdGenerator.of({ uuid: Effect.sync(() => randomUUID()) }))
          )
        const transactor = yield* Transactor
        const posts = yield* PostStore
        const now = at(Date.now())
        const results = yield* Effect.all(
          Array.from({ length: 20 }, () =>
            transactor.withTransaction(Effect.gen(function*() {
              const p = post(org.id)
              const allocation = yield* Queues.allocate(org.id, now, p.id)
              if (allocation._tag !== "Slot") return yield* Effect.die(`no slot: ${allocation._tag}`)
              yield* posts.insert({
                post: post(org.id, { id: p.id, scheduledFor: Option.some(allocation.at) }),
                destinations: []
              })
              return allocation.at.epochMillis
            }))),
          { concurrency: "unbounded" }
        )
        expect(new Set(results).size).toBe(20)
        const taken = yield* (yield* QueueStore).taken(org.id, now, at(Date.now() + 90 * 86_400_000))
        expect([...taken].sort()).toEqual([...results].sort())
      }).pipe(Effect.provide(concurrent)))
  })
