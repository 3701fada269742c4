/**
 * Round trips on Postgres: the statements (`sql.execute` spans) the hot writes send. Creating a post
 * with its targets and destinations is one statement, and so is appending events with their webhook
 * fan-out (the Postgres create path and each dispatch step in one statement). Skipped, with
 * the reason, where no Postgres answers.
 */
import { describe, expect, it } from "@effect/vitest"
import { IdGenerator } from "@herald/core/kernel/IdGenerator"
import { PostStore } from "@herald/core/posts/PostStore"
import { EventStore } from "@herald/core/webhooks/EventStore"
import { AccountStore } from "@herald/core/accounts/AccountStore"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import { randomUUID } from "node:crypto"
import * as SqlStores from "../../src/sql/SqlStores.js"
import * as F from "../contract/Fixtures.js"
import { postgresLayer, probePostgres } from "../support/TestDatabases.js"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] Postgres round trips: ${pg.reason}`)

const randomIds = Layer.succeed(IdGenerator, IdGenerator.of({ uuid: Effect.sync(() => randomUUID()) }))
const stores = SqlStores.layer.pipe(Layer.provide(randomIds), Layer.provideMerge(postgresLayer))

/** Runs `self` and returns its result with the SQL statements it sent, by their text. */
const statementsOf = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const native = yield* Effect.tracer
    const texts: Array<string> = []
    const counting = Tracer.make({
      span: (name, parent, context, links, startTime, kind, options) => {
        const span = native.span(name, parent, context, links, startTime, kind, options)
        if (name !== "sql.execute") return span
        return Object.assign(Object.create(span) as Tracer.Span, {
          attribute: (key: string, value: unknown) => {
            if (key === "db.query.text" && typeof value === "string") texts.push(value.replace(/\s+/g, " "))
            span.attribute(key, value)
          }
        })
      },
      context: (f, fiber) => native.context(f, fiber)
    })
    const result = yield* Effect.withTracer(self, counting)
    return { result, texts }
  })

describe.skipIf(!pg.available)("round trips on Postgres", () => {
  it.effect("a post with two targets and two destinations is inserted in one statement, every row intact", () =>
    Effect.gen(function*() {
      const org = yield* F.givenOrganization
      const accounts = yield* AccountStore
      const a = yield* accounts.insert(F.newAccount(org.id, { platformAccountId: "a" }))
      const b = yield* accounts.insert(F.newAccount(org.id, { platformAccountId: "b" }))
      const post = F.post(org.id, { accountIds: [a.id, b.id] })
      const destinations = [F.destination({ post, account: a }), F.destination({ post, account: b })]
      const posts = yield* PostStore
      const { texts } = yield* statementsOf(posts.insert({ post, destinations }))
      expect(texts).toHaveLength(1)
      const found = yield* posts.findById(org.id, post.id)
      expect(Option.map(found, (r) => r.destinations.map((d) => d.id).sort())).toEqual(
        Option.some(destinations.map((d) => d.id).sort())
      )
      // The targets were written: the post is found through each of its accounts.
      for (const account of [a, b]) {
        const listed = yield* posts.list({
          organizationId: org.id,
          accountId: account.id,
          sort: "created_at",
          order: "desc",
          limit: 10,
          offset: 0
        })
        expect(listed.items.map((r) => r.post.id)).toEqual([post.id])
      }
    }).pipe(Effect.provide(stores)))

  it.effect("a failing post insert leaves nothing behind (the single statement is atomic)", () =>
    Effect.gen(function*() {
      const org = yield* F.givenOrganization
      const a = yield* (yield* AccountStore).insert(F.newAccount(org.id))
      const post = F.post(org.id, { accountIds: [a.id] })
      const d = F.destination({ post, account: a })
      const posts = yield* PostStore
      // The same destination id twice: the destinations' insert fails after the post's.
      const failed = yield* Effect.either(posts.insert({ post, destinations: [d, d] }))
      expect(failed._tag).toBe("Left")
      expect(Option.isNone(yield* posts.findById(org.id, post.id))).toBe(true)
    }).pipe(Effect.provide(stores)))

  it.effect("appending events with their webhook fan-out is one statement", () =>
    Effect.gen(function*() {
      const org = yield* F.givenOrganization
      const events = [F.event(org.id), F.event(org.id, { type: "post.published" })]
      const { texts } = yield* statementsOf((yield* EventStore).append(events))
      expect(texts).toHaveLength(1)
      const listed = yield* (yield* EventStore).list(org.id)
      expect(listed.map((e) => e.id)).toEqual(events.map((e) => e.id))
    }).pipe(Effect.provide(stores)))

  it.effect("the claim's pick reads queued destinations in (due_at, id) order from an index, without sorting them", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // Tiny tables would be scanned either way; the plan's shape is what is checked.
      const plan = yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`SET LOCAL enable_seqscan = off`
        return yield* sql<{ "QUERY PLAN": string }>`EXPLAIN SELECT id FROM destinations
          WHERE status = 'queued' AND due_at <= ${F.T0} ORDER BY due_at, id LIMIT 500 FOR UPDATE SKIP LOCKED`
      }))
      const text = plan.map((row) => row["QUERY PLAN"]).join("\n")
      expect(text).toContain("destinations_due_order")
      expect(text).not.toMatch(/\bSort\b/)
    }).pipe(Effect.provide(stores)))
})
