import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
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

    it.effect("withAtomicWrite: a post insert that fails part-way stores nothing, outside a transaction too", () =>
      Effect.gen(function*() {
        const posts = yield* PostStore
        const tx = yield* Transactor
        const sql = yield* SqlClient.SqlClient
        const org = yield* givenOrganization
        const first = post(org.id)
        const taken = destination({ post: first, account: accountValue(org.id, 1) })
        yield* posts.insert({ post: first, destinations: [taken] })
        // The post and its targets are written before the destination whose id is already taken.
        const second = post(org.id, { accountIds: [accountValue(org.id, 1).id, accountValue(org.id, 2).id] })
        const clash = destination({ post: second, account: accountValue(org.id, 1) }, { id: taken.id })
        const error = yield* tx.withAtomicWrite(posts.insert({ post: second, destinations: [clash] })).pipe(Effect.flip)
        expect(error._tag).toBe("PersistenceError")
        expect(yield* posts.findById(org.id, second.id)).toEqual(Option.none())
        const targets = yield* sql`SELECT COUNT(*) AS n FROM post_targets WHERE post_id = ${second.id}`
        expect(Number(targets[0]!["n"])).toBe(0)
      }).pipe(Effect.provide(layer)))

    it.effect("withAtomicWrite: the write is committed when it returns", () =>
      Effect.gen(function*() {
        const posts = yield* PostStore
        const tx = yield* Transactor
        const org = yield* givenOrganization
        const p = post(org.id, { isDraft: true, createdStatus: "draft", accountIds: [accountValue(org.id, 3).id] })
        yield* tx.withAtomicWrite(posts.insert({ post: p, destinations: [] }))
        expect(yield* posts.findById(org.id, p.id)).toEqual(Option.some({ post: p, destinations: [] }))
      }).pipe(Effect.provide(layer)))

    it.effect("withAtomicWrite opens no transaction on Postgres; on SQLite it joins a group commit", () =>
      Effect.gen(function*() {
        const tx = yield* Transactor
        const sql = yield* SqlClient.SqlClient
        const open = yield* tx.withAtomicWrite(
          Effect.map(Effect.serviceOption(SqlClient.TransactionConnection), Option.isSome)
        )
        expect(open).toBe(sql.onDialectOrElse({ pg: () => false, orElse: () => true }))
      }).pipe(Effect.provide(layer)))

    it.effect("withAtomicWrite inside an open transaction is part of it: rolled back with it", () =>
      Effect.gen(function*() {
        const posts = yield* PostStore
        const tx = yield* Transactor
        const org = yield* givenOrganization
        const p = post(org.id)
        const result = yield* tx.withTransaction(
          Effect.zipRight(
            tx.withAtomicWrite(posts.insert({ post: p, destinations: [] })),
            Effect.fail("refused" as const)
          )
        ).pipe(Effect.flip)
        expect(result).toBe("refused")
        expect(yield* posts.findById(org.id, p.id)).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))
  })
