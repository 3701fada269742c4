import { describe, expect, it } from "@effect/vitest"
import { EventStore } from "@herald/core/webhooks/EventStore"
import { PostStore } from "@herald/core/posts/PostStore"
import { Transactor } from "@herald/core/kernel/Transactor"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { accountValue, destination, event, givenOrganization, post, type StoresLayer } from "./Fixtures.js"

export const transactorContract = (layer: StoresLayer) =>
  describe("Transactor", () => {
    it.effect("a failure after a post insert and an event append leaves neither", () =>
      Effect.gen(function*() {
        const posts = yield* PostStore
        const events = yield* EventStore
        const tx = yield* Transactor
        const org = yield* givenOrganization
        const p = post(org.id)
        const d = destination({ post: p, account: accountValue(org.id, 1) })
        const result = yield* tx.withTransaction(
          Effect.gen(function*() {
            yield* posts.insert({ post: p, destinations: [d] })
            yield* events.append([event(org.id, { data: { post_id: p.id } })])
            // Inside the transaction the writes are visible.
            expect(Option.isSome(yield* posts.findById(org.id, p.id))).toBe(true)
            return yield* Effect.fail("publish refused" as const)
          })
        ).pipe(Effect.flip)
        expect(result).toBe("publish refused")
        expect(yield* posts.findById(org.id, p.id)).toEqual(Option.none())
        expect(yield* events.list(org.id)).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.effect("a successful program commits the post and its event together", () =>
      Effect.gen(function*() {
        const posts = yield* PostStore
        const events = yield* EventStore
        const tx = yield* Transactor
        const org = yield* givenOrganization
        const p = post(org.id)
        const e = event(org.id, { data: { post_id: p.id } })
        yield* tx.withTransaction(
          Effect.zipRight(posts.insert({ post: p, destinations: [] }), events.append([e]))
        )
        expect(yield* posts.findById(org.id, p.id)).toEqual(Option.some({ post: p, destinations: [] }))
        expect(yield* events.list(org.id, { postId: p.id })).toEqual([e])
      }).pipe(Effect.provide(layer)))
  })
