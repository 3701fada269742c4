import { describe, expect, it } from "@effect/vitest"
import { EventStore } from "@herald/core/webhooks/EventStore"
import { PostId } from "@herald/core/kernel/Ids"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import { at, event, givenOrganization, type StoresLayer, T0 } from "./Fixtures.js"

export const eventStoreContract = (layer: StoresLayer) =>
  describe("EventStore", () => {
    it.effect("appends and lists oldest first, ties in append order", () =>
      Effect.gen(function*() {
        const store = yield* EventStore
        const org = yield* givenOrganization
        const other = yield* givenOrganization
        const late = event(org.id, { createdAt: at(T0 + 10), type: "post.published" })
        // Same instant: the append order must survive even against id order.
        const sameInstant = Array.from(
          { length: 5 },
          (_, i) => event(org.id, { createdAt: at(T0), type: "post.publishing", data: { n: i } })
        )
        yield* store.append([late])
        yield* store.append(sameInstant)
        yield* store.append([event(other.id)])
        yield* store.append([])
        expect(yield* store.list(org.id)).toEqual([...sameInstant, late])
        expect(yield* store.list(org.id, { limit: 2 })).toEqual(sameInstant.slice(0, 2))
      }).pipe(Effect.provide(layer)))

    it.effect("one append of many events keeps their order and their data as given", () =>
      Effect.gen(function*() {
        const store = yield* EventStore
        const org = yield* givenOrganization
        const tricky = `"quoted" \\ {"json": [1, null]} 'single' ${"\n"}line — ünïcode 🚀 \uD800 $1`
        const events = Array.from({ length: 300 }, (_, i) =>
          event(org.id, {
            createdAt: at(T0),
            type: "post.published",
            data: { n: i, text: tricky, nested: { a: [i, null, tricky] } }
          }))
        yield* store.append(events)
        expect(yield* store.list(org.id, { limit: 300 })).toEqual(events)
      }).pipe(Effect.provide(layer)))

    it.effect("lists the events that name a post, and finds by id", () =>
      Effect.gen(function*() {
        const store = yield* EventStore
        const org = yield* givenOrganization
        const postId = PostId.make(randomUUID())
        const mine = event(org.id, { data: { post_id: postId, status: "scheduled", nested: { a: [1, 2] } } })
        const notMine = event(org.id, { data: { post_id: randomUUID() } })
        const numeric = event(org.id, { type: "account.connected", data: { post_id: 42 } })
        const traced = event(org.id, {
          traceParent: Option.some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
        })
        yield* store.append([mine, notMine, numeric, traced])
        expect(yield* store.list(org.id, { postId })).toEqual([mine])
        expect(yield* store.findById(mine.id)).toEqual(Option.some(mine))
        expect(yield* store.findById(traced.id)).toEqual(Option.some(traced))
        expect(yield* store.findById(randomUUID())).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("prune removes at most the limit of the events created before the cutoff, of every organization", () =>
      Effect.gen(function*() {
        const store = yield* EventStore
        const org = yield* givenOrganization
        const other = yield* givenOrganization
        const old = [
          ...Array.from({ length: 3 }, (_, i) => event(org.id, { createdAt: at(T0 + i) })),
          ...Array.from({ length: 2 }, (_, i) => event(other.id, { createdAt: at(T0 + i) }))
        ]
        const atCutoff = event(org.id, { createdAt: at(T0 + 100) })
        const recent = event(other.id, { createdAt: at(T0 + 200) })
        yield* store.append([...old, atCutoff, recent])
        expect(yield* store.prune(at(T0 + 100), 0)).toBe(0)
        expect(yield* store.prune(at(T0 + 100), 2)).toBe(2)
        expect(yield* store.prune(at(T0 + 100), 2)).toBe(2)
        expect(yield* store.prune(at(T0 + 100), 2)).toBe(1)
        expect(yield* store.prune(at(T0 + 100), 2)).toBe(0)
        expect(yield* store.list(org.id)).toEqual([atCutoff])
        expect(yield* store.list(other.id)).toEqual([recent])
        for (const e of old) expect(yield* store.findById(e.id)).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))
  })
